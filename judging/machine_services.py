"""Writes for machine assessors: configure them, plan and run their labelling,
store their samples and labels (issue 25).

A run stores batch by batch (each batch in one transaction: its samples and the
labels they give), so that a cancelled or interrupted run keeps what it did and
the next run goes on from there ("unjudged" skips the documents this machine has
labelled). The cache makes a run again cheap in any case: a sample whose request
is the same (model, prompt version, topic text, document text, temperature,
sample index) as an earlier successful one, of any machine, is copied and no
request is sent.

Machine labels are never Judgment rows: they cannot reach human qrels, the
judging budget, the status or the agreement pages by accident.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from judging.core import machine_prompt, machine_reply
from judging.core.machine_prompt import PromptError, TopicText
from judging.machine_client import ChatClient, Endpoint, EndpointError, check_base_url
from judging.models import MachineAssessor, MachineJudgment, MachineSample
from pooling.models import Campaign, Document, Pool, PoolEntry, Topic
from workbench.core.label_schema import NOT_ASKED, LabelSchema

BATCH = 64
MAX_SAMPLES = 20
MAX_CONCURRENCY = 64
DOCUMENTS = ("unjudged", "all")
BASELINE = "baseline"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")

Progress = Callable[..., None]


class MachineError(ValueError):
    """A machine assessor or run that cannot be configured or started; says why."""


# --------------------------------------------------------------------------
# Configuring


# What an organiser sets on a machine (page, API, command), besides its name.
MACHINE_SETTINGS = (
    "kind",
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "samples",
    "concurrency",
    "requests_per_minute",
    "price_per_1k_tokens",
    "prompt_override",
)


def _checked(values: dict[str, Any]) -> dict[str, Any]:
    """The machine's settings checked; MachineError listing every problem."""
    problems = []
    kind = values.get("kind", MachineAssessor.CHAT)
    if kind not in (MachineAssessor.CHAT, MachineAssessor.LEXICAL):
        problems.append(f"kind must be chat or lexical; got {kind!r}")
    if kind == MachineAssessor.CHAT:
        try:
            values["base_url"] = check_base_url(str(values.get("base_url") or ""))
        except ValueError as error:
            problems.append(str(error))
        if not str(values.get("model") or "").strip():
            problems.append("a chat machine needs a model name")
    env = str(values.get("api_key_env") or "")
    if env and not _ENV.match(env):
        problems.append(
            f"api_key_env {env!r} must be the NAME of an environment variable "
            "(letters, digits, _), never the key itself"
        )
    samples = values.get("samples", 1)
    if not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        problems.append(f"samples must be 1 to {MAX_SAMPLES}; got {samples!r}")
    concurrency = values.get("concurrency", 4)
    if not isinstance(concurrency, int) or not 1 <= concurrency <= MAX_CONCURRENCY:
        problems.append(f"concurrency must be 1 to {MAX_CONCURRENCY}; got {concurrency!r}")
    temperature = values.get("temperature", 0.0)
    if not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
        problems.append(f"temperature must be 0 to 2; got {temperature!r}")
    rpm = values.get("requests_per_minute")
    if rpm is not None and (not isinstance(rpm, int) or rpm < 1):
        problems.append(f"requests_per_minute must be a positive whole number; got {rpm!r}")
    price = values.get("price_per_1k_tokens")
    if price is not None:
        try:
            values["price_per_1k_tokens"] = Decimal(str(price))
            if values["price_per_1k_tokens"] < 0:
                raise ValueError
        except (ValueError, ArithmeticError):
            problems.append(f"price_per_1k_tokens must be a number >= 0; got {price!r}")
    template = str(values.get("prompt_override") or "")
    if template:
        problems += machine_prompt.template_problems(template)
    if problems:
        raise MachineError("; ".join(problems))
    return values


def machine_create(*, campaign: Campaign, name: str, **settings: Any) -> MachineAssessor:
    """A machine assessor of the campaign, with its account: one that cannot log in
    (no usable password, inactive) and is never given an assignment."""
    name = (name or "").strip()
    if not _NAME.match(name):
        raise MachineError(
            f"name {name!r} must be 1-60 letters, digits, '.', '_' or '-', starting with "
            "a letter or digit"
        )
    unknown = sorted(set(settings) - set(MACHINE_SETTINGS))
    if unknown:
        raise MachineError(f"unknown settings: {', '.join(unknown)}")
    values = _checked(dict(settings))
    if MachineAssessor.objects.filter(campaign=campaign, name=name).exists():
        raise MachineError(
            f"campaign {campaign.slug} already has a machine named {name!r}"
        ) from None
    username = f"machine.{campaign.slug}.{name}"[:150]
    if User.objects.filter(username=username).exists():
        raise MachineError(f"an account named {username!r} exists already")
    try:
        with transaction.atomic():
            account = User.objects.create_user(username, password=None, is_active=False)
            return MachineAssessor.objects.create(
                campaign=campaign, name=name, account=account, **values
            )
    except IntegrityError:
        raise MachineError(
            f"campaign {campaign.slug} already has a machine named {name!r}"
        ) from None


