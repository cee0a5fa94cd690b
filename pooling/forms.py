from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.forms.boundfield import BoundWidget

from pooling.core.document_files import DOCUMENT_FORMATS
from pooling.core.spec import (
    LIVE_STRATEGIES,
    ORDER_MODES,
    PRESETS,
    PoolSpec,
    PoolSpecError,
    parse_pool_spec,
)
from pooling.core.topic_files import TOPIC_FORMATS
from pooling.models import Campaign
from workbench.core.file_input import JSONProblem, parse_json
from workbench.core.label_schema import (
    DEFAULT_PRESET,
    SCHEMA_PRESETS,
    LabelSchema,
    default_schema,
    preset_of,
    schema_problems,
)

CUSTOM_SCHEMA = "custom"


@dataclass(frozen=True)
class PresetCard:
    radio: BoundWidget
    schema: LabelSchema


class CampaignForm(forms.ModelForm):
    """A new campaign. The label schema is a preset, or custom JSON for power users."""

    label_schema = forms.ChoiceField(
        label="Label schema",
        choices=[
            *((p.name, p.label) for p in SCHEMA_PRESETS.values()),
            (CUSTOM_SCHEMA, "Custom schema (JSON)"),
        ],
        initial=DEFAULT_PRESET,
        widget=forms.RadioSelect,
    )
    custom_schema = forms.CharField(
        label="Custom schema (JSON)",
        required=False,
        strip=True,
        initial=lambda: json.dumps(default_schema(), indent=2),
        widget=forms.Textarea(attrs={"rows": 16, "class": "mono", "spellcheck": "false"}),
    )

    class Meta:
        model = Campaign
        fields = [
            "name",
            "slug",
            "task_kind",
            "description",
            "guidelines",
            "judgment_budget",
            "budget_counts_adjudications",
            "label_schema",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "guidelines": forms.Textarea(attrs={"rows": 5}),
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        choice = data.get("label_schema")
        if choice in SCHEMA_PRESETS:
            data["label_schema"] = SCHEMA_PRESETS[choice].schema()
        elif choice == CUSTOM_SCHEMA:
            schema = self._custom_schema(data.get("custom_schema", ""))
            if schema is None:
                del data["label_schema"]
            else:
                data["label_schema"] = schema
        return data

    def _custom_schema(self, text: str) -> Any:
        """The pasted schema, or None with the problems added to the form."""
        if not text:
            self.add_error("custom_schema", "Paste a schema, or choose a preset.")
            return None
        try:
            schema = parse_json(text)
        except JSONProblem as error:
            self.add_error("custom_schema", f"This is {error}.")
            return None
        problems = schema_problems(schema)
        if problems:
            self.add_error("custom_schema", problems)
            return None
        return schema

    def campaign_data(self) -> dict[str, Any]:
        """The cleaned fields, as the campaign services take them."""
        return {name: self.cleaned_data[name] for name in self._meta.fields or ()}

    def preset_cards(self) -> list[PresetCard]:
        """Each preset's radio button beside its questions, grades and keys."""
        radios = {radio.data["value"]: radio for radio in self["label_schema"]}
        return [
            PresetCard(radios[name], LabelSchema.parse(preset.data))
            for name, preset in SCHEMA_PRESETS.items()
        ]

    def custom_radio(self) -> BoundWidget:
        return next(r for r in self["label_schema"] if r.data["value"] == CUSTOM_SCHEMA)

    def custom_chosen(self) -> bool:
        return self["label_schema"].value() == CUSTOM_SCHEMA


class CampaignEditForm(CampaignForm):
    """An existing campaign. Its slug names its files and URLs, so it stays."""

    class Meta(CampaignForm.Meta):
        fields = [
            "name",
            "task_kind",
            "description",
            "guidelines",
            "judgment_budget",
            "budget_counts_adjudications",
            "label_schema",
        ]

    @staticmethod
    def initial_for(campaign: Campaign) -> dict[str, Any]:
        return {
            "name": campaign.name,
            "task_kind": campaign.task_kind,
            "description": campaign.description,
            "guidelines": campaign.guidelines,
            "judgment_budget": campaign.judgment_budget,
            "budget_counts_adjudications": campaign.budget_counts_adjudications,
            "label_schema": preset_of(campaign.label_schema) or CUSTOM_SCHEMA,
            "custom_schema": json.dumps(campaign.label_schema, indent=2),
        }


def check_upload_size(upload: UploadedFile) -> UploadedFile:
    limit = settings.WORKBENCH_MAX_UPLOAD_BYTES
    if upload.size and upload.size > limit:
        raise forms.ValidationError(
            f"{upload.name}: {upload.size:,} bytes is over the upload limit of {limit:,} bytes; "
            "use the import command for files this large."
        )
    return upload


def _format_choices(formats: tuple[str, ...]) -> list[tuple[str, str]]:
    return [("", "detect from the file"), *((f, f.upper()) for f in formats)]


class _OwnIds(forms.Form):
    """A form that shares a page with others: its fields' ids carry its own prefix,
    so that each label focuses its own field (every upload form has a `file`)."""

    id_prefix = "form"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"{self.id_prefix}_%s")
        super().__init__(*args, **kwargs)


