"""Nugget scores of generated answers, exactly as nuggetizer computes them.

Pure core, no Django. The reference is castorini/nuggetizer's
`calculate_nugget_scores` (one answer) and `calculate_global_metrics` (the
mean over a file of one run's answers), `src/nuggetizer/core/metrics.py`;
`docs/tasks.md` cites its lines and the commit the golden files came from.

An answer's nuggets each have an importance (`vital` or `okay`) and an
assignment (`support`, `partial_support` or `not_support`). Its scores:

    all              (support + 0.5 x partial_support) / nuggets
    strict_all       support / nuggets
    vital            the same as all, over the vital nuggets only
    strict_vital     the same as strict_all, over the vital nuggets only
    weighted         as all, each nugget weighted: vital 1, okay 0.5
    strict_weighted  as strict_all, weighted the same way

A zero denominator gives 0.0, as nuggetizer does: an answer with no nuggets
scores 0.0 everywhere, and one whose topic has no vital nugget scores 0.0 on
vital and strict_vital (however many okay nuggets it has). nuggetizer has no
weighted scores: they are ours (docs/tasks.md says where the weights come
from), computed in the same way.

A run's score is the mean over its answers' topics (`run_mean`, the exact mean
of `statistics.mean`, as nuggetizer takes it). A topic the run did not answer
is not in the mean, as in nuggetizer (whose mean is over the records of the
file): it counts nothing, neither 0 nor anything else. `n_topics` says how many
topics a run's mean is over.

Assignment files (`read_assignments`) are nuggetizer's assign output, one JSON
object a line: `qid`, `run_id`, `nuggets: [{"text", "importance",
"assignment"}]`, other keys ignored. Where nuggetizer counts what it does not
know silently (an importance other than `vital` counts as okay, an assignment
other than `support`/`partial_support` counts as not supported, a record twice
counts twice), we refuse the file with `file:line: reason` instead.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.file_input import ReadableSource, jsonl_records, readable_name
from workbench.core.id_limits import MAX_RUN_TAG, MAX_TOPIC_ID, id_field_problem
from workbench.core.problems import InputError, ProblemLog
from workbench.core.topic_ids import topic_sort_key

VITAL, OKAY = "vital", "okay"
IMPORTANCES = (VITAL, OKAY)
SUPPORT, PARTIAL_SUPPORT, NOT_SUPPORT = "support", "partial_support", "not_support"
ASSIGNMENTS = (SUPPORT, PARTIAL_SUPPORT, NOT_SUPPORT)

PARTIAL_CREDIT = 0.5  # nuggetizer: 0.5 for partial_support
OKAY_WEIGHT = 0.5  # weighted scores: vital 1, okay 0.5

MEASURES = ("all", "strict_all", "vital", "strict_vital", "weighted", "strict_weighted")


# --------------------------------------------------------------------------
# One answer


@dataclass(frozen=True)
class Tally:
    """One answer's nuggets, counted by importance and by assignment."""

    vital: int = 0
    vital_support: int = 0
    vital_partial: int = 0
    okay: int = 0
    okay_support: int = 0
    okay_partial: int = 0


def label_problem(importance: object, assignment: object) -> str | None:
    """Why a nugget's (importance, assignment) is not one we score, or None."""
    if importance not in IMPORTANCES:
        return (
            f"importance {importance!r} is neither 'vital' nor 'okay'"
            " (nuggetizer counts it as okay)"
        )
    if assignment in ASSIGNMENTS:
        return None
    failed = assignment == "failed"
    return f"assignment {assignment!r} is not one of {', '.join(ASSIGNMENTS)} " + (
        "(nuggetizer's assigner writes 'failed' where it could not judge the nugget, "
        "and nuggetizer counts it as not_support: judge it)"
        if failed
        else "(nuggetizer counts it as not_support)"
    )


