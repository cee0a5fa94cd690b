"""Machine help for answer judging (issue 27 item 6): a machine assessor proposes a
topic's nuggets and labels answers against them, as a pre-fill humans post-edit.

- Proposed nuggets become the topic's NEXT nugget version, made by the machine's
  account, its note saying "machine pre-fill by <machine> (<model>, prompt
  <version>)": a human version is never overwritten, and the organiser's edit of
  it makes the next (human) version.
- Machine labels are AnswerJudgment rows of the machine's account with their
  `provenance` (machine, model, prompt version, raw reply, tokens). The machine is
  never given an AnswerAssignment, so the scores (which count only assigned
  assessors' labels) never read them; agreement and adjudication leave them out
  unless asked (`answer_selectors`).
- Every chat request is kept as a MachineSample (docno `nuggets` for a topic's
  nuggets, `answer:<id>` for an answer), failed or not, with its raw reply, so the
  spend is counted beside the human budget as the pool's machine requests are.

Chat: one request per topic (nuggets) or per answer (labels); a reply that does
not parse is asked once more, then recorded as a failure with the raw reply. The
lexical baseline follows `judging.core.nugget_lexical`'s stated rules.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from judging import answer_services, machine_services
from judging.answer_services import current_nuggets
from judging.core import nugget_lexical, nugget_prompt
from judging.machine_client import ChatClient, Endpoint
from judging.machine_services import MachineError
from judging.models import (
    AnswerAssignment,
    AnswerJudgment,
    AnswerJudgmentEvent,
    JudgmentEvent,
    MachineAssessor,
    MachineSample,
    NuggetList,
)
from pooling.models import Answer, AnswerSentence, Campaign, Topic

Progress = Callable[..., None]
NUGGETS_DOCNO = "nuggets"
LEXICAL_MODEL = "lexical-overlap"
LEXICAL_VERSION = "overlap-1"


@dataclass
class MachineAnswerResult:
    """What a run of `--propose` or `--assign` did."""

    topics: int = 0
    done: int = 0  # nugget lists made / answers labelled
    unchanged: int = 0  # proposals equal to the current list / answers labelled already
    failed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    skipped_topics: list[str] = field(default_factory=list)  # assign: topics without nuggets
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    versions: dict[str, int] = field(default_factory=dict)  # propose: topic -> version made

    def as_dict(self) -> dict[str, Any]:
        return {
            "topics": self.topics,
            "done": self.done,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "reasons": dict(self.reasons.most_common()),
            "skipped_topics": self.skipped_topics,
            "requests": self.requests,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "versions": self.versions,
        }

    def lines(self) -> list[str]:
        reasons = ", ".join(f"{why}: {n:,}" for why, n in self.reasons.most_common()) or "none"
        lines = [
            f"topics: {self.topics:,}",
            f"done: {self.done:,}",
            f"unchanged: {self.unchanged:,}",
            f"failed: {self.failed:,} ({reasons})",
            f"requests: {self.requests:,}",
            f"tokens in/out: {self.tokens_in:,}/{self.tokens_out:,}",
        ]
        if self.skipped_topics:
            lines.append("topics without nuggets (skipped): " + " ".join(self.skipped_topics))
        return lines


def machine_named(*, campaign: Campaign, name: str) -> MachineAssessor:
    """The campaign's machine of that name (`baseline`: the lexical one, made on first use)."""
    if name == machine_services.BASELINE:
        return machine_services.machine_baseline(campaign=campaign)
    machine = MachineAssessor.objects.filter(campaign=campaign, name=name).first()
    if machine is None:
        known = ", ".join(campaign.machines.values_list("name", flat=True)) or "none"
        raise MachineError(f"campaign {campaign.slug} has no machine {name!r} (it has: {known})")
    return machine


def prefill_note(machine: MachineAssessor, version: str) -> str:
    return f"machine pre-fill by {machine.name} ({_model(machine)}, prompt {version})"


def _model(machine: MachineAssessor) -> str:
    return LEXICAL_MODEL if machine.is_baseline else machine.model


def _topics(campaign: Campaign, topics: Sequence[str] | None) -> list[Topic]:
    chosen = campaign.topics.all()
    if topics:
        known = set(chosen.filter(topic_id__in=topics).values_list("topic_id", flat=True))
        unknown = [t for t in topics if t not in known]
        if unknown:
            raise MachineError(f"unknown topics: {', '.join(unknown)}")
        chosen = chosen.filter(topic_id__in=topics)
    return list(chosen)


