"""HTML structure of the run report's charts and of the trajectory pages (single trial and side by side):
charts present with legends, links resolve to files that exist, no external URL, hostile trajectory text
escaped, skill loads and script runs highlighted, a trial id that would escape the run dir refused.
(The rendering in a real browser is tests/integration/report.)"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from skillworks.report import write_reports

SKILLS_DIR = "/home/agent/.agents/skills"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            if k == "href" and v is not None:
                self.hrefs.append(v)
            if k == "src" and v is not None:
                self.srcs.append(v)


def links_of(page: Path) -> list[Path]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    assert parser.srcs == []
    assert all(not re.match(r"^[a-z]+:|^//", h) for h in parser.hrefs), parser.hrefs
    return [(page.parent / h).resolve() for h in parser.hrefs if not h.startswith("#")]


def trajectory(tool_output: str) -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "builtin", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "do the task"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "skill", "arguments": {"name": "skill-a"}},
                    {"tool_call_id": "c2", "function_name": "bash",
                     "arguments": {"command": f"python3 {SKILLS_DIR}/skill-a/scripts/run.py"}},
                    {"tool_call_id": "c3", "function_name": "skill", "arguments": {"name": "skill-a"}},
                ],
                "observation": {"results": [
                    {"source_call_id": "c1", "content": "skill instructions"},
                    {"source_call_id": "c2", "content": tool_output},
                    {"source_call_id": "c3", "content": "denied", "extra": {"is_error": True}},
                ]},
                "metrics": {"prompt_tokens": 1200, "completion_tokens": 30, "cached_tokens": 1000},
            },
            {"step_id": 3, "source": "agent", "message": "done"},
        ],
    }  # fmt: skip


def write_trial_files(run: Path, trial_id: str, tool_output: str = "ok") -> Path:
    d = run / "trials" / trial_id
    d.mkdir(parents=True, exist_ok=True)
    (d / "trajectory.json").write_text(json.dumps(trajectory(tool_output)))
    staged = [{"name": "skill-a", "path": f"{SKILLS_DIR}/skill-a"}] if "__curated__" in trial_id else []
    (d / "skills.json").write_text(json.dumps({"skills_dir": SKILLS_DIR, "expected": staged, "visible": staged}))
    (d / "behavior.json").write_text(
        json.dumps({"score": 0.5, "assertions": [
            {"assertion": "runs the script", "verdict": True, "evidence": "step 2 runs scripts/run.py"},
            {"assertion": "checks the output", "verdict": False, "evidence": "<b>never</b>"},
        ]})
    )  # fmt: skip
    return d


def test_run_report_has_every_chart_and_its_cells_link_to_trial_pages(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    for r in fx.standard_results():
        write_trial_files(run, r.trial_id)
    html_path = write_reports(run, resamples=200)["html"]
    html = html_path.read_text()
    kinds = re.findall(r'<svg class="chart" data-chart="(\w+)"', html)
    assert kinds.count("bars") == 1 and kinds.count("heatmap") == 1 and kinds.count("forest") == 1
    assert kinds.count("hbars") == 5  # failure modes, skill invocation, tokens, cost, time
    assert 'class="legend-item"' in html
    links = links_of(html_path)
    assert all(p.is_file() for p in links), [p for p in links if not p.is_file()]
    pages = {p for p in links if p.name == "trial.html"}
    assert len(pages) == 11  # every recorded trial; the missing one has no page
    pairs = {p for p in links if p.parent.name == "pairs"}
    assert len(pairs) == 5  # curated trials with a none trial of the same index
    assert "too few tasks for an interval — n=2" in html  # 2 paired tasks: no Δ interval, no verdict
    for page in pages | pairs:
        back = links_of(page)
        assert html_path.resolve() in back and all(p.is_file() for p in back), page


def test_a_zero_rate_bar_is_still_drawn(fx: Any, tmp_path: Path) -> None:
    results = [
        fx.trial(t, c, k, 0.0 if c == "none" else 1.0)
        for t in ("t1", "t2")
        for c in ("none", "curated")
        for k in range(3)
    ]
    html = write_reports(fx.write_run(tmp_path, results), resamples=100)["html"].read_text()
    bars = re.search(r'data-chart="bars".*?</svg>', html, re.S)
    assert bars is not None
    heights = [float(h) for h in re.findall(r'<g class="bar"><rect [^>]*height="([\d.]+)"', bars.group(0))]
    assert len(heights) == 2 and min(heights) >= 2.0 and ">0%<" in bars.group(0)


def test_trial_page_highlights_skill_use_and_escapes_the_trajectory(fx: Any, tmp_path: Path) -> None:
    from skillworks.results import TestResult

    results = fx.standard_results()
    tests = [
        TestResult(name="test_total", status="passed"),
        TestResult(name="test_vat", status="failed", message="<0.19>"),
    ]
    results[6] = results[6].model_copy(update={"tests": tests, "rewards": {"reward": 1.0, "style": 0.25}})
    run = fx.write_run(tmp_path, results)
    hostile = "<script>alert(1)</script><img src=http://evil.example/x>"
    write_trial_files(run, "t1__curated__a1__t0", tool_output=hostile)
    write_trial_files(run, "t1__none__a1__t0")
    write_reports(run, resamples=100)
    page = (run / "trials" / "t1__curated__a1__t0" / "trial.html").read_text()
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "skill load: skill-a" in page and "script: skill-a/scripts/run.py" in page
    assert "failed skill load: skill-a" in page  # the call whose result is an error
    assert page.count("skill load: skill-a") == 2  # one load, one failed load
    # a failed tool call is marked as one, on the call (in the none trial too, where it is no skill load)
    assert (
        page.count('<div class="call failed">') == 1 and page.count('<span class="tag call-failed">failed</span>') == 1
    )
    assert page.count('<div class="call">') == 2
    assert 'class="step agent skill"' in page
    assert "in 1,200 · cached 1,000 · out 30" in page  # usage per step
    assert "runs the script" in page and "&lt;b&gt;never&lt;/b&gt;" in page  # behaviour verdicts with evidence
    assert "Verifier tests (1/2 passed)" in page and "<td>test_vat</td>" in page and "&lt;0.19&gt;" in page  # CTRF
    assert "reward 1; style 0.25" in page
    none_page = (run / "trials" / "t1__none__a1__t0" / "trial.html").read_text()
    assert "skill load:" not in none_page  # nothing staged: the same call is not a skill load
    assert none_page.count('<div class="call failed">') == 1
    pair = (run / "pairs" / "t1__curated__a1__t0__vs__none.html").read_text()
    assert pair.count('<div class="side">') == 2 and "<script" not in pair
    assert all(p.is_file() for p in links_of(run / "pairs" / "t1__curated__a1__t0__vs__none.html"))


def test_a_trial_without_files_or_with_a_broken_trajectory_still_gets_a_page(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    d = run / "trials" / "t1__none__a1__t1"
    d.mkdir(parents=True)
    (d / "trajectory.json").write_text("{not json")
    write_reports(run, resamples=100)
    broken = (d / "trial.html").read_text()
    assert "trajectory.json: not valid ATIF" in broken
    bare = (run / "trials" / "t2__none__a1__t2" / "trial.html").read_text()  # errored in setup, no files
    assert "no trajectory.json recorded" in bare and "sandbox_error" in bare


def test_a_trial_id_that_would_leave_the_run_directory_gets_no_page(fx: Any, tmp_path: Path) -> None:
    results = fx.standard_results()
    results[0] = results[0].model_copy(update={"trial_id": "../../escape"})
    run = fx.write_run(tmp_path, results)
    write_reports(run, resamples=100)
    assert not (tmp_path / "escape").exists() and not (run.parent / "escape").exists()
    assert not list(tmp_path.rglob("escape*"))


def test_a_symlinked_trial_dir_pointing_outside_gets_no_page(fx: Any, tmp_path: Path) -> None:
    run = fx.write_run(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (run / "trials").mkdir()
    (run / "trials" / "t1__none__a1__t0").symlink_to(outside, target_is_directory=True)
    write_reports(run, resamples=100)
    assert list(outside.iterdir()) == []
    assert (run / "trials" / "t1__curated__a1__t0" / "trial.html").is_file()


def test_a_run_of_many_agents_and_long_task_names_stays_readable(fx: Any, tmp_path: Path) -> None:
    """Eight agents x 2 conditions, 30 tasks with long names (a SkillsBench-sized report, shrunk): the heatmap
    keeps readable cells in a box that scrolls instead of shrinking to fit, its slanted column labels put an
    agent's conditions side by side, one forest plot names every agent, and the bar chart fits the page."""
    from skillworks.report.charts import PAGE_WIDTH

    agents = [f"openhands-model-number-{i}" for i in range(8)]
    tasks = [f"crystallographic-wyckoff-position-analysis-{i:02d}" for i in range(30)]
    results = [
        fx.trial(t, c, 0, float((i + j + (c == "curated")) % 2), agent=a)
        for i, t in enumerate(tasks)
        for j, a in enumerate(agents)
        for c in ("none", "curated")
    ]
    exp = fx.experiment(
        tasks=tasks, trials=1, agents=[{"name": "builtin", "model": "m", "options": {"label": a}} for a in agents]
    )
    html = write_reports(fx.write_run(tmp_path, results, exp), resamples=100)["html"].read_text()
    heat = re.search(r'<div class="scroll"><svg class="chart" data-chart="heatmap".*?</svg></div>', html, re.S)
    assert heat is not None  # wider than the page: full size, scrolling
    label = r'<text x="[\d.]+" y="[\d.]+" transform="rotate\(-45 [^"]*\)" fill="#333">([^<]*)</text>'
    assert re.findall(label, heat.group(0))[:4] == [
        "none / openhands-model-number-0", "curated / openhands-model-number-0",
        "none / openhands-model-number-1", "curated / openhands-model-number-1",
    ]  # fmt: skip
    cell = re.search(r'<g class="cell"><rect [^>]* width="([\d.]+)"', heat.group(0))
    assert cell is not None and 40 <= float(cell.group(1)) <= 70  # as wide as the values, not the column names
    assert "crystallographic-wyckoff-position-analysis-29</text>" in heat.group(0)  # row names whole
    forests = re.findall(r'<svg class="chart" data-chart="forest".*?</svg>', html, re.S)
    assert len(forests) == 1 and all(f">{a}</text>" in forests[0] for a in agents)
    bars = re.search(r'<svg class="chart" data-chart="bars" role="img" width="([\d.]+)"', html)
    assert bars is not None and float(bars.group(1)) <= PAGE_WIDTH
    assert all(f">{a}</text>" in html.split('data-chart="bars"')[1].split("</svg>")[0] for a in agents)
