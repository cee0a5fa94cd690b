"""Set-based evaluation: a predicted set against a gold set per item. Pure core, no Django.

For any task that compares sets item by item (codes per clinical case,
entities per document, relevant documents per topic taken as a set):

- `Confusion`: TP, FP, FN, and TN when the universe is known.
- `precision`, `recall`, `f_alpha` (F = 1 / (alpha/P + (1 - alpha)/R), the
  weighted harmonic mean; alpha = 0.5 is the plain harmonic mean), `f_beta`
  (the same family: alpha = 1 / (1 + beta^2)), `accuracy`, `error_rate`.
- `micro` (pool the counts, then divide) and `macro` (divide per item, then
  take the mean) averages.
- Span matching, strict (the same span) or lenient (a prediction that covers
  the gold span within a tolerance, as CodiEsp X does).
- Average precision over a ranked list, in its two textbook forms, named
  apart: `ap_over_relevant` divides by every relevant item (trec_eval's map),
  `ap_over_relevant_retrieved` by the relevant items found (relevant at
  ranks 1, 2 and 5 of six: 0.87 against 0.5 with six relevant).
- Extras for hierarchical codes (ICD-10): `category` (the first three
  characters) and `learning_accuracy` (Hahn and Schnattinger, 1998) over the
  code prefix taxonomy. They are ours, beside the official numbers.

Zero denominators: each measure returns `empty` (NaN unless asked otherwise),
because the official scripts disagree (CodiEsp gives NaN, SciFact 0).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

NAN = math.nan


def ratio(numerator: float, denominator: float, *, empty: float = NAN) -> float:
    """numerator / denominator, or `empty` when the denominator is 0."""
    return numerator / denominator if denominator else empty


@dataclass(frozen=True)
class Confusion:
    """The 2x2 contingency counts of one comparison; tn is None without a universe."""

    tp: int
    fp: int
    fn: int
    tn: int | None = None

    def __add__(self, other: Confusion) -> Confusion:
        tn = None if self.tn is None or other.tn is None else self.tn + other.tn
        return Confusion(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, tn)

    @property
    def predicted(self) -> int:
        return self.tp + self.fp

    @property
    def gold(self) -> int:
        return self.tp + self.fn


def confusion[T: Hashable](
    predicted: Iterable[T], gold: Iterable[T], universe: Iterable[T] | None = None
) -> Confusion:
    """Counts of a predicted set against a gold set (repeats count once).

    With `universe`, TN counts the items of the universe in neither set; items
    of the two sets outside the universe still count as TP, FP or FN.
    """
    predicted_set, gold_set = set(predicted), set(gold)
    tp = len(predicted_set & gold_set)
    tn = None
    if universe is not None:
        tn = len(set(universe) - predicted_set - gold_set)
    return Confusion(tp, len(predicted_set) - tp, len(gold_set) - tp, tn)


def precision(counts: Confusion, *, empty: float = NAN) -> float:
    return ratio(counts.tp, counts.predicted, empty=empty)


def recall(counts: Confusion, *, empty: float = NAN) -> float:
    return ratio(counts.tp, counts.gold, empty=empty)


def f_alpha(counts: Confusion, alpha: float = 0.5, *, empty: float = NAN) -> float:
    """van Rijsbergen's F = 1 / (alpha/P + (1 - alpha)/R), from the counts:
    TP / (TP + alpha FP + (1 - alpha) FN), so that it is 0 (not undefined) when
    nothing is right but something was predicted or expected. alpha = 0.5 is
    the harmonic mean 2PR / (P + R); alpha = 1 is P, alpha = 0 is R."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], not {alpha}")
    return ratio(counts.tp, counts.tp + alpha * counts.fp + (1.0 - alpha) * counts.fn, empty=empty)


def f_beta(counts: Confusion, beta: float = 1.0, *, empty: float = NAN) -> float:
    """F_beta = (1 + beta^2) TP / ((1 + beta^2) TP + beta^2 FN + FP): recall weighs
    beta times as much as precision; F_alpha with alpha = 1 / (1 + beta^2)."""
    if beta < 0:
        raise ValueError(f"beta must be >= 0, not {beta}")
    b2 = beta * beta
    return ratio(
        (1 + b2) * counts.tp, (1 + b2) * counts.tp + b2 * counts.fn + counts.fp, empty=empty
    )


def f1(p: float, r: float, *, empty: float = NAN) -> float:
    """2PR / (P + R), computed in that order (as the official scripts do)."""
    if math.isnan(p) or math.isnan(r):
        return NAN
    return ratio(2 * p * r, p + r, empty=empty)


def accuracy(counts: Confusion, *, empty: float = NAN) -> float:
    """(TP + TN) / all; needs the universe (tn)."""
    if counts.tn is None:
        raise ValueError("accuracy needs the true negatives: give confusion() a universe")
    return ratio(counts.tp + counts.tn, counts.tp + counts.fp + counts.fn + counts.tn, empty=empty)


def error_rate(counts: Confusion, *, empty: float = NAN) -> float:
    """(FP + FN) / all = 1 - accuracy; needs the universe (tn)."""
    if counts.tn is None:
        raise ValueError("the error rate needs the true negatives: give confusion() a universe")
    return ratio(counts.fp + counts.fn, counts.tp + counts.fp + counts.fn + counts.tn, empty=empty)


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float


