"""Organiser forms of the judging pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User

from judging.core.overlap import OverlapPlanError, OverlapSpec
from judging.models import DocumentNote, PoolPolicy
from pooling.models import Topic
from workbench.core.flags import truthy


class AccountsField(forms.ModelMultipleChoiceField):
    """Accounts ticked by id; an id past bigint is an invalid choice, not a query
    the database cannot run (SQLite's OverflowError, a 500)."""

    def _check_values(self, value: Any) -> Any:
        for pk in value:
            if str(pk).isascii() and str(pk).isdigit() and (len(str(pk)) > 18):
                raise forms.ValidationError(
                    self.error_messages["invalid_choice"],
                    code="invalid_choice",
                    params={"value": str(pk)[:40]},
                )
        return super()._check_values(value)


class OverlapForm(forms.Form):
    """How many documents to judge K times; previewed by GET, assigned by POST."""

    k = forms.IntegerField(min_value=2, initial=2, label="K, assessors per overlap document")
    # Left out, the fraction is 1 (whole topics) and the seed 0.
    fraction = forms.FloatField(
        required=False, max_value=1.0, label="Fraction of each topic's documents"
    )
    seed = forms.IntegerField(required=False)
    topics = forms.MultipleChoiceField(required=False)
    assessors = AccountsField(queryset=User.objects.none(), required=False)
    confirm_over_budget = forms.BooleanField(required=False)

    def __init__(
        self,
        *args: Any,
        topics: list[str],
        assessors: list[User],
        pool_assessors: list[User],
        **kwargs: Any,
    ):
        """assessors: the accounts offered (`selectors.eligible_assessors`);
        pool_assessors: those "none ticked" means (`selectors.pool_assessors`)."""
        super().__init__(*args, **kwargs)
        self.fields["topics"].choices = [(t, t) for t in topics]
        self.fields["assessors"].queryset = User.objects.filter(pk__in=[a.pk for a in assessors])
        self.assessor_accounts = assessors
        self.pool_assessors = pool_assessors

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.spec = OverlapSpec(
                k=data["k"],
                fraction=1.0 if data["fraction"] is None else data["fraction"],
                topics=frozenset(data["topics"]) or None,
                seed=data["seed"] or 0,
            )
        except OverlapPlanError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    def chosen_assessors(self) -> list[User]:
        """The ticked assessors, or the pool's assessors (those holding its
        assignments) when none is ticked."""
        chosen = {a.pk for a in self.cleaned_data["assessors"]}
        return [a for a in self.assessor_accounts if a.pk in chosen] or self.pool_assessors


class PolicyForm(forms.Form):
    """The final-label policy: steps separated by commas, and what counts as a disagreement."""

    policy = forms.CharField(help_text="e.g. adjudicated, primary, majority, maximum")
    mode = forms.ChoiceField(choices=PoolPolicy.DISAGREEMENT_MODES, required=False)

    def clean_policy(self) -> list[str]:
        return [step.strip() for step in self.cleaned_data["policy"].split(",") if step.strip()]


class MachineUseForm(forms.Form):
    """How machines help the pool's assessors: queue order and post-edit."""

    queue_order = forms.ChoiceField(choices=PoolPolicy.QUEUE_ORDERS)
    post_edit = forms.BooleanField(required=False)


def machines_option(value: str | None) -> bool | None:
    """The agreement page's and API's `?machines=`: absent or blank, machine assessors
    take part when the pool has their labels (None); else yes or no (`flags.truthy`)."""
    if value is None or not value.strip():
        return None
    return truthy(value)


class ActiveTimeForm(forms.Form):
    """The active seconds the judging page measured while the document was shown."""

    seconds = forms.FloatField(required=False, min_value=0)


class HistoryLookupForm(forms.Form):
    """The assignment page's 'history of a document' form."""

    topic = forms.ModelChoiceField(queryset=Topic.objects.all())
    docno = forms.CharField(strip=True, max_length=200)


class NoteForm(forms.Form):
    """The assessor's free note on a document, sent with a judgment."""

    note = forms.CharField(required=False, max_length=DocumentNote.MAX_TEXT, strip=True)


class CannotJudgeForm(forms.Form):
    """Why the assessor cannot judge a document, from a short list plus free text."""

    reason = forms.ChoiceField(choices=DocumentNote.REASONS)
    text = forms.CharField(required=False, max_length=DocumentNote.MAX_TEXT, strip=True)


class WorkChangeForm(forms.Form):
    """How many judgments a re-plan adds to the plan (negative: removes)."""

    change = forms.IntegerField(min_value=-(10**9), max_value=10**9)


# --------------------------------------------------------------------------
# Generated answers


class GeneratedAnswersUploadForm(forms.Form):
    """An answer file in the TREC 2024 RAG format (any number of runs)."""

    file = forms.FileField(label="Answer file (JSONL)")
    pool_cited = forms.BooleanField(
        required=False,
        label="Also store each run's cited segments as a ranked run, to pool them for "
        "relevance judging",
    )


class NuggetsEditForm(forms.Form):
    """A topic's nuggets, one a line: `vital: text` or `okay: text`, in order."""

    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 14}), required=False, strip=False)
    note = forms.CharField(required=False, max_length=200, label="What changed (optional)")


