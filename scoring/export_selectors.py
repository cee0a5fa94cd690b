"""qrels exports of a pool: one file, or a bundle with its manifest.

The labels are the pool's final labels under its stored policy
(`judging.judging_selectors.final_labels`); the files are written by the pure core
`scoring.core.exports`. The same state always gives byte-identical files; in a
bundle only `exported_at` in the manifest changes from one export to the next.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.db.models import Exists, OuterRef
from django.utils import timezone

from judging import selectors as judging_selectors
from judging.adaptive import is_adaptive
from judging.models import MachineAssessor, MachineSample
from pooling.models import Pool, PoolEntry
from scoring.core import exports
from scoring.core.exports import FORMATS, INCLUSION_FILE, ExportError
from scoring.selectors import HUMAN_LABELS, PoolState, pool_answers, pool_state, state_time
from workbench.core.topic_ids import topic_sort_key

TIE_RULE = "score descending, then docno descending (byte order); the rank column is ignored"


PROVENANCE_FILE = "provenance.tsv"


MANIFEST_FILE = "manifest.json"


# Fixed entry times keep a bundle's bytes a function of its contents.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class ExportFile:
    name: str
    text: str

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class FormatChoice:
    """A qrels format as the pool page and the API offer it."""

    name: str
    file: str
    description: str
    unavailable: str  # why the pool cannot produce it; empty when it can
    in_default_bundle: bool

    @property
    def available(self) -> bool:
        return not self.unavailable


def qrels_format_choices(*, pool: Pool) -> list[FormatChoice]:
    """Every format, whether the pool can produce it and why not (`exports.format_problems`).

    Cheap: reads the schema, the topics' answers and the pool's topics, not the labels.
    """
    topics = pool.entries.values_list("topic__topic_id", flat=True).distinct()
    problems = exports.format_problems(
        aspects=pool.campaign.schema.aspect_ids, answers=pool_answers(pool), topics=list(topics)
    )
    default = exports.bundle_formats(problems)
    return [
        FormatChoice(
            fmt.name, fmt.file, fmt.description, problems.get(fmt.name, ""), fmt.name in default
        )
        for fmt in FORMATS.values()
    ]


def qrels_export(
    *, pool: Pool, fmt: str, two_aspect: str | None = None, state: PoolState | None = None
) -> list[ExportFile]:
    """One format's files: the qrels, and inclusion.tsv beside stratified qrels."""
    state = state or pool_state(pool)
    frame = exports.export_frame(
        fmt,
        labels=state.labels,
        entries=state.entries,
        aspects=state.aspects,
        answers=state.answers,
        two_aspect=two_aspect,
    )
    files = [ExportFile(FORMATS[fmt].file, exports.render(fmt, frame))]
    if fmt == "stratified":
        files.append(ExportFile(INCLUSION_FILE, exports.inclusion_text(state.entries)))
    return files


QRELS_FILES = (*FORMATS, "inclusion")


def qrels_file(
    *,
    pool: Pool,
    fmt: str,
    two_aspect: str | None = None,
    labels: str = HUMAN_LABELS,
    machine: str | None = None,
) -> ExportFile:
    """One download (`fmt` one of QRELS_FILES): a format's qrels, or `inclusion` for the
    stratified pool's inclusion probabilities, of the labels chosen (`labels`,
    `machine`: as `pool_state`). Raises ExportError when the pool cannot produce it
    (LabelChoiceError, one of them, for a label choice it refuses)."""
    wanted = "stratified" if fmt == "inclusion" else fmt
    state = pool_state(pool, labels=labels, machine=machine)
    files = qrels_export(pool=pool, fmt=wanted, two_aspect=two_aspect, state=state)
    return next(f for f in files if f.name == INCLUSION_FILE) if fmt == "inclusion" else files[0]


