"""Writes of generated answers: an answer file's runs stored, or nothing.

The file is read and checked by `pooling.core.answer_files` (every line, with
`file:line: reason`); the campaign's checks (its kind, its topics, tags already
stored, a team's own tags) are added to the same problems, so that one refusal
lists everything, and nothing is stored while there is one problem.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from django.db import transaction

from pooling import run_services
from pooling.core.answer_files import Answer as ParsedAnswer
from pooling.core.answer_files import read_generated_answers
from pooling.models import Answer, AnswerRun, AnswerSentence, Campaign, Citation, Team
from pooling.run_services import RunUpload
from workbench.core.problems import InputError, Problem


def answer_runs_import(
    *,
    campaign: Campaign,
    data: bytes,
    name: str,
    uploaded_by: Any = None,
    team: Team | None = None,
    pool_cited: bool = False,
) -> list[AnswerRun]:
    """Store every run of an answer file (TREC 2024 RAG format), each answer with
    its sentences and citations. InputError (nothing stored) on any problem: of
    the file, an unknown topic, a run tag the campaign already has.

    With `pool_cited`, each run's cited segments are also stored as a ranked run
    of the same tag (`cited_run_text`), so that a pool built from those runs
    judges the cited segments' relevance, as the TREC 2024 RAG track did."""
    if not campaign.is_answers:
        reason = (
            f"{campaign.name} is a {campaign.get_task_kind_display()} campaign: "
            "it takes no generated answers"
        )
        raise InputError([Problem(name, 0, reason)])
    known = set(campaign.topics.values_list("topic_id", flat=True))
    answers = read_generated_answers(data, name=name, known_topics=known)
    by_run: dict[str, list[ParsedAnswer]] = defaultdict(list)
    for answer in answers:
        by_run[answer.run_id].append(answer)
    taken = set(campaign.answer_runs.filter(tag__in=by_run).values_list("tag", flat=True))
    problems = [
        Problem(name, runs[0].line, f"run {tag!r} is already stored in {campaign.name}")
        for tag, runs in by_run.items()
        if tag in taken
    ]
    if problems:
        raise InputError(problems)
    topics = dict(campaign.topics.values_list("topic_id", "pk"))
    sha256 = hashlib.sha256(data).hexdigest()
    ranked = [
        RunUpload(f"{tag}.cited.txt", text)
        for tag, answers in by_run.items()
        if (text := cited_run_text(tag, answers))
    ]
    if pool_cited and ranked:
        checked = run_services.runs_check(campaign=campaign, uploads=ranked)
        refused = [run.problems for run in checked if not run.ok]
        if refused:
            raise InputError.from_logs(*refused)
    with transaction.atomic():
        runs = [
            AnswerRun.objects.create(
                campaign=campaign,
                tag=tag,
                team=team,
                uploaded_by=uploaded_by,
                original_name=name[:255],
                sha256=sha256,
            )
            for tag in by_run
        ]
        _store_answers(runs, by_run, topics)
        if pool_cited and ranked:
            run_services.runs_store(
                campaign=campaign,
                accepted=list(zip(ranked, checked, strict=True)),
                uploaded_by=uploaded_by,
                team=team,
            )
    return runs


def cited_run_text(tag: str, answers: list[ParsedAnswer]) -> bytes:
    """A ranked run (`topic Q0 docno rank score tag`) of the segments each answer
    cites, in the order of its references; empty when the run cites nothing."""
    lines = [
        f"{answer.topic_id} Q0 {segment} {rank} {len(answer.cited) - rank + 1} {tag}"
        for answer in answers
        for rank, segment in enumerate(answer.cited, 1)
    ]
    return "".join(f"{line}\n" for line in lines).encode()


def _store_answers(
    runs: list[AnswerRun], by_run: dict[str, list[ParsedAnswer]], topics: dict[str, int]
) -> None:
    """Answers, then sentences, then citations: three bulk inserts in all."""
    parsed = [(run, answer) for run in runs for answer in by_run[run.tag]]
    stored = Answer.objects.bulk_create(
        Answer(
            run=run,
            topic_id=topics[answer.topic_id],
            topic_text=answer.topic,
            references=list(answer.references),
            response_length=answer.response_length,
            line=answer.line,
        )
        for run, answer in parsed
    )
    sentences = AnswerSentence.objects.bulk_create(
        AnswerSentence(answer=row, position=position, text=sentence.text)
        for row, (_, answer) in zip(stored, parsed, strict=True)
        for position, sentence in enumerate(answer.sentences)
    )
    parsed_sentences = [(answer, sentence) for _, answer in parsed for sentence in answer.sentences]
    Citation.objects.bulk_create(
        Citation(sentence=row, position=position, reference=index, segment=answer.references[index])
        for row, (answer, sentence) in zip(sentences, parsed_sentences, strict=True)
        for position, index in enumerate(sentence.citations)
    )


def answer_run_delete(*, run: AnswerRun) -> None:
    """Delete a run of answers with what was judged of them (the labels go too: they
    were labels of its answers)."""
    with transaction.atomic():
        run.delete()