def micro(per_item: Iterable[Confusion], *, empty: float = NAN) -> Scores:
    """Pool every item's counts, then divide."""
    total = sum(per_item, Confusion(0, 0, 0))
    p, r = precision(total, empty=empty), recall(total, empty=empty)
    return Scores(p, r, f1(p, r, empty=empty))


def macro(per_item: Iterable[Confusion], *, empty: float = NAN) -> Scores:
    """Each item's P, R and F1, then their means (items with an undefined value left out)."""
    rows = []
    for counts in per_item:
        p, r = precision(counts, empty=empty), recall(counts, empty=empty)
        rows.append((p, r, f1(p, r, empty=empty)))
    return Scores(*(_mean([row[i] for row in rows]) for i in range(3)))


def _mean(values: Sequence[float]) -> float:
    defined = [value for value in values if not math.isnan(value)]
    return math.fsum(defined) / len(defined) if defined else NAN


# --------------------------------------------------------------------------
# Span matching


Span = tuple[int, int]


def strict_match(gold: Span, predicted: Span) -> bool:
    """The same span, character for character."""
    return gold == predicted


def lenient_match(gold: Span, predicted: Span, tolerance: int) -> bool:
    """The prediction covers the gold span, starting at most `tolerance` characters
    before it and ending at most `tolerance` after it (CodiEsp X: tolerance 10)."""
    before = gold[0] - predicted[0]
    after = predicted[1] - gold[1]
    return 0 <= before <= tolerance and 0 <= after <= tolerance


# --------------------------------------------------------------------------
# Average precision over a ranked list


def _precisions_at_relevant(ranked: Iterable[bool]) -> list[float]:
    found, terms = 0, []
    for rank, relevant in enumerate(ranked, start=1):
        if relevant:
            found += 1
            terms.append(found / rank)
    return terms


def ap_over_relevant(ranked: Iterable[bool], relevant: int) -> float:
    """Sum of the precisions at each relevant rank / every relevant item (trec_eval's
    map: an unfound relevant item adds 0). 0 when nothing is relevant."""
    terms = _precisions_at_relevant(ranked)
    if len(terms) > relevant:
        raise ValueError(f"{len(terms)} relevant items ranked, but only {relevant} relevant")
    return ratio(sum(terms), relevant, empty=0.0)


def ap_over_relevant_retrieved(ranked: Iterable[bool]) -> float:
    """Sum of the precisions at each relevant rank / the relevant items retrieved
    (the textbook variant, blind to what was not found). 0 when none was found."""
    terms = _precisions_at_relevant(ranked)
    return ratio(sum(terms), len(terms), empty=0.0)


# --------------------------------------------------------------------------
# Hierarchical codes (ICD-10): extras beside the official numbers


def category(code: str) -> str:
    """An ICD-10 code's category: its first three characters, case folded
    ("N20.0" -> "n20"; a PCS code "BW40ZZZ" -> "bw4")."""
    return code.replace(".", "").lower()[:3]


def code_path(code: str) -> tuple[str, ...]:
    """The code's ancestors from the top down, itself last: prefixes of the code
    (dot removed, case folded) of length 1 (the letter), 3 (the category), then
    each further character. "N20.0" -> ("n", "n20", "n200")."""
    plain = code.replace(".", "").lower()
    lengths = range(1, len(plain) + 1) if len(plain) < 3 else (1, *range(3, len(plain) + 1))
    return tuple(plain[:n] for n in lengths)


def learning_accuracy(predicted: str, correct: str) -> float:
    """Hahn and Schnattinger's learning accuracy of a predicted code in the code
    taxonomy (`code_path`), path lengths counted in nodes below the top:

        LA = CP / SP              when the prediction is the correct code or an
                                  ancestor of it (nothing false: FP = 0)
        LA = CP / (FP + DP)       otherwise

    SP: the correct code's depth; CP: the depth of the deepest concept common
    to both paths; FP: the predicted code's depth; DP: the distance from the
    predicted code up to that common concept. 1 for the correct code, less
    the farther off it is, 0 when the two share no ancestor. A code of dots
    only has an empty path (the top): 1 against another such code, else 0.
    """
    predicted_path, correct_path = code_path(predicted), code_path(correct)
    if not correct_path:  # a code of dots only: the top itself
        return 1.0 if not predicted_path else 0.0
    common = 0
    for mine, theirs in zip(predicted_path, correct_path, strict=False):
        if mine != theirs:
            break
        common += 1
    if common == len(predicted_path):  # the correct code itself, or one of its ancestors
        return common / len(correct_path)
    false_path = len(predicted_path)
    distance = false_path - common
    return common / (false_path + distance)


def best_learning_accuracy(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """Mean over the predicted codes of each one's best learning accuracy against
    the gold codes (NaN without predictions; 0 for a code when the gold is empty)."""
    gold_codes = set(gold)
    values = [
        max((learning_accuracy(code, truth) for truth in gold_codes), default=0.0)
        for code in set(predicted)
    ]
    return math.fsum(values) / len(values) if values else NAN


def category_confusion(predicted: Iterable[str], gold: Iterable[str]) -> Confusion:
    """Counts over the categories (`category`) of the two code sets."""
    return confusion(map(category, predicted), map(category, gold))


def per_item_confusions[K, T: Hashable](
    predicted: Mapping[K, Iterable[T]], gold: Mapping[K, Iterable[T]]
) -> dict[K, Confusion]:
    """One `Confusion` per item of either mapping (an absent item is an empty set)."""
    keys = list(dict.fromkeys([*gold, *predicted]))
    return {key: confusion(predicted.get(key, ()), gold.get(key, ())) for key in keys}
