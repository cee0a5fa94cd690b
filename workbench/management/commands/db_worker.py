"""`manage.py db_worker`: django-tasks-db's worker, which also takes back the jobs of
workers that stopped (`workbench.jobs.jobs_reclaim`): once at start-up, then
every quarter of WORKBENCH_JOB_LEASE_SECONDS from a thread of its own, so that
a job whose lease ran out is queued again (or failed) while this worker is busy
with another. Its options are django-tasks-db's."""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.db import connection
from django_tasks_db.management.commands import db_worker

from workbench.commands import WorkbenchCommand
from workbench.jobs import jobs_reclaim, lease_seconds

log = logging.getLogger("workbench.jobs")


def reclaim() -> None:
    try:
        for job in jobs_reclaim():
            log.warning("job %s (%s): its worker stopped; now %s", job.pk, job.kind, job.state)
    except Exception:  # the database away for a moment: the next round tries again
        log.exception("reclaiming the jobs of stopped workers failed")
        connection.close()


def reclaim_every(seconds: float, stop: threading.Event) -> None:
    while not stop.wait(seconds):
        reclaim()
    connection.close()


class Command(WorkbenchCommand, db_worker.Command):
    help = db_worker.Command.help + ", taking back the jobs of workers that stopped"

    def handle(self, *args: Any, **options: Any) -> None:
        reclaim()
        stop = threading.Event()
        sweeper = threading.Thread(
            target=reclaim_every,
            args=(lease_seconds() / 4, stop),
            name="reclaim-jobs",
            daemon=True,
        )
        sweeper.start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()
