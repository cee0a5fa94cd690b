"""The leaderboard as text, TSV, JSON and LaTeX."""

import io
import json
import math

import numpy as np
import pytest

from scoring.core.analysis.leaderboard import Options, ScoreTable, build_leaderboard
from scoring.core.analysis.render import latex_escape, run_keys, write_leaderboard


@pytest.fixture(scope="module")
def board():
    """run_a and run_b clearly above run_c; topic 21 lacks run_c's value."""
    rng = np.random.default_rng(4)
    base = rng.random(21)
    values = np.array([base + 0.3, base + 0.3 + rng.normal(0, 0.01, 21), base])
    values[2, 20] = math.nan
    table = ScoreTable(
        "P_10", ("run_a", "run_b", "run_c"), tuple(str(t) for t in range(1, 22)), values
    )
    return build_leaderboard(table, Options(tests=("t", "randomization"), n_resamples=2000))


def _write(board, output_format: str) -> str:
    out = io.StringIO()
    write_leaderboard(board, out, output_format)
    return out.getvalue()


def test_json_holds_everything_at_full_precision(board):
    data = json.loads(_write(board, "json"))
    assert set(data) >= {"measure", "runs", "pairs", "excluded", "options", "topics"}
    assert data["measure"] == "P_10"
    assert len(data["topics"]) == 20
    run = data["runs"][0]
    assert set(run) >= {"run", "mean", "n_topics", "ci_low", "ci_high"}
    assert run["mean"] == board.runs[0].mean
    assert run["n_topics"] == 20
    pair = data["pairs"][0]
    assert set(pair) >= {"a", "b", "test", "statistic", "p_value", "p_adjusted"}
    assert [p["p_value"] for p in data["pairs"]] == [p.p_value for p in board.pairs]
    assert len(data["pairs"]) == 6
    assert data["excluded"] == [
        {
            "topic": "21",
            "runs": ["run_c"],
            "reason": "no value for run run_c: left out for every run",
        }
    ]
    assert data["options"]["resamples"] == 2000


def test_json_writes_nan_and_infinity_as_null():
    table = ScoreTable("map", ("a", "b"), ("1",), np.array([[0.5], [0.25]]))
    data = json.loads(_write(build_leaderboard(table), "json"))
    assert data["runs"][0]["ci_low"] is None
    assert data["pairs"][0]["p_value"] is None


def test_latex_is_a_booktabs_table_with_marks_and_a_legend(board):
    text = _write(board, "latex")
    for command in ("\\toprule", "\\midrule", "\\bottomrule", "\\begin{tabular}", "\\caption{"):
        assert command in text
    rows = [line for line in text.splitlines() if line.startswith(("a &", "b &", "c &"))]
    assert rows[0].startswith("a & run\\_")
    assert "$^{\\mathrm{c}}$" in rows[0]
    assert "$^{\\mathrm{c}}$" in rows[1]
    assert rows[2].startswith("c & run\\_c & ")
    assert "$^" not in rows[2]
    assert "paired t-test, Holm correction over 3 pairs" in text
    assert "1 topic without a value for some run left out" in text


def test_tsv_has_the_runs_the_pairs_and_the_topics_left_out(board):
    runs, pairs, excluded = _write(board, "tsv").split("\n\n")
    assert runs.splitlines()[0].split("\t")[:5] == ["rank", "run", "mean", "n_topics", "ci_low"]
    assert len(runs.splitlines()) == 4
    assert float(runs.splitlines()[1].split("\t")[2]) == board.runs[0].mean
    assert pairs.splitlines()[0].startswith("a\tb\ttest\tstatistic\tp_value\tp_adjusted")
    assert len(pairs.splitlines()) == 7
    assert excluded.splitlines()[1].startswith("21\trun_c\t")


def test_text_lists_the_runs_then_each_tests_pairs(board):
    text = _write(board, "text")
    assert text.startswith("P_10 over 20 topics (1 left out)\n")
    assert "paired t-test, Holm correction over 3 pairs; * p_adjusted <= 0.05" in text
    assert "Fisher's randomisation test (2,000 sign flips, seed 0)" in text
    assert text.endswith("21  no value for run run_c: left out for every run\n")


def test_latex_escape_and_run_keys():
    assert latex_escape("a_b&c%d#e$f{g}~^\\") == (
        "a\\_b\\&c\\%d\\#e\\$f\\{g\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
    )
    assert run_keys(28)[:3] == ["a", "b", "c"]
    assert run_keys(28)[25:] == ["z", "aa", "ab"]


def test_a_leaderboard_read_back_from_its_json_writes_every_format_the_same(board):
    from scoring.core.analysis.render import from_json, to_json

    stored = json.loads(json.dumps(to_json(board)))  # as a release keeps it
    again = from_json(stored)
    for output_format in ("text", "tsv", "json", "latex"):
        assert _write(again, output_format) == _write(board, output_format)
    assert again.beaten("t") == board.beaten("t")


def test_a_nan_statistic_comes_back_as_nan():
    from scoring.core.analysis.render import from_json, to_json

    tied = ScoreTable("map", ("a", "b"), ("1", "2"), np.array([[0.5, 0.5], [0.5, 0.5]]))
    board = build_leaderboard(tied)
    assert math.isnan(board.pairs[0].statistic)
    again = from_json(json.loads(json.dumps(to_json(board))))
    assert math.isnan(again.pairs[0].statistic)
    assert to_json(again) == to_json(board)
