"""A generated-answers campaign's scores, from the labels in the database, computed by
the same cores `manage.py nugget_scores` runs (`scoring.core.tasks.nuggets`) and
the citation support core (`scoring.core.tasks.citations`): no second implementation.

Which label counts for an answer: its adjudication if the organiser decided
one, else the judgment of the topic's first assigned assessor who judged it
(assignments by their creation), so that an overlap assessor added later never
changes a score. An answer nobody judged yet is not
scored and not in its run's mean (`unjudged` counts them per run); its run's
`n_topics` says how many topics the mean is over, as nuggetizer's does.
A nugget judgment is scored against the nugget list version it was made
against (its importances), not the topic's newest.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.db.models import F

from judging.models import AnswerAdjudication, AnswerAssignment, AnswerJudgment, Nugget
from pooling.models import Answer, Campaign
from scoring.core.analysis.leaderboard import ScoreTable
from scoring.core.tasks import citations, nuggets
from workbench.core.topic_ids import topic_sort_key


@dataclass(frozen=True)
class AnswerScores:
    """The scores, and per run the answers not judged yet."""

    result: nuggets.Result
    unjudged: dict[str, int]


def _counted_judgments(campaign: Campaign, task: str) -> list[dict[str, object]]:
    """Per judged answer, the one judgment that counts (see the module docstring)."""
    rank = {
        (topic_id, assessor_id): pk
        for pk, topic_id, assessor_id in AnswerAssignment.objects.filter(
            topic__campaign=campaign, task=task
        ).values_list("pk", "topic_id", "assessor_id")
    }
    chosen: dict[int, tuple[int, dict[str, object]]] = {}
    rows = AnswerJudgment.objects.filter(task=task, answer__run__campaign=campaign).values(
        "answer_id",
        "assessor_id",
        "labels",
        "nugget_list_id",
        "answer__topic_id",
        run=F("answer__run__tag"),
        topic=F("answer__topic__topic_id"),
    )
    for row in rows:
        order = rank.get((row["answer__topic_id"], row["assessor_id"]))
        if order is None:
            continue  # judged outside an assignment (one since deleted): not counted
        kept = chosen.get(row["answer_id"])
        if kept is None or order < kept[0]:
            chosen[row["answer_id"]] = (order, row)
    adjudicated = AnswerAdjudication.objects.filter(
        task=task, answer__run__campaign=campaign
    ).values(
        "answer_id",
        "labels",
        "nugget_list_id",
        run=F("answer__run__tag"),
        topic=F("answer__topic__topic_id"),
    )
    for row in adjudicated:
        chosen[row["answer_id"]] = (-1, row)  # the final labels, in place of any assessor's
    return [row for _, row in chosen.values()]


def _unjudged(campaign: Campaign, judged: set[int]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for pk, tag in Answer.objects.filter(run__campaign=campaign).values_list("pk", "run__tag"):
        counts[tag] += pk not in judged
    return dict(counts)


def nugget_scores(campaign: Campaign) -> AnswerScores:
    """Every judged answer's six nugget scores and each run's means, as nuggetizer."""
    rows = _counted_judgments(campaign, AnswerAssignment.NUGGETS)
    importances: dict[int, list[str]] = {}
    for list_id, importance in (
        Nugget.objects.filter(nugget_list_id__in={row["nugget_list_id"] for row in rows})
        .order_by("nugget_list_id", "position")
        .values_list("nugget_list_id", "importance")
    ):
        importances.setdefault(list_id, []).append(importance)
    tallies = [
        nuggets.AnswerTally(
            str(row["run"]),
            str(row["topic"]),
            nuggets.tally(
                zip(importances.get(row["nugget_list_id"], []), row["labels"], strict=True)
            ),  # type: ignore[arg-type]
        )
        for row in rows
    ]
    judged = {int(row["answer_id"]) for row in rows}  # type: ignore[call-overload]
    return AnswerScores(nuggets.score(tallies), _unjudged(campaign, judged))


@dataclass(frozen=True)
class SupportScores:
    per_answer: list[tuple[str, str, dict[str, float]]]  # run, topic, scores
    runs: list[tuple[str, int, dict[str, float]]]  # run, answers, means
    unjudged: dict[str, int]


def citation_scores(campaign: Campaign) -> SupportScores:
    """Support precision and recall per judged answer, and each run's means."""
    rows = _counted_judgments(campaign, AnswerAssignment.CITATIONS)
    per_answer = sorted(
        (
            (str(row["run"]), str(row["topic"]), citations.answer_support(row["labels"]))  # type: ignore[arg-type]
            for row in rows
        ),
        key=lambda item: (item[0], topic_sort_key(item[1])),
    )
    by_run: dict[str, list[dict[str, float]]] = {}
    for run, _, scores in per_answer:
        by_run.setdefault(run, []).append(scores)
    runs = [(run, len(by_run[run]), citations.run_support(by_run[run])) for run in sorted(by_run)]
    judged = {int(row["answer_id"]) for row in rows}  # type: ignore[call-overload]
    return SupportScores(per_answer, runs, _unjudged(campaign, judged))


ANSWER_MEASURES = (*nuggets.MEASURES, *citations.MEASURES)


def answer_score_table(campaign: Campaign, measure: str) -> ScoreTable:
    """One measure's per-topic values of every run (NaN where a run's answer to a
    topic is not judged), for the leaderboard: a nugget measure (`nugget_scores`)
    or a citation support one (`citation_scores`). ValueError on another name."""
    if measure in nuggets.MEASURES:
        rows = [
            (r.run, r.topic, r.scores[measure]) for r in nugget_scores(campaign).result.per_topic
        ]
    elif measure in citations.MEASURES:
        rows = [(run, topic, s[measure]) for run, topic, s in citation_scores(campaign).per_answer]
    else:
        raise ValueError(f"measure {measure!r} is not one of {', '.join(ANSWER_MEASURES)}")
    runs = tuple(sorted({run for run, _, _ in rows}))
    topics = tuple(sorted({topic for _, topic, _ in rows}, key=topic_sort_key))
    values = np.full((len(runs), len(topics)), np.nan)
    run_index = {run: i for i, run in enumerate(runs)}
    topic_index = {topic: j for j, topic in enumerate(topics)}
    for run, topic, value in rows:
        values[run_index[run], topic_index[topic]] = value
    return ScoreTable(measure, runs, topics, values)


def nugget_scores_json(campaign: Campaign) -> dict[str, object]:
    """The API's and a release's nugget scores: the command's JSON and `unjudged`."""
    scored = nugget_scores(campaign)
    return {**nuggets.as_json(scored.result), "unjudged": scored.unjudged}


def citation_scores_json(campaign: Campaign) -> dict[str, object]:
    scored = citation_scores(campaign)
    return {
        "runs": [{"run": run, "n_answers": n, **means} for run, n, means in scored.runs],
        "per_answer": [
            {"run": run, "topic": topic, **{m: s[m] for m in citations.MEASURES}}
            for run, topic, s in scored.per_answer
        ],
        "unjudged": scored.unjudged,
    }
