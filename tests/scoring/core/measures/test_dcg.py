"""Gain measures, hand-computed.

qrels: a=2 b=1 c=0 d=1; run: c a b x, judged 0 2 1 -.
Default gains are the labels; the ideal ranking is 2, 1, 1.
"""

import math

import pytest

from tests.scoring.helpers import values

QRELS = "1 a 2\n1 b 1\n1 c 0\n1 d 1"
RUN = "1 c 4\n1 a 3\n1 b 2\n1 x 1"
LOG3 = math.log2(3)
DCG = 2 / LOG3 + 1 / 2
IDEAL = 2 + 1 / LOG3 + 1 / 2


def test_ndcg_divides_by_the_ideal_rankings_dcg():
    result = values(QRELS, RUN, ["ndcg", "dcg", "ideal_dcg"])
    assert result["dcg 1"] == pytest.approx(DCG)
    assert result["ideal_dcg 1"] == pytest.approx(IDEAL)
    assert result["ndcg 1"] == pytest.approx(DCG / IDEAL)


def test_ndcg_takes_gains_per_label_from_its_parameters():
    result = values(QRELS, RUN, ["ndcg.1=3,2=9"])
    dcg, ideal = 9 / LOG3 + 3 / 2, 9 + 3 / LOG3 + 3 / 2
    assert result["ndcg_1=3,2=9 1"] == pytest.approx(dcg / ideal)


def test_ndcg_at_cutoffs_uses_the_ideal_dcg_at_the_same_cutoff():
    result = values(QRELS, RUN, ["ndcg_cut.1,2"])
    assert result["ndcg_cut_1 1"] == 0.0
    assert result["ndcg_cut_2 1"] == pytest.approx((2 / LOG3) / (2 + 1 / LOG3))


def test_ndcg_rel_averages_ndcg_at_relevant_documents_and_the_missed_ones():
    at_a = (2 / LOG3) / (2 + 1 / LOG3)
    at_b = DCG / IDEAL
    missed_d = DCG / IDEAL  # not retrieved: the ndcg at the end of the ranking
    assert values(QRELS, RUN, ["ndcg_rel"])["ndcg_rel 1"] == pytest.approx(
        (at_a + at_b + missed_d) / 3
    )


def test_rndcg_averages_ndcg_where_the_ideal_gain_changes():
    # The ideal gain drops after rank 1 (2 -> 1) and after rank 3 (1 -> 0).
    expected = (0 / 2 + DCG / IDEAL) / 2
    assert values(QRELS, RUN, ["Rndcg"])["Rndcg 1"] == pytest.approx(expected)


def test_g_discounts_by_the_gain_still_missing():
    # cost so far (ideal gains, at least 1 a rank): 2, 3, 4, 5; gain so far: 0, 2, 3, 3.
    expected = (2 / math.log2(2 + 3 - 2) + 1 / math.log2(2 + 4 - 3)) / 4
    assert values(QRELS, RUN, ["G"])["G 1"] == pytest.approx(expected)


def test_bing_discounts_by_the_nonrelevant_documents_above():
    # a and b each have one non-relevant document (c) above them; R = 3.
    assert values(QRELS, RUN, ["binG"])["binG 1"] == pytest.approx((2 / LOG3) / 3)
