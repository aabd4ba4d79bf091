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
from dataclasses import dataclass, field, replace
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
        "ctrf-report.json",
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
    files: dict[str, str] = field(default_factory=dict)  # normalised content of expected-output files -> name


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
        if verifier and _holds_expected(node):
            # EXPECTED = {...} / [...] tables, parametrize tables, approx(...): every literal in them
            for sub in ast.walk(node):
                if isinstance(sub, ast.Constant) and not isinstance(sub.value, bool):
                    _add_expected(ev, sub.value)


def _holds_expected(node: ast.AST) -> bool:
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        upper = any(isinstance(t, ast.Name) and t.id.isupper() for t in targets)
        return upper and isinstance(node.value, ast.Dict | ast.List | ast.Tuple | ast.Set)
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        return name in ("parametrize", "approx", "isclose", "allclose")
    return False


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


_HEREDOC = re.compile(
    r"^(?P<cmd>[^\n]*?)<<-?\s*(?P<q>['\"]?)(?P<tag>\w+)(?P=q)[^\n]*\n(?P<body>.*?)^\s*(?P=tag)\s*$", re.M | re.S
)


def _heredocs(text: str) -> list[tuple[bool, str]]:
    """(is Python, body) of every heredoc of a shell script (`python3 - <<'EOF' ... EOF`, `cat <<EOF`)."""
    return [(bool(re.search(r"\bpython[\d.]*\b", m.group("cmd"))), m.group("body")) for m in _HEREDOC.finditer(text)]


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
                for python, body in _heredocs(text):
                    if python:
                        _python_facts(body, ev, verifier=role == "verifier")
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
    if task.verifier is not None:
        ev.files = _expected_files(task.verifier)
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
    # a range's bounds are judged as a range (a value inside it), not as two expected values of their own
    ev.expected -= {bound for pair in ev.ranges for bound in pair}
    return ev


_DATA_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".jsonl", ".txt", ".out", ".dat", ".xml", ".yaml", ".yml"})
_MIN_EXPECTED_FILE = 24  # characters of normalised content: shorter files say too little to match on


def _normalised_content(text: str) -> str:
    """Content as compared: lines stripped, blank lines and line-ending/whitespace differences dropped."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _expected_files(script_dir: ScriptDir) -> dict[str, str]:
    """Data files shipped with the verifier (expected outputs, golden CSVs), by normalised content."""
    out: dict[str, str] = {}
    if not script_dir.dir.is_dir():
        return out
    for path in sorted(script_dir.dir.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix.lower() not in _DATA_SUFFIXES:
            continue
        try:
            if path.stat().st_size > _MAX_FILE:
                continue
            content = _normalised_content(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if len(content) >= _MIN_EXPECTED_FILE:
            out[content] = path.relative_to(script_dir.dir).as_posix()
    return out


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


# a verifier range this narrow (width / largest bound) pins the answer: a value inside it is the answer
NARROW_RANGE = 0.6
_NUM = r"-?\d+(?:\.\d+)?"
_STATED_NUMBER = re.compile(rf"(?<![\w.]){_NUM}(?![\w]|\.\d)")
_NUMBER_PAIR = re.compile(rf"(?<![\w.])({_NUM})\s*%?\s*(?:-|–|—|to|and|\.\.)\s*({_NUM})(?![\w]|\.\d)")
_SCALES = (("per decade", 0.1, "per decade"), ("per century", 0.01, "per century"), ("per millennium", 0.001, ""))


def _narrow(ranges: set[tuple[str, str]]) -> list[tuple[float, float, str, str]]:
    out = []
    for lo, hi in sorted(ranges):
        a, b = float(lo), float(hi)
        if b > a and (b - a) / max(abs(a), abs(b)) <= NARROW_RANGE:
            out.append((a, b, lo, hi))
    return out


def _within(value: float, lo: float, hi: float) -> bool:
    eps = 1e-9 * max(abs(lo), abs(hi), 1.0)  # 0.6 * 100 is 60.00000000000001
    return lo - eps <= value <= hi + eps


def _readings(value: float, before: str, after: str) -> list[tuple[float, str]]:
    """The values a number in a skill may stand for: itself, a ratio read as a percentage and back, a rate
    in other time units; each with how it was read."""
    out = [(value, "")]
    percent = after.lstrip().startswith("%") or after.lstrip().lower().startswith("percent")
    if percent:
        out.append((value / 100, " (a percentage, as a ratio)"))
    elif abs(value) <= 1 and re.match(r"\s*(of\b|share|fraction|ratio|proportion)", after, re.I):
        out.append((value * 100, " (a ratio, as a percentage)"))
    for words, factor, _ in _SCALES:
        if after.lower().lstrip(" °ckfmgs/").startswith(words) or words in after.lower()[:24]:
            out.append((value * factor, f" (in other units: {words})"))
    return out


def _is_stated(raw: str, before: str, after: str) -> bool:
    """A number written as a result: with decimals, a percent sign, a unit rate, an approximation mark,
    or as an argument's default; a bare integer ("use 50 samples") is not taken as one."""
    if "." in raw or after.lstrip().startswith("%") or re.search(r"(≈|~|about|approx\w*|roughly)\s*$", before, re.I):
        return True
    return bool(re.search(r"default\s*[=:]\s*$", before) or any(w in after.lower()[:24] for w, _, _ in _SCALES))


