"""A task campaign's gold files and submissions (CodiEsp, SciFact).

The files are kept as uploaded, under the data directory as runs are, and
scored when asked by `scoring.core.tasks.subtasks`; each was checked by the
task's own readers before it was stored (`scoring.services`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from pooling.models import Campaign, NoControlCharacters
from scoring.core.tasks.subtasks import SUBTASKS

SUBTASK_CHOICES = [(s.code, s.label) for subtasks in SUBTASKS.values() for s in subtasks]
MAX_SUBMISSION_NAME = 200


def _task_upload_path(row: TaskGold | TaskSubmission, filename: str) -> str:
    return f"tasks/{row.campaign.slug}/{row.subtask}/{filename}"


class TaskGold(models.Model):
    """The gold standard of one subtask of a campaign (one at a time; a new upload
    replaces it), with the valid codes of a CodiEsp subtask."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="task_golds")
    subtask = models.CharField(max_length=16, choices=SUBTASK_CHOICES)
    original_name = models.CharField(max_length=255)
    file = models.FileField(upload_to=_task_upload_path, max_length=500)
    sha256 = models.CharField(max_length=64)
    document_count = models.PositiveIntegerField(help_text="Clinical cases or claims.")
    # CodiEsp: the valid codes of the lists uploaded with it (their union, lower-cased,
    # one a line, sorted), and the lists' own names.
    codes_file = models.FileField(upload_to=_task_upload_path, max_length=500, blank=True)
    codes_names = models.JSONField(default=list, blank=True)
    code_count = models.PositiveIntegerField(default=0)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "subtask"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "subtask"], name="unique_task_gold"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug} {self.subtask} gold"


class TaskSubmission(models.Model):
    """One team's predictions for one subtask, scored against its subtask's gold."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="task_submissions"
    )
    subtask = models.CharField(max_length=16, choices=SUBTASK_CHOICES)
    name = models.CharField(
        max_length=MAX_SUBMISSION_NAME, validators=[NoControlCharacters("submission name")]
    )
    original_name = models.CharField(max_length=255)
    file = models.FileField(upload_to=_task_upload_path, max_length=500)
    sha256 = models.CharField(max_length=64)
    document_count = models.PositiveIntegerField(help_text="Clinical cases coded or claims.")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "subtask", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "subtask", "name"], name="unique_task_submission"
            ),
        ]

    def __str__(self) -> str:
        return self.name