def machine_update(*, machine: MachineAssessor, **settings: Any) -> MachineAssessor:
    """Change a machine's settings (not its name or campaign); checked as on creation."""
    unknown = sorted(set(settings) - set(MACHINE_SETTINGS))
    if unknown:
        raise MachineError(f"unknown settings: {', '.join(unknown)}")
    current = {name: getattr(machine, name) for name in MACHINE_SETTINGS}
    values = _checked({**current, **settings})
    for name, value in values.items():
        setattr(machine, name, value)
    machine.save()
    return machine


def machine_baseline(*, campaign: Campaign) -> MachineAssessor:
    """The campaign's built-in lexical baseline (made on first use)."""
    existing = MachineAssessor.objects.filter(campaign=campaign, name=BASELINE).first()
    if existing is not None:
        return existing
    return machine_create(campaign=campaign, name=BASELINE, kind=MachineAssessor.LEXICAL)


# --------------------------------------------------------------------------
# Planning


@dataclass(frozen=True)
class MachinePlan:
    """The documents a run labels: (topic pk, docno), in queue order."""

    items: list[tuple[int, str]]
    done_before: int  # labelled by this machine already, skipped ("unjudged")


def machine_judge_plan(
    *,
    machine: MachineAssessor,
    pool: Pool,
    topics: Sequence[str] | None = None,
    documents: str = "unjudged",
) -> MachinePlan:
    if pool.campaign_id != machine.campaign_id:
        raise MachineError(f"pool {pool.pk} is not a pool of campaign {machine.campaign.slug}")
    if documents not in DOCUMENTS:
        raise MachineError(f"documents must be unjudged or all; got {documents!r}")
    entries = PoolEntry.objects.filter(pool=pool, retired=False)
    if topics:
        known = set(
            pool.campaign.topics.filter(topic_id__in=topics).values_list("topic_id", flat=True)
        )
        unknown = [t for t in topics if t not in known]
        if unknown:
            raise MachineError(f"unknown topics: {', '.join(unknown)}")
        entries = entries.filter(topic__topic_id__in=topics)
    rows = list(
        entries.order_by("topic__position", "topic__topic_id", "order", "docno").values_list(
            "topic_id", "docno"
        )
    )
    done_before = 0
    if documents == "unjudged":
        done = set(MachineJudgment.objects.filter(machine=machine).values_list("topic_id", "docno"))
        kept = [row for row in rows if row not in done]
        done_before = len(rows) - len(kept)
        rows = kept
    return MachinePlan(rows, done_before)


# --------------------------------------------------------------------------
# Running


@dataclass
class MachineRunResult:
    documents: int = 0
    judged: int = 0  # documents given a label in this run
    cached: int = 0  # samples copied from the cache (no request)
    failed: int = 0  # samples that failed
    reasons: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    skipped: int = 0  # labelled already
    prompt_version: str = ""
    price_per_1k_tokens: Decimal | None = None

    @property
    def cost(self) -> Decimal | None:
        if self.price_per_1k_tokens is None:
            return None
        return self.price_per_1k_tokens * (self.tokens_in + self.tokens_out) / 1000

    def as_dict(self) -> dict[str, Any]:
        cost = self.cost
        return {
            "documents": self.documents,
            "judged": self.judged,
            "cached": self.cached,
            "failed": self.failed,
            "reasons": dict(self.reasons.most_common()),
            "requests": self.requests,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": None if cost is None else str(cost.quantize(Decimal("0.000001"))),
            "skipped": self.skipped,
            "prompt_version": self.prompt_version,
        }

    def lines(self) -> list[str]:
        cost = self.cost
        reasons = ", ".join(f"{why}: {n:,}" for why, n in self.reasons.most_common()) or "none"
        return [
            f"documents: {self.documents:,} (skipped, labelled before: {self.skipped:,})",
            f"judged: {self.judged:,}",
            f"cached: {self.cached:,} samples (no request)",
            f"failed: {self.failed:,} samples ({reasons})",
            f"requests: {self.requests:,}",
            f"tokens in/out: {self.tokens_in:,}/{self.tokens_out:,}",
            f"cost: {'unknown (no price set)' if cost is None else f'{cost:.4f}'}",
        ]


