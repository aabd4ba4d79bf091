"""`skillworks import results`: a per-task results table and the paper's statistics, hand-computed here."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from skillworks.cli.main import main
from skillworks.errors import UserError
from skillworks.importers.results_table import TableSummary, read_results_table, table_statistics

REGISTRY = Path("/work/shared/skillsbench/results-registry.json")

# A: none 0, 0.5, 1 -> 0.5; curated 1, 1, 1 -> 1.0; Δ +50, g = 0.5 / 0.5 = 1.0
# B: none 0, 0 (t3 missing) -> 0; curated 0.5, 0, 1 -> 0.5 over its 3 tasks;
#    paired t1, t2: without 0, with 0.25 -> Δ +25, g 0.25; t3 unpaired, one missing cell
CSV = """task,configuration,condition,mean_reward,trials
t1,A,none,0,3
t2,A,none,0.5,3
t3,A,none,1,3
t1,A,curated,1,3
t2,A,curated,1,3
t3,A,curated,1,3
t1,B,none,0,3
t2,B,none,0,3
t1,B,curated,0.5,3
t2,B,curated,0,3
t3,B,curated,1,3
"""


def test_per_configuration_values_and_the_mean_row(tmp_path: Path) -> None:
    path = tmp_path / "table.csv"
    path.write_text(CSV)
    s = table_statistics(read_results_table(path), resamples=500)
    a, b = s.configurations
    assert (a.rates, a.delta_pp, a.g, a.n_paired) == ({"none": 0.5, "curated": 1.0}, 50.0, 1.0, 3)
    assert b.rates == {"none": 0.0, "curated": 0.5}
    assert (b.without_rate, b.with_rate, b.delta_pp, b.g) == (0.0, 0.25, 25.0, 0.25)
    assert b.unpaired_tasks == ["t3"] and b.missing == {"none": ["t3"]}
    assert (s.missing_cells, s.unpaired_cells) == (1, 1)
    # the mean row: mean of each condition's rate, of Δ, of g over configurations (not g of the means)
    assert s.mean_rates == {"none": 0.25, "curated": 0.75}
    assert s.mean_delta_pp == 37.5
    assert s.mean_g == pytest.approx(0.625)  # (1.0 + 0.25) / 2; g of the means would be 0.667
    assert a.ci_low_pp is not None and a.ci_high_pp is not None and a.ci_low_pp <= 50.0 <= a.ci_high_pp


def test_registry_rows_read_score_percent_and_condition_names(tmp_path: Path) -> None:
    rows = [
        {"task": "t1", "model": "X (m)", "condition": "No Skills", "score": 33.3, "trials": 3, "passCount": 1},
        {"task": "t1", "model": "X (m)", "condition": "With Skills", "score": 100.0, "trials": 3, "passCount": 3},
    ]
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(rows))
    parsed = read_results_table(path)
    assert [(r.configuration, r.condition, r.mean_reward, r.trials) for r in parsed] == [
        ("X (m)", "none", pytest.approx(0.333), 3),
        ("X (m)", "curated", 1.0, 3),
    ]
    s = table_statistics(parsed, resamples=10)
    assert s.configurations[0].g == pytest.approx((1.0 - 0.333) / (1 - 0.333))


@pytest.mark.parametrize(
    "content,message",
    [
        (CSV + "t1,A,none,0.2,3\n", r"line 13: duplicate of line 2 \(task, configuration, condition\)"),
        ("task,configuration,condition,mean_reward\nt1,A,none,1.5\n", r"line 2: mean reward '1.5' is outside \[0, 1\]"),
        ("task,condition,mean_reward\nt1,none,1\n", r"line 2: missing configuration \(one of: configuration, config"),
        ("task,configuration,condition\nt1,A,none\n", "line 2: missing mean_reward, reward or score"),
        ("task,configuration,condition,mean_reward\nt1,A,none,abc\n", "line 2: not a number: 'abc'"),
        (
            '[{"task": "t", "model": "m", "condition": "none", "score": 120}]',
            r"row 1: mean reward 120 is outside \[0, 100\]",
        ),
        ("[1, 2", "not valid JSON"),
        ('{"data": []}', r"expected a JSON array of rows \(or an object with 'rows'\)"),
        ("task,configuration,condition,mean_reward\n", "no rows"),
    ],
)
def test_bad_tables_are_one_line_errors_naming_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(UserError, match=rf"^{path}: {message}"):
        read_results_table(path)


def test_unknown_baseline_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(CSV)
    with pytest.raises(
        UserError, match=r"baseline condition 'no-skills' is not in the table \(conditions: none, curated\)"
    ):
        table_statistics(read_results_table(path), baseline="no-skills")


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["skillworks", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_cli_table_fits_80_columns_with_whole_numbers_and_json_prints_the_statistics_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    long_name = "OpenHands (Gemini 3.1 Flash Lite) with a long configuration name"
    path = tmp_path / "table.csv"
    path.write_text(CSV.replace(",A,", f",{long_name},"))
    monkeypatch.setenv("COLUMNS", "80")
    assert _cli(monkeypatch, "import", "results", str(path), "--resamples", "200") == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "+50.0 [" in out and "+25.0 [" in out  # Δ and its interval whole, on the configuration's line
    assert re.search(
        r"^B\s+0\.0%\s+50\.0%\s+\+25\.0 \[[-+]\d+\.\d, [-+]\d+\.\d\]\s+25\.0%\s+2 \(\+1\)\s+1\s*$", out, re.M
    )
    assert re.search(r"^mean of 2\s+25\.00%\s+75\.00%\s+\+37\.50\s+62\.50%\s+1\s*$", out, re.M)
    assert (
        " ".join(out.split()).count("(Gemini 3.1 Flash Lite) with a long configuration name") == 1
    )  # wrapped, not cut
    assert _cli(monkeypatch, "import", "results", str(path), "--resamples", "200", "--format", "json") == 0
    captured = capsys.readouterr()
    stats = TableSummary.model_validate_json(captured.out)  # stdout is the document alone
    assert stats.mean_g == pytest.approx(0.625) and "11 rows" in captured.err
    assert _cli(monkeypatch, "import", "results", str(path), "--format", "xml") == 2
    assert "unknown --format 'xml' (allowed: table, md, json)" in capsys.readouterr().err


def test_cli_prints_the_table_and_writes_json_that_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "table.csv"
    path.write_text(CSV)
    out = tmp_path / "stats.json"
    assert _cli(monkeypatch, "import", "results", str(path), "--resamples", "200", "-o", str(out), "-f", "md") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "11 rows: 3 tasks x 2 configurations; 1 missing and 1 unpaired cells (never imputed)"
    assert lines[4].startswith("| B | 0.0% | 50.0% | +25.0 [") and "| 25.0% | 2 (+1 unpaired) | 1 |" in lines[4]
    assert lines[5] == "| **mean of 2 configurations** | 25.00% | 75.00% | +37.50 | 62.50% | | 1 |"
    back = TableSummary.model_validate_json(out.read_text())
    assert back.mean_g == pytest.approx(0.625) and back.configurations[1].unpaired_tasks == ["t3"]


@pytest.mark.skipif(not REGISTRY.is_file(), reason="the SkillsBench registry is not on this machine")
def test_skillsbench_registry_reproduces_the_paper_headline() -> None:
    s = table_statistics(read_results_table(REGISTRY), resamples=200)
    assert (s.tasks, len(s.configurations), s.missing_cells, s.unpaired_cells) == (87, 18, 0, 0)
    assert round((s.mean_rates["none"] or 0) * 100, 1) == 33.9
    assert round((s.mean_rates["curated"] or 0) * 100, 1) == 50.5
    assert round(s.mean_delta_pp or 0, 1) == 16.6
    assert abs((s.mean_g or 0) * 100 - 25.5) < 0.06  # 25.55: the paper prints 25.5
