"""Our paired tests against ranx's on the tables of golden/ranx/ranx.json (made by
golden/ranx/make_golden.py in ranx's own environment; docs/leaderboard.md).

ranx's t-test and Tukey HSD are SciPy's, so the p-values are the same numbers.
Its Fisher test draws its permutations from NumPy's legacy generator under
Numba and counts without SciPy's + 1, so its p-values are the same test's
with other draws: they agree with ours within resampling noise (10,000
permutations each: a standard error of at most 0.005).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scoring.core.analysis import paired
from scoring.core.analysis.tukey import tukey_hsd

GOLDEN = json.loads((Path(__file__).parent / "golden" / "ranx" / "ranx.json").read_text())
CASES = GOLDEN["cases"]


def ours(case: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    scores = np.asarray(case["scores"])
    a = np.array([pair["a"] for pair in case["pairs"]])
    b = np.array([pair["b"] for pair in case["pairs"]])
    return scores, a, b, scores[a] - scores[b]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}")
def test_the_t_test_equals_ranx(case):
    _, _, _, diffs = ours(case)
    expected = [pair["t"] for pair in case["pairs"]]
    assert paired.t_test(diffs).p_value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}")
def test_tukey_hsd_equals_ranx(case):
    scores, a, b, _ = ours(case)
    expected = [case["tukey"][i][j] for i, j in zip(a, b, strict=True)]
    assert tukey_hsd(scores).p_value == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}")
def test_the_randomisation_test_agrees_with_ranx_within_resampling_noise(case):
    _, _, _, diffs = ours(case)
    expected = np.array([pair["fisher"] for pair in case["pairs"]])
    mine = paired.randomization_test(diffs, n_resamples=GOLDEN["fisher_permutations"], seed=0)
    assert np.max(np.abs(mine.p_value - expected)) <= 0.02
