"""Leakage audit between a task's skills and its instruction, oracle and verifier (SkillsBench's
review gate): a skill that carries the task's answer measures copying, not skill use.

Flags, with evidence: verbatim oracle command lines in a skill, values the verifier compares
against, task-specific numbers, paths and file names, identifiers the oracle/verifier define; an
instruction that names a skill; and instruction-quality gaps (output path, success criteria,
constraints)."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from skillworks.check.model import Finding, Severity
from skillworks.check.reader import read_skill
from skillworks.check.rules import finding
from skillworks.skills.package import SkillPackage
from skillworks.tasks.model import ScriptDir, Task

if TYPE_CHECKING:
    from skillworks.tasks.validate import TaskIssue

_TEXT_SUFFIXES = frozenset({".sh", ".bash", ".py", ".js", ".ts", ".txt", ".json", ".md", ".toml", ".yaml", ".yml", ""})
_MAX_FILE = 1 << 20
_TRIVIAL_CMD = re.compile(
    r"^(#|set\s+-|cd\b|echo\b|printf\b|fi\b|done\b|then\b|else\b|esac\b|exit\b|return\b|\}|\{|\)|import\b|from\b"
    r"|if __name__|def main|main\(|pass$|try:|except\b|sys\.exit)"
)
_PATH = re.compile(
    r"(?<![\w.$-])(/(?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,6}|/(?:[\w.-]+/){1,}[\w.-]+|[\w-]+(?:\.[\w-]+)*\.(?:csv|tsv|json|jsonl|txt|md|xml|yaml|yml|parquet|xlsx|xls|db|sqlite|png|jpg|pdf|html|log|npy|pkl|h5|zip|tar|gz|out|dat))\b"
)
_GENERIC_PATHS = frozenset(
    {
        "/dev/null",
        "/tmp",
        "/app",
        "/tests",
        "/solution",
        "/oracle",
        "/verifier",
        "/logs/verifier/reward.txt",
        "/logs/verifier/reward.json",
        "/logs/verifier",
        "/logs/agent",
        "/usr/bin/env",
        "/bin/bash",
        "/bin/sh",
        "/usr/bin/python3",
        "/etc/os-release",
        "requirements.txt",
        "README.md",
        "test.sh",
        "solve.sh",
        "reward.txt",
        "reward.json",
        "SKILL.md",
        "package.json",
        "pyproject.toml",
        "setup.py",
        "ctrf.json",
        "test_outputs.py",
        "conftest.py",
        "instruction.md",
        "task.md",
        "task.toml",
    }
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
# a name from a tool's vocabulary ("http.method", "max_depth", "Content-Type"): required wording, not an answer
_VOCABULARY = re.compile(r"[A-Za-z_][A-Za-z_-]*(?:[.:][A-Za-z_][A-Za-z_-]*)*")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]|\.\d)")
_COMMON_NUMBERS = frozenset(
    {
        "100",
        "1000",
        "1024",
        "2048",
        "4096",
        "200",
        "201",
        "204",
        "301",
        "302",
        "400",
        "401",
        "403",
        "404",
        "500",
        "0644",
        "0755",
        "644",
        "755",
        "777",
        "8080",
        "8000",
        "3000",
        "5000",
        "443",
        "127",
        "255",
        "256",
        "512",
        "0.5",
        "1.0",
        "0.0",
        "2.0",
        "10.0",
        "0.1",
        "0.01",
        "0.05",
        "0.001",
        "1e-6",
        "3.11",
        "3.12",
        "3.10",
        "600",
        "300",
        "900",
        "120",
        "3600",
        "60",
        "365",
        "24",
    }
)
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{5,}\b")
_GENERIC_IDENTS = frozenset(
    {
        "__name__",
        "__main__",
        "__init__",
        "main",
        "args",
        "argv",
        "self",
        "result",
        "results",
        "output",
        "outputs",
        "input_file",
        "output_file",
        "input_path",
        "output_path",
        "test_output",
        "test_outputs",
        "expected",
        "actual",
        "filename",
        "file_path",
        "data_path",
        "response",
        "content",
        "values",
        "reward",
        "solution",
        "verify",
        "setup_module",
        "pytest",
        "fixture",
        "tmp_path",
        "monkeypatch",
        "capsys",
    }
)
_OUTPUT_PATH = re.compile(r"(/[\w.-]+){1,}|\b[\w-]+\.[A-Za-z]{2,5}\b")
_SUCCESS = re.compile(
    r"\b(must|should|ensure|exactly|so that|expected|correct(ly)?|valid|pass(es)?|succeed|"
    r"match(es)?|contain(s|ing)?|format(ted)?|sorted|equal|each|every)\b",
    re.I,
)
_CONSTRAINT = re.compile(
    r"\b(do not|don't|must not|never|only|without|no more than|at most|at least|limit(ed)?|"
    r"within|unchanged|preserve|keep|avoid|not (modify|change|use|delete))\b",
    re.I,
)


@dataclass
class _Evidence:
    """What the oracle and verifier reveal about the task."""

    commands: set[str]
    paths: set[str]
    identifiers: set[str]
    numbers: set[str]
    expected: set[str]
    ranges: set[tuple[str, str]]  # (low, high) a verifier's chained comparison accepts: `lo <= x <= hi`


def _text_files(script_dir: ScriptDir | None) -> list[tuple[Path, str]]:
    if script_dir is None or not script_dir.dir.is_dir():
        return []
    out = []
    for path in sorted(script_dir.dir.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix.lower() not in _TEXT_SUFFIXES:
            continue
        try:
            if path.stat().st_size > _MAX_FILE:
                continue
            out.append((path, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


def _python_facts(text: str, ev: _Evidence, verifier: bool) -> None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not node.name.startswith("test"):
            ev.identifiers.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            ev.identifiers.update(t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())
        if verifier and isinstance(node, ast.Compare):
            _add_range(ev, node)
            for const in [node.left, *node.comparators]:
                if isinstance(const, ast.Constant) and not isinstance(const.value, bool):
                    _add_expected(ev, const.value)
        if verifier and isinstance(node, ast.Call) and getattr(node.func, "attr", "").startswith("assert"):
            for arg in node.args:
                if isinstance(arg, ast.Constant):
                    _add_expected(ev, arg.value)


def _number(node: ast.expr) -> str | None:
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = -node.operand.value if isinstance(node.operand.value, int | float) else None
    return repr(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _add_range(ev: _Evidence, node: ast.Compare) -> None:
    """`lo <= x <= hi` (or `hi > x > lo`): the range one check accepts. Ranges whose bounds are both
    everyday numbers (0..1, 0..100) say nothing about this task's answer and are left out."""
    if len(node.ops) != 2 or len(node.comparators) != 2:
        return
    lo, hi = _number(node.left), _number(node.comparators[1])
    if lo is None or hi is None:
        return
    if all(isinstance(op, ast.Gt | ast.GtE) for op in node.ops):
        lo, hi = hi, lo
    elif not all(isinstance(op, ast.Lt | ast.LtE) for op in node.ops):
        return
    if any(b not in _COMMON_NUMBERS and b not in ("0", "1", "0.0", "1.0", "-1") for b in (lo, hi)):
        ev.ranges.add((lo, hi))


