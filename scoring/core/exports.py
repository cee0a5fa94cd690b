"""qrels files from a pool's final labels, in every layout the scorers read. Pure core.

Frames taken here:

- labels: the final labels, `query_id, doc_id, relevance` and one column per
  aspect (ints; -1 "not judged because not relevant", -2 "should have been
  judged and was not"), one row per judged item (`judging.core.labels.final_labels`).
- entries: the pool, `query_id, doc_id, stratum, inclusion_probability,
  sampled` (every pooled document, sampled or not).

Not every schema can give every format (a TREC DL campaign has no aspects and
no accepted answers): `format_problems` is the one rule that says which
formats a pool can produce and why not; the pages, the bundle's default, the
command line and the API all ask it.

Every export is sorted by topic (numeric ids numerically) then docno in byte
order, so the same state always gives byte-identical files.

Formats, with their file names in a bundle:

- qrels (qrels.txt): `topic 0 docno rel`, for trec_eval;
- relevance (qrels_relevance.txt): the same lines, the Decision track's name;
- aspects (qrels_aspects.txt): `topic 0 docno rel eff cred`, the track's raw file;
- correctness (qrels_correctness.txt): `topic 0 docno rel correct cred`,
  effectiveness mapped against each topic's accepted answer;
- twoaspects (qrels_twoaspects.txt): `topic 0 docno rel a`, a = credibility
  by default (relevance and credibility, as the two-aspect measures were made for);
- threeaspects (qrels_threeaspects.txt): `topic 0 docno rel a1 a2`, the
  schema's first two aspects;
- stratified (qrels_stratified.txt, with inclusion.tsv): `topic 0 docno
  stratum rel` for every pooled document, rel -1 unless sampled and judged;
- infap (qrels_infap.txt): `topic 0 docno rel` for every pooled document,
  rel -1 unless sampled and judged, for trec_eval's infAP.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring.core.qrels import (
    STRATIFIED_QRELS,
    THREE_ASPECT_QRELS,
    TREC_QRELS,
    TWO_ASPECT_QRELS,
    QrelsLayout,
    write_qrels,
)
from workbench.core.topic_ids import topic_sort_key

NOT_SAMPLED = -1  # sample_eval's and trec_eval's code for "pooled, not judged"

# Correctness (shared/semantics/multi-aspect.md): for a relevant document, its
# effectiveness against the topic's accepted answer (1 helpful, 0
# inconclusive, -1 not helpful) is correct (1) when it says the same thing.
CORRECT_EFFECTIVENESS = {1: 3, 0: 2, -1: 1}
CORRECTNESS_MAPPING = {
    "answer 1 (helpful)": "effectiveness 3 (effective) -> 1, other judged values -> 0",
    "answer 0 (inconclusive)": "effectiveness 2 (inconclusive) -> 1, other judged values -> 0",
    "answer -1 (not helpful)": "effectiveness 1 (ineffective) -> 1, other judged values -> 0",
    "codes": "-1 (not relevant) and -2 (not judged) are kept as they are",
}


class ExportError(ValueError):
    """An export that cannot be made from this state; the message says why."""


@dataclass(frozen=True)
class Format:
    name: str
    file: str
    layout: QrelsLayout
    description: str


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("qrels", "qrels.txt", TREC_QRELS, "topic 0 docno rel (trec_eval)"),
        Format("relevance", "qrels_relevance.txt", TREC_QRELS, "relevance only"),
        Format("aspects", "qrels_aspects.txt", THREE_ASPECT_QRELS, "topic 0 docno rel eff cred"),
        Format(
            "correctness",
            "qrels_correctness.txt",
            THREE_ASPECT_QRELS,
            "topic 0 docno rel correct cred",
        ),
        Format("twoaspects", "qrels_twoaspects.txt", TWO_ASPECT_QRELS, "topic 0 docno rel a"),
        Format(
            "threeaspects", "qrels_threeaspects.txt", THREE_ASPECT_QRELS, "topic 0 docno rel a1 a2"
        ),
        Format("stratified", "qrels_stratified.txt", STRATIFIED_QRELS, "topic 0 docno stratum rel"),
        Format("infap", "qrels_infap.txt", TREC_QRELS, "topic 0 docno rel, -1 if unsampled"),
    )
}
INCLUSION_FILE = "inclusion.tsv"
# A bundle holds, when no formats are chosen, every format the pool can produce.
DEFAULT_BUNDLE = tuple(FORMATS)
_DECISION_ASPECTS = ("effectiveness", "credibility")
_TOPICS_NAMED = 5  # topics named in a reason; the others are counted


def format_problems(
    *, aspects: Sequence[str], answers: Mapping[str, int], topics: Iterable[str]
) -> dict[str, str]:
    """Why each format that a pool cannot produce cannot be made: {format: reason}.

    aspects: the schema's aspect ids, in order; answers: each topic's accepted
    answer (`Topic.extra["answer"]`, where it is a whole number); topics: the
    topics of the pool, every one of which the correctness format maps.
    Formats not in the result can be produced.
    """
    problems = {}
    missing = [a for a in _DECISION_ASPECTS if a not in aspects]
    if missing:
        lacks = "has neither" if len(missing) > 1 else f"lacks {missing[0]}"
        problems["aspects"] = (
            f"needs the aspects {' and '.join(_DECISION_ASPECTS)}; the schema {lacks}"
        )
    answer_problem = _answer_problem(answers, topics)
    if missing or answer_problem:
        problems["correctness"] = problems.get("aspects") or answer_problem or ""
    for fmt, needed in (("twoaspects", 1), ("threeaspects", 2)):
        if len(aspects) < needed:
            problems[fmt] = (
                f"needs {needed} aspect{'s' if needed > 1 else ''} besides relevance; "
                f"the schema has {len(aspects)}"
            )
    return problems


def bundle_formats(problems: Mapping[str, str]) -> list[str]:
    """The formats of a bundle when none are chosen: every one the pool can produce."""
    return [fmt for fmt in DEFAULT_BUNDLE if fmt not in problems]


def _answer_problem(answers: Mapping[str, int], topics: Iterable[str]) -> str | None:
    topics = sorted(set(topics), key=topic_sort_key)
    missing = [t for t in topics if t not in answers]
    if missing:
        return (
            "needs each topic's accepted answer (1, 0 or -1, the topic's 'answer'); "
            f"missing for {_some_topics(missing)}"
        )
    wrong = [f"{t}: {answers[t]!r}" for t in topics if answers[t] not in CORRECT_EFFECTIVENESS]
    if wrong:
        return f"accepted answers must be 1, 0 or -1; got {'; '.join(wrong)}"
    return None


def _some_topics(topics: Sequence[str]) -> str:
    named = ", ".join(topics[:_TOPICS_NAMED])
    more = len(topics) - _TOPICS_NAMED
    text = f"topic{'s' if len(topics) > 1 else ''} {named}"
    return text + (f" and {more} more" if more > 0 else "")


def sort_items(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by topic (numeric ids numerically) then docno in byte order."""
    if frame.empty:
        return frame.reset_index(drop=True)
    topics = sorted(frame["query_id"].unique(), key=topic_sort_key)
    topic_rank = frame["query_id"].map({t: i for i, t in enumerate(topics)}).to_numpy()
    docnos = np.array([d.encode() for d in frame["doc_id"]], dtype=object)
    doc_rank = pd.factorize(docnos, sort=True)[0]
    return frame.iloc[np.lexsort((doc_rank, topic_rank))].reset_index(drop=True)