def tally(nuggets: Iterable[tuple[str, str]]) -> Tally:
    """Count an answer's nuggets, given as (importance, assignment) pairs; ValueError
    on a label `label_problem` refuses."""
    counts = dict.fromkeys(("vital", "vital_support", "vital_partial"), 0)
    counts |= dict.fromkeys(("okay", "okay_support", "okay_partial"), 0)
    for importance, assignment in nuggets:
        problem = label_problem(importance, assignment)
        if problem:
            raise ValueError(problem)
        counts[importance] += 1
        if assignment == SUPPORT:
            counts[f"{importance}_support"] += 1
        elif assignment == PARTIAL_SUPPORT:
            counts[f"{importance}_partial"] += 1
    return Tally(**counts)


def _ratio(numerator: float, denominator: float) -> float:
    """nuggetizer's `x / n if n else 0.0`. Numerators and denominators are sums of
    halves and quarters, exact in a double, so the one division rounds the same
    way in whatever order the sums were made."""
    return numerator / denominator if denominator else 0.0


def answer_scores(counts: Tally) -> dict[str, float]:
    """The six scores of one answer (see the module docstring), in `MEASURES` order."""
    vital_credit = counts.vital_support + PARTIAL_CREDIT * counts.vital_partial
    okay_credit = counts.okay_support + PARTIAL_CREDIT * counts.okay_partial
    nuggets = counts.vital + counts.okay
    weight = counts.vital + OKAY_WEIGHT * counts.okay
    return {
        "all": _ratio(vital_credit + okay_credit, nuggets),
        "strict_all": _ratio(counts.vital_support + counts.okay_support, nuggets),
        "vital": _ratio(vital_credit, counts.vital),
        "strict_vital": _ratio(counts.vital_support, counts.vital),
        "weighted": _ratio(vital_credit + OKAY_WEIGHT * okay_credit, weight),
        "strict_weighted": _ratio(counts.vital_support + OKAY_WEIGHT * counts.okay_support, weight),
    }


# --------------------------------------------------------------------------
# A run


def run_mean(values: Iterable[float]) -> float:
    """The mean of a run's per-topic scores: `statistics.mean`, as nuggetizer takes
    it, which sums exactly and rounds once (so the order of the topics does not
    change the last bit, as it would with a running or pairwise sum). ValueError
    when there is nothing to average. Every mean over topics of an answer score
    (nuggets, citation support) is this one."""
    values = list(values)
    if not values:
        raise ValueError("no topics to average")
    return float(statistics.mean(values))


