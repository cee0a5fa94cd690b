"""The ranking rule, -M, -J, batching, and the qrels index."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.evaluation import EvalOptions, evaluate
from scoring.core.measures import rankings
from scoring.core.measures.catalog import TREC
from scoring.core.measures.rankings import Judgments
from tests.scoring.helpers import make_qrels, make_run, values
from workbench.core.run_files import read_run


def test_ties_are_broken_by_docno_descending_in_byte_order():
    qrels = "1 d9 1\n1 d10 2\n1 D1 3\n1 d1 4"
    run = "1 d1 1\n1 D1 1\n1 d10 1\n1 d9 1"
    # d9 > d10 > d1 > D1 byte by byte
    assert values(qrels, run, ["relstring"])["relstring 1"] == "1243"


def test_the_rank_column_is_ignored():
    qrels = make_qrels("1 a 1\n1 b 2")
    run = read_run(b"1 Q0 a 1 0.5 r\n1 Q0 b 2 0.9 r\n", name="run").table
    evaluation = evaluate(qrels, [run], TREC.select(["relstring"]))
    assert next(evaluation.rows(0))[2] == "21"


def test_scores_are_compared_as_doubles():
    # Equal as float32 (which trec_eval 9 used); distinct as doubles.
    run = "1 a 1.00000001\n1 b 1.00000002"
    assert values("1 a 1\n1 b 2", run, ["relstring"])["relstring 1"] == "21"


def test_max_documents_per_topic_drops_the_rest():
    result = values("1 a 1\n1 b 1", "1 x 3\n1 a 2\n1 b 1", ["num_ret", "P.3"], max_docs_per_topic=2)
    assert result["num_ret 1"] == 2
    assert result["P_3 1"] == pytest.approx(1 / 3)


def test_judged_only_drops_unjudged_documents_before_ranking():
    qrels = "1 a 1\n1 b 0\n1 c -1"
    result = values(qrels, "1 x 4\n1 c 3\n1 a 2\n1 b 1", ["num_ret", "P.1"], judged_only=True)
    assert result["num_ret 1"] == 2
    assert result["P_1 1"] == 1.0


def test_relevance_level_sets_the_lowest_relevant_label():
    result = values("1 a 1\n1 b 2", "1 a 2\n1 b 1", ["num_rel", "P.1"], relevance_level=2)
    assert (result["num_rel 1"], result["P_1 1"]) == (1, 0.0)


def test_judgments_refuse_a_pair_judged_twice():
    qrels = make_qrels("1 a 1").assign(doc_id=["a"])
    with pytest.raises(ValueError, match="twice"):
        Judgments(qrels.loc[[0, 0]], 1)


def test_topic_order_is_byte_order_of_the_qrels_topics():
    evaluation = evaluate(make_qrels("9 a 1\n10 a 1\nb a 1\nB a 1"), [], [])
    assert evaluation.topics == ("10", "9", "B", "b")


def test_many_batches_give_the_values_of_one(monkeypatch):
    qrels = make_qrels("1 a 1\n1 b 2\n2 a 1\n2 c 1")
    runs = [make_run("1 a 2\n1 b 1\n2 c 1"), make_run("1 b 3\n1 x 2\n2 a 2\n2 c 1\n2 y 0")]
    measures = TREC.select(["all_trec"])
    whole = evaluate(qrels, runs, measures).to_frame()
    monkeypatch.setattr(rankings, "BATCH_CELLS", 3)
    assert evaluate(qrels, runs, measures).to_frame().equals(whole)


documents = st.lists(
    st.tuples(st.sampled_from(["1", "2", "10"]), st.integers(0, 30), st.integers(0, 4)),
    min_size=1,
    max_size=60,
    unique_by=lambda row: row[:2],
)


@settings(max_examples=40, deadline=None)
@given(documents, st.randoms(use_true_random=False))
def test_the_order_of_lines_in_a_run_file_does_not_matter(rows, random):
    """Files sorted best first take a shortcut; shuffled ones are sorted in full."""
    rows = sorted(rows, key=lambda row: (row[0], -row[2], f"d{row[1]}"))
    shuffled = random.sample(rows, len(rows))
    qrels = make_qrels("\n".join(f"{t} d{d} {d % 3}" for t, d, _ in rows))
    tables = [
        read_run("".join(f"{t} Q0 d{d} 0 {s / 2} r\n" for t, d, s in lines).encode()).table
        for lines in (rows, shuffled)
    ]
    measures = TREC.select(["relstring.100", "map"])
    first, second = (evaluate(qrels, [table], measures).to_frame() for table in tables)
    assert first.equals(second)


def test_placeholder_ranking_holds_one_unpooled_document():
    ranked = rankings.rank_and_judge(
        Judgments(make_qrels("1 a 1\n2 a 1"), 1),
        [make_run("1 a 1")],
        EvalOptions(complete=True),
    )
    assert ranked.placeholder.tolist() == [False, True]
    assert ranked.row_label.tolist() == [1, rankings.NONPOOL]
    assert np.array_equal(ranked.num_ret, [1, 1])
