"""The campaign dashboard: progress, rate, forecast and alerts, refreshed while
assessors judge, and the same numbers over the API."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging import services
from judging.core import progress
from judging.forms import WorkChangeForm
from judging.machine_selectors import machine_spend
from judging.models import DocumentNote
from judging.status import CampaignStatus, campaign_status
from pooling.models import Campaign
from workbench.core.charts import Frame
from workbench.roles import IsOrganiser, organiser_required

# The chart looks this far past today at most; a later forecast is named, not drawn.
HORIZON_DAYS = 42


@organiser_required
def campaign_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    status = campaign_status(campaign)
    template = "judging/dashboard.html#live" if request.htmx else "judging/dashboard.html"
    return render(
        request,
        template,
        {
            "campaign": campaign,
            "status": status,
            "chart": burn_down_chart(status),
            "per_day": status.last_days(),
            "jobs": campaign.jobs.all()[:5],
            "machine_spend": machine_spend(campaign),
            "pools": campaign.pools.filter(retired_at__isnull=True).order_by("created_at"),
            "refresh_seconds": settings.WORKBENCH_DASHBOARD_REFRESH_SECONDS,
            "updated_at": timezone.localtime(),
        },
    )


@organiser_required
@require_POST
def note_give_back(request: HttpRequest, slug: str, note_id: int) -> HttpResponse:
    """Put a set-aside document back in its assessor's queue (its text fixed, say), or
    clear the mark of one a re-plan took out of the plan; the message says which."""
    note = get_object_or_404(DocumentNote, pk=note_id, topic__campaign__slug=slug)
    was_set_aside = bool(note.cannot_judge)
    in_queue = services.cannot_judge_clear(note=note)
    where = f"{note.assessor.username}'s queue for topic {note.topic.topic_id}"
    if not was_set_aside:
        messages.info(request, f"Nothing to give back: {note.docno} is not set aside.")
    elif in_queue:
        messages.success(request, f"{note.docno} is back in {where}.")
    else:
        messages.success(
            request,
            f"{note.docno} is no longer in {where}: a re-plan took it out of the plan, so "
            "there is nothing to judge. Its cannot-judge mark is cleared; the note stays.",
        )
    return redirect("judging:campaign_dashboard", slug)


@organiser_required
def forecast_change(request: HttpRequest, slug: str) -> HttpResponse:
    """The forecast now and after a re-plan that changes the work left by `change`
    judgments (the re-plan preview loads it)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    form = WorkChangeForm(request.GET)
    if not form.is_valid():
        return HttpResponse(f"change: {form.errors['change'][0]}", status=400)
    status = campaign_status(campaign)
    context = {
        "now": status.forecast,
        "after": status.forecast_with(form.cleaned_data["change"]),
        "change": form.cleaned_data["change"],
        "budget": status.budget,
    }
    return render(request, "judging/_forecast_change.html", context)


class CampaignStatusView(APIView):
    """The dashboard's numbers: the same JSON as `campaign_status --format json`."""

    permission_classes = [IsAuthenticated, IsOrganiser]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        return Response(campaign_status(campaign).to_dict())


def burn_down_chart(status: CampaignStatus) -> dict[str, Any]:
    """Coordinates of the burn-down SVG: the budget spent so far by day, the budget,
    the work the plan needs in all, and the forecast from today to its finish date."""
    today, forecast = status.today, status.forecast
    start = min([*status.daily, today - timedelta(days=progress.WINDOW_DAYS - 1)])
    end = today + timedelta(days=max(7, (today - start).days // 2))
    if forecast.finish_date:
        end = max(end, min(forecast.high or forecast.finish_date, today + _horizon()))
    spent = status.budget.spent
    planned = spent + forecast.remaining_work
    frame = Frame(
        0, (end - start).days, max(planned, status.budget.budget or 0), width=880, height=240
    )

    def day(d: date) -> int:
        return (d - start).days

    total, points = 0, []
    for offset in range(day(today) + 1):
        total += status.daily.get(start + timedelta(days=offset), 0)
        points.append((offset, total))
    chart: dict[str, Any] = {
        **frame.box(),
        "judged": frame.points(points),
        "today_x": frame.x(day(today)),
        "x_ticks": [frame.x_tick(day(d), label) for d, label in _date_labels(start, end, today)],
        "budget_y": None if status.budget.budget is None else frame.y(status.budget.budget),
        "planned_y": frame.y(planned),
        "forecast": {},
    }
    for name, finish in (
        ("line", forecast.finish_date),
        ("low", forecast.low),
        ("high", forecast.high),
    ):
        if finish and forecast.remaining_work:
            # Clipped at the chart's end: the line then stops short of the plan's total.
            shown = min(finish, end)
            reached = spent + forecast.remaining_work * (
                (shown - today).days / max((finish - today).days, 1)
            )
            chart["forecast"][name] = frame.points([(day(today), spent), (day(shown), reached)])
    chart["off_chart"] = forecast.finish_date is not None and forecast.finish_date > end
    return chart


def _horizon() -> timedelta:
    return timedelta(days=HORIZON_DAYS)


def _date_labels(start: date, end: date, today: date) -> list[tuple[date, str]]:
    """The x ticks and their labels: "Jun 28", with the year on the first tick and
    wherever the year changes (a forecast can run into the next year)."""
    labels, year = [], None
    for d in _ticks(start, end, today):
        labels.append((d, f"{d:%b} {d.day}" + (f" {d.year}" if d.year != year else "")))
        year = d.year
    return labels


def _ticks(start: date, end: date, today: date) -> list[date]:
    """About five dates from start to end, today among them."""
    step = max(1, (end - start).days // 4)
    ticks = [start + timedelta(days=k * step) for k in range(5) if k * step <= (end - start).days]
    ticks = [d for d in ticks if abs((d - today).days) > step // 3]
    return sorted([*ticks, today])
