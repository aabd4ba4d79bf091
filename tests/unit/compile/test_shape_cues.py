"""The text cues of the shape model (description and heading wording, routing, density), on the project's
own text; and the shipped model's inference over them (what a compile runs)."""

from __future__ import annotations

from pathlib import Path

from skillworks.compile import classify, extract_features
from skillworks.compile.classify import model_inputs
from skillworks.compile.shape_cues import CUE_NAMES, shape_cues
from skillworks.compile.shape_model import FEATURE_NAMES, shipped_model
from skillworks.skills import load_skill


def _cues(tmp_path: Path, body: str, description: str = "A test skill. Use in tests.") -> dict[str, float]:
    root = tmp_path / "s"
    root.mkdir(exist_ok=True)
    (root / "SKILL.md").write_text(f"---\nname: s\ndescription: {description}\n---\n\n{body}")
    return dict(zip(CUE_NAMES, shape_cues(extract_features(load_skill(root))), strict=True))


def test_heading_wording_is_measured_by_headings_and_by_the_words_under_them(tmp_path: Path) -> None:
    prose = "Collect the invoices from the shared folder and check each total against the ledger. " * 5
    body = f"# Tool\n\n## Workflow\n\n### 1. Collect\n\n{prose}\n\n### 2. Check\n\n{prose}\n\n## Best practices\n\nKeep it short.\n"
    cues = _cues(tmp_path, body)
    assert cues["head_workflow_share"] == 1 / 5  # "Workflow" only; "1. Collect" is numbered, not named
    assert (
        cues["words_workflow_share"] > 0.85
    )  # the numbered sections sit under the Workflow heading (headings themselves are not section words)
    assert cues["head_reference_share"] == 1 / 5 and cues["words_reference_share"] < 0.05
    assert cues["log_numbered_headings"] > 0 and cues["numbered_heading_share"] == 2 / 5


def test_routing_lines_and_description_wording_are_counted(tmp_path: Path) -> None:
    body = (
        "# Docs router\n\n- If the user asks about billing, see `references/billing.md`\n"
        "- Pricing questions → `references/pricing.md`\n- Use `lookup` for account names\n"
    )
    cues = _cues(tmp_path, body, description="Best practices and patterns for the billing API.")
    assert cues["log_routes"] > 0
    assert cues["desc_reference"] > 0 and cues["desc_dispatcher"] > 0 and cues["desc_workflow"] == 0


def test_the_model_reads_the_cues_and_no_hand_rule_vote(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    steps = "".join(
        f"## Step {k}: Export part {k}\n\nRun `python scripts/export.py --part {k}` and save the file.\n\n"
        for k in (1, 2, 3)
    )
    (root / "SKILL.md").write_text(
        f"---\nname: s\ndescription: Export the ledger in three steps.\n---\n\n# Export\n\n{steps}"
    )
    feats = extract_features(load_skill(root))
    vector = model_inputs(feats)
    assert len(vector) == len(FEATURE_NAMES) == len(shipped_model().features)
    assert vector[-len(CUE_NAMES) :] == shape_cues(feats)
    decision = classify(feats)
    assert decision.shape == "workflow"
    assert classify(feats) == decision  # deterministic


def test_list_items_that_define_terms_are_told_from_items_that_say_what_to_do(tmp_path: Path) -> None:
    facts = "# Codes\n\n- **404**: the resource does not exist\n- `409` - a conflict with the current state\n"
    facts += "- Retry-After: seconds to wait before retrying\n- Check the logs first\n"
    steps = "# Deploy\n\n1. Build the image\n2. Push it to the registry\n3. Restart the service\n"
    assert _cues(tmp_path, facts)["definition_item_share"] == 3 / 4
    assert _cues(tmp_path, steps)["definition_item_share"] == 0.0