def _answer_texts(topic: Topic) -> dict[int, list[str]]:
    """Each answer of the topic (by pk, in pk order) as its sentences."""
    texts: dict[int, list[str]] = {
        pk: []
        for pk in Answer.objects.filter(topic=topic).order_by("pk").values_list("pk", flat=True)
    }
    for answer_id, text in (
        AnswerSentence.objects.filter(answer__topic=topic)
        .order_by("answer_id", "position")
        .values_list("answer_id", "text")
    ):
        texts[answer_id].append(text)
    return texts


def _check(machine: MachineAssessor, campaign: Campaign) -> None:
    if machine.campaign_id != campaign.pk:
        raise MachineError(f"machine {machine.name} is not a machine of campaign {campaign.slug}")
    if not campaign.is_answers:
        raise MachineError(f"{campaign.slug} is not a generated-answers campaign")


def check_run(
    *, machine: MachineAssessor, campaign: Campaign, topics: Sequence[str] | None
) -> None:
    """Everything that can be refused before a run starts (the key included)."""
    _check(machine, campaign)
    _topics(campaign, topics)
    if not machine.is_baseline:
        machine_services.api_key_of(machine)


# --------------------------------------------------------------------------
# One chat request, asked once more on a reply that does not parse


@dataclass(frozen=True)
class _Asked:
    value: Any  # the parsed reply (nuggets or labels), None on failure
    raw: str
    failure: str
    requests: int
    tokens_in: int
    tokens_out: int
    latency_ms: int


def _ask(client: ChatClient, messages: list[dict[str, str]], parse: Callable[[str], Any]) -> _Asked:
    tokens_in = tokens_out = latency = requests = 0
    raw, reason = "", ""
    for _try in range(2):
        completion = client.complete(messages, None)
        requests += 1
        tokens_in += completion.tokens_in
        tokens_out += completion.tokens_out
        latency += completion.latency_ms
        if completion.content is None:
            return _Asked(None, "", completion.failure, requests, tokens_in, tokens_out, latency)
        raw = completion.content
        reply = parse(raw)
        if reply.ok:
            return _Asked(reply, raw, "", requests, tokens_in, tokens_out, latency)
        reason = reply.reason
    return _Asked(None, raw, reason, requests, tokens_in, tokens_out, latency)


def _sample(
    machine: MachineAssessor,
    client: ChatClient,
    topic: Topic,
    docno: str,
    version: str,
    asked: _Asked,
    labels: Any,
) -> MachineSample:
    key = hashlib.sha256(f"{machine.pk}:{docno}:{version}:{asked.raw}".encode()).hexdigest()
    return MachineSample(
        machine=machine,
        topic=topic,
        docno=docno,
        labels=labels,
        ok=asked.value is not None,
        failure=asked.failure[:500],
        raw_reply=asked.raw,
        model=machine.model,
        endpoint_host=client.endpoint.host,
        prompt_version=version,
        temperature=machine.temperature,
        tokens_in=asked.tokens_in,
        tokens_out=asked.tokens_out,
        latency_ms=asked.latency_ms,
        requests=asked.requests,
        cache_key=key,
    )


def _count(result: MachineAnswerResult, asked: _Asked) -> None:
    result.requests += asked.requests
    result.tokens_in += asked.tokens_in
    result.tokens_out += asked.tokens_out
    if asked.value is None:
        result.failed += 1
        result.reasons[nugget_prompt.reason_kind(asked.failure)] += 1


# --------------------------------------------------------------------------
# Nuggets


def machine_nuggets_propose(
    *,
    machine: MachineAssessor,
    campaign: Campaign,
    topics: Sequence[str] | None = None,
    progress: Progress | None = None,
    endpoint: Endpoint | None = None,
) -> MachineAnswerResult:
    """Propose each topic's nuggets with the machine: each a NuggetList version of
    the machine's account (module docstring). Topic by topic, each in one transaction."""
    _check(machine, campaign)
    chosen = _topics(campaign, topics)
    report = progress or (lambda **_: None)
    result = MachineAnswerResult(topics=len(chosen))
    report(done=0, total=len(chosen), unit="topics")
    if machine.is_baseline:
        for done, topic in enumerate(chosen, 1):
            answers = list(_answer_texts(topic).values())
            query = " ".join(x for x in (topic.title, topic.description) if x) or topic.topic_id
            nuggets = nugget_lexical.propose_nuggets(query, answers)
            if nuggets:
                _save_nuggets(machine, topic, nuggets, LEXICAL_VERSION, result)
            else:
                result.failed += 1
                result.reasons["no sentence to propose"] += 1
            report(done=done)
        return result
    endpoint = endpoint or machine_services.endpoint_of(machine)
    with ChatClient(endpoint) as client:
        for done, topic in enumerate(chosen, 1):
            answers = [" ".join(s) for s in _answer_texts(topic).values()]
            messages = nugget_prompt.nugget_messages(
                topic.title or topic.topic_id, answers, description=topic.description
            )
            asked = _ask(client, messages, nugget_prompt.parse_nuggets)
            _count(result, asked)
            nuggets = asked.value.nuggets if asked.value is not None else None
            stored = [{"text": n.text, "importance": n.importance} for n in nuggets or ()]
            with transaction.atomic():
                _sample(
                    machine,
                    client,
                    topic,
                    NUGGETS_DOCNO,
                    nugget_prompt.NUGGET_VERSION,
                    asked,
                    stored or None,
                ).save()
                if nuggets:
                    _save_nuggets(machine, topic, nuggets, nugget_prompt.NUGGET_VERSION, result)
            report(done=done)
    return result