def export_frame(
    fmt: str,
    *,
    labels: pd.DataFrame,
    entries: pd.DataFrame,
    aspects: Sequence[str],
    answers: Mapping[str, int] | None = None,
    two_aspect: str | None = None,
) -> pd.DataFrame:
    """The frame `write_qrels` writes for one format (columns of its layout)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    topics = [*entries["query_id"].unique(), *labels["query_id"].unique()]
    problem = format_problems(aspects=aspects, answers=answers or {}, topics=topics).get(fmt)
    if problem:
        raise ExportError(f"{fmt} {problem}")
    if fmt in ("qrels", "relevance"):
        return sort_items(labels[["query_id", "doc_id", "relevance"]])
    if fmt in ("stratified", "infap"):
        return _pooled(entries, labels, with_stratum=fmt == "stratified")
    if fmt == "correctness":
        labels = with_correctness(labels, answers or {})
        return _aspect_columns(labels, ["correctness", "credibility"])
    if fmt == "twoaspects":
        chosen = two_aspect or ("credibility" if "credibility" in aspects else aspects[0])
        return _aspect_columns(labels, [chosen])
    if fmt == "aspects":
        return _aspect_columns(labels, list(_DECISION_ASPECTS))
    return _aspect_columns(labels, list(aspects[:2]))


def render(fmt: str, frame: pd.DataFrame) -> str:
    """The file text of a format's frame."""
    out = io.StringIO()
    write_qrels(frame, out, layout=FORMATS[fmt].layout)
    return out.getvalue()


