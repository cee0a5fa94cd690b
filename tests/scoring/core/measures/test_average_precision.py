"""map, map_cut, gm_map, yaap, iprec_at_recall, 11pt_avg, hand-computed."""

import math

import pytest

from tests.scoring.helpers import values

QRELS = "1 a 1\n1 b 0\n1 c 2\n1 d 1"  # R = 3
RUN = "1 a 3\n1 x 2\n1 c 1"  # relevant at ranks 1 and 3


def test_average_precision_divides_by_all_relevant_documents():
    assert values(QRELS, RUN, ["map"])["map 1"] == pytest.approx((1 + 2 / 3) / 3)


def test_map_at_cutoffs_stops_summing_at_the_cutoff():
    result = values(QRELS, RUN, ["map_cut.1,3"])
    assert result["map_cut_1 1"] == pytest.approx(1 / 3)
    assert result["map_cut_3 1"] == pytest.approx((1 + 2 / 3) / 3)


def test_gm_map_is_a_geometric_mean_floored_at_a_hundred_thousandth():
    qrels = QRELS + "\n2 a 1\n2 b 1"
    run = "1 a 1\n1 b 0.5\n2 x 1"  # AP 1/3 on topic 1, 0 on topic 2
    result = values(qrels, run, ["gm_map"])
    assert result["gm_map all"] == pytest.approx(math.sqrt(1 / 3 * 0.00001))
    assert "gm_map 1" not in result  # a summary only


def test_yaap_is_a_log_odds_of_the_precision_sum():
    precision_sum = 1 + 2 / 3
    expected = math.log((1 + precision_sum) / (1 + 3 - precision_sum))
    assert values(QRELS, RUN, ["yaap"])["yaap 1"] == pytest.approx(expected)


def test_recall_points_round_to_nearest_as_trec_eval_10_does():
    # R = 3: 0.4 x 3 = 1.2 is the 1st relevant document (trec_eval 9 took the 2nd).
    result = values("1 a 1\n1 b 1\n1 c 1", "1 a 4\n1 x 3\n1 y 2\n1 b 1", ["iprec_at_recall"])
    assert result["iprec_at_recall_0.40 1"] == 1.0
    assert result["iprec_at_recall_0.70 1"] == 0.5  # 2.1: the 2nd, at rank 4
    assert result["iprec_at_recall_0.00 1"] == 1.0  # before the 1st: the best of all
    assert result["iprec_at_recall_1.00 1"] == 0.0  # the 3rd was not retrieved


def test_interpolated_precision_is_the_best_at_or_below_the_point():
    # ranks: relevant at 2 and 3 (P 1/2, 2/3): the 1st relevant takes 2/3 from below.
    result = values("1 a 1\n1 b 1", "1 x 3\n1 a 2\n1 b 1", ["iprec_at_recall.0.5,1"])
    assert result["iprec_at_recall_0.50 1"] == pytest.approx(2 / 3)
    assert result["iprec_at_recall_1.00 1"] == pytest.approx(2 / 3)


def test_eleven_point_average_visits_points_in_the_order_given():
    qrels = "1 a 1\n1 b 1\n1 c 1"
    run = "1 a 4\n1 x 3\n1 y 2\n1 b 1"  # points 1 and 2: 1.0 and 0.5
    assert values(qrels, run, ["11pt_avg.0.4,0.7"])["11pt_avg_0.4,0.7 1"] == 0.75
    # Given the other way round trec_eval cannot reach the 2nd point after the 1st,
    # and gives it the value where its walk ends (1.0).
    assert values(qrels, run, ["11pt_avg.0.7,0.4"])["11pt_avg_0.7,0.4 1"] == 1.0
