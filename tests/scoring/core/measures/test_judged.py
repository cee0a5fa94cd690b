"""bpref, gm_bpref and infAP, hand-computed.

qrels: a=1 b=0 c=1 d=0 e=-1 (pooled, not judged) f=0: R = 2, 3 judged non-relevant.
run: b a x e c d, judged 0 1 - . 1 0.
"""

import math

import pytest

from tests.scoring.helpers import values

QRELS = "1 a 1\n1 b 0\n1 c 1\n1 d 0\n1 e -1\n1 f 0"
RUN = "1 b 6\n1 a 5\n1 x 4\n1 e 3\n1 c 2\n1 d 1"
EPSILON = 0.00001


def test_bpref_counts_judged_nonrelevant_documents_above_each_relevant_one():
    # a and c each have one judged non-relevant above: 1 - 1/min(3, R) each.
    assert values(QRELS, RUN, ["bpref"])["bpref 1"] == 0.5


def test_gm_bpref_averages_logarithms():
    assert values(QRELS, RUN, ["gm_bpref"])["gm_bpref all"] == pytest.approx(0.5)


def test_inferred_ap_ignores_unpooled_and_counts_pooled_unjudged_documents():
    at_a = 1 / 2 + (1 / 2) * (1 / 1) * (EPSILON / (1 + 2 * EPSILON))
    # at c (rank 5): 1 relevant, 1 non-relevant and 1 pooled-unjudged above, among 4
    at_c = 1 / 5 + (4 / 5) * (3 / 4) * ((1 + EPSILON) / (2 + 2 * EPSILON))
    assert values(QRELS, RUN, ["infAP"])["infAP 1"] == pytest.approx((at_a + at_c) / 2, abs=1e-15)


def test_inferred_ap_equals_ap_when_everything_is_judged():
    qrels, run = "1 a 1\n1 b 0\n1 c 1", "1 a 3\n1 b 2\n1 c 1"
    result = values(qrels, run, ["infAP", "map"])
    assert result["infAP 1"] == pytest.approx(result["map 1"], abs=1e-4)
    assert math.isclose(result["map 1"], (1 + 2 / 3) / 2)
