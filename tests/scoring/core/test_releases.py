"""What a release is made of and two compared: hand-made cases, and the script run for real."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from scoring.core import releases
from scoring.core.trec_eval import main as trec_eval

VENV_BIN = Path(sys.executable).parent


def test_plain_tags_are_their_own_file_names():
    assert releases.bundle_run_names(["run-1", "UAmsT10aMR", "a.b_c+d"]) == {
        "run-1": "run-1",
        "UAmsT10aMR": "UAmsT10aMR",
        "a.b_c+d": "a.b_c+d",
    }


def test_a_tag_that_cannot_be_a_file_name_gets_a_distinct_safe_one():
    names = releases.bundle_run_names([".hidden", "a/b", "a_b", "é", "..", "a:b"])
    assert names["a_b"] == "a_b"  # a plain tag keeps its name
    assert names["a/b"] == "a_b_2"  # and one made safe does not take it
    assert not names[".hidden"].startswith(".")  # `runs/` would skip it
    assert not names[".."].startswith(".")
    assert len(set(names.values())) == 6
    assert all("/" not in name for name in names.values())


def test_scores_rows_are_the_scorers_tsv_as_run_measure_topic_value():
    scorer = (
        "run\trun_id\tquery_id\tmeasure\tvalue\nruns/a\tA\t1\tmap\t0.5\nruns/a\tA\tall\tP_10\t0.1\n"
    )
    assert releases.scores_rows(scorer) == "A\tmap\t1\t0.5\nA\tP_10\tall\t0.1\n"
    assert releases.scores_rows(scorer, keep=["P_10"]) == "A\tP_10\tall\t0.1\n"


def test_the_script_prints_what_scores_rows_makes_of_wb_trec_evals_output(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "first").write_text("1 Q0 b 1 2 first\n1 Q0 a 2 1 first\n")
    (runs / "second").write_text("2 Q0 c 1 1 second\n")
    measures = ["map", "P.5,10"]
    out = io.StringIO()
    arguments = [*releases.trec_eval_arguments(measures), "qrels.txt", "runs/first", "runs/second"]
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert trec_eval(arguments, out, io.StringIO()) == 0
    finally:
        os.chdir(cwd)
    expected = releases.SCORES_HEADER + releases.scores_rows(out.getvalue())
    script = releases.reproduce_script(
        title="release 1 of pool 1", measures=measures, sampled=False, workbench={"version": "9"}
    )
    (tmp_path / releases.SCRIPT_FILE).write_text(script)
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", releases.SCRIPT_FILE], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert "second\tP_10\tall\t0.05\n" in expected
    (runs / "second").write_text("2 Q0 c 1 not-a-score second\n")
    broken = subprocess.run(
        ["bash", releases.SCRIPT_FILE], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert broken.returncode == 2  # the scorer's status, not awk's (pipefail)
    assert "runs/second:1:" in broken.stderr


def _qrels(*rows: tuple[str, str, int]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def test_label_changes_say_added_changed_and_removed_in_topic_then_docno_order():
    old = _qrels(("10", "d2", 1), ("2", "d1", 0), ("2", "d3", 2), ("10", "d9", 0))
    new = _qrels(("10", "d2", 1), ("2", "d1", 1), ("10", "d1", 0), ("10", "d9", 0))
    changes = releases.label_changes(old, new)
    assert changes.to_dict("records") == [
        {"query_id": "2", "doc_id": "d1", "old": 0, "new": 1, "change": "changed"},
        {"query_id": "2", "doc_id": "d3", "old": 2, "new": None, "change": "removed"},
        {"query_id": "10", "doc_id": "d1", "old": None, "new": 0, "change": "added"},
    ]
    assert releases.label_changes(old, old).empty


def test_score_changes_list_moved_means_and_ranks_by_the_leaderboards_rule():
    old = {"a": {"map": 0.5, "P_10": 0.2}, "b": {"map": 0.4, "P_10": 0.2}, "c": {"map": 0.1}}
    new = {"a": {"map": 0.3, "P_10": 0.2}, "b": {"map": 0.4, "P_10": 0.2}, "d": {"map": 0.9}}
    changes = releases.score_changes(old, new, ["map", "P_10"])
    assert [(c.measure, c.run, c.old, c.new, c.old_rank, c.new_rank) for c in changes] == [
        ("map", "d", None, 0.9, None, 1),
        ("map", "a", 0.5, 0.3, 1, 3),
        ("map", "c", 0.1, None, 3, None),
    ]
    # b kept its mean and rank (2): not listed; P_10 ties rank by tag and nothing moved.
    assert changes[1].difference == pytest.approx(-0.2)


def test_a_run_whose_rank_moved_alone_is_listed():
    old = {"a": {"map": 0.5}, "b": {"map": 0.4}}
    new = {"a": {"map": 0.5}, "b": {"map": 0.6}}
    changes = releases.score_changes(old, new, ["map"])
    assert [(c.run, c.old_rank, c.new_rank) for c in changes] == [("b", 2, 1), ("a", 1, 2)]


def _pair(a: str, b: str, significant: bool, p: float, test: str = "t") -> dict:
    return {"a": a, "b": b, "test": test, "p_adjusted": p, "significant": significant}


def test_significance_flips_match_pairs_whatever_their_order():
    old = [_pair("a", "b", True, 0.01), _pair("a", "c", False, 0.2), _pair("b", "c", True, 0.03)]
    new = [
        _pair("b", "a", False, 0.3),  # b now above a: the same pair, no longer significant
        _pair("a", "c", True, 0.04),
        _pair("b", "c", True, 0.02),
        _pair("a", "d", True, 0.001),  # d is new: not compared
        _pair("a", "c", False, 0.2, test="wilcoxon"),
    ]
    flips = releases.significance_flips(old, new)
    assert [(f.a, f.b, f.test, f.old_significant, f.new_significant) for f in flips] == [
        ("b", "a", "t", True, False),
        ("a", "c", "t", False, True),
    ]
    assert (flips[0].old_p_adjusted, flips[0].new_p_adjusted) == (0.01, 0.3)
