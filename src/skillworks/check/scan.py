"""The `check` pipeline: find skills, read each tolerantly, run every rule family, lint scripts in
batches, score, and (opt-in) ask LLM judges."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing.context import BaseContext
from pathlib import Path

from skillworks._aio import run_async
from skillworks.check._pyparse import shared_parses
from skillworks.check.content_rules import check_body, check_description, check_efficiency, check_references
from skillworks.check.lint import Linter, LintTarget
from skillworks.check.model import CheckReport, Dimension, Finding, Severity, SkillReport
from skillworks.check.reader import SkillSource, discover_skill_dirs, read_skill
from skillworks.check.rules import SPEC_RULE_IDS
from skillworks.check.score import grade, score_findings
from skillworks.check.scripts import check_scripts
from skillworks.check.security import scan_security
from skillworks.check.spec_rules import check_spec
from skillworks.check.suppress import apply_ignores, ignore_files_for
from skillworks.check.typosquat import check_typosquats
from skillworks.errors import UserError

DEFAULT_FAIL_UNDER = 70


def resolve_skill_dirs(paths: Sequence[Path | str]) -> list[Path]:
    """Skill directories named by `paths` (a skill dir, a SKILL.md, or a tree). UserError when a path
    does not exist or is neither a directory nor a SKILL.md."""
    out: list[tuple[Path, str]] = []  # (skill dir, its real path: the same skill named twice is scanned once)
    for raw in paths:
        path = Path(raw)
        if not (path.exists() or path.is_symlink()):
            raise UserError("path does not exist", path)
        if not path.is_dir():
            if path.name.lower() == "skill.md":
                out.append((path.parent, os.path.realpath(path.parent)))
                continue
            raise UserError("not a directory or SKILL.md file", path)
        # a directory without any SKILL.md is scanned as one skill (and reported as missing SKILL.md)
        real = os.path.realpath(path)
        for d in discover_skill_dirs(path) or [path]:
            # the walk does not follow links, so below the tree's real path every directory is real
            rel = d.relative_to(path).as_posix()
            out.append((d, real if rel == "." else os.path.join(real, rel)))
    seen: set[str] = set()
    unique = []
    for d, key in out:
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def static_findings(src: SkillSource) -> tuple[list[Finding], int]:
    """Every in-process finding for one read skill (no external tools), and its token estimate."""
    with shared_parses():  # each Python file is parsed once, for every rule family that reads its tree
        return _static_findings(src)


def _static_findings(src: SkillSource) -> tuple[list[Finding], int]:
    findings = list(src.findings)
    tokens = 0
    if src.text is not None:
        findings.extend(check_spec(src))
        findings.extend(check_description(src))
        findings.extend(check_body(src))
        findings.extend(check_references(src))
        eff, tokens = check_efficiency(src)
        findings.extend(eff)
    findings.extend(check_scripts(src))
    findings.extend(scan_security(src))
    findings.extend(check_typosquats(src))
    return findings, tokens


def _finish(report: SkillReport, strict: bool = False) -> None:
    if strict:  # every finding of a rule the reference validator enforces is an error, as skills-ref rejects it
        report.findings = [
            replace(f, severity=Severity.ERROR) if f.rule_id in SPEC_RULE_IDS else f for f in report.findings
        ]
    report.findings.sort(key=lambda f: (f.dimension.value, f.file or "", f.line or 0, f.rule_id))
    report.scores, report.overall = score_findings(report.findings)
    report.grade = grade(report.overall)
    report.blocking = [
        f
        for f in report.findings
        if f.severity is Severity.ERROR and (f.dimension is Dimension.SECURITY or f.rule_id in SPEC_RULE_IDS)
    ]


_BATCH = 32  # skills per unit of work (one thread hop, or one task of a worker process)
PARALLEL_MIN_SKILLS = 200  # fewer skills are scanned in this process: starting workers costs more


def default_workers() -> int:
    """Scan processes by default: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_Scanned = tuple[SkillReport, str | None, list[LintTarget]]  # report, SKILL.md text for a judge, scripts to lint


def _scan_batch(batch: list[tuple[int, Path]], lint: bool, keep_text: bool = False) -> list[_Scanned]:
    """Read and statically check a batch of skills (in this process or a worker process)."""
    out: list[_Scanned] = []
    outer_cache: dict[str, bool] = {}  # siblings share ancestors: stat each ancestor once per batch
    for i, d in batch:
        src = read_skill(d, outer_cache=outer_cache)
        findings, tokens = static_findings(src)
        fm = src.frontmatter or {}
        name = fm.get("name") if isinstance(fm.get("name"), str) else None
        targets: list[LintTarget] = []
        if lint:
            syntax_bad = {f.file for f in findings if f.rule_id == "script-syntax-error"}
            for f in src.files:
                lang = f.language
                if f.text is not None and lang is not None and f.rel not in syntax_bad:
                    targets.append(LintTarget(i, f.rel, f.path.absolute(), lang, len(f.text)))
        report = SkillReport(root=d, name=name, findings=findings, tokens=tokens)
        out.append((report, src.text if keep_text else None, targets))
    return out


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which stops the pool