def qrels_bundle(
    *,
    pool: Pool,
    formats: list[str] | None = None,
    two_aspect: str | None = None,
    labels: str = HUMAN_LABELS,
    machine: str | None = None,
) -> bytes:
    """A zip of the formats' files, provenance.tsv and manifest.json, of the labels
    chosen (`labels`, `machine`: as `pool_state`; the manifest says whose).

    No formats: the default ones the pool can produce (`exports.bundle_formats`).
    A format it cannot produce is an ExportError saying why.
    """
    state = pool_state(pool, labels=labels, machine=machine)
    problems = state.format_problems
    formats = exports.bundle_formats(problems) if formats is None else formats
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ExportError(f"choose formats among {', '.join(FORMATS)}; got {formats!r}")
    refused = [f"{fmt} {problems[fmt]}" for fmt in dict.fromkeys(formats) if fmt in problems]
    if refused:
        raise ExportError("; ".join(refused))
    files: dict[str, ExportFile] = {}
    for fmt in dict.fromkeys(formats):
        for file in qrels_export(pool=pool, fmt=fmt, two_aspect=two_aspect, state=state):
            files[file.name] = file
    files[PROVENANCE_FILE] = ExportFile(PROVENANCE_FILE, provenance_text(state.labels))
    manifest = export_manifest(state, list(dict.fromkeys(formats)), files, two_aspect)
    files[MANIFEST_FILE] = ExportFile(MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name].data)
    return buffer.getvalue()


def provenance_text(labels: pd.DataFrame) -> str:
    """Where each final label came from, one line per item: topic, docno, relevance,
    provenance, number of judgments, assessors, who decided it (the adjudicator, or
    the assessors whose judgments gave it), and for an adjudication when and why."""
    rows = exports.sort_items(labels)
    header = "topic docno relevance provenance judgments assessors decided_by decided_at reason"
    lines = ["\t".join(header.split()) + "\n"]
    for row in rows.itertuples(index=False):
        reason = " ".join(row.reason.split())  # one line, no tabs
        lines.append(
            f"{row.query_id}\t{row.doc_id}\t{row.relevance}\t{row.provenance}\t"
            f"{row.n_judgments}\t{','.join(row.assessors)}\t{','.join(row.decided_by)}\t"
            f"{row.decided_at}\t{reason}\n"
        )
    return "".join(lines)


def label_policy(
    pool: Pool, labels: str = HUMAN_LABELS, machine: str | None = None
) -> dict[str, Any]:
    """How the labels of `pool_state(pool, labels=..., machine=...)` were decided, as
    data: whose labels, the policy's steps for the human ones (adjudicated first by
    default) and the disagreement mode, and with a machine source the machine (name,
    kind, model, prompt versions of its labels). A release stores it; the export
    manifest says the same."""
    policy = judging_selectors.policy_of(pool)
    data: dict[str, Any] = {
        "labels": labels,
        "steps": list(policy.label_policy["steps"]),
        "disagreement_mode": policy.disagreement_mode,
    }
    if labels != HUMAN_LABELS and machine:
        data["machine"] = machine_provenance(pool, machine)
    return data


def machine_provenance(pool: Pool, name: str) -> dict[str, Any]:
    """A machine as a manifest names it: name, kind, model and the prompt versions
    its samples of the pool's documents were asked with."""
    machine = MachineAssessor.objects.get(campaign=pool.campaign_id, name=name)
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    samples = MachineSample.objects.filter(machine=machine, ok=True).filter(Exists(in_pool))
    versions = sorted(set(samples.values_list("prompt_version", flat=True)) - {""})
    models = sorted(set(samples.values_list("model", flat=True)) - {""})
    return {
        "name": machine.name,
        "kind": machine.kind,
        "model": machine.model or (models[0] if len(models) == 1 else ", ".join(models)),
        "prompt_versions": versions,
    }


def pool_revisions(pool: Pool) -> list[dict[str, Any]]:
    """Each re-plan: which topics got which spec, when, by whom and why."""
    return [
        {
            "number": revision.number,
            "topics": revision.topics,
            "spec": revision.spec,
            "reason": revision.reason,
            "by": revision.created_by.username if revision.created_by else None,
            "at": revision.created_at.isoformat(timespec="seconds"),
        }
        for revision in pool.revisions.select_related("created_by")
    ]


