"""How far a campaign's judging is: what the dashboard, `campaign_status` and the
status API show, counted from the stored judgments (never from a counter).

Per topic and per assessor, the budget spent day by day, the forecast of the
pure core `judging.core.progress`, the alerts, and the documents set aside as
cannot-judge. Nothing here writes.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import Aggregate, Count, Exists, FloatField, Max, OuterRef, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from judging.adaptive import adaptive_caps
from judging.core import progress
from judging.models import Adjudication, Assignment, DocumentNote, Judgment, JudgmentEvent
from pooling.core.ledger import BudgetState
from pooling.models import Campaign, Pool, PoolEntry, Topic
from pooling.selectors import WithoutText, campaign_budget, pools_without_text
from workbench.db import read_snapshot


@dataclass(frozen=True)
class TopicProgress:
    topic_id: str
    pooled: int
    to_judge: int
    judged: int
    relevant: int
    assessors: tuple[str, ...]

    @property
    def finished(self) -> bool:
        return self.judged >= self.to_judge


@dataclass(frozen=True)
class AssessorProgress:
    username: str
    judged_today: int
    judged_week: int
    judged_total: int
    active_hours: float
    per_hour: float | None
    median_seconds: float | None
    queue_done: int
    queue_total: int

    @property
    def queue_share(self) -> float | None:
        return self.queue_done / self.queue_total if self.queue_total else None


@dataclass(frozen=True)
class SetAside:
    """A document an assessor set aside as one they cannot judge."""

    note_id: int
    topic_id: str
    topic_pk: int
    docno: str
    assessor: str
    reason: str
    text: str
    since: datetime
    # Whether one of the assessor's open queues still holds it: a re-plan may have
    # taken it out of the plan, and then there is nothing to give back.
    in_queue: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic_id,
            "docno": self.docno,
            "assessor": self.assessor,
            "reason": self.reason,
            "text": self.text,
            "since": self.since.isoformat(),
            "in_queue": self.in_queue,
        }


@dataclass(frozen=True)
class CampaignStatus:
    """Everything the dashboard and `campaign_status` show, counted from the stored
    judgments of the campaign's pools that are not retired."""

    budget: BudgetState
    today: date
    topics: list[TopicProgress]
    assessors: list[AssessorProgress]
    daily: dict[date, int]
    forecast: progress.Forecast
    late_topics: list[str]
    unassigned_topics: list[str]
    assessor_alerts: dict[str, str]
    set_aside: list[SetAside]
    without_text: list[WithoutText]

    def forecast_with(self, work_change: int) -> progress.Forecast:
        """The forecast if the plan needed `work_change` more judgments (fewer if
        negative), at the same rate and against the same budget: a re-plan's preview."""
        return progress.forecast(
            self.daily,
            today=self.today,
            remaining_work=max(self.forecast.remaining_work + work_change, 0),
            remaining_budget=_left(self.budget),
        )

    def last_days(self) -> list[tuple[date, int]]:
        """The budget spent on each of the last 7 days, oldest first."""
        days = progress.window_days(self.today)
        return list(zip(days, progress.daily_series(self.daily, today=self.today), strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "campaign_day": self.today.isoformat(),
            "budget": self.budget.budget,
            "spent": self.budget.spent,
            "remaining": self.budget.remaining,
            "topics": {
                t.topic_id: {
                    "pooled": t.pooled,
                    "to_judge": t.to_judge,
                    "judged": t.judged,
                    "relevant": t.relevant,
                    "assessors": list(t.assessors),
                    "finished": t.finished,
                }
                for t in self.topics
            },
            "assessors": {
                a.username: {
                    "judged_today": a.judged_today,
                    "judged_week": a.judged_week,
                    "judged": a.judged_total,
                    "active_hours": a.active_hours,
                    "per_hour": a.per_hour,
                    "median_seconds": a.median_seconds,
                    "queue_done": a.queue_done,
                    "queue_total": a.queue_total,
                }
                for a in self.assessors
            },
            "per_day": {day.isoformat(): n for day, n in self.last_days()},
            "forecast": self.forecast.to_dict(),
            "alerts": {
                "late_topics": self.late_topics,
                "unassigned_topics": self.unassigned_topics,
                "assessors": self.assessor_alerts,
                "without_text": [
                    {"pool": w.pool_id, "name": w.pool_name, "documents": w.docnos}
                    for w in self.without_text
                ],
            },
            "cannot_judge": [note.to_dict() for note in self.set_aside],
        }


def campaign_status(campaign: Campaign, *, today: date | None = None) -> CampaignStatus:
    """The campaign's progress now: per topic, per assessor, the rate and the forecast,
    read from one snapshot of the database (`read_snapshot`), so that they agree."""
    with read_snapshot():
        return _campaign_status(campaign, today or timezone.localdate())


def _campaign_status(campaign: Campaign, today: date) -> CampaignStatus:
    per_topic = _topic_counts(campaign)
    assignments = (
        Assignment.objects.open()
        .filter(pool__campaign=campaign)
        .select_related("assessor", "topic")
        .order_by("assessor__username", "pool__created_at", "topic__position", "kind")
        .list_with_progress()
    )
    names: dict[str, list[str]] = {}
    for assignment in assignments:
        names.setdefault(assignment.topic.topic_id, []).append(assignment.assessor.username)
    topics = [
        TopicProgress(
            topic_id=topic_id,
            **per_topic[topic_id],
            assessors=tuple(sorted(set(names.get(topic_id, [])))),
        )
        for topic_id in campaign.topics.values_list("topic_id", flat=True)
        if topic_id in per_topic
    ]
    judgments = Judgment.objects.filter(topic__campaign=campaign)
    daily = _spent_per_day(campaign, judgments)
    assessors = _assessor_progress(judgments, assignments, today)
    rates = {a.username: a.judged_week / progress.WINDOW_DAYS for a in assessors}
    budget = campaign_budget(campaign)
    queues = [
        progress.QueueLeft(a.assessor.username, a.topic.topic_id, a.total - a.judged)
        for a in assignments
    ]
    # Work nobody is assigned yet is work all the same: one judgment per entry.
    unassigned = [t for t in topics if not t.assessors and not t.finished]
    remaining_work = sum(max(q.left, 0) for q in queues) + sum(
        t.to_judge - t.judged for t in unassigned
    )
    alerts = progress.outliers(
        {a.username: a.per_hour for a in assessors if a.per_hour is not None}
    )
    return CampaignStatus(
        budget=budget,
        today=today,
        topics=topics,
        assessors=assessors,
        daily=daily,
        forecast=progress.forecast(
            daily,
            today=today,
            remaining_work=remaining_work,
            remaining_budget=_left(budget),
        ),
        late_topics=progress.topics_past_the_budget(queues, rates, remaining_budget=_left(budget)),
        unassigned_topics=[t.topic_id for t in unassigned],
        assessor_alerts={name: f"judgments per active hour: {why}" for name, why in alerts.items()}
        | _agreement_alerts(campaign),
        set_aside=set_aside_documents(campaign),
        without_text=pools_without_text(campaign),
    )


def _left(budget: BudgetState) -> int | None:
    """The judgments the budget has left (none when overspent); None without a budget."""
    return None if budget.remaining is None else max(budget.remaining, 0)


def set_aside_documents(campaign: Campaign) -> list[SetAside]:
    """The campaign's documents assessors cannot judge, oldest first: for the
    organiser to fix and give back, re-assign or drop from the plan; each says
    whether its assessor's queue still holds it (`in_queue`)."""
    notes = (
        DocumentNote.objects.filter(topic__campaign=campaign)
        .exclude(cannot_judge="")
        .with_in_queue()
        .select_related("topic", "assessor")
        .order_by("updated_at", "id")
    )
    return [
        SetAside(
            note_id=note.pk,
            topic_id=note.topic.topic_id,
            topic_pk=note.topic_id,
            docno=note.docno,
            assessor=note.assessor.username,
            reason=note.get_cannot_judge_display(),
            text=note.text,
            since=note.updated_at,
            in_queue=note.in_queue,
        )
        for note in notes
    ]


def _topic_counts(campaign: Campaign) -> dict[str, dict[str, int]]:
    """Per topic, over the entries of the current plan: documents pooled, drawn to
    judge, judged among those, and judged relevant by anyone among those (a judged
    document a re-plan left undrawn counts in neither, so Relevant never exceeds
    Judged). A document in two pools counts once, drawn if either pool draws it.

    One grouped statement: the ORM's form (a count distinct over correlated
    EXISTS per entry) took 0.5-0.9 s on a 100,000-entry pool; joining the
    plan to the judged documents once takes about 0.1 s (bench_dashboard).
    With one pool (the common case) its entries are the plan as they are: a
    (topic, docno) is unique in a pool, and merging them would double the time.
    """
    entry, pool, judgment, topic = (
        connection.ops.quote_name(model._meta.db_table)
        for model in (PoolEntry, Pool, Judgment, Topic)
    )
    one_pool = Pool.objects.filter(campaign=campaign, retired_at__isnull=True).count() == 1
    drawn = "CASE WHEN e.sampled THEN 1 ELSE 0 END"
    sql = f"""
        WITH plan AS (
            SELECT e.topic_id, e.docno, {drawn if one_pool else f"MAX({drawn})"} AS drawn
            FROM {entry} e JOIN {pool} p ON p.id = e.pool_id
            WHERE p.campaign_id = %s AND p.retired_at IS NULL AND NOT e.retired
            {"" if one_pool else "GROUP BY e.topic_id, e.docno"}
        ), judged AS (
            SELECT j.topic_id, j.docno, MAX(CASE WHEN j.relevance > 0 THEN 1 ELSE 0 END) AS relevant
            FROM {judgment} j JOIN {topic} t ON t.id = j.topic_id
            WHERE t.campaign_id = %s
            GROUP BY j.topic_id, j.docno
        )
        SELECT t.topic_id, COUNT(*), SUM(plan.drawn),
               SUM(CASE WHEN judged.docno IS NULL THEN 0 ELSE plan.drawn END),
               SUM(COALESCE(judged.relevant, 0) * plan.drawn)
        FROM plan
        JOIN {topic} t ON t.id = plan.topic_id
        LEFT JOIN judged ON judged.topic_id = plan.topic_id AND judged.docno = plan.docno
        GROUP BY t.topic_id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign.pk, campaign.pk])
        rows = cursor.fetchall()
    counts = {
        topic_id: {"pooled": pooled, "to_judge": drawn, "judged": judged, "relevant": relevant}
        for topic_id, pooled, drawn, judged, relevant in rows
    }
    # An adaptive pool will draw up to each topic's share of its budget.
    open_pools = Pool.objects.filter(campaign=campaign, retired_at__isnull=True)
    for caps in adaptive_caps(open_pools.values_list("pk", flat=True)).values():
        for topic_id, cap in caps.items():
            if topic_id in counts:
                counts[topic_id]["to_judge"] = max(counts[topic_id]["to_judge"], cap)
    return counts


def _spent_per_day(campaign: Campaign, judgments: Any) -> dict[date, int]:
    """The budget spent each day: judgments on the day first made, adjudications
    (where they count) on the day last decided; the days sum to `BudgetState.spent`."""
    spent: dict[date, int] = {}
    sources = [(judgments, "created_at")]
    if campaign.budget_counts_adjudications:
        sources.append((Adjudication.objects.filter(topic__campaign=campaign), "decided_at"))
    for rows, field in sources:
        for day, n in (
            rows.annotate(day=TruncDate(field))
            .values("day")
            .annotate(n=Count("id"))
            .values_list("day", "n")
        ):
            spent[day] = spent.get(day, 0) + n
    return spent


def _assessor_progress(
    judgments: Any, assignments: list[Assignment], today: date
) -> list[AssessorProgress]:
    week_start = today - timedelta(days=progress.WINDOW_DAYS - 1)
    timed = Q(seconds__gt=0)
    counts = {
        row.pop("assessor__username"): row
        for row in judgments.values("assessor__username").annotate(
            total=Count("id"),
            today=Count("id", filter=Q(created_at__date=today)),
            week=Count(
                "id", filter=Q(created_at__date__gte=week_start, created_at__date__lte=today)
            ),
            timed=Count("id", filter=timed),
            seconds=Sum("seconds", filter=timed),
        )
    }
    medians = _median_seconds(judgments.filter(timed))
    queues: dict[str, list[int]] = {}
    for assignment in assignments:
        done_total = queues.setdefault(assignment.assessor.username, [0, 0])
        done_total[0] += assignment.judged
        done_total[1] += assignment.total
    result = []
    for username in sorted(set(counts) | set(queues)):
        made = counts.get(username) or {"total": 0, "today": 0, "week": 0, "timed": 0}
        hours = (made.get("seconds") or 0.0) / 3600
        done, total = queues.get(username, [0, 0])
        result.append(
            AssessorProgress(
                username=username,
                judged_today=made["today"],
                judged_week=made["week"],
                judged_total=made["total"],
                active_hours=hours,
                per_hour=made["timed"] / hours if hours > 0 else None,
                median_seconds=medians.get(username),
                queue_done=done,
                queue_total=total,
            )
        )
    return result


class _Median(Aggregate):
    """PostgreSQL's median, which takes the mean of the middle two as `statistics.median`."""

    function = "percentile_cont"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def _median_seconds(timed: Any) -> dict[str, float]:
    """Each assessor's median seconds per judgment: PostgreSQL computes it (sending
    50,000 rows to Python took 0.1 s of the dashboard); other databases cannot."""
    if connection.vendor == "postgresql":
        rows = timed.values("assessor__username").annotate(median=_Median("seconds"))
        return {row["assessor__username"]: row["median"] for row in rows}
    seconds: dict[str, list[float]] = {}
    for username, spent in timed.values_list("assessor__username", "seconds"):
        seconds.setdefault(username, []).append(spent)
    return {username: statistics.median(values) for username, values in seconds.items()}


def _agreement_alerts(campaign: Campaign) -> dict[str, str]:
    """Assessors the agreement rule flags (`FlagRule`: Cohen's kappa on relevance
    against the others), over the documents two or more of them judged.

    The numpy-only statistics (no pandas: it would double the command's time),
    kept in the shared cache until a judgment changes."""
    version = JudgmentEvent.objects.filter(topic__campaign=campaign).aggregate(Max("id"))
    key = f"agreement-alerts:{campaign.pk}:{version['id__max']}"
    alerts = cache.get(key)
    if alerts is None:
        from judging.core import agreement_statistics  # numpy: only when judgments changed

        rule = agreement_statistics.FlagRule()
        aspects = agreement_statistics.schema_aspects(campaign.schema)
        aspect = next((a for a in aspects if a.name == rule.aspect), None)
        other = Judgment.objects.filter(topic=OuterRef("topic"), docno=OuterRef("docno")).exclude(
            assessor=OuterRef("assessor")
        )
        shared = Judgment.objects.filter(Exists(other), topic__campaign=campaign).values_list(
            "assessor__username", "topic__topic_id", "docno", "relevance"
        )
        alerts = {}
        if aspect is not None:
            pairs = agreement_statistics.campaign_pair_values(shared, aspect, rule.statistic)
            for score in agreement_statistics.assessor_scores(pairs, rule):
                if score.flag_reason is not None:
                    alerts[str(score.assessor)] = f"agreement: {score.flag_reason}"
        cache.set(key, alerts, timeout=3600)
    return alerts
