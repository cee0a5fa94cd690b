"""Request input of the scoring pages."""

from __future__ import annotations

from django import forms

from scoring.analysis.corrections import CORRECTIONS
from scoring.analysis.leaderboard import TESTS
from scoring.analysis.leaderboard import Options as LeaderboardOptions
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
