"""Inferred measures from stratified pools, hand-computed, and against trec_eval's
measures when every pooled document is judged.

Topic 1: stratum 1 judged in full (a=2 b=0 c=1); stratum 2 half sampled
(d, f not sampled; e=1 g=0): R = 2 + 1 x 4/2 = 4. The run ranks d a z e b
(z not pooled). Topic 2: a=1 in stratum 1, y=2 and unsampled x in stratum 2
(R = 1 + 2 = 3); the run ranks y x a.
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.evaluation import Evaluation, evaluate
from scoring.core.measures.catalog import SAMPLE_EVAL, TREC
from scoring.core.measures.rankings import Judgments
from scoring.core.measures.sampling import fixed_inclusion, with_inclusion_probabilities
from scoring.core.qrels import STRATIFIED_QRELS, read_qrels
from scoring.core.sample_eval import evaluate_sample
from tests.scoring.helpers import make_run

QRELS = """\
1 0 a 1 2
1 0 b 1 0
1 0 c 1 1
1 0 d 2 -1
1 0 e 2 1
1 0 f 2 -1
1 0 g 2 0
2 0 a 1 1
2 0 x 2 -1
2 0 y 2 2
"""
RUN = "1 d 5\n1 a 4\n1 z 3\n1 e 2\n1 b 1\n2 y 3\n2 x 2\n2 a 1"
EPSILON = 1e-4  # the script's smoothing moves estimates by about 3e-5
LOG3, LOG5 = math.log2(3), math.log2(5)


def stratified(text: str = QRELS) -> pd.DataFrame:
    return read_qrels(text.encode(), name="qrels", layout=STRATIFIED_QRELS)


def rows(evaluation: Evaluation, run: int = 0) -> dict[str, float]:
    return {f"{name} {topic}": value for name, topic, value, _ in evaluation.rows(run)}


@pytest.fixture
def result() -> dict[str, float]:
    return rows(evaluate_sample(stratified(), [make_run(RUN)]))


def test_inum_rel_expands_each_strata_sampled_relevant_documents(result):
    assert (result["inum_rel 1"], result["inum_rel 2"], result["inum_rel all"]) == (4, 3, 7)


def test_inum_rel_ret_counts_a_third_of_a_stratum_with_nothing_sampled_yet(result):
    # Topic 1: d alone counts 1/3 at rank 1; by rank 5, 2 x 1/1 (d, e) + 2 x 1/2 (a, b).
    assert result["inum_rel_ret 1"] == pytest.approx(3, abs=EPSILON)
    assert result["iP10 1"] == pytest.approx(0.3, abs=EPSILON)
    assert result["iP1000 2"] == pytest.approx(3 / 1000, abs=EPSILON)


def test_inf_ap_weights_each_strata_mean_precision_by_its_share_of_r(result):
    # a (rank 2): 1/2 + 1/2 x (d counts 1/3) = 2/3, mean over stratum 1's two relevant: 1/3.
    # e (rank 4): 1/4 + 2/4 x (1/2 x 1 + 1/2 x 1/3) = 7/12. Each stratum holds half of R.
    assert result["infAP 1"] == pytest.approx(0.5 * (2 / 3) / 2 + 0.5 * 7 / 12, abs=EPSILON)
    assert result["infAP all"] == pytest.approx((11 / 24 + 1) / 2, abs=EPSILON)


def test_inf_ndcg_expands_each_strata_gain_by_its_sampled_share_in_the_run(result):
    # Topic 1: stratum 1 (a, b) judged in full, stratum 2 (d, e) half: 2/log2(3) + 2 x 1/log2(5),
    # over the ideal of grades 2, 1, 1, 1. Topic 2: 2 x 2 (y) + 1/log2(4) (a) over 2, 2, 1.
    ideal = 2 + 1 / LOG3 + 1 / 2 + 1 / LOG5
    assert result["infNDCG 1"] == pytest.approx((2 / LOG3 + 2 / LOG5) / ideal)
    assert result["infNDCG 2"] == pytest.approx(4.5 / (2 + 2 / LOG3 + 1 / 2))  # above 1


def test_interpolated_precision_walks_up_the_run_one_recall_level_a_rank(result):
    # Topic 1 (R = 4): levels 0-2.8 reached; rank 3 takes 2.8, rank 2 takes 2.4, rank 1
    # takes 2.0, the rest take the best precision (3/4 at rank 4); 3.2-4.0 are 0.
    # Topic 2 (R = 3): every precision is 1; only level 3.0 is above E(3).
    expected = [0.875] * 8 + [0.5, 0.5, 0.0]
    levels = [result[f"iprec@rec{level / 10:4.2f} all"] for level in range(11)]
    assert levels == pytest.approx(expected, abs=EPSILON)
    assert "iprec@rec0.00 1" not in result


def test_num_ret_counts_every_document_and_its_summary_the_first_1000():
    run = make_run("\n".join(f"1 doc{i} {i}" for i in range(1200)))
    result = rows(evaluate_sample(stratified(), [run]))
    assert (result["num_ret 1"], result["num_ret all"]) == (1200, 1000)


def test_a_perfect_run_has_inf_ndcg_1_with_grades_above_9():
    # sample_eval.pl sorts grades as strings, 2 before 10, and scores this 1.3553.
    qrels = stratified("1 0 a 1 10\n1 0 b 1 2\n1 0 c 1 0\n")
    result = rows(evaluate_sample(qrels, [make_run("1 a 3\n1 b 2\n1 c 1")]))
    assert result["infNDCG 1"] == pytest.approx(1.0)


def test_the_ideal_dcg_stops_at_rank_1000():
    # sample_eval.pl adds one document of each further grade past rank 1000 (0.9996 here).
    pool = [f"1 0 r{i} 1 2\n" for i in range(1005)] + [f"1 0 s{i} 1 1\n" for i in range(3)]
    run = make_run("\n".join(f"1 r{i} {2000 - i}" for i in range(1005)))
    result = rows(evaluate_sample(stratified("".join(pool)), [run]))
    assert result["infNDCG 1"] == pytest.approx(1.0)


def test_explicit_inclusion_probabilities_per_stratum_or_per_document():
    qrels, runs = stratified(), [make_run(RUN)]
    rates = pd.DataFrame(
        {
            "query_id": ["1", "1", "2", "2"],
            "stratum": [1, 2, 1, 2],
            "inclusion_probability": [1, 0.5, 1, 0.5],
        }
    )
    script = evaluate_sample(qrels, runs).to_frame()
    per_stratum = evaluate_sample(qrels, runs, inclusion=rates).to_frame()
    assert np.allclose(per_stratum["value"], script["value"], rtol=1e-12)
    # Stratum 2 of topic 1 at 1/4: it holds 4 of R = 2 + 4.
    documents = qrels[["query_id", "doc_id", "stratum"]].assign(
        inclusion_probability=np.where((qrels.query_id == "1") & (qrels.stratum == 2), 0.25, 1.0)
    )
    result = rows(evaluate_sample(qrels, runs, inclusion=documents))
    assert result["inum_rel 1"] == 6
    assert result["infAP 1"] == pytest.approx(2 / 6 * (2 / 3) / 2 + 4 / 6 * 7 / 12, abs=EPSILON)


@pytest.mark.parametrize(
    ("probabilities", "message"),
    [
        (
            {"query_id": ["1", "2"], "stratum": [1, 1], "inclusion_probability": [1.0, 1.0]},
            "topic '1', stratum 2: no inclusion probability",
        ),
        (
            {"query_id": ["1", "1"], "stratum": [1, 2], "inclusion_probability": [1.0, 0.0]},
            "topic '1', stratum 2: inclusion probability 0.0 is not in (0, 1]",
        ),
        (
            {"query_id": ["1", "1"], "doc_id": ["d", "e"], "inclusion_probability": [0.5, 0.4]},
            "topic '1', stratum 2: inclusion probabilities differ",
        ),
    ],
)
def test_inclusion_probabilities_must_cover_each_stratum_once(probabilities, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with_inclusion_probabilities(stratified(), pd.DataFrame(probabilities))


def test_fixed_probabilities_score_the_same_and_survive_taking_rows_out():
    qrels, runs = stratified(), [make_run(RUN)]
    fixed = qrels.assign(**fixed_inclusion(Judgments(qrels, 1)))
    # With every row: the script's estimates, to the last bit.
    assert list(evaluate_sample(fixed, runs).to_frame()["value"]) == list(
        evaluate_sample(qrels, runs).to_frame()["value"]
    )
    # Without topic 1's unsampled d and f: its stratum 2 keeps pi = 2 / 4, not 2 / 2,
    # and topic 2, untouched, scores to the last bit as before.
    kept = ~((qrels.query_id == "1") & qrels.doc_id.isin(["d", "f"]))
    held = rows(evaluate_sample(fixed[kept], runs))
    recomputed = rows(evaluate_sample(qrels[kept], runs))
    assert held["inum_rel 1"] == 2 + 1 / (2 / 4)  # e, relevant in stratum 2, counts twice
    assert recomputed["inum_rel 1"] == 2 + 1
    whole = rows(evaluate_sample(qrels, runs))
    assert [held[f"{m} 2"] for m in ("infAP", "infNDCG")] == [
        whole[f"{m} 2"] for m in ("infAP", "infNDCG")
    ]


def test_inferred_measures_need_a_stratum_column():
    qrels = read_qrels(b"1 0 a 1\n", name="q")
    with pytest.raises(ValueError, match="stratified qrels"):
        evaluate(qrels, [make_run("1 a 1")], SAMPLE_EVAL.select([]))


pools = st.lists(
    st.tuples(
        st.sampled_from(["1", "2", "30"]), st.integers(0, 40), st.integers(1, 3), st.integers(0, 3)
    ),
    min_size=1,
    max_size=60,
    unique_by=lambda row: row[:2],
)
rankings = st.lists(
    st.tuples(st.sampled_from(["1", "2", "30"]), st.integers(0, 50), st.integers(0, 20)),
    min_size=1,
    max_size=60,
    unique_by=lambda row: row[:2],
)


@settings(max_examples=60, deadline=None)
@given(pools, rankings)
def test_with_every_document_judged_the_estimates_are_trec_evals_measures(pool, ranking):
    qrels = stratified("".join(f"{t} 0 d{d} {s} {label}\n" for t, d, s, label in pool))
    run = make_run("\n".join(f"{t} d{d} {score / 4}" for t, d, score in ranking))
    inferred = evaluate_sample(qrels, [run]).to_frame()
    plain = qrels.drop(columns="stratum")
    measured = evaluate(
        plain, [run], TREC.select(["map", "ndcg", "P.10", "num_rel", "num_rel_ret"])
    )
    pairs = {
        "infAP": "map",
        "infNDCG": "ndcg",
        "iP10": "P_10",
        "inum_rel": "num_rel",
        "inum_rel_ret": "num_rel_ret",
    }
    ours = inferred[inferred.measure.isin(pairs)].assign(measure=lambda f: f.measure.map(pairs))
    theirs = measured.to_frame().query("query_id != 'all'")  # inum_rel's sum takes every topic
    merged = ours.merge(theirs, on=["query_id", "measure"], suffixes=("_inferred", "_trec"))
    assert len(merged) == len(theirs)
    # Only the smoothing of the precision estimates moves infAP, iP and inum_rel_ret.
    tolerance = np.where(merged.measure.isin(["ndcg", "num_rel"]), 1e-12, EPSILON)
    gap = np.abs(merged.value_inferred.astype(float) - merged.value_trec.astype(float))
    assert (gap <= tolerance).all(), merged[gap > tolerance]
