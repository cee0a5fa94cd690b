"""The pure core of the campaign's progress: daily series, forecast, late topics, outliers."""

from __future__ import annotations

import statistics
from datetime import date, timedelta

import pytest

from judging.core import progress
from judging.core.progress import QueueLeft

TODAY = date(2026, 11, 23)


def history(*counts: int) -> dict[date, int]:
    """Counts of the days ending today, oldest first."""
    return {TODAY - timedelta(days=len(counts) - 1 - k): n for k, n in enumerate(counts)}


def test_daily_series_fills_days_without_judgments_and_drops_older_ones():
    counts = {TODAY: 5, TODAY - timedelta(days=2): 3, TODAY - timedelta(days=30): 99}
    assert progress.window_days(TODAY)[0] == TODAY - timedelta(days=6)
    assert progress.daily_series(counts, today=TODAY) == [0, 0, 0, 0, 3, 0, 5]


def test_a_steady_rate_forecasts_one_date_with_no_spread():
    forecast = progress.forecast(
        history(*[40] * 7), today=TODAY, remaining_work=400, remaining_budget=1000
    )
    assert forecast.rate_per_day == 40
    assert forecast.finish_date == forecast.low == forecast.high == TODAY + timedelta(days=10)
    assert forecast.fits_budget is True


def test_the_interval_comes_from_the_spread_of_the_daily_counts():
    counts = [10, 30, 10, 30, 10, 30, 20]
    forecast = progress.forecast(
        history(*counts), today=TODAY, remaining_work=200, remaining_budget=150
    )
    spread = statistics.pstdev(counts)  # 8.45
    assert forecast.rate_per_day == 20
    assert forecast.finish_date == TODAY + timedelta(days=10)
    assert forecast.low == TODAY + timedelta(days=-(-200 // (20 + spread)))  # 8 days
    assert forecast.high == TODAY + timedelta(days=-(-200 // (20 - spread)))  # 18 days
    assert forecast.fits_budget is False


def test_a_spread_that_reaches_zero_leaves_the_late_end_open():
    forecast = progress.forecast(
        history(0, 0, 0, 0, 0, 0, 70), today=TODAY, remaining_work=100, remaining_budget=None
    )
    assert forecast.finish_date == TODAY + timedelta(days=10)
    assert forecast.high is None
    assert forecast.fits_budget is None


def test_no_recent_judgments_means_no_forecast_and_no_work_means_done_today():
    idle = progress.forecast(
        {TODAY - timedelta(days=8): 50}, today=TODAY, remaining_work=10, remaining_budget=5
    )
    assert (idle.finish_date, idle.low, idle.high, idle.fits_budget) == (None, None, None, False)
    assert idle.to_dict()["finish_date"] is None
    done = progress.forecast(history(5), today=TODAY, remaining_work=0, remaining_budget=0)
    assert done.finish_date == TODAY
    assert done.to_dict()["finish_date"] == "2026-11-23"


def test_topics_past_the_budget_follow_each_assessors_queue_at_their_rate():
    queues = [
        QueueLeft("ann", "1", 30),  # ann: done after 3 days
        QueueLeft("ann", "2", 30),  # ... and 6 days
        QueueLeft("ben", "3", 10),  # ben: done after 2 days
        QueueLeft("ben", "4", 0),
    ]
    rates = {"ann": 10.0, "ben": 5.0}
    # 45 judgments at 15 a day: the budget lasts 3 days.
    assert progress.topics_past_the_budget(queues, rates, remaining_budget=45) == ["2"]
    assert progress.topics_past_the_budget(queues, rates, remaining_budget=70) == []
    assert progress.topics_past_the_budget(queues, rates, remaining_budget=None) == []
    # Nobody judging: every unfinished topic is past a budget too small for it.
    assert progress.topics_past_the_budget(queues, {}, remaining_budget=10) == ["1", "2", "3"]


def test_outliers_are_far_from_the_median_of_the_others():
    assert progress.outliers({"a": 100, "b": 110, "c": 90, "d": 400, "e": 20}) == {
        "d": "400.0 is more than 2 times the others' 95.0",
        "e": "20.0 is less than 1/2 of the others' 105.0",
    }
    assert progress.outliers({"a": 100, "b": 1000}) == {}


@pytest.mark.parametrize("window", [1, 3, 7, 14])
def test_the_rate_is_the_mean_of_the_window(window):
    counts = {TODAY - timedelta(days=k): k + 1 for k in range(30)}
    forecast = progress.forecast(
        counts, today=TODAY, remaining_work=1, remaining_budget=None, window=window
    )
    assert forecast.rate_per_day == pytest.approx(sum(range(1, window + 1)) / window)


def test_a_forecast_date_always_reads_with_its_year():
    assert progress.date_text(date(2033, 6, 28)) == "28 Jun 2033"
    assert progress.date_text(TODAY) == "23 Nov 2026"  # this year's too: one rule
    forecast = progress.Forecast(2.0, 10, date(2033, 6, 28), date(2033, 6, 20), None, None)
    assert forecast.describe() == (
        "10 judgments left at 2.0 a day: finished 28 Jun 2033 (between 20 Jun 2033 and later)"
    )
