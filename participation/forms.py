"""Forms of participation: the organiser's settings and teams, a team's runs."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import UploadedFile

from pooling.forms import check_upload_size
from pooling.models import Campaign, Run
from workbench.core.id_limits import control_problem


class SubmissionSettingsForm(forms.ModelForm):
    class Meta:
        model = Campaign
        fields = ["submission_deadline", "max_runs_per_team", "pooled_runs_per_team"]
        labels = {
            "submission_deadline": "Submission deadline (UTC)",
            "max_runs_per_team": "Most runs per team",
            "pooled_runs_per_team": "Runs pooled per team",
        }
        widgets = {
            "submission_deadline": forms.DateTimeInput(
                attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"
            ),
        }

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name in ("max_runs_per_team", "pooled_runs_per_team"):
            self.fields[name].min_value = 1
            self.fields[name].widget.attrs["min"] = 1


class UsernamesField(forms.CharField):
    """Usernames separated by spaces or commas, cleaned to the accounts (all must exist)."""

    def clean(self, value: Any) -> list[Any]:
        names = [n for n in dict.fromkeys(re.split(r"[\s,]+", super().clean(value) or "")) if n]
        problems = [p for p in (control_problem("username", name) for name in names) if p]
        if problems:
            raise forms.ValidationError(problems)
        users = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
        unknown = [name for name in names if name not in users]
        if unknown:
            raise forms.ValidationError(f"no account named {', '.join(unknown)}")
        return [users[name] for name in names]


class TeamForm(forms.Form):
    name = forms.CharField(max_length=200, strip=True)
    members = UsernamesField(
        required=False, help_text="Usernames of existing accounts, separated by spaces or commas."
    )


class TeamMembersForm(forms.Form):
    members = UsernamesField(required=False)


class LateRunsForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=100, initial=1)


class TeamRunUploadForm(forms.Form):
    # Empty files reach the reader, which explains what is wrong with them.
    file = forms.FileField(label="Run file", allow_empty_file=True)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class PrecedenceForm(forms.Form):
    """A number per run of the team; the runs are put in the order of the numbers."""

    def __init__(self, *args: Any, runs: list[Run], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.runs = runs
        for run in runs:
            self.fields[f"run-{run.pk}"] = forms.IntegerField(
                min_value=1, initial=run.precedence, label=run.tag
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        numbers = [data[f"run-{run.pk}"] for run in self.runs]
        repeated = sorted({n for n in numbers if numbers.count(n) > 1})
        if repeated:
            raise forms.ValidationError(
                f"two runs have precedence {', '.join(str(n) for n in repeated)}: "
                "give each run its own number"
            )
        data["order"] = [
            run.tag for _, run in sorted(zip(numbers, self.runs, strict=True), key=lambda p: p[0])
        ]
        return data
