"""The scorer reads plain columns, Arrow tables and pandas frames alike, mixed too."""

import numpy as np
import pytest

from scoring.core.evaluation import EvalOptions, evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.measures.columns import PlainQrels, Vocabulary, coded, fingerprints, plain_strings
from scoring.core.plain_files import plain_qrels, plain_run
from scoring.core.qrels import read_qrels, read_qrels_table
from workbench.core.run_files import read_run

QRELS = b"1 0 a 1\n1 0 b 0\n1 0 \xc3\xa9 2\n2 0 a 1\n2 0 d -1\n10 0 x 3\n"
RUNS = [
    b"1 Q0 a 1 3.0 r1\n1 Q0 \xc3\xa9 2 3.0 r1\n1 Q0 z 3 1 r1\n2 Q0 d 1 2 r1\n7 Q0 a 1 1 r1\n",
    b"2 Q0 a 1 1 r2\n2 Q0 b 2 1 r2\n1 Q0 B 1 5 r2\n1 Q0 b 2 5 r2\n",
]


def _frames(kind: str):
    if kind == "plain":
        return plain_qrels(QRELS), [plain_run(run) for run in RUNS]
    if kind == "arrow":
        return read_qrels_table(QRELS), [read_run(run).table for run in RUNS]
    return read_qrels(QRELS), [read_run(run).table.to_pandas() for run in RUNS]


@pytest.mark.parametrize("qrels_kind", ["plain", "arrow", "pandas"])
@pytest.mark.parametrize("runs_kind", ["plain", "arrow", "pandas"])
@pytest.mark.parametrize("complete", [False, True])
def test_every_kind_of_frame_scores_alike(qrels_kind, runs_kind, complete):
    measures = TREC.select(["all_trec"])
    options = EvalOptions(complete=complete)
    qrels, _ = _frames(qrels_kind)
    _, runs = _frames(runs_kind)
    expected = evaluate(*_frames("arrow"), measures, options).to_frame()
    assert evaluate(qrels, runs, measures, options).to_frame().equals(expected)


def test_the_plain_frames_are_what_the_readers_give():
    assert plain_qrels(QRELS) is not None
    assert all(plain_run(run) is not None for run in RUNS)


def test_a_vocabulary_codes_strings_of_either_kind():
    values = plain_strings(["b", "a", "é", "a", "longer docno than eight bytes"])
    vocabulary = Vocabulary(values)
    wanted = ["a", "é", "zz", "longer docno than eight bytes", "b"]
    codes = vocabulary.codes(plain_strings(wanted))
    assert codes[2] == -1
    # A string's code is the place of one of its copies, always the same one.
    assert [vocabulary.values[code] for code in codes[[0, 1, 3, 4]]] == [
        wanted[i] for i in (0, 1, 3, 4)
    ]
    assert vocabulary.codes(plain_strings(["a", "a"])).tolist() == [codes[0]] * 2
    pa = pytest.importorskip("pyarrow")
    assert vocabulary.codes(pa.array(wanted)).tolist() == codes.tolist()


def test_fingerprints_do_not_depend_on_the_array_width():
    narrow = np.array([b"a", b"bc"])
    wide = np.array([b"a", b"bc"], dtype="S20")
    assert fingerprints(narrow).tolist() == fingerprints(wide).tolist()


def test_plain_strings_refuse_a_nul_which_the_padding_would_hide():
    with pytest.raises(ValueError, match="NUL"):
        plain_strings(["a\x00"])


def test_coding_a_column_in_runs_looks_up_each_run_once():
    topics = plain_strings(["7"] * 40 + ["3"] * 40)
    column = coded(topics, in_runs=True)
    assert column.values.values == ["7", "3"]
    assert column.codes.tolist() == [0] * 40 + [1] * 40


def test_plain_qrels_can_be_made_from_lists():
    qrels = PlainQrels.of(["1", "1"], ["a", "b"], relevance=[1, 0])
    result = evaluate(qrels, [plain_run(b"1 Q0 b 1 2 r\n1 Q0 a 2 1 r\n")], TREC.select(["map"]))
    assert result.measures[0].summary.tolist() == [[0.5]]


def test_arrow_frames_may_hold_a_nul_that_plain_ones_cannot():
    qrels = read_qrels_table(b"1\x00x 0 a\x00b 1\n1\x00x 0 a 0\n")
    run = read_run(b"1\x00x Q0 a 1 2 r\n1\x00x Q0 a\x00b 2 1 r\n").table
    frame = evaluate(qrels, [run], TREC.select(["map"])).to_frame()
    assert frame["query_id"].tolist() == ["1\x00x", "all"]
    assert frame["value"].tolist() == [0.5, 0.5]