def inclusion_text(entries: pd.DataFrame) -> str:
    """inclusion.tsv: `topic docno stratum inclusion_probability` for every pooled document."""
    rows = sort_items(entries[["query_id", "doc_id", "stratum", "inclusion_probability"]])
    lines = ["topic\tdocno\tstratum\tinclusion_probability\n"]
    lines += [
        f"{q}\t{d}\t{s}\t{p!r}\n"
        for q, d, s, p in zip(
            rows["query_id"],
            rows["doc_id"],
            rows["stratum"].astype(int),
            rows["inclusion_probability"].astype(float),
            strict=True,
        )
    ]
    return "".join(lines)


def with_correctness(labels: pd.DataFrame, answers: Mapping[str, int]) -> pd.DataFrame:
    """labels plus a `correctness` column from effectiveness and each topic's answer."""
    problem = _answer_problem(answers, labels["query_id"])
    if problem:
        raise ExportError(f"correctness {problem}")
    effectiveness = labels["effectiveness"].to_numpy()
    correct = labels["query_id"].map(lambda t: CORRECT_EFFECTIVENESS[answers[t]]).to_numpy()
    judged = effectiveness >= 0
    values = np.where(judged, (effectiveness == correct).astype(int), effectiveness)
    return labels.assign(correctness=values)


def _pooled(entries: pd.DataFrame, labels: pd.DataFrame, *, with_stratum: bool) -> pd.DataFrame:
    """Every pooled document with its label, NOT_SAMPLED where it has none to use."""
    judged = labels.set_index(["query_id", "doc_id"])["relevance"]
    keys = pd.MultiIndex.from_frame(entries[["query_id", "doc_id"]])
    relevance = judged.reindex(keys).to_numpy()
    usable = entries["sampled"].to_numpy(dtype=bool) & ~pd.isna(relevance)
    frame = entries[["query_id", "doc_id"]].copy()
    if with_stratum:
        frame["stratum"] = entries["stratum"].astype(int).to_numpy()
    frame["relevance"] = np.where(usable, relevance, NOT_SAMPLED).astype(int)
    return sort_items(frame)


def _aspect_columns(labels: pd.DataFrame, chosen: list[str]) -> pd.DataFrame:
    names = ["aspect_2", "aspect_3"][: len(chosen)]
    missing = [c for c in chosen if c not in labels.columns]
    if missing:
        raise ExportError(f"the labels have no aspect {', '.join(missing)}")
    frame = labels[["query_id", "doc_id", "relevance", *chosen]].copy()
    frame.columns = ["query_id", "doc_id", "relevance", *names]
    return sort_items(frame)
