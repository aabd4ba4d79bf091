"""Static trajectory pages: ``trials/<trial id>/trial.html`` for every trial of a run and
``pairs/<trial id>__vs__<baseline>.html`` side by side for each paired with/without trial (same task,
agent and trial index). The run and eval reports link to them; they link back to the report."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillworks import __version__
from skillworks.report.jinja_env import template
from skillworks.report.model import SCRIPTED_NOTE
from skillworks.report.trial_view import VIEW_INPUTS, TrialView, load_trial_view
from skillworks.results import TrialResult

PAGE_NAME = "trial.html"
PAIRS_DIR = "pairs"


def _safe_id(trial_id: str) -> bool:
    """A trial id usable as one path component (results.jsonl is input: never write outside the run)."""
    return bool(trial_id) and "/" not in trial_id and "\\" not in trial_id and trial_id not in (".", "..")


def trial_page(run_dir: Path, trial_id: str) -> Path:
    return run_dir / "trials" / trial_id / PAGE_NAME


def _pair_name(trial_id: str, baseline: str) -> str:
    return f"{trial_id}__vs__{baseline}.html"


def pair_page(run_dir: Path, trial_id: str, baseline: str) -> Path:
    return run_dir / PAIRS_DIR / _pair_name(trial_id, baseline)


def href(target: Path, from_dir: Path) -> str:
    """A relative link from a page in ``from_dir`` to ``target`` (forward slashes, works from file://)."""
    return Path(os.path.relpath(target.resolve(), from_dir.resolve())).as_posix()


def resolved_href(target: Path | str, from_dir: Path | str) -> str:
    """`href` for paths already resolved (thousands of pages: no file-system walk per link)."""
    return os.path.relpath(target, from_dir).replace(os.sep, "/")


@dataclass
class TrialPages:
    """Pages written for one run: trial id -> its page; treatment trial id -> its side-by-side page."""

    run_dir: Path
    trials: dict[str, Path] = field(default_factory=dict)
    pairs: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --- staleness: every page carries the fingerprint of its inputs (the trial results, the stat of each
# trial file the page reads, its links, and the code and templates that render it) right after its
# DOCTYPE; a page whose recorded fingerprint matches is not rendered again.
_DOCTYPE = "<!DOCTYPE html>"
_MARK = "<!-- skillworks-page "
_HEAD_BYTES = len(_DOCTYPE) + len(_MARK) + 48  # where the fingerprint is: no need to read a page
_RENDERERS = ("trial.html.j2", "pair.html.j2", "trial_parts.html.j2", "report.css")


@functools.cache
def _code_key() -> str:
    digest = hashlib.sha256(__version__.encode())
    here = Path(__file__).parent
    for path in (here / "trial_pages.py", here / "trial_view.py", *(here / "templates" / n for n in _RENDERERS)):
        digest.update(path.read_bytes())
    digest.update(SCRIPTED_NOTE.encode())
    return digest.hexdigest()


def _stamped(text: str, key: str) -> str:
    body = text[len(_DOCTYPE) :] if text.startswith(_DOCTYPE) else text
    return f"{_DOCTYPE}\n{_MARK}{key} -->{body}"


def _recorded_key(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        head = os.read(fd, _HEAD_BYTES).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    start = head.find(_MARK)
    end = head.find(" -->", start)
    return head[start + len(_MARK) : end] if start >= 0 and end > start else None


def _files_key(trial_dir: str) -> str:
    """The stat (size, mtime) of every trial file a page reads; missing ones count too."""
    parts = []
    for name in VIEW_INPUTS:
        try:
            st = os.stat(f"{trial_dir}/{name}")
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return ",".join(parts)


_Slot = tuple[str, str, str, str, int]


def _slot(r: TrialResult) -> _Slot:
    return (r.run_id, r.task_id, r.condition, r.agent, r.trial_index)


class _PageSet:
    """The latest result of every trial slot of one run, and the pages they make.

    Thousands of pages: paths are strings and links are the fixed shapes of the run dir's layout
    (a trial page is ``trials/<id>/trial.html``, a pair page ``pairs/<name>.html``), with no
    file-system walk per page; the links to the reports are computed once per kind of page."""

    def __init__(self, run_dir: Path, baselines: Mapping[str, str], reports: Sequence[Path]) -> None:
        self.run_dir = run_dir.resolve()  # pages are built from the resolved run dir: links need no resolve each
        self.root = str(self.run_dir)
        self.baselines = dict(baselines)
        self.treatments: dict[str, list[str]] = {}  # baseline condition -> the conditions compared with it
        for treatment, base in self.baselines.items():
            self.treatments.setdefault(base, []).append(treatment)
        resolved = [p.resolve() for p in reports]
        trials_dir = self.run_dir / "trials"
        # a trials dir that is a link out of the run gets no pages at all
        self._trials_ok = not trials_dir.exists() or trials_dir.resolve().is_relative_to(self.run_dir)
        self._trial_report_links = [(p.name, resolved_href(p, trials_dir / "x")) for p in resolved]
        self._pair_report_links = [(p.name, resolved_href(p, self.run_dir / PAIRS_DIR)) for p in resolved]
        self.by_slot: dict[_Slot, TrialResult] = {}
        self.out = TrialPages(run_dir=self.run_dir)
        self._inputs: dict[str, str] = {}  # trial id -> fingerprint of its result and files
        self._views: dict[str, TrialView] = {}

    def _trial_dir(self, trial_id: str) -> str:
        return f"{self.root}/trials/{trial_id}"

    def _safe_dir(self, trial_id: str) -> bool:
        if not self._trials_ok or not _safe_id(trial_id):
            return False
        trial_dir = self._trial_dir(trial_id)
        # a symlinked trial dir must stay inside the run (one lstat in the common case)
        return not os.path.islink(trial_dir) or Path(trial_dir).resolve().is_relative_to(self.run_dir)

    def add(self, r: TrialResult) -> bool:
        """Keep ``r`` if it is its slot's latest attempt and its trial dir is safe to write into."""
        if not self._safe_dir(r.trial_id):
            self.out.skipped.append(r.trial_id)
            return False
        previous = self.by_slot.get(_slot(r))
        if previous is not None and r.attempt < previous.attempt:
            return False
        self.by_slot[_slot(r)] = r
        self._inputs.pop(r.trial_id, None)
        self._views.pop(r.trial_id, None)
        if previous is not None and previous.trial_id != r.trial_id:
            self.out.trials.pop(previous.trial_id, None)
        self.out.trials[r.trial_id] = Path(f"{self._trial_dir(r.trial_id)}/{PAGE_NAME}")
        return True

    def pairs_of(self, r: TrialResult) -> list[tuple[TrialResult, TrialResult]]:
        """The (treatment, baseline) pairs ``r`` is in, treatment side first."""
        run, task, condition, agent, index = _slot(r)
        pairs = []
        base = self.baselines.get(condition)
        other = self.by_slot.get((run, task, base, agent, index)) if base is not None else None
        if other is not None:
            pairs.append((r, other))
        for treatment in self.treatments.get(condition, []):
            left = self.by_slot.get((run, task, treatment, agent, index))
            if left is not None:
                pairs.append((left, r))
        return pairs

    def _input_key(self, r: TrialResult) -> str:
        key = self._inputs.get(r.trial_id)
        if key is None:
            key = r.model_dump_json() + _files_key(self._trial_dir(r.trial_id))
            self._inputs[r.trial_id] = key
        return key

    def _view(self, r: TrialResult) -> TrialView:
        view = self._views.get(r.trial_id)
        if view is None:
            view = self._views[r.trial_id] = load_trial_view(self.run_dir, r)
        return view

    def forget_views(self) -> None:
        self._views.clear()

    def _emit(self, page: str, parts: Sequence[object], render: Callable[[], str]) -> bool:
        key = hashlib.sha256(repr((_code_key(), *parts)).encode()).hexdigest()[:32]
        if _recorded_key(page) == key:
            return False
        _write(Path(page), _stamped(render(), key))
        return True

    def write_trial(self, r: TrialResult) -> bool:
        pair_links = [
            (
                f"side by side: {a.condition} vs {b.condition}",
                f"../../{PAIRS_DIR}/{_pair_name(a.trial_id, b.condition)}",
            )
            for a, b in self.pairs_of(r)
        ]
        report_links = self._trial_report_links
        return self._emit(
            f"{self._trial_dir(r.trial_id)}/{PAGE_NAME}",
            (self._input_key(r), pair_links, report_links),
            lambda: template("trial.html.j2").render(
                v=self._view(r),
                report_links=report_links,
                pair_links=pair_links,
                scripted=r.provider == "scripted",
                scripted_note=SCRIPTED_NOTE,
            ),
        )

    def write_pair(self, left: TrialResult, right: TrialResult) -> bool:
        page = f"{self.root}/{PAIRS_DIR}/{_pair_name(left.trial_id, right.condition)}"
        self.out.pairs[left.trial_id] = Path(page)
        report_links = self._pair_report_links

        def render() -> str:
            return template("pair.html.j2").render(
                left=self._view(left),
                right=self._view(right),
                left_prefix=f"../trials/{left.trial_id}/",
                right_prefix=f"../trials/{right.trial_id}/",
                left_href=f"../trials/{left.trial_id}/{PAGE_NAME}",
                right_href=f"../trials/{right.trial_id}/{PAGE_NAME}",
                report_links=report_links,
                scripted="scripted" in (left.provider, right.provider),
                scripted_note=SCRIPTED_NOTE,
            )

        return self._emit(page, (self._input_key(left), self._input_key(right), report_links), render)


def write_trial_pages(
    run_dir: Path,
    results: Sequence[TrialResult],
    *,
    baselines: Mapping[str, str],
    reports: Sequence[Path] = (),
) -> TrialPages:
    """Write a page per trial (latest attempts) and a side-by-side page per (condition, baseline) pair.

    ``baselines`` maps a treatment condition to the condition it is compared with (e.g. curated -> none).
    ``reports`` are the report pages the trial pages link back to. Pages whose inputs did not change
    since they were written (during the run, see `TrialPageWriter`, or by an earlier report) are kept.
    """
    pages = _PageSet(run_dir, baselines, reports)
    for r in results:
        pages.add(r)
    latest = list(pages.by_slot.values())
    for r in latest:
        pages.write_trial(r)
    for r in latest:
        if r.condition in pages.baselines:
            for left, right in pages.pairs_of(r):
                if left is r:
                    pages.write_pair(left, right)
    return pages.out


class TrialPageWriter:
    """Writes a trial's page when its result is recorded (and the side-by-side page, with the link to
    it on its partner's page, once both trials of a pair are), so that the report after a run finds
    its pages written and renders none again. ``recorded``: results recorded before (a resumed run)."""

    def __init__(
        self,
        run_dir: Path,
        *,
        baselines: Mapping[str, str],
        reports: Sequence[Path],
        recorded: Sequence[TrialResult] = (),
    ) -> None:
        self._pages = _PageSet(run_dir, baselines, reports)
        for r in recorded:
            self._pages.add(r)

    def add(self, result: TrialResult) -> None:
        pages = self._pages
        if not pages.add(result):
            return
        pages.write_trial(result)
        for left, right in pages.pairs_of(result):
            pages.write_pair(left, right)
            pages.write_trial(right if left is result else left)  # its partner now links to the pair
        pages.forget_views()  # a run keeps no trajectories in memory