def _range_in(lo: str, hi: str, text: str) -> re.Match[str] | None:
    """Both bounds of a range on one line, low first, at most 40 characters apart ("0.07-0.11",
    "between 0.07 and 0.11", "0.07 <= slope <= 0.11")."""
    edge = r"(?<![\w.])"
    return re.search(rf"{edge}{re.escape(lo)}(?!\.?\d)[^\n]{{0,40}}?{edge}{re.escape(hi)}(?!\.?\d)", text)


def _add_expected(ev: _Evidence, value: object) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = repr(value)
        if text not in _COMMON_NUMBERS and len(text.lstrip("-")) >= 3:
            ev.expected.add(text)
    elif isinstance(value, str) and len(value.strip()) >= 4 and not _PATH.fullmatch(value.strip()):
        ev.expected.add(value.strip())


def _shell_expected(text: str, ev: _Evidence) -> None:
    for m in re.finditer(r"\[\[?\s*[^\]]*?\s(?:==?|!=|-eq|-ne)\s+[\"']?([^\"'\]\s][^\"'\]]*?)[\"']?\s*\]", text):
        value = m.group(1).strip()
        if not value.startswith("$"):
            _add_expected(ev, value)
    for m in re.finditer(r"grep\s+(?:-\w+\s+)*[\"']([^\"']{4,})[\"']", text):
        _add_expected(ev, m.group(1))


