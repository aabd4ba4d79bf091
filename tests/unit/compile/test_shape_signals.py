"""The document-structure signals behind the shape classifier, one behaviour per test (the project's own text)."""

from __future__ import annotations

from pathlib import Path

from skillworks.compile import classify, extract_features
from skillworks.compile.shape_signals import ShapeSignals, is_imperative, shape_signals
from skillworks.skills import load_skill

FILLER = "This paragraph explains the background of the domain in some detail for the reader. " * 4


def _rules(tmp_path: Path) -> str | None:
    """What the hand-written thresholds say (evidence; the learned model decides, and on these synthetic
    prose bodies it may say insufficient rather than reference)."""
    feats = extract_features(load_skill(tmp_path / "s"))
    return next(e.supports for e in classify(feats).evidence if e.feature == "hand_rules")


def _signals(tmp_path: Path, body: str, files: dict[str, str] | None = None) -> tuple[ShapeSignals, str]:
    root = tmp_path / "s"
    root.mkdir()
    (root / "SKILL.md").write_text(f"---\nname: s\ndescription: A test skill. Use in tests.\n---\n\n{body}")
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    feats = extract_features(load_skill(root))
    return shape_signals(feats, feats.body), classify(feats).shape


def test_imperative_items_are_steps_definitions_and_questions_are_not() -> None:
    assert is_imperative("Run the exporter on last week's data")
    assert is_imperative("**Validate** the totals against the ledger")
    assert not is_imperative("**Idempotency**: every call can be repeated")
    assert not is_imperative("What is the deployment target?")
    assert not is_imperative("Tree-based models are fast")


def test_steps_in_a_setup_section_do_not_make_a_workflow(tmp_path: Path) -> None:
    body = (
        "# Tool\n\n## Installation\n\n### Step 1: Install the package\n\npip install tool\n\n"
        "### Step 2: Log in\n\nRun the login.\n\n### Step 3: Verify\n\nCheck the version.\n\n"
        f"## Concepts\n\n{FILLER}\n\n## Data model\n\n{FILLER}\n"
    )
    sig, shape = _signals(tmp_path, body)
    assert sig.step_sections == 0 and sig.procedure_share == 0.0
    assert shape != "workflow" and _rules(tmp_path) == "reference"


def test_a_numbered_list_of_tips_is_not_a_procedure(tmp_path: Path) -> None:
    body = (
        f"# Guide\n\n## Concepts\n\n{FILLER}\n\n## Data model\n\n{FILLER}\n\n## Best practices\n\n"
        "1. Use indexes for lookups\n2. Keep transactions short\n3. Prefer batch writes\n4. Monitor latency\n"
    )
    sig, shape = _signals(tmp_path, body)
    assert sig.steps == 0 and shape == "reference"


def test_a_short_workflow_section_at_the_end_of_a_long_reference_stays_reference(tmp_path: Path) -> None:
    topics = "".join(f"## Topic {k}\n\n{FILLER}\n\n" for k in range(6))
    body = f"# Library\n\n{topics}## Workflow\n\n1. Read the docs\n2. Write the code\n3. Test it\n"
    sig, shape = _signals(tmp_path, body)
    assert sig.steps >= 3 and sig.procedure_share < 0.25
    assert shape != "workflow" and _rules(tmp_path) == "reference"


def test_step_headings_covering_the_body_make_a_workflow(tmp_path: Path) -> None:
    body = "".join(
        f"## Step {k}: Do part {k}\n\nCollect the inputs for part {k} and write the result.\n\n" for k in (1, 2, 3)
    )
    sig, shape = _signals(tmp_path, f"# Procedure\n\n{body}")
    assert sig.step_sections == 3 and sig.procedure_share > 0.8 and len(sig.step_spans) == 3
    assert shape == "workflow"


def test_sibling_sections_each_calling_their_own_tool_are_a_menu(tmp_path: Path) -> None:
    ops = "".join(
        f"### {verb.title()} a record\n\nCall `CRM_{verb.upper()}_RECORD` with the record id.\n\n"
        for verb in ("create", "update", "delete", "search")
    )
    body = f"# CRM\n\n{FILLER}\n\n## Prerequisites\n\nSet `CRM_API_KEY`.\n\n## Operations\n\n{ops}"
    sig, shape = _signals(tmp_path, body)
    assert sig.menu_sections == 4 and "CRM_CREATE_RECORD" in sig.menu_callables
    assert "CRM_API_KEY" not in sig.menu_callables  # an environment variable is not a tool
    assert shape == "dispatcher"


def test_numbered_sections_under_a_plural_workflows_heading_are_a_menu_not_steps(tmp_path: Path) -> None:
    ops = "".join(
        f"### {k}. {title}\n\nUse `MAIL_{tool}` for this. {FILLER}\n\n"
        for k, (title, tool) in enumerate(
            (("Send an email", "SEND_EMAIL"), ("Search mail", "SEARCH_MAIL"), ("List labels", "LIST_LABELS")), start=1
        )
    )
    root = tmp_path / "s"
    root.mkdir()
    (root / "SKILL.md").write_text(
        f"---\nname: s\ndescription: A test skill. Use in tests.\n---\n\n# Mail\n\n{FILLER}\n\n## Core Workflows\n\n{ops}"
    )
    feats = extract_features(load_skill(root))
    sig = shape_signals(feats, feats.body)
    assert sig.step_sections == 0 and sig.menu_sections == 3
    # the hand-written thresholds read it as a menu; the learned model weighs that against the filler prose
    # (its accuracy is measured in benchmarks/compile_shapes.py), so the rule's vote is what is tested here
    rules = next(e for e in classify(feats).evidence if e.feature == "hand_rules")
    assert rules.supports == "dispatcher"


def test_a_procedure_that_runs_the_skills_script_needs_less_of_the_body(tmp_path: Path) -> None:
    conventions = "## Conventions\n\n" + FILLER + FILLER[:200] + "\n\n"
    procedure = (
        "## Workflow\n\n1. Inspect the input columns.\n2. Generate the table: `python3 scripts/make.py in.csv out.csv`.\n"
        "3. Check the totals.\n"
    )
    script = (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('src')\np.add_argument('dst')\np.parse_args()\n"
    )
    sig, shape = _signals(tmp_path, f"# Tables\n\n{conventions}{procedure}", {"scripts/make.py": script})
    assert sig.procedure_runs_scripts and 0.15 <= sig.procedure_share < 0.25
    assert shape == "workflow"
