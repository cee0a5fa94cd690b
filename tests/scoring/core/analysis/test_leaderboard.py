"""Building the leaderboard from a score table."""

import io
import math

import numpy as np
import pytest

from scoring.core.analysis.corrections import adjust
from scoring.core.analysis.leaderboard import (
    TESTS,
    LeaderboardError,
    Options,
    ScoreTable,
    build_leaderboard,
)
from scoring.core.command_line import read_inputs
from scoring.core.evaluation import evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.qrels import TREC_QRELS
from tests.scoring.core.analysis.tables import continuous

NAN = math.nan


def _table(values, runs=None, topics=None) -> ScoreTable:
    values = np.asarray(values, dtype=float)
    runs = runs or tuple(f"run{i}" for i in range(values.shape[0]))
    topics = topics or tuple(str(t) for t in range(1, values.shape[1] + 1))
    return ScoreTable("map", tuple(runs), tuple(topics), values)


def test_runs_are_ranked_by_mean_then_name():
    board = build_leaderboard(_table([[0.2, 0.4], [0.5, 0.5], [0.4, 0.2]], runs=("c", "b", "a")))
    assert [row.run for row in board.runs] == ["b", "a", "c"]
    assert [row.mean for row in board.runs] == [0.5, 0.30000000000000004, 0.30000000000000004]
    assert {row.n_topics for row in board.runs} == {2}


def test_a_topic_some_run_lacks_is_left_out_for_every_run_and_listed():
    table = _table([[0.1, 0.2, 0.3, NAN], [0.3, NAN, 0.5, NAN], [0.2, 0.2, 0.2, NAN]])
    board = build_leaderboard(table)
    assert board.topics == ("1", "3")
    assert [(item.topic, item.runs) for item in board.excluded] == [
        ("2", ("run1",)),
        ("4", ("run0", "run1", "run2")),
    ]
    assert board.excluded[0].reason == "no value for run run1: left out for every run"
    assert {row.n_topics for row in board.runs} == {2}
    assert board.runs[0].mean == 0.4  # run1 over topics 1 and 3


def test_no_topic_for_every_run():
    with pytest.raises(LeaderboardError, match="no topic has a value for every run"):
        build_leaderboard(_table([[0.1, NAN], [NAN, 0.2]]))


def test_two_runs_of_one_name():
    with pytest.raises(LeaderboardError, match="two runs are named 'x'"):
        build_leaderboard(_table([[0.1], [0.2]], runs=("x", "x")))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tests": ("z",)}, "unknown test 'z'"),
        ({"correction": "fdr"}, "unknown correction 'fdr'"),
        ({"alpha": 1.0}, "alpha must be between 0 and 1"),
        ({"n_resamples": 0}, "resamples must be at least 1"),
        ({"seed": -1}, "the seed must be 0 or more"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(LeaderboardError, match=message):
        Options(**options)


def test_every_pair_by_every_test_in_rank_order():
    values = continuous(5, 12, seed=1)
    board = build_leaderboard(_table(values), Options(tests=TESTS, n_resamples=500))
    ranked = [row.run for row in board.runs]
    assert len(board.pairs) == 10 * len(TESTS)
    for number, test in enumerate(TESTS):
        pairs = board.pairs[number * 10 : (number + 1) * 10]
        assert {pair.test for pair in pairs} == {test}
        assert [(ranked.index(p.a), ranked.index(p.b)) for p in pairs] == [
            (0, 1),
            (0, 2),
            (0, 3),
            (0, 4),
            (1, 2),
            (1, 3),
            (1, 4),
            (2, 3),
            (2, 4),
            (3, 4),
        ]
        p_values = np.array([pair.p_value for pair in pairs])
        expected = p_values if test == "tukey" else adjust(p_values, "holm")
        assert [pair.p_adjusted for pair in pairs] == list(expected)
        assert all(pair.mean_difference >= 0 for pair in pairs)


def test_significant_wins_are_those_at_or_under_alpha_after_correction():
    rng = np.random.default_rng(2)
    base = rng.random(20)
    values = np.array([base + 0.3, base + 0.3 + rng.normal(0, 0.01, 20), base])
    board = build_leaderboard(_table(values, runs=("a", "b", "c")), Options(tests=("t",)))
    assert board.beaten("t") == {"a": ["c"], "b": ["c"], "c": []}
    for pair in board.pairs:
        assert pair.significant == (pair.p_adjusted <= 0.05)


def test_one_run_has_no_pairs():
    board = build_leaderboard(_table([[0.1, 0.3]]))
    assert board.pairs == ()
    assert board.runs[0].mean == 0.2


def test_the_leaderboard_mean_is_trec_evals_summary(tmp_path):
    """One rule for a mean over topics: the leaderboard's is trec_eval's, to the bit."""
    rng = np.random.default_rng(3)
    topics = [str(t) for t in range(1, 13)]
    (tmp_path / "qrels").write_text(
        "".join(f"{t} 0 d{d} {int(rng.random() < 0.4)}\n" for t in topics for d in range(15))
    )
    names = []
    for run in range(4):
        lines = "".join(
            f"{t} Q0 d{d} {rank} {20 - rank} r{run}\n"
            for t in topics
            for rank, d in enumerate(rng.permutation(15)[:10])
        )
        (tmp_path / f"run{run}").write_text(lines)
        names.append(str(tmp_path / f"run{run}"))
    qrels, runs = read_inputs(str(tmp_path / "qrels"), TREC_QRELS, names, io.BytesIO())
    evaluation = evaluate(qrels, runs, TREC.select(["map"]))
    board = build_leaderboard(ScoreTable.from_evaluation(evaluation), Options(tests=()))
    summary = dict(zip(evaluation.run_tags, evaluation.measures[0].summary[:, 0], strict=True))
    assert {row.run: row.mean for row in board.runs} == summary


def test_a_score_table_comes_back_from_its_json_exactly():
    import json

    values = [[0.1 + 0.2, NAN, 1 / 3], [0.0, 2.5e-17, 0.7]]
    table = _table(values, runs=("b", "a"), topics=("10", "2", "covid-1"))
    back = ScoreTable.from_dict(json.loads(json.dumps(table.to_dict(), allow_nan=False)))
    assert (back.measure, back.runs, back.topics) == (table.measure, table.runs, table.topics)
    np.testing.assert_array_equal(back.values, table.values)  # NaN where NaN, bit for bit
    assert back.values.dtype == np.float64
    empty = ScoreTable.from_dict(_table(np.empty((0, 2))).to_dict())
    assert empty.values.shape == (0, 2)


def test_a_pair_with_the_same_value_on_every_topic_is_identical_for_every_test():
    table = _table([[0.2, 0.4, 0.1], [0.2, 0.4, 0.1], [0.3, 0.4, 0.1]], runs=("a", "b", "c"))
    board = build_leaderboard(table, Options(tests=TESTS))
    identical = {(pair.a, pair.b, pair.test) for pair in board.pairs if pair.identical}
    assert identical == {("a", "b", test) for test in TESTS}
    [t_pair] = [p for p in board.pairs if p.test == "t" and p.identical]
    assert math.isnan(t_pair.statistic)  # what the page and the text no longer show