def export_manifest(
    state: PoolState, formats: list[str], files: dict[str, ExportFile], two_aspect: str | None
) -> dict[str, Any]:
    pool = state.pool
    policy = judging_selectors.policy_of(pool)
    manifest: dict[str, Any] = {
        "campaign": {"slug": pool.campaign.slug, "name": pool.campaign.name},
        "pool": {
            "id": pool.pk,
            "name": pool.name,
            "spec": pool.spec,
            "revisions": pool_revisions(pool),
        },
        "tie_rule": TIE_RULE,
        "label_policy": policy.label_policy,
        "disagreement_mode": policy.disagreement_mode,
        "labels": label_policy(pool, state.choice.source, state.choice.machine or None),
        "machine_use": judging_selectors.machine_use_manifest(pool),
        "formats": {fmt: FORMATS[fmt].description for fmt in formats},
        "counts": _counts(state),
        "agreement": judging_selectors.agreement_report(pool, machines=False).summary(),
        "runs": [
            {"tag": run.tag, "file": run.original_name, "sha256": run.sha256}
            for run in pool.runs.order_by("tag")
        ],
        "files": {
            name: {"sha256": file.sha256, "lines": file.text.count("\n")}
            for name, file in sorted(files.items())
        },
        "state_as_of": state_time(pool),
        "exported_at": timezone.now().isoformat(timespec="seconds"),
    }
    if is_adaptive(pool):
        manifest["adaptive"] = adaptive_manifest(pool)
    if "correctness" in formats:
        manifest["correctness_mapping"] = exports.CORRECTNESS_MAPPING
        manifest["accepted_answers"] = dict(sorted(state.answers.items()))
    if "twoaspects" in formats:
        manifest["twoaspects_aspect"] = two_aspect or (
            "credibility" if "credibility" in state.aspects else state.aspects[0]
        )
    return manifest


def adaptive_manifest(pool: Pool) -> dict[str, Any]:
    """What a reader of an adaptive pool's bundle must know (docs/adaptive_pooling.md)."""
    strategy = pool.spec["strategy"]
    sampled = strategy == "active"
    return {
        "strategy": strategy,
        "budget": pool.spec["budget"],
        "order": "each topic's documents were drawn one at a time, when its assessor asked, "
        "from the judgments so far; an entry's order is its place in its topic's draws",
        "inclusion_probabilities": (
            "inclusion.tsv (with the stratified format): each candidate's probability of "
            "being drawn by the draws made, for sample_eval-style estimates"
            if sampled
            else "none: the strategy is deterministic given the labels, so inclusion.tsv "
            "holds 1 for a drawn document and 0 for the others, and no estimate from it "
            "is unbiased; score the judged documents as a (biased) pool"
        ),
    }


def _counts(state: PoolState) -> dict[str, Any]:
    """Per topic and in total: pooled, sampled, judged (sampled with a final label), unjudged."""
    entries = state.entries
    judged_keys = set(zip(state.labels["query_id"], state.labels["doc_id"], strict=True))
    judged = [
        (q, d) in judged_keys and s
        for q, d, s in zip(entries["query_id"], entries["doc_id"], entries["sampled"], strict=True)
    ]
    frame = entries.assign(judged=judged)
    per_topic = {}
    for topic, group in frame.groupby("query_id", sort=False):
        sampled = int(group["sampled"].sum())
        judged_here = int(group["judged"].sum())
        per_topic[str(topic)] = {
            "pooled": len(group),
            "sampled": sampled,
            "judged": judged_here,
            "unjudged": sampled - judged_here,
        }
    ordered = dict(sorted(per_topic.items(), key=lambda item: topic_sort_key(item[0])))
    total = {
        key: sum(c[key] for c in ordered.values())
        for key in ("pooled", "sampled", "judged", "unjudged")
    }
    return {"total": total, "topics": ordered}
