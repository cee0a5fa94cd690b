"""Multi-aspect measures, hand-computed (shared/semantics/multi-aspect.md).

Most cases use topic 1: a=(2,1) b=(1,0) c=(0,2) d=(1,1), and a run ranking
c a x b (x not judged). Aspect 1 ranks 0 2 - 1, aspect 2 ranks 2 1 - 0.
"""

import math
from textwrap import dedent
from typing import Any

import numpy as np
import pytest

from scoring.core.evaluation import EvalOptions, evaluate
from scoring.core.measures.catalog import THREE_ASPECTS, TWO_ASPECTS
from scoring.core.qrels import THREE_ASPECT_QRELS, TWO_ASPECT_QRELS, read_qrels
from tests.scoring.helpers import make_run

QRELS = "1 a 2 1\n1 b 1 0\n1 c 0 2\n1 d 1 1"
RUN = "1 c 4\n1 a 3\n1 x 2\n1 b 1"
LOG3, LOG5 = math.log2(3), math.log2(5)


def aspect_values(qrels: str, run: str, measures: list[str], **options: Any) -> dict[str, float]:
    """{"name topic": value}; qrels lines `topic docno a1 a2 [a3]`, run lines `topic docno score`."""
    lines = [line.split() for line in dedent(qrels).strip().splitlines()]
    three = len(lines[0]) == 5
    body = "".join(f"{topic} 0 {' '.join(rest)}\n" for topic, *rest in lines)
    frame = read_qrels(
        body.encode(), name="qrels", layout=THREE_ASPECT_QRELS if three else TWO_ASPECT_QRELS
    )
    catalog = THREE_ASPECTS if three else TWO_ASPECTS
    options = {"single_precision_scores": True, **options}
    evaluation = evaluate(frame, [make_run(run)], catalog.select(measures), EvalOptions(**options))
    return {f"{name} {topic}": value for name, topic, value, _ in evaluation.rows(0)}


def test_cam_adds_half_the_ndcg_of_each_aspect():
    first = (2 / LOG3 + 1 / LOG5) / (2 + 1 / LOG3 + 1 / 2)
    second = (2 + 1 / LOG3) / (2 + 1 / LOG3 + 1 / 2)
    result = aspect_values(QRELS, RUN, ["cam"])
    assert result["cam 1"] == pytest.approx(0.5 * first + 0.5 * second, rel=1e-6)


def test_cam_takes_gains_per_label_as_ndcg_does():
    # Gains 1 -> 3, 2 -> 7 in both aspects.
    first = (7 / LOG3 + 3 / LOG5) / (7 + 3 / LOG3 + 3 / 2)
    second = (7 + 3 / LOG3) / (7 + 3 / LOG3 + 3 / 2)
    result = aspect_values(QRELS, RUN, ["cam.1=3,2=7"])
    assert result["cam_1=3,2=7 1"] == pytest.approx(0.5 * first + 0.5 * second, rel=1e-6)


def test_cam_counts_an_aspect_without_positive_values_as_zero():
    # Difference 1: the extension stops with no output when an ideal DCG is 0.
    result = aspect_values("1 a 1 0\n1 b 0 0", "1 a 2\n1 b 1", ["cam"])
    assert result["cam 1"] == 0.5


def test_cam_values_are_32_bit_floats():
    result = aspect_values(QRELS, RUN, ["cam"])
    assert result["cam 1"] == float(np.float32(result["cam 1"]))


def test_cam_map_adds_half_the_average_precision_of_each_aspect():
    # Aspect 1: relevant at ranks 2 and 4 of R=3; aspect 2: at ranks 1 and 2 of R=3.
    result = aspect_values(QRELS, RUN, ["cam_map"])
    assert result["cam_map 1"] == pytest.approx(0.5 * (1 / 2 + 2 / 4) / 3 + 0.5 * (1 + 1) / 3)


def test_cam_map_counts_relevant_from_the_relevance_level():
    # -l 2: aspect 1 has a (rank 2) of R=1, aspect 2 only c (rank 1) of R=1.
    result = aspect_values(QRELS, RUN, ["cam_map"], relevance_level=2)
    assert result["cam_map 1"] == pytest.approx(0.5 * (1 / 2) + 0.5 * 1)


def test_cam_map_scores_zero_unless_the_last_aspect_finds_a_relevant_document():
    qrels = "1 a 1 0\n1 b 0 1"
    assert aspect_values(qrels, "1 a 1", ["cam_map"])["cam_map 1"] == 0.0  # kept quirk
    assert aspect_values(qrels, "1 b 1", ["cam_map"])["cam_map 1"] == 0.5


def test_nlre_sums_local_rank_errors_against_each_aspects_ideal_order():
    # Ideal positions: aspect 1 a b c x -> c=2 a=0 x=3 b=1, errors 2 0 2;
    # aspect 2 c a x b -> no errors. LRE = (2.5*0.5 - 0.25)(1 + 1/log2(4)) = 1.5;
    # C(4) = (9 + 3)/1 + (1 + 1)/2 = 13.
    assert aspect_values(QRELS, RUN, ["nlre"])["nlre 1"] == pytest.approx(1 - 1.5 / 13, rel=1e-6)


