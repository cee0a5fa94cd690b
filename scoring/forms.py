"""Request input of the scoring pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from pooling.forms import MultipleFileField, check_upload_size
from scoring.core.analysis.corrections import CORRECTIONS
from scoring.core.analysis.leaderboard import TESTS
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.exports import FORMATS
from scoring.core.tasks import subtasks
from scoring.core.tasks.subtasks import Subtask
from scoring.models import MAX_SUBMISSION_NAME
from scoring.selectors import DEFAULT_MEASURES, HUMAN_LABELS, LABEL_SOURCES
from scoring.stability_selectors import STABILITY_MEASURES


class StabilityForm(forms.Form):
    """The measure the ranking-stability panel ranks the runs by."""

    DEFAULT = "map"
    measure = forms.ChoiceField(
        choices=[(m, m) for m in STABILITY_MEASURES], required=False, initial=DEFAULT
    )

    def clean_measure(self) -> str:
        return self.cleaned_data["measure"] or self.DEFAULT


class BundleForm(forms.Form):
    """The formats of a qrels bundle (none ticked: every default one the pool can give)."""

    formats = forms.MultipleChoiceField(choices=[(f, f) for f in FORMATS], required=False)


class LeaderboardForm(forms.Form):
    """The leaderboard's measure, test, correction and significance level."""

    TEST_LABELS = {
        "t": "paired t-test",
        "wilcoxon": "Wilcoxon signed-rank",
        "sign": "sign test",
        "randomization": "randomisation (10,000 sign flips)",
        "tukey": "Tukey's HSD",
        "all": "all of them",
    }
    measure = forms.CharField(required=False, max_length=100, initial="map")
    test = forms.ChoiceField(choices=list(TEST_LABELS.items()), required=False, initial="t")
    correction = forms.ChoiceField(
        choices=[(c, c) for c in CORRECTIONS], required=False, initial="holm"
    )
    alpha = forms.FloatField(required=False, min_value=0.0001, max_value=0.5, initial=0.05)

    def clean_measure(self) -> str:
        return self.cleaned_data["measure"].strip() or "map"

    def leaderboard_options(self) -> LeaderboardOptions:
        data = self.cleaned_data
        test = data["test"] or "t"
        return LeaderboardOptions(
            tests=TESTS if test == "all" else (test,),
            correction=data["correction"] or "holm",
            alpha=data["alpha"] if data["alpha"] is not None else 0.05,
        )

    def error_text(self) -> str:
        return "; ".join(f"{field}: {errors[0]}" for field, errors in self.errors.items())


class ReleaseForm(LeaderboardForm):
    """A release: the leaderboard's measure and tests (as the leaderboard page asks
    them), the measures scored, whose labels, and why."""

    measures = forms.CharField(
        required=False,
        max_length=1000,
        help_text="Every measure to score, separated by spaces (default: "
        f"{' '.join(DEFAULT_MEASURES)}); the leaderboard's measure is added if missing.",
    )
    labels = forms.ChoiceField(
        choices=[(source, source) for source in LABEL_SOURCES],
        required=False,
        initial=HUMAN_LABELS,
        help_text="human: the final labels under the pool's policy, adjudications first; "
        "machine: a machine assessor's; human-then-machine: a human label where one exists, "
        "else the machine's.",
    )
    machine = forms.CharField(
        required=False,
        max_length=100,
        help_text="With a machine source: the machine's name (needed when several have labels).",
    )
    reason = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), strip=True
    )

    def clean_measures(self) -> list[str] | None:
        return self.cleaned_data["measures"].replace(",", " ").split() or None

    def clean_labels(self) -> str:
        return self.cleaned_data["labels"] or HUMAN_LABELS


class WithdrawForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shown with the release; the teams no longer see it.",
    )


class CompareForm(forms.Form):
    """`?from=N&to=M`: two versions of one pool's releases."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["from"] = forms.IntegerField(min_value=1)
        self.fields["to"] = forms.IntegerField(min_value=1)


# --------------------------------------------------------------------------
# Task campaigns (CodiEsp, SciFact)


class _SubtaskForm(forms.Form):
    """A form whose `subtask` choices are the campaign's subtasks. Its ids start
    with `id_prefix`: the gold and submission forms share a page and field names."""

    subtask = forms.ChoiceField()
    id_prefix = ""

    def __init__(self, *args: Any, subtasks: Sequence[Subtask], **kwargs: Any):
        kwargs.setdefault("auto_id", f"id_{self.id_prefix}_%s")
        super().__init__(*args, **kwargs)
        self.fields["subtask"].choices = [(s.code, s.label) for s in subtasks]


class TaskGoldForm(_SubtaskForm):
    id_prefix = "gold"
    # Empty files reach the readers, which say what is wrong with them.
    file = forms.FileField(label="Gold file", allow_empty_file=True)
    codes = MultipleFileField(
        label="Valid-code lists",
        required=False,
        allow_empty_file=True,
        help_text="CodiEsp: D's list for D, P's for P, both for X.",
    )

    def __init__(self, *args: Any, subtasks: Sequence[Subtask], **kwargs: Any):
        super().__init__(*args, subtasks=subtasks, **kwargs)
        if not any(s.takes_codes for s in subtasks):
            del self.fields["codes"]

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class TaskSubmissionForm(_SubtaskForm):
    id_prefix = "submission"
    name = forms.CharField(
        required=False,
        strip=True,
        max_length=MAX_SUBMISSION_NAME,
        help_text="Default: the file's name without its extension.",
    )
    file = forms.FileField(label="Submission file", allow_empty_file=True)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class TaskReplaceForm(forms.Form):
    """A submission's new file (its name and subtask stay)."""

    file = forms.FileField(label="New file", allow_empty_file=True)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class TaskSortForm(forms.Form):
    """`?sort=`: a column of the table, `-column` for descending."""

    sort = forms.ChoiceField(required=False)

    def __init__(self, *args: Any, subtask: Subtask, documents: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        choices = subtasks.sort_choices(subtask, documents=documents)
        self.fields["sort"].choices = [(c, c) for c in choices]
        self.default = subtasks.default_sort(subtask, documents=documents)

    def order(self) -> str:
        """The order asked for; the default one when none (or a bad one) is asked."""
        if self.is_valid() and self.cleaned_data["sort"]:
            return self.cleaned_data["sort"]
        return self.default
