"""Request input of the scoring pages."""

from __future__ import annotations

from django import forms

from scoring.exports import FORMATS
from scoring.selectors import STABILITY_MEASURES


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
