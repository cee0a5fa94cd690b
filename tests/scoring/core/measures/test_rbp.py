"""rbp and rbp_resid, hand-computed on a run judged 1 - 1."""

import pytest

from tests.scoring.helpers import values

QRELS = "1 a 1\n1 b 0\n1 c 1"
RUN = "1 a 3\n1 x 2\n1 c 1"


def test_rbp_weighs_rank_k_by_p_to_the_k_minus_1():
    assert values(QRELS, RUN, ["rbp"])["rbp 1"] == pytest.approx(0.1 * (1 + 0.81))


def test_rbp_persistence_is_a_parameter():
    assert values(QRELS, RUN, ["rbp.p=0.5"])["rbp_p=0.5 1"] == pytest.approx(0.5 * (1 + 0.25))


def test_rbp_rescales_gains_above_one_to_the_unit_range():
    graded = "1 a 2\n1 b 0\n1 c 1"  # gains 0, 1, 2 become 0, 0.5, 1
    assert values(graded, RUN, ["rbp"])["rbp 1"] == pytest.approx(0.1 * (1 + 0.5 * 0.81))


def test_rbp_residual_is_the_weight_unjudged_and_unretrieved_ranks_could_add():
    # x at rank 2 is unjudged (0.9), ranks 4 on weigh 0.9^3 in all.
    assert values(QRELS, RUN, ["rbp_resid"])["rbp_resid 1"] == pytest.approx(0.729 + 0.1 * 0.9)


def test_rbp_residual_is_zero_without_unjudged_documents():
    assert values(QRELS, "1 a 2\n1 c 1", ["rbp_resid"])["rbp_resid 1"] == 0.0