def _range_findings(skill: str, rel: str, text: str, ev: _Evidence, given: set[str]) -> list[Finding]:
    """A value inside a narrow range the verifier accepts (itself, as a ratio/percentage, in other time
    units, as a default argument), or a range inside it ("0.4 to 0.6" for 40-60 %)."""
    ranges = _narrow(ev.ranges)
    if not ranges:
        return []
    out: list[Finding] = []
    taken: set[tuple[int, int]] = set()
    for m in _NUMBER_PAIR.finditer(text):
        a, b = float(m.group(1)), float(m.group(2))
        if b <= a:
            continue
        after = text[m.end() : m.end() + 30]
        taken.add((m.start(), m.end()))  # a pair's numbers are a range, not values one by one
        for factor, how in _readings(1.0, "", after):
            x, y = a * factor, b * factor
            same = factor == 1.0 and (m.group(1), m.group(2)) in ev.ranges  # reported as the range itself
            hit = next(((lo, hi) for lo, hi, *_ in ranges if _within(x, lo, hi) and _within(y, lo, hi)), None)
            if same:
                hit = None
            if hit is not None and m.group(1) not in given:
                out.append(
                    finding(
                        "leak-expected-value",
                        f"skill {skill!r} gives {m.group(1)} to {m.group(2)}{how}, inside the range "
                        f"{hit[0]:g} to {hit[1]:g} the verifier accepts for one of its checks",
                        rel,
                        text.count("\n", 0, m.start()) + 1,
                        m.group(),
                    )
                )
                break
    for m in _STATED_NUMBER.finditer(text):
        if any(s <= m.start() < e for s, e in taken) or m.group() in given:
            continue
        before, after = text[max(0, m.start() - 30) : m.start()], text[m.end() : m.end() + 30]
        if not _is_stated(m.group(), before, after) or re.search(r"(?:[<>≤≥]=?|==)\s*$", before):
            continue  # "p < 0.10": a threshold the skill explains, not a value it states
        if m.group() in _COMMON_NUMBERS and not re.search(r"default\s*[=:]\s*$", before):
            continue  # an everyday number ("weight = 0.1") says nothing of this task unless it is a default
        for value, how in _readings(float(m.group()), before, after):
            hit = next(((lo, hi) for lo, hi, *_ in ranges if _within(value, lo, hi)), None)
            if hit is not None:
                out.append(
                    finding(
                        "leak-expected-value",
                        f"skill {skill!r} states {m.group()}{how}, inside the range {hit[0]:g} to {hit[1]:g} "
                        "the verifier accepts for one of its checks",
                        rel,
                        text.count("\n", 0, m.start()) + 1,
                        (before[-20:] + m.group() + after[:20]).strip(),
                    )
                )
                break
    return out


def _file_findings(skill: str, rel: str, text: str, ev: _Evidence) -> list[Finding]:
    """A skill file whose content is (or holds) an expected-output file the verifier ships."""
    if not ev.files:
        return []
    content = _normalised_content(text)
    return [
        finding(
            "leak-expected-value",
            f"skill {skill!r} holds the content of the verifier's expected-output file {name!r}",
            rel,
            1,
            expected.splitlines()[0],
        )
        for expected, name in sorted(ev.files.items())
        if expected == content or (expected.count("\n") >= 1 and expected in content)
    ]


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


