"""Long work done in the background: a job, its progress, log and result."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.template.defaultfilters import filesizeformat
from django.utils import timezone


class Job(models.Model):
    """One piece of long work (an import, a pool build or revision, a bundle...).

    `kind` is the dotted path of the function that does it (see
    `workbench.jobs`); `params` are its arguments. The function reports
    progress through `done` and `total`, appends to `log`, and leaves a
    `result` (what it made) or an `error` (why nothing was stored).

    The worker running it holds a lease, `lease_token`, renewed by writing
    `heartbeat_at`; `attempts` counts the runs started (a worker that stops
    loses its lease and another runs the job again). A cancel asked for while
    it runs is kept in `cancel_requested_at` until the worker stops it.
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    BYTES = "bytes"
    STATES = [(QUEUED, "Waiting"), (RUNNING, "Running"), (DONE, "Done"), (FAILED, "Failed")]

    kind = models.CharField(max_length=200)
    title = models.CharField(max_length=300)
    params = models.JSONField(default=dict)
    campaign = models.ForeignKey(
        "pooling.Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=STATES, default=QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    # What done and total count ("runs", "files", BYTES); blank: items.
    unit = models.CharField(max_length=20, blank=True)
    log = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Who runs it: the token of the current attempt; every write of a run is
    # conditional on it, so a run that lost its lease can store nothing.
    lease_token = models.CharField(max_length=32, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    cancel_requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.title} ({self.get_state_display()})"

    @property
    def finished(self) -> bool:
        return self.state in (self.DONE, self.FAILED)

    @property
    def max_attempts(self) -> int:
        return settings.WORKBENCH_JOB_ATTEMPTS

    @property
    def lease_expired(self) -> bool:
        """Running, but its worker has not renewed the lease in time: it stopped."""
        if self.state != self.RUNNING:
            return False
        lease = timedelta(seconds=settings.WORKBENCH_JOB_LEASE_SECONDS)
        return self.heartbeat_at is None or self.heartbeat_at < timezone.now() - lease

    @property
    def cancelling(self) -> bool:
        return self.state == self.RUNNING and self.cancel_requested_at is not None

    @property
    def progress_text(self) -> str:
        """ "3 of 80 runs", "1.2 MB of 4.0 MB"; empty before the job knows its total."""
        if not self.total:
            return ""
        if self.unit == self.BYTES:
            return f"{filesizeformat(self.done)} of {filesizeformat(self.total)}"
        return f"{self.done:,} of {self.total:,}" + (f" {self.unit}" if self.unit else "")

    @property
    def percent(self) -> int | None:
        if self.state == self.DONE:
            return 100
        if not self.total:
            return None
        return min(100, round(100 * self.done / self.total))