class NuggetsImportForm(forms.Form):
    file = forms.FileField(label="Nuggets (nuggetizer JSONL)")


class AnswerAssignForm(forms.Form):
    """Give an assessor topics' answers to judge."""

    topics = forms.ModelMultipleChoiceField(queryset=Topic.objects.none())
    assessor = forms.ModelChoiceField(queryset=User.objects.none())
    task = forms.ChoiceField(
        choices=[("nuggets", "Nugget assignment"), ("citations", "Citation support")]
    )
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, required=False, initial=0)

    def __init__(self, *args: Any, topics: Any, assessors: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["topics"].queryset = topics
        self.fields["assessor"].queryset = assessors


class MachineForm(forms.Form):
    """A machine assessor's settings on its page (checked again by the services).
    The API key itself is never asked: only the NAME of its environment variable."""

    name = forms.CharField(max_length=60)
    kind = forms.ChoiceField(
        choices=[
            ("chat", "Chat completions endpoint"),
            ("lexical", "Lexical baseline (BM25, no network)"),
        ]
    )
    base_url = forms.CharField(max_length=500, required=False, label="Endpoint base URL")
    model = forms.CharField(max_length=200, required=False)
    api_key_env = forms.CharField(max_length=100, required=False, label="API key variable")
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    samples = forms.IntegerField(min_value=1, max_value=20, initial=1)
    concurrency = forms.IntegerField(min_value=1, max_value=64, initial=4)
    requests_per_minute = forms.IntegerField(min_value=1, required=False)
    price_per_1k_tokens = forms.DecimalField(
        min_value=0, max_digits=12, decimal_places=6, required=False
    )
    prompt_override = forms.CharField(widget=forms.Textarea, required=False)


class MachineRunForm(forms.Form):
    machine = forms.IntegerField(min_value=1, max_value=2**31 - 1)
    topics = forms.CharField(required=False, help_text="topic ids, space-separated; empty: all")
    documents = forms.ChoiceField(choices=[("unjudged", "not labelled by it yet"), ("all", "all")])

    def clean_topics(self) -> list[str]:
        return str(self.cleaned_data.get("topics") or "").split()


class MachineAnswersForm(forms.Form):
    """A machine's help on answers: propose nuggets, label answers (`action`), or
    start the nugget assignments from its labels (`prefill`; no machine: off)."""

    machine = forms.ModelChoiceField(queryset=User.objects.none(), required=False)
    topics = forms.ModelMultipleChoiceField(
        queryset=Topic.objects.none(), required=False, help_text="None chosen: every topic."
    )

    def __init__(self, *args: Any, machines: Any, topics: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["machine"].queryset = machines
        self.fields["topics"].queryset = topics
