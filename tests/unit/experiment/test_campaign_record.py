"""campaign.json is read back strictly: a bad file is a one-line error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillworks.errors import UserError
from skillworks.experiment.campaign import CampaignLimits, read_campaign


def test_missing_campaign_file_is_an_empty_record(tmp_path: Path) -> None:
    record = read_campaign(tmp_path)
    assert record.stopped is None and record.not_run == [] and record.retried == 0


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        '{"stopped": 3, "not_run": [], "retried": 0}',
        '{"stopped": null, "not_run": ["x"], "retried": 0}',
    ],
)
def test_bad_campaign_file_names_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "campaign.json").write_text(text)
    with pytest.raises(UserError) as info:
        read_campaign(tmp_path)
    assert "campaign.json" in str(info.value)


def test_bad_limits_are_user_errors() -> None:
    with pytest.raises(UserError, match="--max-consecutive-errors"):
        CampaignLimits(max_consecutive_errors=-1)
    with pytest.raises(UserError, match="--max-cost"):
        CampaignLimits(max_cost_usd=float("nan"))
