"""A task campaign's gold files and submissions (CodiEsp, SciFact).

The files are kept as uploaded, under the data directory as runs are, and
scored when asked by `scoring.core.tasks.subtasks`; each was checked by the
task's own readers before it was stored (`scoring.services`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from pooling.models import Campaign, NoControlCharacters, Pool, Run, Team
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


# --------------------------------------------------------------------------
# Releases: a pool's results frozen, version by version


class Release(models.Model):
    """A pool's results as released: written once (`services.release_create`) and
    never changed. Its files (qrels in every layout, scores.tsv, the leaderboard,
    manifest.json, reproduce.sh) are stored under `directory`, each with its
    SHA-256 in `files`; the run files stay where they were uploaded, checked
    against `ReleaseRun.sha256` and kept (PROTECT) while a release holds them.
    Withdrawing one is a `ReleaseWithdrawal` beside it, not a change of it."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="releases")
    version = models.PositiveIntegerField(help_text="1, 2, ... within the pool.")
    measure = models.CharField(max_length=100, help_text="The leaderboard's measure.")
    measures = models.JSONField(help_text="Every trec_eval measure scored (-m arguments).")
    leaderboard_options = models.JSONField(help_text="tests, correction, alpha, seed, resamples")
    label_policy = models.JSONField(
        help_text="Which labels (human, ...), the policy's steps (adjudications first), and "
        "the disagreement mode"
    )
    pool_spec = models.JSONField()
    pool_revisions = models.JSONField(default=list)
    judged_topics = models.JSONField(help_text="The topics every mean is over.")
    left_out_topics = models.JSONField(default=list, help_text="Topics with no judgment.")
    leaderboard = models.JSONField(help_text="As `manage.py leaderboard --format json`.")
    directory = models.CharField(max_length=500, help_text="Where its files are stored.")
    files = models.JSONField(help_text="{name: {sha256, bytes}} of the stored files.")
    workbench = models.JSONField(help_text="{version, commit} of the code that scored it.")
    state_as_of = models.DateTimeField(help_text="The last judgment or change it reflects.")
    reason = models.TextField(blank=True)
    released_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    released_at = models.DateTimeField()

    class Meta:
        ordering = ["pool", "version"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "version"], name="unique_release_version"),
        ]

    def __str__(self) -> str:
        return f"release {self.version} of pool {self.pool_id}"

    @property
    def withdrawn(self) -> bool:
        return hasattr(self, "withdrawal")


class ReleaseRun(models.Model):
    """A run as a release scored it: its file (kept, PROTECT), its team then, and
    its mean of every measure."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="runs")
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="releases")
    tag = models.CharField(max_length=200)
    file_name = models.CharField(max_length=255, help_text="Its name under runs/ in the bundle.")
    sha256 = models.CharField(max_length=64)
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.PROTECT, related_name="released_runs"
    )
    team_name = models.CharField(max_length=200, blank=True)
    means = models.JSONField(help_text="{measure: mean over the judged topics}")
    missing_topics = models.JSONField(default=list, help_text="Judged topics it lacks (0).")

    class Meta:
        ordering = ["release", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["release", "tag"], name="unique_release_run"),
        ]

    def __str__(self) -> str:
        return str(self.release)


class ReleaseWithdrawal(models.Model):
    """A release hidden from the teams, with why, by whom and when; the release
    itself stays as it was, for the record."""

    release = models.OneToOneField(Release, on_delete=models.CASCADE, related_name="withdrawal")
    reason = models.TextField()
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    withdrawn_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.release} withdrawn"


class AnswerScoresRelease(models.Model):
    """A generated-answers campaign's scores as released to its teams: written once
    (`answer_services.answer_scores_release`) and never changed; the next is a new
    version. `nuggets` is `nugget_scores --format json` with `unjudged`; `citations`
    the citation support scores, as the API gives them."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="answer_scores_releases"
    )
    version = models.PositiveIntegerField()
    nuggets = models.JSONField()
    citations = models.JSONField()
    reason = models.TextField(blank=True)
    released_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    released_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "version"], name="unique_answer_scores_release"
            )
        ]

    def __str__(self) -> str:
        return f"answer scores release {self.version} of {self.campaign.slug}"
