"""Workflow dependencies come from what steps read and write (and the steps they name), not from position."""

from __future__ import annotations

from pathlib import Path

from skillworks.compile import classify, compile_skill, extract_features
from skillworks.compile.lower import _files_by_role
from skillworks.skills import load_skill

HEADED = """---
name: sales-digest
description: Build a weekly sales digest from the orders export. Use when asked for the weekly sales digest.
---

# Weekly sales digest

## Step 1: Export the orders

Run `python3 scripts/export.py --week LAST -o data/orders.csv` to write last week's orders.

## Step 2: Ask for the audience

Ask the user who reads the digest (sales team or executives) and note the answer.

## Step 3: Summarise the orders

Read `data/orders.csv` and save the totals per region to `data/totals.json`.

## Step 4: Write the digest

Write the digest for the audience chosen in step 2 from `data/totals.json` into `digest.md`.

## Step 5: Check the digest

Confirm that every region of the totals appears in the digest and that the numbers match.
"""

NUMBERED = """---
name: log-triage
description: Triage a service log into an incident note. Use when asked to triage a log file.
---

# Log triage

## Workflow

1. Extract the errors: `grep ERROR service.log > errors.txt`.
2. Ask the on-call engineer which release is deployed.
3. Count the errors per code from `errors.txt` and write the counts to `counts.csv`.
4. Draft the incident note from `counts.csv`.
5. Send the note to the channel.
"""


def _skill(tmp_path: Path, name: str, text: str) -> Path:
    root = tmp_path / name
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_text(text)
    (root / "scripts" / "export.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--week')\np.add_argument('-o')\np.parse_args()\n"
    )
    return root


def test_step_sections_are_steps_and_data_edges_skip_unrelated_steps(tmp_path: Path) -> None:
    contract = compile_skill(load_skill(_skill(tmp_path, "sales-digest", HEADED)))
    assert contract.shape == "workflow"
    graph = contract.graph
    assert graph is not None and graph.valid, graph
    assert [s.name for s in graph.steps][:2] == ["Step 1: Export the orders", "Step 2: Ask for the audience"]
    deps = {s.id: s.depends_on for s in graph.steps}
    assert deps["s1"] == []
    assert deps["s2"] == ["s1"]  # reads nothing an earlier step wrote: follows the step before it
    assert deps["s3"] == ["s1"]  # reads data/orders.csv, which s1 writes; not s2
    assert deps["s4"] == ["s2", "s3"]  # "chosen in step 2" and data/totals.json from s3
    by_id = {s.id: s for s in graph.steps}
    assert by_id["s1"].outputs == ["data/orders.csv"] and by_id["s3"].inputs == ["data/orders.csv"]
    assert by_id["s3"].outputs == ["data/totals.json"] and by_id["s4"].outputs == ["digest.md"]
    assert by_id["s1"].execution is not None  # the step that runs the bundled script is runnable


def test_numbered_steps_get_data_edges_too(tmp_path: Path) -> None:
    contract = compile_skill(load_skill(_skill(tmp_path, "log-triage", NUMBERED)))
    graph = contract.graph
    assert contract.shape == "workflow" and graph is not None and graph.valid
    assert [s.depends_on for s in graph.steps] == [[], ["s1"], ["s1"], ["s3"], ["s4"]]
    nonlinear = [(s.id, d) for s in graph.steps for d in s.depends_on if int(d[1:]) != int(s.id[1:]) - 1]
    assert nonlinear == [("s3", "s1")]


def test_files_by_role_reads_the_cue_before_each_file() -> None:
    assert _files_by_role("`python3 x.py in.csv > out.json`") == (["in.csv"], ["out.json"])
    assert _files_by_role("Read `a.csv` and save the result to `b.csv`") == (["a.csv"], ["b.csv"])
    assert _files_by_role("Render the chart with `--output chart.png` from `data.tsv`") == (["data.tsv"], ["chart.png"])
    assert _files_by_role("Nothing named here") == ([], [])


def test_a_command_ending_in_a_slash_does_not_break_the_classifier(tmp_path: Path) -> None:
    root = tmp_path / "slash"
    root.mkdir()
    (root / "SKILL.md").write_text(
        "---\nname: slash\ndescription: Copy a folder. Use when asked to copy the build folder.\n---\n\n"
        "# Copy\n\n## Commands\n\n- `scripts/ list` lists the scripts.\n- `cp -r build/ dist/` copies the build.\n"
    )
    decision = classify(extract_features(load_skill(root)))
    assert decision.shape in {"dispatcher", "reference", "insufficient"}
