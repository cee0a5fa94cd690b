"""runid, num_q and the counts, whose summaries are sums."""

from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from tests.scoring.helpers import make_qrels, values
from workbench.core.run_files import read_run

QRELS = "1 a 1\n1 b 0\n1 c 1\n2 a 1\n2 d -1"
RUN = "1 a 3\n1 b 2\n1 x 1\n2 d 2\n2 a 1"
COUNTS = ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]


def test_counts_per_topic():
    result = values(QRELS, RUN, COUNTS)
    assert [result[f"{name} 1"] for name in COUNTS[1:]] == [3, 2, 1, 1]
    assert [result[f"{name} 2"] for name in COUNTS[1:]] == [2, 1, 1, 0]


def test_count_summaries_are_sums_and_num_q_the_topics():
    result = values(QRELS, RUN, COUNTS)
    assert [result[f"{name} all"] for name in COUNTS] == [2, 5, 3, 2, 1]
    assert "num_q 1" not in result


def test_runid_is_the_tag_of_the_last_line():
    run = read_run(b"1 Q0 a 1 2 first\n1 Q0 b 2 1 last\n", name="run").table
    evaluation = evaluate(make_qrels("1 a 1"), [run], TREC.select(["runid"]))
    assert list(evaluation.rows(0)) == [("runid", "all", "last", TREC.measures[0].kind)]
