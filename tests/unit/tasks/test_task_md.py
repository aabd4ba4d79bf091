"""task.md standard loader: the good fixtures and each class of bad input."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from skillworks.errors import TaskError
from skillworks.skills import hash_directory
from skillworks.tasks import load_task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


Copy = Callable[[str], Path]


def test_native_task_md_fixture_loads() -> None:
    task = load_task(FIXTURES / "md-csv-revenue")
    assert task.id == "md-csv-revenue"
    assert task.name == "skillworks/md-csv-revenue"
    assert task.source_format == "task.md"
    assert task.schema_version == "1.3"
    assert task.instruction.startswith("`/root/data/sales.csv`")
    assert task.instruction.endswith("`/root/total.txt`.")
    assert task.verifier is not None and task.verifier.mount == "/verifier"
    assert task.verifier.entrypoint == "test.sh" and task.verifier.timeout_sec == 60
    assert task.oracle is not None and task.oracle.mount == "/oracle" and task.oracle.entrypoint == "solve.sh"
    assert task.oracle.env == {"ORACLE_MODE": "1"}
    assert task.agent_timeout_sec == 300
    env = task.environment
    assert env.dockerfile == (FIXTURES / "md-csv-revenue" / "environment" / "Dockerfile").resolve()
    assert env.workdir == "/root"  # the Dockerfile's WORKDIR
    assert (env.resources.cpus, env.resources.memory_mb, env.resources.storage_mb) == (1, 1024, 2048)
    assert env.network.mode == "no-network" and env.build_timeout_sec == 300
    assert task.metadata == {"difficulty": "easy", "category": "data-processing", "tags": ["csv"]}
    assert task.content_hash == hash_directory(FIXTURES / "md-csv-revenue")


def test_bundled_skills_are_loaded() -> None:
    task = load_task(FIXTURES / "md-csv-revenue")
    assert [s.name for s in task.skills] == ["csv-totals"]
    assert [a.path for a in task.skills[0].assets] == ["scripts/total.py"]


def test_compat_dirs_paper_spelling_and_prompt_section() -> None:
    task = load_task(FIXTURES / "md-legacy-dirs")
    assert task.verifier is not None and task.verifier.mount == "/tests"
    assert task.oracle is not None and task.oracle.mount == "/solution"
    assert task.environment.dockerfile is None and task.environment.workdir == "/app"
    assert task.environment.network.mode == "allowlist"
    assert task.environment.network.allowed_hosts == ("pypi.org", "files.pythonhosted.org")
    assert task.instruction == "Create `greeting.txt` in the current directory containing exactly `hello, world`."
    assert task.schema_version == "1.3"


def test_native_verifier_wins_over_tests(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    shutil.copytree(root / "verifier", root / "tests")
    (root / "tests" / "test.sh").write_text("#!/bin/sh\necho 0 > /logs/verifier/reward.txt\n")
    task = load_task(root)
    assert task.verifier is not None and task.verifier.dir.name == "verifier" and task.verifier.mount == "/verifier"


def test_content_hash_changes_with_any_file(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    before = load_task(root).content_hash
    (root / "environment" / "data" / "sales.csv").write_text("order_id,revenue\n1,1\n")
    assert load_task(root).content_hash != before


def _error(root: Path) -> TaskError:
    with pytest.raises(TaskError) as info:
        load_task(root)
    return info.value


def test_malformed_yaml(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "  cpus: 1\n", "  cpus: [1\n")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert "invalid YAML frontmatter at line" in err.message
    assert "\n" not in str(err)


def test_frontmatter_missing(fixture_task: Copy) -> None:
    root = fixture_task("md-legacy-dirs")
    (root / "task.md").write_text("Just a prompt without frontmatter.\n")
    err = _error(root)
    assert err.path == str(root / "task.md") and "no YAML frontmatter" in err.message


def test_unknown_top_level_key(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "agent:\n", "timeout: 30\nagent:\n")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert err.message.startswith("unknown top-level key 'timeout'; allowed keys: schema_version, version, task")
    assert "benchflow" in err.message and "sandbox" in err.message


def test_unknown_nested_key_names_section_and_allowed(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "  cpus: 1\n", "  cpu: 1\n")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert "unknown key 'sandbox.cpu'" in err.message and "allowed keys:" in err.message and "cpus" in err.message


def test_oracle_and_solution_both_present(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "oracle:\n", "solution:\n  env: {}\noracle:\n")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert err.message == "both 'oracle' and 'solution' are set; keep only 'oracle'"


def test_sandbox_and_environment_both_present(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "oracle:\n", "environment:\n  cpus: 2\noracle:\n")
    assert _error(root).message == "both 'sandbox' and 'environment' are set; keep only 'sandbox'"


def test_allowlist_without_hosts(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "network_mode: no-network", "network_mode: allowlist")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert "network_mode 'allowlist' requires a non-empty allowed_hosts list" in err.message


def test_bad_network_mode(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "network_mode: no-network", "network_mode: offline")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert err.message.startswith("sandbox.network_mode:")
    assert "'no-network', 'public' or 'allowlist'" in err.message


def test_bad_timeout(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "verifier:\n  timeout_sec: 60", "verifier:\n  timeout_sec: 0")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert err.message.startswith("verifier.timeout_sec: Input should be greater than 0")


def test_missing_instruction(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    text = (root / "task.md").read_text()
    (root / "task.md").write_text(text[: text.rindex("---") + 4] + "\n   \n")
    err = _error(root)
    assert err.path == str(root / "task.md")
    assert err.message == "missing instruction: the task.md body (the prompt) is empty"


def test_missing_verifier(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    shutil.rmtree(root / "verifier")
    err = _error(root)
    assert err.path == str(root.resolve())
    assert err.message == "missing verifier: no verifier/ or tests/ directory with test.sh"


def test_empty_verifier_does_not_fall_back_to_tests(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    (root / "verifier").rename(root / "tests")
    (root / "verifier").mkdir()
    err = _error(root)
    assert err.path == str((root / "verifier").resolve())
    assert err.message.startswith("verifier directory verifier/ is empty; it must contain test.sh")


def test_oracle_dir_without_solve_sh(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    (root / "oracle" / "solve.sh").rename(root / "oracle" / "run.sh")
    task = load_task(root)  # only the oracle agent needs it: the task loads without an oracle
    assert task.oracle is None
    assert task.extra["oracle_problem"] == "oracle directory oracle/ has no solve.sh"


def test_bundled_skill_without_frontmatter(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    skill_md = root / "environment" / "skills" / "csv-totals" / "SKILL.md"
    skill_md.write_text("# CSV totals\n\nNo frontmatter here.\n")
    err = _error(root)
    assert err.path == str(skill_md)
    assert err.message.startswith("bundled skill 'csv-totals' is invalid: SKILL.md has no YAML frontmatter")


def test_bundled_skill_name_mismatch(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    skill_md = root / "environment" / "skills" / "csv-totals" / "SKILL.md"
    replace_in(skill_md, "name: csv-totals", "name: csv-sum")
    err = _error(root)
    assert err.path == str(skill_md)
    assert "bundled skill 'csv-totals' is invalid" in err.message
    assert "'csv-sum' does not match its directory name 'csv-totals'" in err.message


def test_declared_workdir_beats_dockerfile(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "  cpus: 1\n", "  cpus: 1\n  workdir: /srv/work\n")
    assert load_task(root).environment.workdir == "/srv/work"


def test_unsupported_verifier_type(fixture_task: Copy) -> None:
    root = fixture_task("md-csv-revenue")
    replace_in(root / "task.md", "verifier:\n", "verifier:\n  type: llm-judge\n")
    err = _error(root)
    assert err.message == "verifier.type 'llm-judge' is not supported; only 'test-script' can run"


def test_document_keys_are_kept(fixture_task: Copy) -> None:
    root = fixture_task("md-legacy-dirs")
    replace_in(
        root / "task.md", "agent:\n", "benchflow:\n  document_version: '0.6'\nuser:\n  model: scripted\nagent:\n"
    )
    task = load_task(root)
    assert task.extra["benchflow"] == {"document_version": "0.6"}
    assert task.extra["user"] == {"model": "scripted"}
