"""Holm and Bonferroni against statsmodels, and by hand."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from scoring.core.analysis.corrections import adjust

p_values = st.lists(
    st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.01, 0.05, 0.5, 1.0])), max_size=40
)


def test_holm_by_hand():
    """Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04,
    then never less than the one before: 0.02, 0.03, 0.06, 0.06."""
    adjusted = adjust(np.array([0.01, 0.04, 0.03, 0.005]), "holm")
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])


def test_bonferroni_by_hand():
    adjusted = adjust(np.array([0.01, 0.04, 0.3, 0.005]), "bonferroni")
    np.testing.assert_allclose(adjusted, [0.04, 0.16, 1.0, 0.02])


# statsmodels collects garbage on every Holm call (0.1 s here): few examples.
@settings(max_examples=40, deadline=None)
@given(p_values, st.sampled_from(["holm", "bonferroni"]))
def test_adjust_is_statsmodels_multipletests(p, method):
    p = np.array(p, dtype=float)
    expected = multipletests(p, method=method)[1] if len(p) else p
    np.testing.assert_array_equal(adjust(p, method), expected)


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_a_nan_p_value_is_left_out_of_the_family(method):
    p = np.array([0.01, math.nan, 0.02, 0.04])
    adjusted = adjust(p, method)
    assert math.isnan(adjusted[1])
    np.testing.assert_array_equal(
        adjusted[[0, 2, 3]], multipletests(p[[0, 2, 3]], method=method)[1]
    )


def test_none_leaves_the_p_values():
    assert list(adjust(np.array([0.01, 0.2]), "none")) == [0.01, 0.2]


def test_unknown_correction():
    with pytest.raises(ValueError, match="unknown correction 'fdr'"):
        adjust(np.array([0.1]), "fdr")
