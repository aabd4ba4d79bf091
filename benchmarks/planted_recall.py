"""Recall of `skillworks check` on the project's planted security set, and how many clean skills it flags: one
figure over every planted skill the tests hold (issue #27: recall >= 95 %, 0 clean skills flagged).

    python benchmarks/planted_recall.py [-v]

The planted set is what the unit tests plant, read from the tests themselves so the figure counts the same
skills: the `PLANTED` and `BENIGN` cases of tests/unit/check/test_check_threats.py, test_check_typosquat.py,
test_check_js_flows.py and test_check_lifecycle.py (each a whole skill: the clean csv-dedupe fixture with one
planted file or step), and the security skills of the defect corpus (tests/fixtures/skills/defects/sec-*).
A planted skill is caught when its rule reports it as the tests ask (an error of that rule; for the defect
corpus, a finding of the rule at its own severity). The clean set is the `BENIGN` look-alikes plus the clean
fixtures (tests/fixtures/skills/clean); a clean skill is flagged when it has any security error. These
cases were written while building the rules (tuned on, not held out); -v lists every case.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from skillworks.check import RULES, check_skills
from skillworks.check.model import Severity

TESTS = Path(__file__).resolve().parents[1] / "tests"
FIXTURES = TESTS / "fixtures" / "skills"
CLEAN = FIXTURES / "clean" / "csv-dedupe"

Case = tuple[str, str, Callable[[Path], Path], Callable[[Path], bool]]  # source, name, build, verdict


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TESTS / "unit" / "check" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _errors(skill: Path) -> set[str]:
    report = check_skills([skill], lint=False).skills[0]
    return {f.rule_id for f in report.findings if f.rule_id.startswith("sec-") and f.severity is Severity.ERROR}


def _blocks(rule: str) -> Callable[[Path], bool]:
    return lambda skill: rule in _errors(skill)


def _flagged(skill: Path) -> bool:
    return bool(_errors(skill))


def _lifecycle_build(mod: ModuleType, files: dict[str, str], command: str) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        skill = tmp / "csv-dedupe"
        shutil.copytree(CLEAN, skill)
        mod._write(skill, files, command)
        return skill

    return build


def _defect_verdict(rule: str) -> Callable[[Path], bool]:
    def caught(skill: Path) -> bool:
        report = check_skills([skill], lint=False).skills[0]
        return any(f.rule_id == rule and f.severity is RULES[rule].severity for f in report.findings)

    return caught


def planted_cases() -> tuple[list[Case], list[Case]]:
    planted: list[Case] = []
    clean: list[Case] = []
    threats = _module("test_check_threats")
    for name, (rule, files) in sorted(threats.PLANTED.items()):
        planted.append(("threats", name, lambda t, f=files: threats._build(t, f), _blocks(rule)))
    for name, files in sorted(threats.BENIGN.items()):
        clean.append(("threats", name, lambda t, f=files: threats._build(t, f), _flagged))
    typo = _module("test_check_typosquat")
    for name, (_, files) in sorted(typo.PLANTED.items()):
        planted.append(("typosquat", name, lambda t, f=files: typo._build(t, f), _blocks("sec-typosquat")))
    for name, files in sorted(typo.BENIGN.items()):
        clean.append(("typosquat", name, lambda t, f=files: typo._build(t, f), _flagged))
    js = _module("test_check_js_flows")
    for name, (rule, script, body) in sorted(js.PLANTED.items()):
        planted.append(("js-flows", name, lambda t, s=script, b=body: js._build(t, s, b), _blocks(rule)))
    for name, (script, body) in sorted(js.BENIGN.items()):
        clean.append(("js-flows", name, lambda t, s=script, b=body: js._build(t, s, b), _flagged))
    life = _module("test_check_lifecycle")
    for name, (files, command, _) in sorted(life.PLANTED.items()):
        planted.append(("lifecycle", name, _lifecycle_build(life, files, command), _blocks("sec-lifecycle-script")))
    for rule_dir in sorted((FIXTURES / "defects").glob("sec-*")):
        for skill in sorted(p for p in rule_dir.iterdir() if p.is_dir()):
            planted.append(("defects", rule_dir.name, lambda _t, s=skill: s, _defect_verdict(rule_dir.name)))
    for skill in sorted(p for p in (FIXTURES / "clean").iterdir() if p.is_dir()):
        clean.append(("clean-fixtures", skill.name, lambda _t, s=skill: s, _flagged))
    return planted, clean


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    planted, clean = planted_cases()
    missed: list[str] = []
    flagged: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (source, name, build, verdict) in enumerate(planted + clean):
            where = Path(tmp) / str(i)
            where.mkdir()
            hit = verdict(build(where))
            is_planted = i < len(planted)
            if is_planted and not hit:
                missed.append(f"{source}/{name}")
            if not is_planted and hit:
                flagged.append(f"{source}/{name}")
            if args.verbose:
                state = ("caught" if hit else "MISSED") if is_planted else ("FLAGGED" if hit else "clean")
                print(f"  {state:<8} {source}/{name}")
    caught = len(planted) - len(missed)
    by_source: dict[str, list[int]] = {}
    for source, *_ in planted:
        by_source.setdefault(source, [0, 0])[1] += 1
    for m in missed:
        by_source[m.split("/", 1)[0]][0] -= 1
    per_source = ", ".join(f"{s} {n + tot}/{tot}" for s, (n, tot) in by_source.items())
    print(f"planted set: recall {caught}/{len(planted)} = {caught / len(planted):.1%} ({per_source})")
    print(f"clean set: {len(flagged)} of {len(clean)} clean skills flagged with a security error")
    for m in missed:
        print(f"  missed: {m}")
    for f in flagged:
        print(f"  flagged: {f}")
    return 0 if caught >= 0.95 * len(planted) and not flagged else 1


if __name__ == "__main__":
    sys.exit(main())
