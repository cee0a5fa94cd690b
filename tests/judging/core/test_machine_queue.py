"""Which documents the machines settled (judging.core.machine_queue)."""

from __future__ import annotations

from judging.core.machine_queue import settled_documents


def test_a_document_without_a_machine_label_is_not_settled():
    assert settled_documents(["d1"], []) == {"d1"}
    assert settled_documents([], [(1, "d2", 0, 5, 1)]) == set()


def test_samples_that_disagree_unsettle_a_document():
    samples = [(1, "d1", 0, 1, 2), (1, "d1", 1, 2, 2), (1, "d2", 0, 3, 0), (1, "d2", 1, 4, 1)]
    assert settled_documents(["d1", "d2"], samples) == {"d1"}


def test_two_machines_that_disagree_unsettle_a_document():
    assert settled_documents(["d1"], [(1, "d1", 0, 1, 2), (2, "d1", 0, 2, 0)]) == set()


def test_the_latest_sample_of_an_index_counts():
    """A re-run with --documents all adds copies: the latest of (machine, docno, index)."""
    old_disagreeing = [(1, "d1", 0, 1, 0), (1, "d1", 1, 2, 2)]
    rerun = [(1, "d1", 0, 9, 2)]
    assert settled_documents(["d1"], old_disagreeing) == set()
    assert settled_documents(["d1"], old_disagreeing + rerun) == {"d1"}
    # Order of the rows does not matter: the highest row id wins.
    assert settled_documents(["d1"], rerun + old_disagreeing) == {"d1"}
