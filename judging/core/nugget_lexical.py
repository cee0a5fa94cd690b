"""The lexical baseline for generated answers: nuggets and assignments by term
overlap, with no model. Pure core, no Django. A baseline, named as such wherever
it is reported: overlap of words is not support of a fact.

Terms are `lexical.tokens` (lower-case \\w+ tokens, Lucene's English stop words
removed), as a set per sentence.

**Nuggets** (`propose_nuggets`): the candidates are the answers' sentences (each
distinct text once). A candidate's *share* is the number of answers that contain
at least COVER (60 %) of its terms (its own answer included). Candidates with
fewer than MIN_TERMS terms are dropped. They are ranked by share (descending),
then by the number of query terms they contain, then shorter first, then text; a
candidate is skipped when an already chosen one contains COVER of its terms (a
near repeat). The first `limit` (10) are kept, the first `vital` (3) of them
marked vital when their share is at least 2 (shared by two answers or more),
the rest okay.

**Assignment** (`assign_labels`): a nugget's coverage is the share of its terms
that occur in the answer's text: at least SUPPORT_AT (0.7) is support, at least
PARTIAL_AT (0.4) partial_support, else not_support; a nugget with no terms is
not_support.
"""

from __future__ import annotations

from collections.abc import Sequence

from judging.core.answer_labels import NOT_SUPPORT, PARTIAL_SUPPORT, SUPPORT
from judging.core.lexical import tokens
from judging.core.nugget_files import MAX_TEXT, NuggetText

COVER = 0.6
MIN_TERMS = 3
LIMIT = 10
VITAL = 3
SUPPORT_AT = 0.7
PARTIAL_AT = 0.4

RULE = (
    f"lexical baseline: answer sentences ranked by how many answers share {COVER:.0%} of "
    f"their terms, top {VITAL} vital"
)


def terms(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def _covered(needle: frozenset[str], haystack: frozenset[str]) -> float:
    return len(needle & haystack) / len(needle) if needle else 0.0


def propose_nuggets(
    query: str, answers: Sequence[Sequence[str]], *, limit: int = LIMIT, vital: int = VITAL
) -> list[NuggetText]:
    """The nuggets of a topic from its answers (each a list of sentences)."""
    bags = [terms(" ".join(sentences)) for sentences in answers]
    query_terms = terms(query)
    seen: set[str] = set()
    candidates = []
    for sentences in answers:
        for sentence in sentences:
            text = " ".join(sentence.split())[:MAX_TEXT]
            bag = terms(text)
            if text in seen or len(bag) < MIN_TERMS:
                continue
            seen.add(text)
            share = sum(_covered(bag, other) >= COVER for other in bags)
            candidates.append((-share, -len(bag & query_terms), len(text), text, bag, share))
    candidates.sort(key=lambda c: c[:4])
    chosen: list[tuple[str, frozenset[str], int]] = []
    for *_, text, bag, share in candidates:
        if len(chosen) >= limit:
            break
        if any(_covered(bag, kept) >= COVER for _, kept, _ in chosen):
            continue
        chosen.append((text, bag, share))
    return [
        NuggetText(text, "vital" if n < vital and share >= 2 else "okay")
        for n, (text, _, share) in enumerate(chosen)
    ]


def assign_labels(nuggets: Sequence[str], answer: str) -> list[str]:
    """A label per nugget (in order) by the share of its terms found in the answer."""
    found = terms(answer)
    labels = []
    for nugget in nuggets:
        coverage = _covered(terms(nugget), found)
        labels.append(
            SUPPORT
            if coverage >= SUPPORT_AT
            else PARTIAL_SUPPORT
            if coverage >= PARTIAL_AT
            else NOT_SUPPORT
        )
    return labels