def _process_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes forked from this one (cheap: the rules are imported already) when that is safe
    (Linux, no other thread alive that could hold a lock); else started by a fork server."""
    context: BaseContext
    if sys.platform == "linux" and threading.active_count() == 1:
        context = multiprocessing.get_context("fork")
    elif "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])  # the server imports the rules once, for every worker
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init)


async def _scan_all(
    dirs: list[tuple[int, Path]], lint: bool, keep_text: bool, workers: int
) -> AsyncIterator[list[_Scanned]]:
    """Batches of scanned skills in the order of `dirs`, whatever the number of workers."""
    batches = [dirs[start : start + _BATCH] for start in range(0, len(dirs), _BATCH)]
    if workers <= 1:
        for batch in batches:
            yield (
                await asyncio.to_thread(_scan_batch, batch, lint, keep_text)
                if len(batches) > 1
                else _scan_batch(batch, lint, keep_text)
            )
        return
    loop = asyncio.get_running_loop()
    # the objects alive now (the imported rules) stay out of the collector's reach while workers run, so
    # a collection in a forked worker does not write to (and copy) the pages it shares with this process
    gc.collect()
    gc.freeze()
    with contextlib.ExitStack() as unfreeze, _process_pool(workers) as pool:
        unfreeze.callback(gc.unfreeze)
        pending: deque[asyncio.Future[list[_Scanned]]] = deque()
        try:
            for batch in batches:
                pending.append(loop.run_in_executor(pool, _scan_batch, batch, lint, keep_text))
                # a bounded lead: results are consumed (and linted) in order, so a slow batch at the head must
                # not leave the other workers idle
                if len(pending) >= 4 * workers:
                    yield await pending.popleft()
            while pending:
                yield await pending.popleft()
        finally:
            for future in pending:
                future.cancel()


async def check_skills_async(
    paths: Sequence[Path | str],
    *,
    fail_under: int = DEFAULT_FAIL_UNDER,
    lint: bool = True,
    judge_models: Sequence[str] = (),
    api_base: str | None = None,
    strict: bool = False,
    triage_model: str | None = None,
    workers: int | None = None,
    ignore_files: bool = True,
) -> CheckReport:
    """Scan every skill under `paths`. Never raises on bad skill content (that becomes findings);
    raises UserError for paths that do not exist or hold no skill. With `strict`, every finding of a rule
    the reference validator (skills-ref) enforces is an error that blocks the gate, so the gate agrees with
    `skills-ref validate`. With `triage_model`, that model reviews each security error and warning before
    the gate is computed (see `triage.py`). `workers` scan processes share the skills (default: one per
    core when there are at least PARALLEL_MIN_SKILLS skills, else this process alone); the report is the
    same, in the same order, for any number of workers. With `ignore_files` (the default), the
    `.skillworks-ignore` files beside each SKILL.md and at each of `paths` suppress the findings they name
    (see `suppress.py`; a malformed one raises UserError before anything is scanned)."""
    if workers is not None and workers < 1:
        raise UserError(f"workers must be at least 1, not {workers}")
    dirs = list(enumerate(resolve_skill_dirs(paths)))
    ignores = ignore_files_for([d for _, d in dirs], [Path(p) for p in paths]) if ignore_files else []
    if workers is None:
        workers = default_workers() if len(dirs) >= PARALLEL_MIN_SKILLS else 1
    workers = min(workers, max(1, -(-len(dirs) // _BATCH)))
    reports: list[SkillReport] = []
    judge_texts: list[str | None] = []  # SKILL.md texts, kept only when a judge will read them
    # beside worker processes one linter at a time keeps up (linting is a fifth of the work) and saves memory
    linter = (Linter(concurrency=1) if workers > 1 else Linter()) if lint else None
    async for done in _scan_all(dirs, lint, bool(judge_models), workers):
        for report, text, targets in done:
            reports.append(report)
            if judge_models:
                judge_texts.append(text)
            if linter is not None and targets:
                linter.add(targets)
    tools: dict[str, bool] = {}
    problems: list[str] = []
    if linter is not None:
        for key, findings in (await linter.finish()).items():
            reports[key].findings.extend(findings)
        tools = linter.tools
        problems = linter.problems
    for report, files in zip(reports, ignores, strict=False):
        if files:
            report.findings, report.suppressed, report.ignore_warnings = apply_ignores(
                report.root, report.findings, files
            )
    if triage_model:
        from skillworks.check.triage import triage_findings

        for report in reports:
            report.findings = await triage_findings(
                report.name or report.root.name, report.findings, triage_model, api_base=api_base
            )
    for report in reports:
        _finish(report, strict)
    if judge_models:
        from skillworks.check.judge import judge_skill

        for report, text in zip(reports, judge_texts, strict=True):
            if text is not None:
                report.judge = await judge_skill(text, list(judge_models), api_base=api_base)
    return CheckReport(skills=reports, fail_under=fail_under, lint_tools=tools, lint_problems=problems, workers=workers)


def check_skills(paths: Sequence[Path | str], **kwargs: object) -> CheckReport:
    """Synchronous wrapper of `check_skills_async`."""
    return run_async(check_skills_async(paths, **kwargs))  # type: ignore[arg-type]
