"""Nugget scores: nuggetizer's own outputs (golden/nuggets), the weighted scores by
hand, the reader's refusals, and every score against a slow obvious reference."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.tasks import nuggets
from scoring.core.tasks.nuggets import AnswerTally, Tally
from workbench.core.problems import InputError

GOLDEN = Path(__file__).parent / "golden"
# Our measure: nuggetizer's key (its NuggetMetrics fields and global keys).
NUGGETIZER_KEYS = {
    "all": "all_score",
    "strict_all": "strict_all_score",
    "vital": "vital_score",
    "strict_vital": "strict_vital_score",
}


def _cases(group: str) -> list[Path]:
    return sorted(path for path in (GOLDEN / group).iterdir() if path.is_dir())


def _result(case: Path) -> nuggets.Result:
    return nuggets.score(nuggets.read_assignments(case / "assignments.jsonl"))


def _rejected(data: bytes | str) -> list[str]:
    raw = data.encode() if isinstance(data, str) else data
    with pytest.raises(InputError) as caught:
        nuggets.read_assignments(raw, name="a.jsonl")
    return str(caught.value).splitlines()


def _record(run: object = "r", qid: object = "1", labels=(("vital", "support"),), **extra) -> str:
    record = {"qid": qid, "run_id": run, **extra}
    record.setdefault(
        "nuggets", [{"text": "n", "importance": i, "assignment": a} for i, a in labels]
    )
    return json.dumps(record)


# --------------------------------------------------------------------------
# nuggetizer's own numbers


@pytest.mark.parametrize("case", _cases("nuggets"), ids=lambda path: path.name)
def test_each_answer_scores_the_floats_nuggetizer_gives(case: Path):
    official = json.loads((case / "nuggetizer.json").read_text())["per_record"]
    ours = {(row.run, row.topic): row.scores for row in _result(case).per_topic}
    assert len(ours) == len(official)
    for record in official:
        scores = ours[(record["run_id"], record["qid"])]
        for measure, key in NUGGETIZER_KEYS.items():
            assert scores[measure] == record[key], (record["run_id"], record["qid"], measure)


@pytest.mark.parametrize("case", _cases("nuggets"), ids=lambda path: path.name)
def test_each_run_is_nuggetizers_mean_over_the_topics_it_answered(case: Path):
    official = json.loads((case / "nuggetizer.json").read_text())
    answered: dict[str, int] = {}
    for record in official["per_record"]:
        answered[record["run_id"]] = answered.get(record["run_id"], 0) + 1
    ours = {run.run: run for run in _result(case).runs}
    assert set(ours) == {run["run_id"] for run in official["runs"]}
    for run in official["runs"]:
        mine = ours[run["run_id"]]
        assert mine.n_topics == answered[run["run_id"]]
        for measure, key in NUGGETIZER_KEYS.items():
            assert mine.scores[measure] == run[key], (run["run_id"], measure)


def test_the_golden_means_need_the_exact_mean_not_a_running_sum():
    """statistics.mean rounds once; a running sum divided by n differs on these files
    (so the golden cases would catch a scorer that took one)."""
    differs = False
    for case in _cases("nuggets"):
        for run in _result(case).runs:
            rows = [row for row in _result(case).per_topic if row.run == run.run]
            for measure in nuggets.MEASURES:
                values = [row.scores[measure] for row in rows]
                differs |= sum(values) / len(values) != run.scores[measure]
    assert differs


def test_a_topic_without_vital_nuggets_scores_zero_on_vital_as_in_nuggetizer():
    [first, second] = _result(GOLDEN / "nuggets" / "no_vital_nuggets").per_topic
    assert (first.topic, first.scores["all"], first.scores["vital"]) == ("7", 1.0, 0.0)
    assert first.scores["strict_vital"] == 0.0
    assert first.scores["weighted"] == 1.0
    assert second.scores["vital"] == 1.0


def test_a_missing_topic_counts_nothing_in_the_runs_mean():
    runs = {run.run: run for run in _result(GOLDEN / "nuggets" / "runs_missing_topics").runs}
    assert {name: run.n_topics for name, run in runs.items()} == {"x": 3, "y": 1, "z": 2}
    assert runs["y"].scores["strict_all"] == 0.5  # its one topic, not (0.5 + 0 + 0) / 3


def test_an_empty_nugget_list_scores_zero_everywhere_and_counts_in_the_mean():
    result = _result(GOLDEN / "nuggets" / "nothing_assigned")
    empty = [row for row in result.per_topic if row.topic == "2"]
    assert [row.scores for row in empty] == [dict.fromkeys(nuggets.MEASURES, 0.0)] * 2
    run = next(run for run in result.runs if run.run == "r")
    assert (run.n_topics, run.scores["strict_all"]) == (3, 1 / 3)


# --------------------------------------------------------------------------
# The weighted scores (not in nuggetizer), by hand


def test_weighted_scores_weigh_vital_one_and_okay_a_half():
    rows = {
        (row.run, row.topic): row.scores
        for row in _result(GOLDEN / "nuggets" / "hand_small").per_topic
    }
    # vital S, vital PS, okay S, okay NS: (1 + 0.5 + 0.5) / (1 + 1 + 0.5 + 0.5)
    assert rows[("a", "1")]["weighted"] == 2 / 3
    assert rows[("a", "1")]["strict_weighted"] == 1.5 / 3
    # okay PS, okay S: (0.25 + 0.5) / 1
    assert rows[("a", "2")]["weighted"] == 0.75
    assert rows[("b", "1")]["weighted"] == 0.5 / 3


def test_a_run_averages_the_weighted_scores_of_its_topics():
    runs = {run.run: run.scores for run in _result(GOLDEN / "nuggets" / "hand_small").runs}
    assert runs["a"]["weighted"] == float((Fraction(2 / 3) + Fraction(0.75)) / 2)
    assert runs["a"]["all"] == 0.6875


# --------------------------------------------------------------------------
# Against a slow obvious reference

LABELS = st.tuples(st.sampled_from(nuggets.IMPORTANCES), st.sampled_from(nuggets.ASSIGNMENTS))
CREDIT = {"support": Fraction(1), "partial_support": Fraction(1, 2), "not_support": Fraction(0)}
STRICT = {"support": Fraction(1), "partial_support": Fraction(0), "not_support": Fraction(0)}
WEIGHT = {"vital": Fraction(1), "okay": Fraction(1, 2)}


def _reference(labels: list[tuple[str, str]]) -> dict[str, float]:
    """Each measure as its definition says, in exact fractions, rounded once."""

    def ratio(credit, weight, keep) -> float:
        kept = [(i, a) for i, a in labels if keep(i)]
        total = sum((weight(i) for i, _ in kept), Fraction(0))
        return (
            float(sum((weight(i) * credit[a] for i, a in kept), Fraction(0)) / total)
            if total
            else 0.0
        )

    every, vital, one = (lambda i: True), (lambda i: i == "vital"), (lambda i: Fraction(1))
    return {
        "all": ratio(CREDIT, one, every),
        "strict_all": ratio(STRICT, one, every),
        "vital": ratio(CREDIT, one, vital),
        "strict_vital": ratio(STRICT, one, vital),
        "weighted": ratio(CREDIT, WEIGHT.__getitem__, every),
        "strict_weighted": ratio(STRICT, WEIGHT.__getitem__, every),
    }


@settings(max_examples=200, deadline=None)
@given(st.lists(LABELS, max_size=40))
def test_an_answers_scores_are_their_definitions(labels):
    assert nuggets.answer_scores(nuggets.tally(labels)) == _reference(labels)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.tuples(
            st.sampled_from(["r1", "r2", "r3"]), st.sampled_from([str(n) for n in range(1, 30)])
        ),
        st.lists(LABELS, max_size=12),
        min_size=1,
    ),
    st.randoms(use_true_random=False),
)
def test_a_file_of_generated_assignments_scores_as_the_reference(answers, rng):
    order = list(answers)
    rng.shuffle(order)
    lines = [_record(run, qid, answers[(run, qid)]) for run, qid in order]
    result = nuggets.score(nuggets.read_assignments("\n".join(lines).encode()))
    expected_rows = {key: _reference(labels) for key, labels in answers.items()}
    assert {(row.run, row.topic): row.scores for row in result.per_topic} == expected_rows
    for run in result.runs:
        mine = [scores for (name, _), scores in expected_rows.items() if name == run.run]
        assert run.n_topics == len(mine)
        for measure in nuggets.MEASURES:
            exact = sum((Fraction(scores[measure]) for scores in mine), Fraction(0)) / len(mine)
            assert run.scores[measure] == float(exact)


def test_rows_come_sorted_by_run_then_topic_in_the_decided_topic_order():
    lines = [_record("b", "10"), _record("a", "10"), _record("a", "9"), _record("a", "x")]
    result = nuggets.score(nuggets.read_assignments("\n".join(lines).encode()))
    assert [run.run for run in result.runs] == ["a", "b"]
    assert [(row.run, row.topic) for row in result.per_topic] == [
        ("a", "9"),
        ("a", "10"),
        ("a", "x"),
        ("b", "10"),
    ]


# --------------------------------------------------------------------------
# The core's own refusals


def test_tally_refuses_a_label_nuggetizer_would_count_silently():
    with pytest.raises(ValueError, match="'Support' is not one of support"):
        nuggets.tally([("vital", "Support")])
    with pytest.raises(ValueError, match="counts it as okay"):
        nuggets.tally([("important", "support")])


def test_a_run_mean_of_nothing_is_an_error_not_a_number():
    with pytest.raises(ValueError, match="no topics"):
        nuggets.run_mean([])


def test_scoring_the_same_run_and_topic_twice_is_an_error():
    twice = [AnswerTally("r", "1", Tally(vital=1)), AnswerTally("r", "1", Tally(okay=1))]
    with pytest.raises(ValueError, match="twice"):
        nuggets.score(twice)


# --------------------------------------------------------------------------
# The reader's refusals, each with file:line


UNUSUAL = {
    "capitalised_labels": [
        "2: nuggets[0]: assignment 'Support' is not one of support, partial_support,"
        " not_support (nuggetizer counts it as not_support)",
        "2: nuggets[1]: importance 'Vital' is neither 'vital' nor 'okay' (nuggetizer counts it"
        " as okay)",
    ],
    "failed_assignment": ["2: nuggets[0]: assignment 'failed' is not one of support"],
    "failed_importance": ["2: nuggets[0]: importance 'failed' is neither 'vital' nor 'okay'"],
    "other_label": [
        "2: nuggets[0]: assignment 'partial support' is not one of",
        "2: nuggets[1]: assignment 'supported' is not one of",
    ],
    "run_topic_twice": [
        "2: run 'r' answers topic '1' again (first on line 1); nuggetizer would count both"
    ],
    "integer_qid": ['2: "qid" 2 is not a string (topic ids are strings: write "2")'],
    "no_run_id": ['1: no "run_id": every record names its run id'],
    "malformed_json": ["1: not valid JSON: Expecting ',' delimiter at column 217"],
    "empty_file": [" empty file: no assignment records (nuggetizer fails on a mean of nothing)"],
}


@pytest.mark.parametrize("case", sorted(UNUSUAL))
def test_what_nuggetizer_scores_silently_or_crashes_on_is_refused_with_its_line(case: str):
    path = GOLDEN / "nuggets-unusual" / case / "assignments.jsonl"
    with pytest.raises(InputError) as caught:
        nuggets.read_assignments(path)
    lines = str(caught.value).splitlines()
    assert len(lines) == len(UNUSUAL[case])
    for line, expected in zip(lines, UNUSUAL[case], strict=True):
        assert line.startswith(f"{path}:{expected}")


def test_every_unusual_golden_case_is_either_refused_or_read():
    assert {path.name for path in _cases("nuggets-unusual")} == {*UNUSUAL, "blank_line"}


def test_a_blank_line_is_skipped_where_nuggetizer_crashes():
    case = GOLDEN / "nuggets-unusual" / "blank_line"
    assert "JSONDecodeError" in (case / "official.txt").read_text()
    text = (case / "assignments.jsonl").read_text()
    assert "\n\n" in text
    without = nuggets.read_assignments(text.replace("\n\n", "\n").encode())
    assert [row.scores for row in _result(case).per_topic] == [
        row.scores for row in nuggets.score(without).per_topic
    ]


def test_every_problem_of_every_line_is_reported():
    lines = [
        _record(),
        "not json",
        "[1, 2]",
        _record(run="a\tb", qid=""),
        _record(labels=()).replace('"nuggets": []', '"nuggets": {}'),
        json.dumps({"qid": "3", "run_id": "r"}),
        json.dumps(
            {"qid": "4", "run_id": "r", "nuggets": [5, {"text": "t", "importance": "vital"}]}
        ),
        json.dumps(
            {
                "qid": "5",
                "run_id": "r",
                "nuggets": [{"text": 7, "importance": "okay", "assignment": "support"}],
            }
        ),
    ]
    assert _rejected("\n".join(lines)) == [
        "a.jsonl:2: not valid JSON: Expecting value at column 1",
        "a.jsonl:3: expected a JSON object",
        'a.jsonl:4: empty "qid"',
        "a.jsonl:4: \"run_id\" 'a\\tb' holds a control character (U+0009 at character 2); ids"
        " hold no whitespace, control or invisible characters",
        'a.jsonl:5: "nuggets" is not a list (found dict)',
        'a.jsonl:6: no "nuggets": every record lists its nuggets (an empty list for none)',
        "a.jsonl:7: nuggets[0] is not an object",
        "a.jsonl:7: nuggets[1] has no 'assignment'",
        "a.jsonl:8: nuggets[0]: text 7 is not a string",
    ]


def test_text_that_cannot_be_stored_or_printed_is_refused():
    assert _rejected(b'{"qid": "1", "run_id": "r", "nuggets": [], "x": "\\u0000"}') == [
        "a.jsonl:1: contains a NUL character (\\0), which no text field may hold"
    ]
    assert _rejected(b'{"qid": "\\ud800", "run_id": "r", "nuggets": []}')[0].startswith(
        "a.jsonl:1: contains a lone surrogate"
    )
    assert _rejected(b'{"qid": "1", "run_id": "r", "nuggets": []}\n\xff\n') == [
        "a.jsonl:2: not UTF-8 (byte 0xff at column 1)"
    ]


def test_other_keys_are_ignored_as_nuggetizer_writes_them():
    line = _record(query="q", answer_text="an answer", response_length=3, trace={"model": "m"})
    [answer] = nuggets.read_assignments(line.encode())
    assert answer.counts == Tally(vital=1, vital_support=1)


def test_a_byte_order_mark_and_crlf_line_ends_are_read():
    data = ("\ufeff" + _record(qid="1") + "\r\n" + _record(qid="2") + "\r\n").encode()
    assert [answer.topic for answer in nuggets.read_assignments(data)] == ["1", "2"]


def test_the_reader_takes_the_lines_one_at_a_time():
    """An iterable of lines is enough: the file is never read whole."""

    class OnlyLines:
        def __init__(self, lines: list[bytes]):
            self.lines = lines

        def __iter__(self):
            return iter(self.lines)

    lines = [f"{_record(qid=str(n))}\n".encode() for n in range(3)]
    answers = nuggets.read_assignments(OnlyLines(lines), name="piped")
    assert [answer.line for answer in answers] == [1, 2, 3]
    stream = io.BytesIO(b"".join(lines[:1]) + b"oops\n")
    with pytest.raises(InputError, match="piped:2: not valid JSON"):
        nuggets.read_assignments(stream, name="piped")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
RECORD = st.fixed_dictionaries(
    {
        "qid": JSON,
        "run_id": JSON,
        "nuggets": st.lists(
            st.dictionaries(
                st.sampled_from(["text", "importance", "assignment"]),
                JSON | st.sampled_from([*nuggets.ASSIGNMENTS, *nuggets.IMPORTANCES]),
            ),
            max_size=3,
        )
        | JSON,
    }
)


def _answers_or_error(data: bytes) -> tuple[list[AnswerTally], InputError | None]:
    try:
        return nuggets.read_assignments(data, name="a.jsonl"), None
    except InputError as error:
        return [], error


@settings(max_examples=150, deadline=None)
@given(
    st.binary(max_size=800)
    | st.lists(RECORD, max_size=4).map(lambda rows: "\n".join(map(json.dumps, rows)).encode())
)
def test_any_input_gives_answers_or_problems_with_file_and_line(data):
    answers, error = _answers_or_error(data)
    if error is not None:
        assert error.problems
        assert all(problem.file == "a.jsonl" and problem.reason for problem in error.problems)
    else:
        assert nuggets.score(answers).runs