class TopicUploadForm(_OwnIds):
    id_prefix = "topics"
    # Empty files reach the reader, which explains what is wrong with them.
    file = forms.FileField(label="Topic file", allow_empty_file=True)
    format = forms.ChoiceField(choices=_format_choices(TOPIC_FORMATS), required=False)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class AnswerUploadForm(_OwnIds):
    id_prefix = "answers"
    file = forms.FileField(label="Answers file (topics_efficacy)", allow_empty_file=True)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class DocumentUploadForm(_OwnIds):
    id_prefix = "documents"
    file = forms.FileField(label="Collection file", allow_empty_file=True)
    format = forms.ChoiceField(choices=_format_choices(DOCUMENT_FORMATS), required=False)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        """Every file, each within the size limit; none (not required) is an empty list."""
        files = data if isinstance(data, list | tuple) else [data]
        cleaned = [super(MultipleFileField, self).clean(f, initial) for f in files]
        return [check_upload_size(f) for f in cleaned if f is not None]


class RunUploadForm(_OwnIds):
    id_prefix = "runs"
    files = MultipleFileField(label="Run files", allow_empty_file=True)
    keep_valid = forms.BooleanField(
        required=False,
        label="Store the valid files even if others are rejected",
    )


class RunReplaceForm(forms.Form):
    file = forms.FileField(label="Corrected run file", allow_empty_file=True)

    def clean_file(self) -> UploadedFile:
        return check_upload_size(self.cleaned_data["file"])


DEFAULT_POOL_PRESET = "depth-20"
POOLED_RUNS = [
    ("all", "every run"),
    ("per-team", "the first N runs of every team by precedence (and the organiser's own runs)"),
]


