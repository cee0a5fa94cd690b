"""The demo campaign's content, generated deterministically. Pure, no Django.

Five consumer-health questions in the style of the TREC 2019 Decision track,
a few hundred short documents that take a stance on them (or talk about
something else), and eight runs of depth 100 whose quality varies.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

SEED = 2019
RUN_DEPTH = 100
N_RUNS = 8


@dataclass(frozen=True)
class DemoTopic:
    topic_id: str
    query: str
    question: str
    narrative: str
    treatment: str
    condition: str
    answer: int  # accepted efficacy answer: 1 helpful, 0 inconclusive, -1 not helpful


TOPICS = (
    DemoTopic(
        "1",
        "cranberries urinary tract infections",
        "Can cranberry juice or supplements prevent urinary tract infections?",
        "Relevant documents discuss whether cranberry products prevent urinary tract "
        "infections, in any group of people. Documents about treating an existing infection "
        "with antibiotics alone are not relevant.",
        "cranberry products",
        "urinary tract infections",
        1,
    ),
    DemoTopic(
        "2",
        "vitamin C common cold",
        "Does taking vitamin C prevent or shorten the common cold?",
        "Relevant documents report on vitamin C supplements and the incidence, length or "
        "severity of colds. General nutrition advice without a claim about colds is not relevant.",
        "vitamin C supplements",
        "the common cold",
        0,
    ),
    DemoTopic(
        "3",
        "honey cough children",
        "Does honey relieve cough in children with a cold?",
        "Relevant documents discuss honey for night-time or daytime cough in children. "
        "Documents about infants under one year should mention the botulism risk to be "
        "highly relevant.",
        "honey",
        "cough in children",
        1,
    ),
    DemoTopic(
        "4",
        "fish oil heart attack prevention",
        "Do omega-3 fish oil supplements prevent heart attacks?",
        "Relevant documents discuss omega-3 or fish oil capsules and heart attacks, strokes or "
        "cardiac death. Documents about eating fish as part of a diet are partially relevant.",
        "omega-3 fish oil supplements",
        "heart attacks",
        -1,
    ),
    DemoTopic(
        "5",
        "probiotics antibiotic diarrhea",
        "Do probiotics prevent diarrhea caused by antibiotics?",
        "Relevant documents discuss taking probiotics during a course of antibiotics to "
        "prevent diarrhea, in adults or children.",
        "probiotics",
        "antibiotic-associated diarrhea",
        1,
    ),
)

_STANCES = {
    "effective": [
        "A randomised trial found that {t} reduced {c} compared with a placebo.",
        "Pooled results from several controlled studies suggest that {t} lower the risk of {c}.",
        "Patients who took {t} had noticeably fewer episodes of {c} over six months.",
    ],
    "ineffective": [
        "A large trial found no difference in {c} between people taking {t} and a placebo.",
        "Researchers concluded that {t} do not reduce {c} in healthy adults.",
        "The review found no reliable benefit of {t} for {c}.",
    ],
    "inconclusive": [
        "Studies of {t} for {c} disagree, and most of them were small.",
        "The evidence that {t} help with {c} is mixed and of low quality.",
        "Some trials report a modest effect of {t} on {c}, others none at all.",
    ],
    "none": [
        "Many people ask their pharmacist about {t}.",
        "{C} is one of the most common reasons for a visit to a family doctor.",
        "Sales of {t} have grown steadily over the last decade.",
    ],
}
_CREDIBLE = [
    "The findings were published in a peer-reviewed journal and summarised by a hospital.",
    "This summary was written by a public health agency and cites its sources.",
    "The authors declared no conflicts of interest.",
]
_NOT_CREDIBLE = [
    "Order today and get a second bottle free!",
    "My neighbour swears by it, and that is good enough for me.",
    "Doctors don't want you to know this one simple trick.",
]
_FILLER = [
    "Talk to a doctor before starting any supplement, especially during pregnancy.",
    "Side effects were generally mild and included an upset stomach.",
    "Dosage and preparation varied between the studies.",
    "Drinking enough water and resting remain sensible first steps.",
    "The effect, where seen, was larger in people with repeated episodes.",
]
_OFF_TOPIC = [
    (
        "Stretching before running",
        "Warming up with gentle stretches may lower the risk of strains.",
    ),
    ("Screen time and sleep", "Bright screens late in the evening can delay sleep in teenagers."),
    (
        "Sunscreen basics",
        "A broad-spectrum sunscreen should be reapplied every two hours outdoors.",
    ),
    (
        "Coffee and blood pressure",
        "Caffeine raises blood pressure briefly in people who rarely drink it.",
    ),
    ("Walking after meals", "A short walk after eating can blunt the rise in blood sugar."),
    (
        "Flu vaccines",
        "The seasonal flu vaccine is updated every year to match circulating strains.",
    ),
    ("Hand washing", "Washing hands with soap for twenty seconds removes most germs."),
    ("Reading glasses", "Needing reading glasses after forty is a normal part of ageing."),
]


@dataclass(frozen=True)
class DemoDocument:
    docno: str
    title: str
    text: str
    topic_id: str | None  # the topic it was written about, None when off-topic
    relevance: int  # how relevant the generator meant it to be (0, 1, 2)
    # What it says of the treatment (the schema's effectiveness grade, None when it
    # says nothing) and whether it is written credibly: the demo's human labels.
    effectiveness: int | None = None
    credible: bool = False


def topics_jsonl() -> bytes:
    lines = [
        json.dumps(
            {
                "topic_id": t.topic_id,
                "title": t.query,
                "description": t.question,
                "narrative": t.narrative,
                "answer": t.answer,
            }
        )
        for t in TOPICS
    ]
    return ("\n".join(lines) + "\n").encode()


def documents() -> list[DemoDocument]:
    rng = random.Random(SEED)
    docs: list[DemoDocument] = []
    for topic in TOPICS:
        for _ in range(56):
            docs.append(_topic_document(topic, len(docs) + 1, rng))
    for index in range(64):
        title, sentence = _OFF_TOPIC[index % len(_OFF_TOPIC)]
        filler = rng.sample(_FILLER, 2)
        docs.append(
            DemoDocument(_docno(len(docs) + 1), title, " ".join([sentence, *filler]), None, 0)
        )
    return docs


def _docno(number: int) -> str:
    return f"DEMO-{number:04d}"


def _topic_document(topic: DemoTopic, number: int, rng: random.Random) -> DemoDocument:
    stance = rng.choices(
        ["effective", "ineffective", "inconclusive", "none"], weights=[3, 2, 2, 3]
    )[0]
    credible = rng.random() < 0.6
    words = {"t": topic.treatment, "c": topic.condition, "C": topic.condition.capitalize()}
    sentences = [rng.choice(_STANCES[stance]).format(**words)]
    sentences += rng.sample(_FILLER, rng.randint(1, 2))
    sentences.append(rng.choice(_CREDIBLE if credible else _NOT_CREDIBLE))
    title = f"{topic.treatment.capitalize()} and {topic.condition}"
    if stance == "none":
        title = f"What to know about {topic.condition}"
    relevance = 0 if stance == "none" else (2 if credible and stance != "inconclusive" else 1)
    effectiveness = _EFFECTIVENESS.get(stance)
    return DemoDocument(
        _docno(number),
        title,
        " ".join(sentences),
        topic.topic_id,
        relevance,
        effectiveness,
        credible,
    )


# The schema's effectiveness grades for what a document says of the treatment.
_EFFECTIVENESS = {"ineffective": 1, "inconclusive": 2, "effective": 3}


def documents_jsonl() -> bytes:
    lines = [json.dumps({"docno": d.docno, "title": d.title, "text": d.text}) for d in documents()]
    return ("\n".join(lines) + "\n").encode()


def runs() -> dict[str, bytes]:
    """Eight runs of depth 100 on every topic, as TREC run files by tag."""
    docs = documents()
    rng = random.Random(SEED + 1)
    files: dict[str, bytes] = {}
    for number in range(1, N_RUNS + 1):
        tag = f"demo-run{number}"
        noise = 0.4 + 0.25 * number  # later runs are worse
        lines = []
        for topic in TOPICS:
            scored = []
            for doc in docs:
                on_topic = doc.topic_id == topic.topic_id
                signal = 1.5 + 2.0 * doc.relevance if on_topic else 0.0
                scored.append((round(signal + rng.gauss(0, noise), 4), doc.docno))
            # Score descending, then docno descending: the order trec_eval ranks in.
            scored.sort(reverse=True)
            for rank, (score, docno) in enumerate(scored[:RUN_DEPTH], start=1):
                lines.append(f"{topic.topic_id} Q0 {docno} {rank} {score:.4f} {tag}")
        files[tag] = ("\n".join(lines) + "\n").encode()
    return files