def audit_task_leakage(
    task: Task, skills: Sequence[SkillPackage] | None = None, *, together: bool = False
) -> list[Finding]:
    """Leakage and instruction-quality findings for one task. Files are relative to the task root (or are the
    skill's own path for a skill outside it). `skills` (default: the task's own) are the skills audited
    against the task's verifier and oracle, e.g. a produced skill at the gate; an oracle file that is a copy
    of one of the *task's own* skills' files stays exempt, never one of a produced skill's. With `together`,
    the skills are audited as one (an agent sees them side by side): an answer key split over two skills,
    each below the share that makes one an answer key, is found."""
    out: list[Finding] = []
    ev = _collect(task)
    audited = task.skills if skills is None else tuple(skills)
    groups = [(s.name, [(_rel(task, path), text) for path, text in _skill_texts(s.root)]) for s in audited]
    if together and len(groups) > 1:
        groups = [(" + ".join(name for name, _ in groups), [t for _, texts in groups for t in texts])]
    for skill_name, texts in groups:
        # expected values: the share of them the skill holds decides whether it gives the answer away
        found_values = {v for v in ev.expected if any(_word_in(v, text) for _, text in texts)}
        # an answer is instance-specific: values with a digit (a total, an id, a date) by their share; words
        # are the domain's vocabulary a skill is there to teach ('reverse charge', one of a verifier's
        # alternative phrases), an answer only when the skill holds every one of several (a label and the
        # instance it is for, as an EXPECTED dict gives them)
        specific = {v for v in ev.expected if any(c.isdigit() for c in v)}
        words = set(ev.expected) - specific
        by_share = bool(specific) and len(found_values & specific) >= EXPECTED_SHARE * len(specific)
        all_words = len(words) >= 2 and words <= found_values
        for rel, text in texts:
            flat = _norm(text)
            out.extend(_oracle_findings(skill_name, rel, text, flat, ev))
            given: set[str] = set()  # bounds of ranges reported in this file: not reported again one by one
            for lo, hi in sorted(ev.ranges):
                if m := _range_in(lo, hi, text):
                    given.update((lo, hi))
                    out.append(
                        finding(
                            "leak-expected-value",
                            f"skill {skill_name!r} gives {lo} to {hi}, the range the verifier accepts for one "
                            "of its checks",
                            rel,
                            text.count("\n", 0, m.start()) + 1,
                            m.group(),
                        )
                    )
            out.extend(_range_findings(skill_name, rel, text, ev, given))
            out.extend(_file_findings(skill_name, rel, text, ev))
            for value in sorted(found_values):
                if value in given or not _word_in(value, text):
                    continue
                share = f"{len(found_values)} of the verifier's {len(ev.expected)} expected value(s)"
                hit = finding(
                    "leak-expected-value",
                    f"skill {skill_name!r} contains {value!r}, a value the verifier checks ({share})",
                    rel,
                    _locate(text, value),
                    value,
                )
                blocks = all_words or (by_share and value in specific)
                out.append(hit if blocks else replace(hit, severity=Severity.WARNING))
            for num in sorted(ev.numbers):
                if _word_in(num, text):
                    out.append(
                        finding(
                            "leak-magic-number",
                            f"skill {skill_name!r} contains {num}, a number from the oracle/verifier",
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
                            f"skill {skill_name!r} names {p!r} from the oracle/verifier",
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
                            f"skill {skill_name!r} uses {ident!r} from the oracle/verifier",
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
    per (rule, place, evidence); plus the answer keys the task's skills hold only side by side."""
    from skillworks.tasks.validate import TaskIssue

    issues: dict[tuple[str, str | None, str | None], TaskIssue] = {}
    # the task's skills side by side too (the agent gets them together): only the answer keys that adds, which
    # replace the warning the same place got when each skill was audited alone
    joint = [
        f
        for f in (audit_task_leakage(task, together=True) if len(task.skills) > 1 else [])
        if f.rule_id.startswith("leak-") and f.severity is Severity.ERROR
    ]
    for f in [*audit_task_leakage(task), *joint]:
        where = f"{f.file}:{f.line}" if f.file and f.line else f.file
        key = (f.rule_id, where, f.evidence)
        if key in issues and not (f in joint and issues[key].severity != Severity.ERROR.value):
            continue
        evidence = f" [{f.evidence}]" if f.evidence else ""
        issues[key] = TaskIssue(severity=f.severity.value, code=f.rule_id, message=f"{f.message}{evidence}", path=where)
    return list(issues.values())
