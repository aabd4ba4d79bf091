"""`skillworks view`: a local web app over run directories (trials table with filter, sort and full-text
search, trial and pair pages, live refresh while a run writes results.jsonl)."""

from skillworks.view.index import FILTERS, SORTS, TrialIndex
from skillworks.view.server import ViewServer, make_app, start_view

__all__ = ["FILTERS", "SORTS", "TrialIndex", "ViewServer", "make_app", "start_view"]