def _save_nuggets(
    machine: MachineAssessor,
    topic: Topic,
    nuggets: Sequence[Any],
    version: str,
    result: MachineAnswerResult,
) -> NuggetList:
    before = current_nuggets(topic)
    saved = answer_services.nugget_list_save(
        topic=topic,
        nuggets=nuggets,
        created_by=machine.account,
        note=prefill_note(machine, version),
    )
    if before is not None and saved.pk == before.pk:
        result.unchanged += 1
    else:
        result.done += 1
        result.versions[topic.topic_id] = saved.version
    return saved


def is_machine_version(nugget_list: NuggetList | None) -> bool:
    return (
        nugget_list is not None
        and MachineAssessor.objects.filter(account_id=nugget_list.created_by_id).exists()
    )


# --------------------------------------------------------------------------
# Assignment


def machine_answers_assign(
    *,
    machine: MachineAssessor,
    campaign: Campaign,
    topics: Sequence[str] | None = None,
    again: bool = False,
    progress: Progress | None = None,
    endpoint: Endpoint | None = None,
) -> MachineAnswerResult:
    """Label each answer of the topics against the topic's current nuggets with the
    machine (AnswerJudgment rows of its account, with provenance). Answers it
    labelled against the same version already are left (unless `again`). Topic by
    topic, each in one transaction; a topic without nuggets is skipped and named."""
    _check(machine, campaign)
    chosen = _topics(campaign, topics)
    report = progress or (lambda **_: None)
    result = MachineAnswerResult(topics=len(chosen))
    work: list[tuple[Topic, NuggetList, list[Any], dict[int, list[str]]]] = []
    for topic in chosen:
        nugget_list = current_nuggets(topic)
        if nugget_list is None or not nugget_list.nuggets.exists():
            result.skipped_topics.append(topic.topic_id)
            continue
        texts = _answer_texts(topic)
        if not again:
            done = set(
                AnswerJudgment.objects.filter(
                    assessor=machine.account,
                    task=AnswerAssignment.NUGGETS,
                    answer__topic=topic,
                    nugget_list=nugget_list,
                ).values_list("answer_id", flat=True)
            )
            result.unchanged += len(done & set(texts))
            texts = {pk: s for pk, s in texts.items() if pk not in done}
        work.append((topic, nugget_list, list(nugget_list.nuggets.order_by("position")), texts))
    total = sum(len(texts) for *_, texts in work)
    report(done=0, total=total, unit="answers")
    done_count = 0
    if machine.is_baseline:
        for _topic, nugget_list, nuggets, texts in work:
            labelled = {
                pk: (
                    nugget_lexical.assign_labels([n.text for n in nuggets], " ".join(sentences)),
                    {
                        "machine": machine.name,
                        "model": LEXICAL_MODEL,
                        "prompt_version": LEXICAL_VERSION,
                        "rule": f"term coverage >= {nugget_lexical.SUPPORT_AT} support, "
                        f">= {nugget_lexical.PARTIAL_AT} partial_support",
                    },
                )
                for pk, sentences in texts.items()
            }
            _store_labels(machine, nugget_list, labelled)
            result.done += len(labelled)
            done_count += len(labelled)
            report(done=done_count)
        return result
    endpoint = endpoint or machine_services.endpoint_of(machine)
    with ChatClient(endpoint) as client, ThreadPoolExecutor(endpoint.concurrency) as threads:
        probed = False
        for topic, nugget_list, nuggets, texts in work:
            query = topic.title or topic.topic_id
            shown = [nugget_prompt.NuggetText(n.text, n.importance) for n in nuggets]

            def ask(sentences: list[str], shown: Any = shown, query: str = query) -> _Asked:
                messages = nugget_prompt.assign_messages(query, shown, " ".join(sentences))
                return _ask(
                    client, messages, lambda raw: nugget_prompt.parse_assignment(raw, len(shown))
                )

            items = list(texts.items())
            answers: list[_Asked] = []
            if items and not probed:  # the first request alone: an unreachable endpoint
                answers.append(ask(items[0][1]))  # fails the run before anything is stored
                probed = True
            answers += list(threads.map(ask, [s for _, s in items[len(answers) :]]))
            labelled = {}
            samples = []
            for (pk, _), asked in zip(items, answers, strict=True):
                _count(result, asked)
                labels = list(asked.value.labels) if asked.value is not None else None
                samples.append(
                    _sample(
                        machine,
                        client,
                        topic,
                        f"answer:{pk}",
                        nugget_prompt.ASSIGN_VERSION,
                        asked,
                        labels,
                    )
                )
                if labels is not None:
                    labelled[pk] = (
                        labels,
                        {
                            "machine": machine.name,
                            "model": machine.model,
                            "prompt_version": nugget_prompt.ASSIGN_VERSION,
                            "raw_reply": asked.raw,
                            "tokens_in": asked.tokens_in,
                            "tokens_out": asked.tokens_out,
                        },
                    )
            with transaction.atomic():
                MachineSample.objects.bulk_create(samples)
                _store_labels(machine, nugget_list, labelled)
            result.done += len(labelled)
            done_count += len(items)
            report(done=done_count)
    return result


