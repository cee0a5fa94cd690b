"""The scoring core: evaluate() over frames, -c, summaries, the long frame."""

import pandas as pd

from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from tests.scoring.helpers import evaluate_strings, make_qrels, make_run, values

QRELS = "1 a 1\n1 b 0\n2 a 2\n2 c 1\n3 d 1"
RUN = "1 a 2\n1 b 1\n9 a 1"  # topic 9 is not in the qrels


def test_topics_missing_from_the_run_are_skipped_without_complete():
    result = values(QRELS, RUN, ["num_q", "map"])
    assert result == {"map 1": 1.0, "num_q all": 1, "map all": 1.0}


def test_complete_scores_missing_topics_on_trec_eval_placeholder_ranking():
    measures = ["num_q", "num_ret", "map", "P.5", "relstring", "unj.5", "utility", "rbp_resid"]
    result = values(QRELS, RUN, measures, complete=True)
    for topic in ("2", "3"):
        assert result[f"num_ret {topic}"] == 0
        assert result[f"relstring {topic}"] == ""
        assert [result[f"{name} {topic}"] for name in ("map", "P_5", "unj_5", "utility")] == [
            0.0
        ] * 4
        assert result[f"rbp_resid {topic}"] == 0.0
    assert result["num_q all"] == 3
    assert result["map all"] == 1 / 3


def test_complete_counts_every_label_above_0_for_the_num_rel_summary():
    result = values(QRELS, RUN, ["num_rel"], complete=True, relevance_level=2)
    assert [result[f"num_rel {topic}"] for topic in ("1", "2", "3")] == [0, 1, 0]
    assert result["num_rel all"] == 4


def test_each_run_is_scored_on_its_own_even_with_the_same_tag():
    qrels = make_qrels(QRELS)
    runs = [make_run("1 a 1", tag="same"), make_run("1 b 1\n2 c 1", tag="same")]
    evaluation = evaluate(qrels, runs, TREC.select(["num_q", "P.1"]))
    assert [{(n, t): v for n, t, v, _ in evaluation.rows(r)} for r in (0, 1)] == [
        {("P_1", "1"): 1.0, ("num_q", "all"): 1, ("P_1", "all"): 1.0},
        {("P_1", "1"): 0.0, ("P_1", "2"): 1.0, ("num_q", "all"): 2, ("P_1", "all"): 0.5},
    ]


def test_the_long_frame_has_one_row_per_run_topic_and_value():
    evaluation = evaluate_strings(QRELS, [RUN, "2 c 1"], ["P.1,2", "runid"])
    frame = evaluation.to_frame()
    assert list(frame.columns) == ["run", "run_id", "query_id", "measure", "value"]
    assert frame.iloc[0].tolist() == [0, "run0", "1", "P_1", 1.0]
    assert frame[frame.run == 1].measure.tolist() == ["P_1", "P_2", "runid", "P_1", "P_2"]


def test_pandas_frames_with_string_columns_are_accepted():
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [0.5], "run_id": ["r"]})
    evaluation = evaluate(qrels, [run], TREC.select(["map"]))
    assert list(evaluation.rows(0)) == [
        ("map", "1", 1.0, TREC.select(["map"])[0].measure.kind),
        ("map", "all", 1.0, TREC.select(["map"])[0].measure.kind),
    ]


def test_a_topic_judged_only_below_0_scores_zero():
    result = values("1 a -1\n1 b -1", "1 a 1\n1 x 0", ["map", "ndcg", "ndcg_cut.5", "Rndcg", "G"])
    assert {value for key, value in result.items()} == {0.0}
