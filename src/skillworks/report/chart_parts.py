"""Pieces every chart layout shares: ticks, legend entries, the palette and the text metrics used for layout."""

from __future__ import annotations

from dataclasses import dataclass

LEGEND_STEP = 140.0  # px per legend entry (charts are made wide enough for one row of entries)
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
PAGE_WIDTH = 1150.0  # px a chart may take on the report page before it scrolls (body max-width less padding)
CHAR_W = 6.5  # px per character of 11px sans-serif text (an estimate for layout)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class LegendItem:
    label: str
    colour: str


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str