def api_key_of(machine: MachineAssessor) -> str:
    """The key from the machine's environment variable; MachineError if it is unset."""
    if not machine.api_key_env:
        return ""
    key = os.environ.get(machine.api_key_env, "")
    if not key:
        raise MachineError(
            f"the environment variable {machine.api_key_env} (the API key of machine "
            f"{machine.name}) is not set: nothing was sent or stored"
        )
    return key


def endpoint_of(machine: MachineAssessor, **overrides: Any) -> Endpoint:
    return Endpoint(
        base_url=machine.base_url,
        model=machine.model,
        api_key=api_key_of(machine),
        temperature=machine.temperature,
        requests_per_minute=machine.requests_per_minute,
        concurrency=machine.concurrency,
        **overrides,
    )


def machine_judge_run(
    *,
    machine: MachineAssessor,
    pool: Pool,
    topics: Sequence[str] | None = None,
    documents: str = "unjudged",
    progress: Progress | None = None,
    endpoint: Endpoint | None = None,
    batch: int | None = None,
) -> MachineRunResult:
    """Label the planned documents with the machine, batch by batch (module docstring).
    Raises MachineError or EndpointError (a missing key, an endpoint unreachable or
    refusing) before the first batch is stored when the first requests fail so."""
    plan = machine_judge_plan(machine=machine, pool=pool, topics=topics, documents=documents)
    result = MachineRunResult(
        documents=len(plan.items),
        skipped=plan.done_before,
        price_per_1k_tokens=machine.price_per_1k_tokens,
    )
    report = progress or (lambda **_: None)
    report(done=0, total=len(plan.items), unit="documents")
    if machine.is_baseline:
        _lexical_run(machine=machine, pool=pool, plan=plan, result=result, report=report)
        return result
    if endpoint is None:
        endpoint = endpoint_of(machine)  # a missing key fails here: nothing sent or stored
    schema = machine.campaign.schema
    template = machine.prompt_override
    result.prompt_version = machine_prompt.prompt_version(schema, template)
    topic_texts = _topic_texts(machine.campaign, {topic for topic, _ in plan.items})
    done = 0
    with ChatClient(endpoint) as client, ThreadPoolExecutor(endpoint.concurrency) as threads:
        run = _ChatRun(machine, schema, template, result.prompt_version, client, topic_texts)
        for items in _chunks(plan.items, batch or BATCH):
            samples = run.batch(items, threads)
            _store(machine=machine, schema=schema, samples=samples, result=result)
            done += len(items)
            report(done=done)
    return result