def _collect(task: Task) -> _Evidence:
    ev = _Evidence(set(), set(), set(), set(), set(), set())
    # An oracle that runs a byte-identical copy of a skill's own file applies the skill like an expert
    # would: that is the skill flowing into the oracle, not task answers flowing into the skill.
    skill_files = {asset.sha256 for skill in task.skills for asset in skill.assets}
    for role, script_dir in (("oracle", task.oracle), ("verifier", task.verifier)):
        for path, text in _text_files(script_dir):
            if hashlib.sha256(text.encode("utf-8")).hexdigest() in skill_files:
                continue
            is_py = path.suffix == ".py" or text.startswith("#!/usr/bin/env python")
            if role == "oracle" and not is_py:  # command lines of the oracle's shell scripts
                for line in text.splitlines():
                    cmd = _norm(line)
                    if len(cmd) >= 24 and len(cmd.split()) >= 3 and not _TRIVIAL_CMD.match(cmd):
                        ev.commands.add(cmd)
            if is_py:
                _python_facts(text, ev, verifier=role == "verifier")
            else:
                _shell_expected(text, ev) if role == "verifier" else None
                ev.identifiers.update(
                    m.group(1) for m in re.finditer(r"^\s*(?:export\s+)?([A-Z][A-Z0-9_]{5,})=", text, re.M)
                )
            for m in _PATH.finditer(_URL.sub(" ", text)):
                p = m.group(1).rstrip(".")
                if p not in _GENERIC_PATHS and not p.startswith(
                    ("/usr/", "/bin/", "/etc/", "/proc/", "/sys/", "/dev/", "/opt/conda")
                ):
                    ev.paths.add(p)
            for m in _NUMBER.finditer(text):
                num = m.group().lstrip("-")
                digits = num.replace(".", "")
                long = len(digits) >= 3 or ("." in num and len(num.split(".")[1]) >= 2)
                if num not in _COMMON_NUMBERS and long and not re.fullmatch(r"(19|20)\d\d", num):
                    ev.numbers.add(num)
    ev.identifiers = {
        i
        for i in ev.identifiers
        if i not in _GENERIC_IDENTS and len(i) >= 6 and ("_" in i.strip("_") or re.search(r"[a-z][A-Z]", i))
    }
    ev.numbers -= ev.expected
    # Values and numbers the instruction itself states (required labels, formats) are the task's
    # specification, not a leak; nor are Python dunders such as "__main__". Paths stay: a skill that names
    # this task's files is task-specific even when the instruction names them too.
    stated = lambda value: bool(_word_in(value, task.instruction))  # noqa: E731
    # A lone word compared in a verifier ("unreportable", "passed") is a label, not an answer: only values
    # with digits, spaces or punctuation are distinctive enough to be a leak.
    ev.expected = {v for v in ev.expected if not _VOCABULARY.fullmatch(v) and not stated(v)}
    ev.numbers = {n for n in ev.numbers if not stated(n)}
    ev.ranges = {(lo, hi) for lo, hi in ev.ranges if not _range_in(lo, hi, task.instruction)}
    return ev


def _locate_line(text: str, cmd: str) -> int:
    """1-based line of the first line whose whitespace-normalised form contains `cmd` (a normalised line)."""
    for i, line in enumerate(text.splitlines(), 1):
        if cmd in _norm(line):
            return i
    return _locate(text, cmd.split()[0])


def _locate(text: str, needle: str) -> int:
    pos = text.find(needle)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 1


