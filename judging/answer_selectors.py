"""Reads of answer judging: an assignment's queue and progress, the overview of a
campaign's answers, its topics' nuggets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd
from django.db.models import Count, Q, QuerySet

from judging.answer_services import current_nuggets
from judging.core import agreement
from judging.core import answer_agreement as answer_agreement_core
from judging.core.nugget_files import NuggetText
from judging.models import (
    AnswerAdjudication,
    AnswerAssignment,
    AnswerJudgment,
    MachineAssessor,
    NuggetList,
)
from pooling.models import Answer, Campaign, Topic


@dataclass(frozen=True)
class Queue:
    """An assignment's answers in its order, with what the assessor did of them."""

    ids: list[int]
    judged: frozenset[int]
    set_aside: frozenset[int]

    @property
    def total(self) -> int:
        return len(self.ids)

    def position(self, answer_id: int) -> int | None:
        return self.ids.index(answer_id) + 1 if answer_id in self.ids else None

    def at(self, position: int) -> int | None:
        return self.ids[position - 1] if 1 <= position <= len(self.ids) else None

    def with_judged(self, answer_id: int) -> Queue:
        """The queue once the answer is judged (a judgment clears its cannot-judge)."""
        return Queue(self.ids, self.judged | {answer_id}, self.set_aside - {answer_id})

    def next_unjudged(self, after: int = 0) -> int | None:
        """The position of the first answer neither judged nor set aside after
        `after`, else the first at all; None when there is none."""
        todo = [
            position
            for position, pk in enumerate(self.ids, 1)
            if pk not in self.judged and pk not in self.set_aside
        ]
        later = [position for position in todo if position > after]
        return (later or todo or [None])[0]


def answer_queue(assignment: AnswerAssignment) -> Queue:
    return Queue(
        ids=assignment.answer_ids(),
        judged=frozenset(assignment.judgments().values_list("answer_id", flat=True)),
        set_aside=frozenset(
            assignment.notes().exclude(cannot_judge="").values_list("answer_id", flat=True)
        ),
    )


def nugget_texts(nugget_list: NuggetList | None) -> list[NuggetText]:
    if nugget_list is None:
        return []
    return [
        NuggetText(text, importance)
        for text, importance in nugget_list.nuggets.order_by("position").values_list(
            "text", "importance"
        )
    ]


@dataclass(frozen=True)
class TopicRow:
    topic: Topic
    nuggets: NuggetList | None
    n_nuggets: int
    n_vital: int
    n_answers: int
    assignments: list[AnswerAssignment]


def answers_overview(campaign: Campaign) -> list[TopicRow]:
    """Each topic of the campaign: its current nuggets, answers and assignments."""
    answers = dict(campaign.topics.annotate(n=Count("generated_answers")).values_list("pk", "n"))
    assignments: dict[int, list[AnswerAssignment]] = {}
    for assignment in AnswerAssignment.objects.filter(topic__campaign=campaign).select_related(
        "assessor"
    ):
        assignments.setdefault(assignment.topic_id, []).append(assignment)
    rows = []
    for topic in campaign.topics.all():
        current = current_nuggets(topic)
        counts = (
            current.nuggets.aggregate(
                n=Count("pk"), vital=Count("pk", filter=Q(importance="vital"))
            )
            if current
            else {"n": 0, "vital": 0}
        )
        rows.append(
            TopicRow(
                topic,
                current,
                counts["n"],
                counts["vital"],
                answers.get(topic.pk, 0),
                assignments.get(topic.pk, []),
            )
        )
    return rows


def machine_accounts(campaign: Campaign) -> dict[str, str]:
    """The campaign's machine accounts: username -> the machine's name."""
    return dict(
        MachineAssessor.objects.filter(campaign=campaign).values_list("account__username", "name")
    )


def human_answer_judgments(campaign: Campaign, task: str) -> QuerySet[AnswerJudgment]:
    """The campaign's answer judgments by people: a machine account's labels (a
    pre-fill, issue 27 item 6) are left out of what reads the humans' work."""
    return AnswerJudgment.objects.filter(task=task, answer__run__campaign=campaign).exclude(
        assessor__machine__isnull=False
    )


@dataclass(frozen=True)
class AnswerAgreement:
    aspects: tuple[agreement.Aspect, ...]
    labels: pd.DataFrame
    pairs: pd.DataFrame
    groups: pd.DataFrame
    machines: dict[str, str] = field(default_factory=dict)  # accounts included: username -> name
    confusion: list[dict[str, object]] = field(default_factory=list)


def answer_agreement(
    campaign: Campaign, task: str, *, machines: bool | None = None
) -> AnswerAgreement:
    """Agreement of the assessors on a task's labels, per topic and pooled. The
    campaign's machine accounts join as assessors (marked in `machines`, with a
    human-versus-machine confusion) when they have labels of the task, as on the
    relevance agreement (`machines` None), or as `machines` says."""
    if machines is None:
        machines = AnswerJudgment.objects.filter(
            task=task,
            answer__run__campaign=campaign,
            assessor__username__in=machine_accounts(campaign),
        ).exists()
    judgments = (
        AnswerJudgment.objects.filter(task=task, answer__run__campaign=campaign)
        if machines
        else human_answer_judgments(campaign, task)
    )
    rows = judgments.values_list(
        "assessor__username",
        "answer__topic__topic_id",
        "answer_id",
        "nugget_list__version",
        "labels",
    )
    labels = answer_agreement_core.labels_frame(
        answer_agreement_core.JudgedAnswer(*row) for row in rows
    )
    aspects = (
        answer_agreement_core.NUGGET_ASPECTS
        if task == AnswerAssignment.NUGGETS
        else answer_agreement_core.CITATION_ASPECTS
    )
    accounts = machine_accounts(campaign) if machines else {}
    accounts = {u: n for u, n in accounts.items() if u in set(labels["assessor"])}
    return AnswerAgreement(
        aspects,
        labels,
        agreement.pairwise_agreement(labels, aspects=aspects),
        agreement.group_agreement(labels, aspects=aspects),
        accounts,
        answer_agreement_core.human_machine_confusion(labels, set(accounts)),
    )


@dataclass(frozen=True)
class Disagreement:
    """Answers judged differently by two assessors or more (nuggets: under one
    version), each assessor's labels, and the adjudication if there is one."""

    answer: Answer
    nugget_list: NuggetList | None
    judgments: list[AnswerJudgment]
    adjudication: AnswerAdjudication | None


def answer_disagreements(campaign: Campaign, task: str) -> list[Disagreement]:
    """Between people: a machine's labels are never a disagreement to adjudicate."""
    judgments = (
        human_answer_judgments(campaign, task)
        .select_related("assessor", "nugget_list", "answer__topic")
        .order_by("answer__topic__position", "answer_id", "nugget_list_id", "assessor__username")
    )
    groups: dict[tuple[int, int | None], list[AnswerJudgment]] = {}
    for judgment in judgments:
        groups.setdefault((judgment.answer_id, judgment.nugget_list_id), []).append(judgment)
    adjudications = {
        (a.answer_id, a.nugget_list_id): a
        for a in AnswerAdjudication.objects.filter(task=task, answer__run__campaign=campaign)
    }
    return [
        Disagreement(group[0].answer, group[0].nugget_list, group, adjudications.get(key))
        for key, group in groups.items()
        if len({json.dumps(j.labels) for j in group}) > 1
    ]
