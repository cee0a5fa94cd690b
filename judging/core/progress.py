"""How far a campaign's judging is, how fast it goes, and when it will finish. Pure core.

Inputs are plain numbers the selectors count from the stored judgments:
judgments made per day, and what each assessor still has to judge. The
forecast divides the work left by the rate of the last `window` days; its
interval comes from the spread of those days' counts (mean plus or minus one
standard deviation); a rate that spread reaches zero leaves the late end
open (None).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

WINDOW_DAYS = 7


@dataclass(frozen=True)
class Forecast:
    """When the work left is done at the recent rate; None where it cannot be said."""

    rate_per_day: float
    remaining_work: int
    finish_date: date | None
    low: date | None  # at the higher rate: the earliest likely date
    high: date | None  # at the lower rate: the latest likely date (None: open)
    fits_budget: bool | None  # None without a budget

    def describe(self) -> str:
        """One line for the command line: work left, rate, date and whether it is paid for."""
        when = (
            f"finished {date_text(self.finish_date)} (between {date_text(self.low)} and "
            f"{date_text(self.high) if self.high else 'later'})"
            if self.finish_date and self.low
            else "no judgments in the last 7 days: no forecast"
        )
        paid = {None: "", True: "; the budget covers it", False: "; the budget does not cover it"}
        return (
            f"{self.remaining_work} judgments left at {self.rate_per_day:.1f} a day: "
            f"{when}{paid[self.fits_budget]}"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "rate_per_day": self.rate_per_day,
            "remaining_work": self.remaining_work,
            "finish_date": _iso(self.finish_date),
            "low": _iso(self.low),
            "high": _iso(self.high),
            "fits_budget": self.fits_budget,
        }


def window_days(today: date, window: int = WINDOW_DAYS) -> list[date]:
    """The `window` days ending today, oldest first."""
    return [today - timedelta(days=back) for back in range(window - 1, -1, -1)]


def daily_series(
    counts: Mapping[date, int], *, today: date, window: int = WINDOW_DAYS
) -> list[int]:
    """The judgments of each of the `window` days ending today, oldest first (0 for none)."""
    return [counts.get(day, 0) for day in window_days(today, window)]


def forecast(
    counts: Mapping[date, int],
    *,
    today: date,
    remaining_work: int,
    remaining_budget: int | None,
    window: int = WINDOW_DAYS,
) -> Forecast:
    """When `remaining_work` judgments are done at the rate of the last `window` days."""
    series = daily_series(counts, today=today, window=window)
    rate = sum(series) / window
    spread = statistics.pstdev(series) if len(series) > 1 else 0.0
    fits = None if remaining_budget is None else remaining_work <= remaining_budget
    if remaining_work <= 0:
        return Forecast(rate, 0, today, today, today, fits)
    if rate <= 0:
        return Forecast(rate, remaining_work, None, None, None, fits)
    return Forecast(
        rate,
        remaining_work,
        _after(today, remaining_work, rate),
        _after(today, remaining_work, rate + spread),
        _after(today, remaining_work, rate - spread) if rate - spread > 0 else None,
        fits,
    )


@dataclass(frozen=True)
class QueueLeft:
    """One assignment's work left, in the order its assessor works through them."""

    assessor: str
    topic: str
    left: int


def topics_past_the_budget(
    queues: Sequence[QueueLeft],
    rates: Mapping[str, float],
    *,
    remaining_budget: int | None,
) -> list[str]:
    """Topics that will not be finished before the budget runs out, at the current plan.

    Each assessor works through their queues in order at their own recent
    rate; all of them together spend the budget at the sum of their rates.
    A topic is past the budget when some queue of it ends after the day the
    budget runs out. Without a budget, or while the budget covers all the
    work left, none is.
    """
    if remaining_budget is None or sum(q.left for q in queues) <= remaining_budget:
        return []
    total_rate = sum(rates.get(assessor, 0.0) for assessor in {q.assessor for q in queues})
    budget_days = remaining_budget / total_rate if total_rate > 0 else 0.0
    done_by: dict[str, float] = {}
    late: list[str] = []
    for queue in queues:
        if queue.left <= 0:
            continue
        rate = rates.get(queue.assessor, 0.0)
        finish = done_by.get(queue.assessor, 0.0) + (queue.left / rate if rate > 0 else math.inf)
        done_by[queue.assessor] = finish
        if finish > budget_days and queue.topic not in late:
            late.append(queue.topic)
    return late


def outliers(values: Mapping[str, float], *, factor: float = 2.0) -> dict[str, str]:
    """Names whose value is more than `factor` times from the median of the others',
    with why; needs three or more values."""
    if len(values) < 3:
        return {}
    flagged = {}
    for name, value in values.items():
        others = statistics.median(v for n, v in values.items() if n != name)
        if others > 0 and value > factor * others:
            flagged[name] = f"{value:.1f} is more than {factor:g} times the others' {others:.1f}"
        elif others > 0 and value * factor < others:
            flagged[name] = f"{value:.1f} is less than 1/{factor:g} of the others' {others:.1f}"
    return flagged


def _after(today: date, work: int, rate: float) -> date:
    return today + timedelta(days=math.ceil(work / rate))


def date_text(day: date) -> str:
    """A forecast's date as people read it, always with its year ("28 Jun 2033"): a
    forecast can end in another year. Every page and command writes its dates so."""
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None
