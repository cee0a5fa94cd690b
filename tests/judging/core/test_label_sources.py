"""The qrels variants: one rule, human labels win, machine labels fill the gaps."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.core.label_sources import LABEL_SOURCES, label_source, labels_for_source

COLUMNS = ["query_id", "doc_id", "relevance", "effectiveness"]


def frame(rows):
    return pd.DataFrame(rows, columns=COLUMNS).astype(
        {"relevance": "int64", "effectiveness": "int64"}
    )


HUMAN = frame([("q1", "d1", 2, 3), ("q1", "d2", 0, -1)])
MACHINE = frame([("q1", "d2", 1, 1), ("q2", "d1", 1, 2)])


def test_label_source_validates():
    assert LABEL_SOURCES == ("human", "machine", "human-then-machine")
    assert label_source("machine") == "machine"
    with pytest.raises(ValueError, match="use one of human, machine, human-then-machine"):
        label_source("llm")
    with pytest.raises(ValueError, match="unknown label source"):
        labels_for_source(HUMAN, MACHINE, "both")


def test_each_source():
    assert labels_for_source(HUMAN, MACHINE, "human").equals(HUMAN)
    assert labels_for_source(HUMAN, MACHINE, "machine").equals(MACHINE)
    mixed = labels_for_source(HUMAN, MACHINE, "human-then-machine")
    assert mixed.values.tolist() == [["q1", "d1", 2, 3], ["q1", "d2", 0, -1], ["q2", "d1", 1, 2]]
    assert list(mixed.dtypes) == list(HUMAN.dtypes)


def test_missing_aspect_is_not_asked_and_duplicates_are_refused():
    machine = MACHINE.drop(columns="effectiveness")
    mixed = labels_for_source(HUMAN, machine, "human-then-machine")
    assert mixed.iloc[-1].tolist() == ["q2", "d1", 1, -1]
    with pytest.raises(ValueError, match="several rows for query 'q1', document 'd2'"):
        labels_for_source(HUMAN, pd.concat([MACHINE, MACHINE]), "machine")
    with pytest.raises(ValueError, match="lack the columns"):
        labels_for_source(HUMAN.drop(columns="relevance"), MACHINE, "human")


def test_empty_frames():
    empty = frame([])
    assert (
        labels_for_source(empty, MACHINE, "human-then-machine").values.tolist()
        == MACHINE.values.tolist()
    )
    assert (
        labels_for_source(HUMAN, empty, "human-then-machine").values.tolist()
        == HUMAN.values.tolist()
    )
    assert len(labels_for_source(empty, empty, "human-then-machine")) == 0


PAIRS = st.sets(
    st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(["a", "b", "c", "d"]))
)


@settings(deadline=None)
@given(PAIRS, PAIRS, st.data())
def test_human_wins_and_machine_fills(human_pairs, machine_pairs, data):
    grade = st.integers(0, 2)
    human = frame([(q, d, data.draw(grade), data.draw(grade)) for q, d in sorted(human_pairs)])
    machine = frame([(q, d, data.draw(grade) + 10, 0) for q, d in sorted(machine_pairs)])
    mixed = labels_for_source(human, machine, "human-then-machine")
    keys = list(zip(mixed["query_id"], mixed["doc_id"], strict=True))
    assert len(keys) == len(set(keys))  # every pair once
    assert set(keys) == human_pairs | machine_pairs
    by_pair = {(r.query_id, r.doc_id): (r.relevance, r.effectiveness) for r in mixed.itertuples()}
    for r in human.itertuples():
        assert by_pair[(r.query_id, r.doc_id)] == (r.relevance, r.effectiveness)
    for r in machine.itertuples():
        if (r.query_id, r.doc_id) not in human_pairs:
            assert by_pair[(r.query_id, r.doc_id)] == (r.relevance, 0)
