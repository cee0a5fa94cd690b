import json
from typing import Any

from django.core.management.base import CommandParser

from judging.status import campaign_status
from pooling.commands import campaign_or_error
from workbench.commands import WorkbenchCommand
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "How far a campaign's judging is: per topic and assessor, the budget spent and left, "
        "the rate of the last 7 days and the date the current plan finishes at that rate."
    )
    # A read-only report people run in loops: the system checks (0.2 s) are for manage.py check.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: Any) -> None:
        status = campaign_status(campaign_or_error(options["campaign"]))
        if options["format"] == "json":
            self.stdout.write(json.dumps(status.to_dict(), indent=1))
            return
        self.stdout.write(status.budget.describe())
        self.stdout.write(status.forecast.describe())
        self.stdout.write("")
        self.stdout.write("topic     pooled  to_judge  judged  relevant  finished  assessors")
        for t in status.topics:
            self.stdout.write(
                f"{t.topic_id:<8} {t.pooled:>7} {t.to_judge:>9} {t.judged:>7} {t.relevant:>9} "
                f"{'yes' if t.finished else 'no':>9}  {', '.join(t.assessors)}"
            )
        self.stdout.write("")
        self.stdout.write("assessor      today  week  judged  per_hour  median_s  queue")
        for a in status.assessors:
            per_hour = f"{a.per_hour:.0f}" if a.per_hour is not None else "-"
            median = f"{a.median_seconds:.1f}" if a.median_seconds is not None else "-"
            self.stdout.write(
                f"{a.username:<12} {a.judged_today:>6,} {a.judged_week:>5,} {a.judged_total:>7,} "
                f"{per_hour:>9} {median:>9}  {a.queue_done:,}/{a.queue_total:,}"
            )
        for topic in status.late_topics:
            self.stdout.write(f"alert: topic {topic} will not be finished within the budget")
        for topic in status.unassigned_topics:
            self.stdout.write(f"alert: topic {topic} has no assessor")
        for name, why in status.assessor_alerts.items():
            self.stdout.write(f"alert: {name}: {why}")
        for pool in status.without_text:
            self.stdout.write(
                f"alert: pool {pool.pool_id} ({pool.pool_name}): {pool.docnos:,} document"
                f"{'s' if pool.docnos != 1 else ''} to judge without text; list them with "
                f"python manage.py export_pool --pool {pool.pool_id} --format without-text"
            )
        for note in status.set_aside:
            said = f": {note.text}" if note.text else ""
            out = "" if note.in_queue else "; no longer in the plan: a re-plan took it out"
            self.stdout.write(
                f"cannot judge: topic {note.topic_id} {note.docno} ({note.assessor}, "
                f"{note.reason.lower()}{said}){out}"
            )
