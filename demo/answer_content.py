"""The demo's generated-answers campaign, generated deterministically. Pure, no Django.

Three of the demo's questions, each with a few nuggets, and the answers of
three RAG runs in the TREC 2024 RAG format, whose sentences are the first
sentences of the demo documents they cite (the segments). The good run cites
documents written to be relevant, the poor one mostly documents that are not.
Some of them come judged (`demo_labels`), so that the scores page has numbers.
"""

from __future__ import annotations

import json
import random

from demo.content import TOPICS, DemoDocument, documents
from pooling.core.answer_files import response_words

ANSWER_TOPICS = ("1", "2", "3")
RUNS = {"demo-rag-good": 0.9, "demo-rag-mid": 0.55, "demo-rag-poor": 0.2}

NUGGETS: dict[str, tuple[tuple[str, str], ...]] = {
    "1": (
        ("vital", "Cranberry products may lower the risk of urinary tract infections"),
        ("vital", "The evidence comes from randomised or controlled trials"),
        ("okay", "The effect is larger in people with repeated infections"),
        ("okay", "Side effects are mild, such as an upset stomach"),
    ),
    "2": (
        ("vital", "Vitamin C does not reliably prevent colds in most people"),
        ("okay", "Some trials report a modest effect on how long a cold lasts"),
        ("okay", "The studies disagree and many are small"),
    ),
    "3": (
        ("vital", "Honey may relieve night-time cough in children"),
        ("vital", "Honey must not be given to infants under one year (botulism)"),
        ("okay", "Talk to a doctor before giving supplements"),
    ),
}


def cited_documents() -> list[DemoDocument]:
    """The documents the answers may cite: those written about the answer topics."""
    return [d for d in documents() if d.topic_id in ANSWER_TOPICS]


def answers_jsonl() -> bytes:
    """Each run's answer to each topic: three sentences, each citing its document."""
    rng = random.Random(2024)
    by_topic: dict[str, list[DemoDocument]] = {}
    for doc in cited_documents():
        by_topic.setdefault(str(doc.topic_id), []).append(doc)
    lines = []
    for run, quality in RUNS.items():
        for topic_id in ANSWER_TOPICS:
            docs = by_topic[topic_id]
            relevant = [d for d in docs if d.relevance > 0]
            other = [d for d in docs if d.relevance == 0]
            chosen = [rng.choice(relevant if rng.random() < quality else other) for _ in range(3)]
            chosen = list(dict.fromkeys(chosen))  # a segment at most once in references
            sentences = [
                {"text": doc.text.split(". ")[0].rstrip(".") + ".", "citations": [i]}
                for i, doc in enumerate(chosen)
            ]
            lines.append(
                json.dumps(
                    {
                        "run_id": run,
                        "topic_id": topic_id,
                        "topic": next(t.question for t in TOPICS if t.topic_id == topic_id),
                        "references": [d.docno for d in chosen],
                        "response_length": response_words(s["text"] for s in sentences),
                        "answer": sentences,
                    }
                )
            )
    return ("\n".join(lines) + "\n").encode()


def nugget_label(run: str, nugget: int) -> str:
    """The demo assessor's label of a nugget (0-based) in a run's answer: the better
    the run, the more nuggets it supports."""
    quality = RUNS[run]
    step = (nugget + 1) / 4
    if quality >= step + 0.2:
        return "support"
    if quality >= step - 0.1:
        return "partial_support"
    return "not_support"