class _ChatRun:
    def __init__(
        self,
        machine: MachineAssessor,
        schema: LabelSchema,
        template: str,
        version: str,
        client: ChatClient,
        topics: dict[int, TopicText],
    ) -> None:
        self.machine, self.schema, self.template, self.version = machine, schema, template, version
        self.client, self.topics = client, topics
        self.response_format = machine_prompt.response_format(schema)
        self.probed = False

    def batch(
        self, items: list[tuple[int, str]], threads: ThreadPoolExecutor
    ) -> list[MachineSample]:
        machine = self.machine
        texts = dict(
            Document.objects.filter(
                campaign_id=machine.campaign_id, docno__in={docno for _, docno in items}
            ).values_list("docno", "text")
        )
        wanted = []
        for topic, docno in items:
            text = texts.get(docno, "")
            for index in range(machine.samples):
                key = machine_prompt.cache_key(
                    model=machine.model,
                    version=self.version,
                    topic=self.topics[topic],
                    document=text,
                    temperature=machine.temperature,
                    sample=index,
                )
                wanted.append((topic, docno, index, key, text))
        cached: dict[str, dict[str, Any]] = {}
        for row in MachineSample.objects.filter(
            cache_key__in={w[3] for w in wanted}, ok=True
        ).values("cache_key", "labels", "raw_reply"):
            cached.setdefault(row["cache_key"], row)
        samples: list[MachineSample | None] = [None] * len(wanted)
        asks = []
        for position, (topic, docno, index, key, text) in enumerate(wanted):
            hit = cached.get(key)
            if hit is not None:
                samples[position] = self._sample(
                    topic,
                    docno,
                    index,
                    key,
                    labels=hit["labels"],
                    ok=True,
                    raw=hit["raw_reply"],
                    cached=True,
                    requests=0,
                )
            elif not text.strip():
                samples[position] = self._sample(
                    topic, docno, index, key, failure="the document has no text", requests=0
                )
            else:
                asks.append((position, topic, docno, index, key, text))
        if asks and not self.probed:
            # The run's first request goes alone: an endpoint that cannot be reached or
            # refuses fails the run at once, not after a batch of requests retried.
            samples[asks[0][0]] = self._ask(asks[0])
            self.probed = True
            asks = asks[1:]
        futures = [threads.submit(self._ask, ask) for ask in asks]
        try:
            for (position, *_), future in zip(asks, futures, strict=True):
                samples[position] = future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        return [s for s in samples if s is not None]

    def _ask(self, ask: tuple[int, int, str, int, str, str]) -> MachineSample:
        _, topic, docno, index, key, text = ask
        messages = machine_prompt.machine_messages(
            self.schema, self.topics[topic], text, template=self.template
        )
        tokens_in = tokens_out = latency = requests = 0
        raw, reason = "", ""
        for _try in range(2):  # a reply that does not parse is asked once more
            completion = self.client.complete(messages, self.response_format)
            requests += 1
            tokens_in += completion.tokens_in
            tokens_out += completion.tokens_out
            latency += completion.latency_ms
            if completion.content is None:
                return self._sample(
                    topic,
                    docno,
                    index,
                    key,
                    failure=completion.failure,
                    requests=requests,
                    tokens=(tokens_in, tokens_out, latency),
                )
            raw = completion.content
            reply = machine_reply.parse_reply(raw, self.schema)
            if reply.ok:
                return self._sample(
                    topic,
                    docno,
                    index,
                    key,
                    labels=reply.labels,
                    ok=True,
                    raw=raw,
                    requests=requests,
                    tokens=(tokens_in, tokens_out, latency),
                )
            reason = reply.reason
        return self._sample(
            topic,
            docno,
            index,
            key,
            failure=_reason_kind(reason),
            raw=raw,
            requests=requests,
            tokens=(tokens_in, tokens_out, latency),
        )

    def _sample(
        self,
        topic: int,
        docno: str,
        index: int,
        key: str,
        *,
        labels: Any = None,
        ok: bool = False,
        failure: str = "",
        raw: str = "",
        cached: bool = False,
        requests: int = 1,
        tokens: tuple[int, int, int] = (0, 0, 0),
    ) -> MachineSample:
        machine = self.machine
        return MachineSample(
            machine=machine,
            topic_id=topic,
            docno=docno,
            sample=index,
            labels=labels,
            ok=ok,
            failure=failure[:500],
            raw_reply=raw,
            model=machine.model,
            endpoint_host=self.client.endpoint.host,
            prompt_version=self.version,
            temperature=machine.temperature,
            tokens_in=tokens[0],
            tokens_out=tokens[1],
            latency_ms=tokens[2],
            requests=requests,
            cached=cached,
            cache_key=key,
        )


def _reason_kind(reason: str) -> str:
    """A failure's reason as counted: "outside the schema: Relevance must be..." counts
    under "outside the schema"."""
    return reason.split(":", 1)[0]


def _store(
    *,
    machine: MachineAssessor,
    schema: LabelSchema | None,
    samples: list[MachineSample],
    result: MachineRunResult,
) -> None:
    """One batch: its samples, and each document's label from its good samples."""
    good: dict[tuple[int, str], list[dict[str, int]]] = {}
    for sample in samples:
        result.requests += sample.requests
        result.tokens_in += sample.tokens_in
        result.tokens_out += sample.tokens_out
        if sample.cached:
            result.cached += 1
        if sample.ok:
            good.setdefault((sample.topic_id, sample.docno), []).append(sample.labels)
        else:
            result.failed += 1
            result.reasons[_reason_kind(sample.failure)] += 1
    with transaction.atomic():
        MachineSample.objects.bulk_create(samples)
        _labels_store(
            machine=machine,
            labels={key: machine_reply.majority(found, schema) for key, found in good.items()},
        )
    result.judged += len(good)