def test_nlre_of_short_rankings_uses_the_fixed_normalisers_and_can_be_negative():
    qrels = "1 a 2 2\n1 b 1 1\n1 c 0 0"
    assert aspect_values(qrels, "1 a 1", ["nlre"])["nlre 1"] == 1.0
    # n = 2, C = 1: aspect 2 puts b first, one error of 1.
    swapped = aspect_values("1 a 1 0\n1 b 0 1", "1 a 2\n1 b 1", ["nlre"])
    assert swapped["nlre 1"] == pytest.approx(1 - (0.5 * 1.5 - 0.25))
    # n = 3, C = 2: the worst order, errors 1 and 1 in both aspects.
    worst = aspect_values(qrels, "1 c 3\n1 b 2\n1 a 1", ["nlre"])
    assert worst["nlre 1"] == pytest.approx(1 - (2 + 2 / LOG3) / 2, rel=1e-6)
    assert worst["nlre 1"] < 0


def test_nlre_is_one_when_nothing_relevant_is_retrieved():
    result = aspect_values(QRELS, "1 x 3\n1 y 2\n1 z 1", ["nlre"])
    assert result["nlre 1"] == 1.0


def test_nwcs_divides_the_weighted_score_by_that_of_the_best_judged_documents():
    wcs = (0.5 * 0 + 0.5 * 2) + (0.5 * 2 + 0.5 * 1) / LOG3 + (0.5 * 1 + 0.5 * 0) / LOG5
    ideal = 0.5 * (3 + 2 / LOG3 + 2 / 2 + 1 / LOG5)  # sums a=3 c=2 d=2 b=1
    assert aspect_values(QRELS, RUN, ["nwcs"])["nwcs 1"] == pytest.approx(wcs / ideal, rel=1e-6)


def test_nwcs_counts_negative_codes_as_zero_in_the_ideal_too():
    # Difference 2: the extension's ideal adds a=1-1, b=0-1, c=2+2 raw (4, 0, -1)
    # and scores this perfect run 1.32; clamped, the ideal is 4, 1, 0.
    result = aspect_values("1 a 1 -1\n1 b 0 -1\n1 c 2 2", "1 c 3\n1 a 2\n1 b 1", ["nwcs"])
    assert result["nwcs 1"] == 1.0


def test_three_aspect_measures_weight_each_aspect_as_the_extension_does():
    qrels = "1 a 1 2 3\n1 b 0 0 0"
    result = aspect_values(qrels, "1 a 2\n1 b 1", ["threeaspects"])
    assert result["cam_three_ndcg 1"] == pytest.approx(3 * 0.3333, rel=1e-6)
    assert result["cam_map_three 1"] == pytest.approx(3 * 0.3333)
    assert result["nlre_three 1"] == 1.0
    weighted = 0.3333333 * 1 + 0.33333 * 2 + 0.333333 * 3
    assert result["nwcs_three 1"] == pytest.approx(weighted / (0.33333333 * 6), rel=1e-6)


def test_nlre_three_multiplies_the_errors_of_three_aspects():
    # n = 2, C = 1: aspects 2 and 3 put b first.
    result = aspect_values("1 a 1 0 0\n1 b 0 1 1", "1 a 2\n1 b 1", ["nlre_three"])
    u = 0.333333
    assert result["nlre_three 1"] == pytest.approx(1 - (u * (u + 1) ** 2 - u**3), rel=1e-6)


def test_scores_equal_as_32_bit_floats_tie_and_fall_to_docno_order():
    # As doubles a ranks first (AP 1); as floats they tie and b (docno descending) does.
    result = aspect_values("1 a 1 1\n1 b 0 0", "1 a 1.00000002\n1 b 1.00000001", ["cam_map"])
    assert result["cam_map 1"] == 0.5


def test_max_documents_per_topic_keeps_the_top_of_the_ranking():
    cut = aspect_values(QRELS, RUN, ["twoaspects"], max_docs_per_topic=2)
    assert cut == aspect_values(QRELS, "1 c 4\n1 a 3", ["twoaspects"])


def test_complete_scores_a_topic_missing_from_the_run_as_zero():
    qrels = f"{QRELS}\n2 a 1 1"
    result = aspect_values(qrels, RUN, ["twoaspects"], complete=True)
    alone = aspect_values(QRELS, RUN, ["twoaspects"])
    for name in ("nlre", "cam", "cam_map", "nwcs"):
        assert result[f"{name} 2"] == 0.0
        assert result[f"{name} all"] == pytest.approx(alone[f"{name} 1"] / 2)
    assert result["num_q all"] == 2


def test_aspect_measures_need_aspect_columns():
    qrels = read_qrels(b"1 0 a 1\n", name="q")
    with pytest.raises(ValueError, match="no column 'aspect_2'"):
        evaluate(qrels, [make_run("1 a 1")], TWO_ASPECTS.select(["nwcs"]))
