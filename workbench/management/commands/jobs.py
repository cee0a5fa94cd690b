"""`manage.py jobs`: the background jobs for operators, newest first (their state,
attempts and last heartbeat); `--retry ID` queues a failed one again, `--cancel ID`
cancels a waiting or running one, as an organiser does on the job's page."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from workbench.commands import WorkbenchCommand
from workbench.core.streams import quiet_on_closed_stdout
from workbench.jobs import JobStateError, job_cancel, job_retry
from workbench.models import Job


def job_or_error(job_id: int) -> Job:
    try:
        return Job.objects.get(pk=job_id)
    except Job.DoesNotExist:
        raise CommandError(f"no job with id {job_id}") from None


def _when(moment: Any) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S") if moment else "-"


class Command(WorkbenchCommand):
    help = (
        "List the background jobs, newest first (--state to choose), or retry a failed "
        "one (--retry ID) or cancel a waiting or running one (--cancel ID)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--state", choices=[state for state, _ in Job.STATES], help="only jobs in this state"
        )
        parser.add_argument(
            "--limit", type=int, default=50, help="list at most this many (default 50)"
        )
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--retry", type=int, metavar="ID", help="queue a failed job again")
        action.add_argument(
            "--cancel", type=int, metavar="ID", help="cancel a waiting or running job"
        )

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: Any) -> None:
        if options["retry"] is not None:
            job = self._change(job_retry, options["retry"])
            self.stdout.write(f"job {job.pk} queued again: {job.title}")
        elif options["cancel"] is not None:
            job = self._change(job_cancel, options["cancel"])
            if job.cancelling:
                self.stdout.write(f"job {job.pk} cancelling: it stops at its next step")
            else:
                self.stdout.write(f"job {job.pk} cancelled before it started")
        else:
            self._list(options["state"], options["limit"])

    def _change(self, change: Any, job_id: int) -> Job:
        try:
            return change(job=job_or_error(job_id))
        except JobStateError as error:
            raise CommandError(str(error)) from None

    def _list(self, state: str | None, limit: int) -> None:
        if limit < 1:
            raise CommandError(f"--limit must be 1 or more, not {limit}")
        jobs = Job.objects.all() if state is None else Job.objects.filter(state=state)
        self.stdout.write("id\tstate\tattempts\tlast heartbeat\tcreated\ttitle")
        for job in jobs.order_by("-created_at", "-id")[:limit]:
            shown = job.state
            if job.cancelling:
                shown += " (cancelling)"
            elif job.lease_expired:
                shown += " (worker stopped)"
            self.stdout.write(
                f"{job.pk}\t{shown}\t{job.attempts}/{job.max_attempts}\t"
                f"{_when(job.heartbeat_at)}\t{_when(job.created_at)}\t{job.title}"
            )
