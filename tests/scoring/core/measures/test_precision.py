"""Precision family, hand-computed on one topic.

qrels: a=1 b=0 c=2 d=1 e=0, so R = 3 (a, c, d).
run: a x c b y, judged 1 - 2 0 -: relevant at ranks 1 and 3 of 5.
"""

import pytest

from tests.scoring.helpers import values

QRELS = """
    1 a 1
    1 b 0
    1 c 2
    1 d 1
    1 e 0
"""
RUN = """
    1 a 5
    1 x 4
    1 c 3
    1 b 2
    1 y 1
"""


def test_precision_counts_missing_documents_as_nonrelevant():
    result = values(QRELS, RUN, ["P.1,2,3,10"])
    assert result["P_1 1"] == 1.0
    assert result["P_2 1"] == 0.5
    assert result["P_3 1"] == pytest.approx(2 / 3)
    assert result["P_10 1"] == 0.2


def test_recall_and_relative_precision_at_cutoffs():
    result = values(QRELS, RUN, ["recall.2,10", "relative_P.2,10"])
    assert result["recall_2 1"] == pytest.approx(1 / 3)
    assert result["recall_10 1"] == pytest.approx(2 / 3)
    assert result["relative_P_2 1"] == 0.5  # 1 of min(2, R)
    assert result["relative_P_10 1"] == pytest.approx(2 / 3)  # 2 of min(10, R)


def test_success_is_one_from_the_first_relevant_document():
    late = "1 x 3\n1 b 2\n1 a 1"
    result = values(QRELS, late, ["success.1,2,3"])
    assert [result[f"success_{k} 1"] for k in (1, 2, 3)] == [0.0, 0.0, 1.0]


def test_r_precision_looks_at_the_first_r_documents():
    assert values(QRELS, RUN, ["Rprec"])["Rprec 1"] == pytest.approx(2 / 3)


def test_precision_at_r_multiples_rounds_up_with_point_nine():
    result = values(QRELS, RUN, ["Rprec_mult.0.5,1.0,2.0"])
    assert result["Rprec_mult_0.50 1"] == 0.5  # (long)(1.5 + 0.9) = 2 documents
    assert result["Rprec_mult_1.00 1"] == pytest.approx(2 / 3)  # 3 documents
    assert result["Rprec_mult_2.00 1"] == pytest.approx(2 / 6)  # 6 > num_ret: rel_ret / 6


def test_reciprocal_rank_of_the_first_relevant_document():
    assert values(QRELS, "1 x 3\n1 b 2\n1 a 1", ["recip_rank"])["recip_rank 1"] == pytest.approx(
        1 / 3
    )


def test_utility_weighs_the_contingency_table():
    assert values(QRELS, RUN, ["utility"])["utility 1"] == -1.0  # 2 relevant - 3 not
    assert values(QRELS, RUN, ["utility.2,-1,-1,0"])["utility_2,-1,-1,0 1"] == 0.0
    collection = values(QRELS, RUN, ["utility.0,0,0,1"], num_docs_in_collection=100)
    assert collection["utility_0,0,0,1 1"] == 94.0  # 100 + 2 - 5 - 3 non-relevant not retrieved


def test_set_measures_over_all_retrieved_documents():
    result = values(QRELS, RUN, ["set_P", "set_recall", "set_relative_P", "set_map", "set_F"])
    assert result["set_P 1"] == 0.4
    assert result["set_recall 1"] == pytest.approx(2 / 3)
    assert result["set_relative_P 1"] == pytest.approx(2 / 3)
    assert result["set_map 1"] == pytest.approx(4 / 15)
    assert result["set_F 1"] == pytest.approx(0.5)


def test_set_f_weight_is_a_parameter():
    result = values(QRELS, RUN, ["set_F.0.5"])
    precision, recall = 0.4, 2 / 3
    assert result["set_F_0.5 1"] == pytest.approx(
        1.5 * precision * recall / (0.5 * precision + recall)
    )


def test_topics_without_relevant_documents_score_zero():
    result = values("1 a 0\n1 b -1", "1 a 2\n1 b 1", ["recall.5", "Rprec", "set_recall", "set_F"])
    assert {value for key, value in result.items() if key.endswith(" 1")} == {0.0}