def _rel(task: Task, path: Path) -> str:
    try:
        return path.resolve().relative_to(task.root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _skill_texts(root: Path) -> list[tuple[Path, str]]:
    src = read_skill(root)
    out: list[tuple[Path, str]] = []
    if src.text is not None and src.skill_md_rel:
        out.append((root / src.skill_md_rel, src.text))
    out.extend((f.path, f.text) for f in src.files if f.text is not None)
    return out


def _word_in(token: str, text: str) -> re.Match[str] | None:
    return re.search(r"(?<![\w./-])" + re.escape(token) + r"(?![\w/-]|\.\w)", text)


# a skill holding at least this share of the verifier's distinctive expected values hands over the answer
EXPECTED_SHARE = 0.5


def _task_tokens(cmd: str, ev: _Evidence) -> list[str]:
    """The instance-specific parts of an oracle line: task paths and values the verifier checks."""
    return [t for t in (*ev.paths, *ev.expected) if _word_in(t, cmd)]


def _oracle_findings(skill: str, rel: str, text: str, flat: str, ev: _Evidence) -> list[Finding]:
    """Oracle lines found verbatim in one skill file. A line that carries a task path or an expected value is
    the task's answer (error, one finding per line); lines of shared code (`scaler = StandardScaler()`) are
    how the technique is written, reported once per file as info."""
    out: list[Finding] = []
    common: list[str] = []
    for cmd in sorted(ev.commands):
        if cmd not in flat:
            continue
        tokens = _task_tokens(cmd, ev)
        if tokens:
            out.append(
                finding(
                    "leak-oracle-command",
                    f"skill {skill!r} contains an oracle line with the task's {tokens[0]!r}",
                    rel,
                    _locate_line(text, cmd),
                    cmd,
                )
            )
        else:
            common.append(cmd)
    if common:
        first = min(common, key=lambda c: _locate_line(text, c))
        out.append(
            replace(
                finding(
                    "leak-oracle-command",
                    f"skill {skill!r} shares {len(common)} line(s) of code with the oracle, none of them with a "
                    "task path or an expected value (the technique, not the answer)",
                    rel,
                    _locate_line(text, first),
                    first,
                ),
                severity=Severity.INFO,
            )
        )
    return out


def audit_task_leakage(task: Task, skills: Sequence[SkillPackage] | None = None) -> list[Finding]:
    """Leakage and instruction-quality findings for one task. Files are relative to the task root (or are the
    skill's own path for a skill outside it). `skills` (default: the task's own) are the skills audited
    against the task's verifier and oracle, e.g. a produced skill at the gate; an oracle file that is a copy
    of one of the *task's own* skills' files stays exempt, never one of a produced skill's."""
    out: list[Finding] = []
    ev = _collect(task)
    audited = task.skills if skills is None else tuple(skills)
    for skill in audited:
        texts = [(_rel(task, path), text) for path, text in _skill_texts(skill.root)]
        # expected values: the share of them the skill holds decides whether it gives the answer away
        found_values = {v for v in ev.expected if any(_word_in(v, text) for _, text in texts)}
        gives_answer = bool(ev.expected) and len(found_values) >= EXPECTED_SHARE * len(ev.expected)
        for rel, text in texts:
            flat = _norm(text)
            out.extend(_oracle_findings(skill.name, rel, text, flat, ev))
            given: set[str] = set()  # bounds of ranges reported in this file: not reported again one by one
            for lo, hi in sorted(ev.ranges):
                if m := _range_in(lo, hi, text):
                    given.update((lo, hi))
                    out.append(
                        finding(
                            "leak-expected-value",
                            f"skill {skill.name!r} gives {lo} to {hi}, the range the verifier accepts for one "
                            "of its checks",
                            rel,
                            text.count("\n", 0, m.start()) + 1,
                            m.group(),
                        )
                    )
            for value in sorted(found_values):
                if value in given or not _word_in(value, text):
                    continue
                share = f"{len(found_values)} of the verifier's {len(ev.expected)} expected value(s)"
                hit = finding(
                    "leak-expected-value",
                    f"skill {skill.name!r} contains {value!r}, a value the verifier checks ({share})",
                    rel,
                    _locate(text, value),
                    value,
                )
                out.append(hit if gives_answer else replace(hit, severity=Severity.WARNING))
            for num in sorted(ev.numbers):
                if _word_in(num, text):
                    out.append(
                        finding(
                            "leak-magic-number",
                            f"skill {skill.name!r} contains {num}, a number from the oracle/verifier",
                            rel,
                            _locate(text, num),
                            num,
                        )
                    )
            for p in sorted(ev.paths):
                if _word_in(p, text):
                    out.append(
                        finding(
                            "leak-path",
                            f"skill {skill.name!r} names {p!r} from the oracle/verifier",
                            rel,
                            _locate(text, p),
                            p,
                        )
                    )
            for ident in sorted(ev.identifiers):
                if re.search(rf"\b{re.escape(ident)}\b", text):
                    out.append(
                        finding(
                            "leak-identifier",
                            f"skill {skill.name!r} uses {ident!r} from the oracle/verifier",
                            rel,
                            _locate(text, ident),
                            ident,
                        )
                    )
    out.extend(_instruction_findings(task, audited))
    return out


def _instruction_findings(task: Task, skills: Sequence[SkillPackage]) -> list[Finding]:
    text = task.instruction
    where = "instruction"
    out: list[Finding] = []
    for skill in skills:
        m = re.search(rf"(?<![\w-]){re.escape(skill.name)}(?![\w-])", text, re.I)
        if m:
            out.append(
                finding(
                    "instruction-names-skill",
                    f"the instruction names the skill {skill.name!r}",
                    where,
                    _locate(text, m.group()),
                    m.group(),
                )
            )
    if not _OUTPUT_PATH.search(text):
        out.append(finding("instruction-no-output-path", "no output path or file name in the instruction", where))
    if not _SUCCESS.search(text):
        out.append(finding("instruction-no-success-criteria", "no success criteria in the instruction", where))
    if not _CONSTRAINT.search(text):
        out.append(finding("instruction-no-constraints", "no constraints in the instruction", where))
    return out


def leakage_task_issues(task: Task) -> list[TaskIssue]:
    """`audit_task_leakage` as `tasks check` issues (same severity; the issue code is the rule id), one issue
    per (rule, place, evidence)."""
    from skillworks.tasks.validate import TaskIssue

    issues: list[TaskIssue] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    for f in audit_task_leakage(task):
        where = f"{f.file}:{f.line}" if f.file and f.line else f.file
        if (f.rule_id, where, f.evidence) in seen:
            continue
        seen.add((f.rule_id, where, f.evidence))
        evidence = f" [{f.evidence}]" if f.evidence else ""
        issues.append(
            TaskIssue(severity=f.severity.value, code=f.rule_id, message=f"{f.message}{evidence}", path=where)
        )
    return issues