def _labels_store(
    *,
    machine: MachineAssessor,
    labels: dict[tuple[int, str], dict[str, int]],
    provenance: str = MachineJudgment.COMPUTED,
) -> None:
    """Replace the machine's labels of these documents (inside the caller's transaction)."""
    by_topic: dict[int, list[str]] = {}
    for topic, docno in labels:
        by_topic.setdefault(topic, []).append(docno)
    for topic, docnos in by_topic.items():
        MachineJudgment.objects.filter(machine=machine, topic_id=topic, docno__in=docnos).delete()
    MachineJudgment.objects.bulk_create(
        MachineJudgment(
            machine=machine, topic_id=topic, docno=docno, labels=value, provenance=provenance
        )
        for (topic, docno), value in labels.items()
    )


def machine_judgments_store(
    *,
    machine: MachineAssessor,
    labels: dict[tuple[int, str], dict[str, int]],
    provenance: str = MachineJudgment.IMPORTED,
) -> int:
    """Store labels made elsewhere (an imported file) as the machine's, in one transaction."""
    with transaction.atomic():
        _labels_store(machine=machine, labels=labels, provenance=provenance)
    return len(labels)


def _topic_texts(campaign: Campaign, topic_pks: set[int]) -> dict[int, TopicText]:
    return {
        topic.pk: TopicText(
            query=topic.title or topic.topic_id,
            description=topic.description,
            narrative=topic.narrative,
            guidelines=campaign.guidelines,
        )
        for topic in Topic.objects.filter(pk__in=topic_pks)
    }


def _chunks(items: list[tuple[int, str]], size: int) -> Iterator[list[tuple[int, str]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --------------------------------------------------------------------------
# The lexical baseline


LEXICAL_MODEL = "lexical-bm25"


def _lexical_run(
    *,
    machine: MachineAssessor,
    pool: Pool,
    plan: MachinePlan,
    result: MachineRunResult,
    report: Progress,
) -> None:
    """BM25 of each pooled document against its topic's query, mapped onto the
    relevance grades by cut points fitted on the topic's human final labels when it
    has any (else the default cut points). Labels relevance only: aspects NOT_ASKED."""
    from judging import selectors
    from judging.core import lexical

    schema = machine.campaign.schema
    levels = list(schema.relevance.values)
    result.prompt_version = LEXICAL_MODEL
    by_topic: dict[int, list[str]] = {}
    for topic, docno in plan.items:
        by_topic.setdefault(topic, []).append(docno)
    finals = selectors.final_labels(pool)
    topics = {t.pk: t for t in Topic.objects.filter(pk__in=by_topic)}
    done = 0
    for topic_pk, docnos in by_topic.items():
        topic = topics[topic_pk]
        pooled = list(
            PoolEntry.objects.filter(pool=pool, topic=topic, retired=False).values_list(
                "docno", flat=True
            )
        )
        texts = dict(
            Document.objects.filter(campaign_id=machine.campaign_id, docno__in=pooled).values_list(
                "docno", "text"
            )
        )
        query = " ".join(x for x in (topic.title, topic.description) if x) or topic.topic_id
        scores = lexical.bm25_scores(query, {d: texts.get(d, "") for d in pooled})
        human = finals[finals["query_id"] == topic.topic_id]
        human = human[human["doc_id"].isin(list(scores))]
        if len(human):
            thresholds = lexical.fit_thresholds(
                [scores[d] for d in human["doc_id"]], [int(g) for g in human["relevance"]], levels
            )
        else:
            thresholds = lexical.default_thresholds(list(scores.values()), levels)
        grades = lexical.grades_from_scores({d: scores[d] for d in docnos}, levels, thresholds)
        cut = ",".join(f"{t:.3f}" for t in thresholds)
        samples = [
            MachineSample(
                machine=machine,
                topic=topic,
                docno=docno,
                sample=0,
                labels=_relevance_only(schema, grades[docno]),
                ok=True,
                raw_reply=f"bm25={scores[docno]:.4f} cut points={cut}",
                model=LEXICAL_MODEL,
                prompt_version=LEXICAL_MODEL,
                requests=0,
                cache_key="",
            )
            for docno in docnos
        ]
        _store(machine=machine, schema=None, samples=samples, result=result)
        done += len(docnos)
        report(done=done)


def _relevance_only(schema: LabelSchema, grade: int) -> dict[str, int]:
    return {schema.relevance.id: int(grade), **dict.fromkeys(schema.aspect_ids, NOT_ASKED)}


__all__ = [
    "EndpointError",
    "MachineError",
    "PromptError",
    "machine_baseline",
    "machine_create",
    "machine_judge_plan",
    "machine_judge_run",
    "machine_judgments_store",
    "machine_update",
]