def _store_labels(
    machine: MachineAssessor,
    nugget_list: NuggetList,
    labelled: dict[int, tuple[list[str], dict[str, Any]]],
) -> None:
    """The machine's labels of these answers (replacing its earlier ones), each with
    an audit event, in one transaction."""
    task = AnswerAssignment.NUGGETS
    with transaction.atomic():
        existing = {
            j.answer_id: j
            for j in AnswerJudgment.objects.select_for_update().filter(
                assessor=machine.account, task=task, answer_id__in=labelled
            )
        }
        events = []
        for pk, (labels, provenance) in labelled.items():
            judgment = existing.get(pk)
            old = None if judgment is None else judgment.labels
            if judgment is None:
                judgment = AnswerJudgment(assessor=machine.account, answer_id=pk, task=task)
            judgment.labels = labels
            judgment.nugget_list = nugget_list
            judgment.provenance = provenance
            judgment.save()
            events.append(
                AnswerJudgmentEvent(
                    assessor=machine.account,
                    answer_id=pk,
                    task=task,
                    action=JudgmentEvent.CREATE if old is None else JudgmentEvent.UPDATE,
                    nugget_list=nugget_list,
                    old=old,
                    new=labels,
                )
            )
        AnswerJudgmentEvent.objects.bulk_create(events)


# --------------------------------------------------------------------------
# Pre-fill


def answer_prefill_set(
    *,
    campaign: Campaign,
    machine: MachineAssessor | None,
    topics: Sequence[Topic] | None = None,
) -> int:
    """Start the nugget assignments of these topics (every topic when None) from the
    machine's labels, or stop (machine None). Returns the assignments changed."""
    if machine is not None:
        _check(machine, campaign)
    assignments = AnswerAssignment.objects.filter(
        topic__campaign=campaign, task=AnswerAssignment.NUGGETS
    )
    if topics is not None:
        assignments = assignments.filter(topic__in=list(topics))
    with transaction.atomic():
        return assignments.update(prefill=machine)


def prefill_labels(assignment: AnswerAssignment, answer: Answer, nugget_list: NuggetList | None):
    """The pre-fill machine's labels of the answer against `nugget_list`, or None
    (pre-fill off, no labels, or labels of another version)."""
    if assignment.prefill_id is None or nugget_list is None:
        return None
    machine = assignment.prefill
    judgment = AnswerJudgment.objects.filter(
        assessor_id=machine.account_id,
        answer=answer,
        task=AnswerAssignment.NUGGETS,
        nugget_list=nugget_list,
    ).first()
    return None if judgment is None else judgment.labels


def prefilled_from(said: str, assignment: AnswerAssignment) -> str:
    """The machine account a save's labels started from, as the page (or API client)
    says, kept only when the assignment's pre-fill is on with that machine."""
    if not said or assignment.prefill_id is None:
        return ""
    return said if said == assignment.prefill.account.username else ""