def run_scores(per_topic: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each measure's mean over a run's topics (see `run_mean`)."""
    return {measure: run_mean(scores[measure] for scores in per_topic) for measure in MEASURES}


# --------------------------------------------------------------------------
# Assignment files


@dataclass(frozen=True)
class AnswerTally:
    """One answer of an assignment file (or of the database): its run, its topic,
    where it was read (line 0 when not from a file) and its nuggets counted."""

    run: str
    topic: str
    counts: Tally
    line: int = 0


@dataclass(frozen=True)
class TopicScores:
    run: str
    topic: str
    scores: dict[str, float]


@dataclass(frozen=True)
class RunScores:
    run: str
    n_topics: int
    scores: dict[str, float]


@dataclass(frozen=True)
class Result:
    """Runs by name; per_topic by run, then topic (`topic_sort_key`)."""

    runs: list[RunScores]
    per_topic: list[TopicScores]


def score(answers: Iterable[AnswerTally]) -> Result:
    """Every answer scored, and every run's mean over its topics. A (run, topic)
    given twice raises ValueError (the file reader reports it with its lines)."""
    per_run: dict[str, dict[str, dict[str, float]]] = {}
    for answer in answers:
        topics = per_run.setdefault(answer.run, {})
        if answer.topic in topics:
            raise ValueError(f"run {answer.run!r} answers topic {answer.topic!r} twice")
        topics[answer.topic] = answer_scores(answer.counts)
    runs, per_topic = [], []
    for run in sorted(per_run):
        topics = per_run[run]
        order = sorted(topics, key=topic_sort_key)
        per_topic += [TopicScores(run, topic, topics[topic]) for topic in order]
        runs.append(RunScores(run, len(topics), run_scores([topics[t] for t in order])))
    return Result(runs, per_topic)


def _nugget_problems(nuggets: object) -> tuple[list[str], list[tuple[str, str]]]:
    if not isinstance(nuggets, list):
        return [f'"nuggets" is not a list (found {type(nuggets).__name__})'], []
    problems, labels = [], []
    for index, nugget in enumerate(nuggets):
        where = f"nuggets[{index}]"
        if not isinstance(nugget, dict):
            problems.append(f"{where} is not an object")
            continue
        missing = [key for key in ("text", "importance", "assignment") if key not in nugget]
        if missing:
            problems.append(f"{where} has no {', '.join(f'{key!r}' for key in missing)}")
            continue
        if not isinstance(nugget["text"], str):
            problems.append(f"{where}: text {nugget['text']!r} is not a string")
            continue
        problem = label_problem(nugget["importance"], nugget["assignment"])
        if problem:
            problems.append(f"{where}: {problem}")
            continue
        labels.append((nugget["importance"], nugget["assignment"]))
    return problems, labels


def read_assignments(source: ReadableSource, *, name: str | None = None) -> list[AnswerTally]:
    """An assignment file (see the module docstring), checked line by line and kept
    as counts only: memory grows with the number of answers, not with the text.
    InputError with every problem as `file:line: reason`."""
    log = ProblemLog(readable_name(source, name))
    answers: list[AnswerTally] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, record in jsonl_records(source, log):
        problems = [
            problem
            for problem in (
                id_field_problem(record, "qid", "topic id", MAX_TOPIC_ID),
                id_field_problem(record, "run_id", "run id", MAX_RUN_TAG),
            )
            if problem
        ]
        if "nuggets" not in record:
            problems.append('no "nuggets": every record lists its nuggets (an empty list for none)')
            labels: list[tuple[str, str]] = []
        else:
            nugget_problems, labels = _nugget_problems(record["nuggets"])
            problems += nugget_problems
        for problem in problems:
            log.add(number, problem)
        if problems:
            continue
        key = (record["run_id"], record["qid"])
        if key in first_line:
            log.add(
                number,
                f"run {key[0]!r} answers topic {key[1]!r} again (first on line {first_line[key]});"
                " nuggetizer would count both",
            )
            continue
        first_line[key] = number
        answers.append(AnswerTally(key[0], key[1], tally(labels), number))
    if log.ok and not answers:
        log.add(0, "empty file: no assignment records (nuggetizer fails on a mean of nothing)")
    if not log.ok:
        raise InputError.from_log(log)
    return answers


# --------------------------------------------------------------------------
# Output


def as_json(result: Result) -> dict[str, Any]:
    """The command's JSON: full precision, runs by name, topics by run then topic."""
    return {
        "runs": [{"run": run.run, "n_topics": run.n_topics, **run.scores} for run in result.runs],
        "per_topic": [
            {"run": row.run, "topic": row.topic, **row.scores} for row in result.per_topic
        ],
    }


def text_lines(result: Result, *, per_topic: bool = False) -> list[str]:
    """A tab-separated table of the runs, 4 decimals; with `per_topic`, each answer's
    scores after it, under a header of their own."""
    lines = ["\t".join(("run", "n_topics", *MEASURES))]
    lines += [
        "\t".join((run.run, str(run.n_topics), *(f"{run.scores[m]:.4f}" for m in MEASURES)))
        for run in result.runs
    ]
    if per_topic:
        lines += ["", "\t".join(("run", "topic", *MEASURES))]
        lines += [
            "\t".join((row.run, row.topic, *(f"{row.scores[m]:.4f}" for m in MEASURES)))
            for row in result.per_topic
        ]
    return lines