class PoolSpecForm(forms.Form):
    """The strategy fields of the pool form; once valid, `spec` is the PoolSpec they give.

    Asked with a preset (`?preset=cds-2014`) or nothing at all, the fields
    start from that preset (or the default one).
    """

    depth = forms.CharField(required=False, strip=True)
    strata = forms.CharField(required=False, strip=True)
    seed = forms.CharField(required=False, strip=True)
    order = forms.ChoiceField(choices=[(mode, mode) for mode in ORDER_MODES], required=False)
    allow_gaps = forms.BooleanField(required=False)
    # Empty: a fixed pool; else a live adaptive one (docs/adaptive_pooling.md).
    strategy = forms.ChoiceField(
        choices=[("", "fixed"), *((name, name) for name in LIVE_STRATEGIES)], required=False
    )
    budget = forms.CharField(required=False, strip=True)
    name = forms.CharField(required=False, strip=True, max_length=200)
    confirm_over_budget = forms.BooleanField(required=False)
    # Which runs: every run, or each team's first N by its precedence.
    runs = forms.ChoiceField(choices=POOLED_RUNS, required=False)
    runs_per_team = forms.IntegerField(required=False, min_value=1)

    spec: PoolSpec

    @classmethod
    def for_request(cls, data: Any, campaign: Campaign | None = None) -> PoolSpecForm:
        """The form of a request; a new one starts from a preset and, in a campaign
        with a number of runs pooled per team, from each team's first N runs."""
        preset = PRESETS.get(data.get("preset", "")) if "depth" not in data else None
        if preset is not None or not data:
            spec = (preset or PRESETS[DEFAULT_POOL_PRESET]).spec
            per_team = campaign.pooled_runs_per_team if campaign else None
            data = {
                "depth": str(spec.depth or ""),
                "strata": " ".join(str(s) for s in spec.strata),
                "seed": data.get("seed", "0"),
                "order": "shuffled",
                "runs": "per-team" if per_team else "all",
                "runs_per_team": str(per_team or ""),
            }
        return cls(data)

    @property
    def pooled_per_team(self) -> int | None:
        """Once valid: N to pool each team's first N runs, or None for every run."""
        if self.cleaned_data.get("runs") != "per-team":
            return None
        return self.cleaned_data["runs_per_team"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        if data.get("runs") == "per-team" and not data.get("runs_per_team"):
            raise forms.ValidationError("say how many runs of each team to pool")
        try:
            self.spec = parse_pool_spec(
                depth=data["depth"] or None,
                strata=data["strata"].split(),
                seed=data["seed"] or "0",
                order=data["order"] or "shuffled",
                allow_gaps=data["allow_gaps"],
                strategy=data.get("strategy") or "",
                budget=data.get("budget") or None,
            )
        except PoolSpecError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    def error_text(self) -> str:
        """Every problem of the fields in one line, for the what-if panel."""
        return "; ".join(
            message if field == "__all__" else f"{field}: {message}"
            for field, messages in self.errors.items()
            for message in messages
        )


class ReplanForm(forms.Form):
    """A new plan for some topics of a pool being judged. The seed and presentation
    order stay the pool's, so that draws are nested and queues keep their order."""

    depth = forms.CharField(required=False, strip=True)
    strata = forms.CharField(required=False, strip=True)
    allow_gaps = forms.BooleanField(required=False)
    which = forms.ChoiceField(
        choices=[
            ("unfinished", "The unfinished topics"),
            ("chosen", "These topics"),
            ("all", "Every topic"),
        ],
        initial="unfinished",
    )
    topics = forms.MultipleChoiceField(required=False)
    reason = forms.CharField(required=False, strip=True, max_length=2000)
    confirm_over_budget = forms.BooleanField(required=False)

    spec: PoolSpec

    def __init__(
        self, *args: Any, base: PoolSpec, topics: list[str], unfinished: list[str], **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self.base, self.all_topics, self.unfinished = base, topics, unfinished
        self.fields["topics"].choices = [(t, t) for t in topics]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.spec = parse_pool_spec(
                depth=data["depth"] or None,
                strata=data["strata"].split(),
                seed=self.base.seed,
                order=self.base.order,
                allow_gaps=data["allow_gaps"],
            )
        except PoolSpecError as error:
            raise forms.ValidationError(str(error)) from None
        chosen = {
            "unfinished": self.unfinished,
            "all": self.all_topics,
            "chosen": data["topics"],
        }[data["which"]]
        if not chosen:
            raise forms.ValidationError(
                "no topic to re-plan: every topic is finished"
                if data["which"] == "unfinished"
                else "choose at least one topic"
            )
        data["chosen"] = list(chosen)
        return data


class BudgetForm(forms.Form):
    """An adaptive pool's re-plan: its judging budget raised or lowered. The budget
    is checked as `pool_budget_set` checks it (the spec's rule), so a preview of a
    budget the service would refuse is refused with the same reason."""

    budget = forms.IntegerField(label="Judging budget")
    confirm_over_budget = forms.BooleanField(required=False)

    def __init__(self, *args: Any, base: PoolSpec, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.base = base

    def clean_budget(self) -> int:
        budget: int = self.cleaned_data["budget"]
        try:
            replace(self.base, budget=budget)
        except PoolSpecError as error:
            raise forms.ValidationError(str(error)) from None
        return budget
