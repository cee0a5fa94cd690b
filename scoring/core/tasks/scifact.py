"""SciFact claim verification, scored exactly as the leaderboard's evaluator.

Pure core, no Django. The official scorer is allenai/scifact-evaluator's
`evaluator/eval.py` (run with --verbose); `docs/tasks.md` cites its lines.

Files, one JSON object a line (blank lines skipped):

    claims (gold)   {"id": 52, "evidence": {"11": [{"sentences": [0, 1], "label": "SUPPORT"},
                                                   {"sentences": [11], "label": "SUPPORT"}]},
                     ...other keys ignored}
    predictions     {"id": 52, "evidence": {"11": {"sentences": [1, 11, 13], "label": "SUPPORT"}}}

Labels are SUPPORT or CONTRADICT. Document ids are the evidence objects' keys,
compared as strings ("012" is not "12"); claim ids are integers and every
gold claim needs exactly one prediction line (its evidence may be empty).

The twelve numbers are precision, recall and F1 of four counts:

- abstract_label_only: a predicted abstract is correct when it is a gold
  abstract of the claim with the same label;
- abstract_rationalized: ... and one of its gold rationales is contained in
  the first max(3, length of its shortest gold rationale) predicted sentences;
- sentence_selection: a predicted sentence of a gold abstract is correct when
  the whole gold rationale it belongs to was predicted (each distinct sentence
  once), whatever the label;
- sentence_label: ... and the abstract's label is right.

Predicted abstracts and sentences are counted as given (a sentence predicted
twice counts twice in the precision's denominator, once at most as correct);
gold sentences are counted as listed in the rationales. A zero denominator
gives 0, and so does F1 when P + R is 0. `per_claim` scores each claim on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any

from scoring.core.tasks.line_blocks import Progress, Source, blocks, source_name
from workbench.core.file_input import NUL_PROBLEM, holds_nul, json_object
from workbench.core.problems import InputError, ProblemLog

LABELS = ("SUPPORT", "CONTRADICT")
ABSTRACT_SENTENCES = 3  # eval.py's max_abstract_sents

MEASURES = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")
KEYS = tuple(f"{measure}_{part}" for measure in MEASURES for part in ("precision", "recall", "f1"))


@dataclass(frozen=True)
class GoldAbstract:
    label: str
    rationales: tuple[tuple[int, ...], ...]  # as listed (a repeat counts as a gold sentence)


@dataclass(frozen=True)
class GoldClaim:
    id: int
    line: int
    evidence: dict[str, GoldAbstract]


@dataclass(frozen=True)
class PredictedAbstract:
    label: str
    sentences: tuple[int, ...]  # in the order given, repeats kept


@dataclass(frozen=True)
class PredictedClaim:
    id: int
    line: int
    evidence: dict[str, PredictedAbstract]


# --------------------------------------------------------------------------
# Reading


def _records(
    source: Source, log: ProblemLog, progress: Progress | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The file's JSON objects, one a line (blank lines skipped), read a block at a time."""
    for block in blocks(source, log, progress=progress):
        for offset, raw in enumerate(block.text.split("\n")[:-1]):
            if not raw.strip():
                continue
            number = block.first_line + offset
            record = json_object(raw, number, log)
            if record is None:
                continue
            # JSON carries a NUL only as the escape \u0000 (json refuses a raw one).
            if "\\u0000" in raw and holds_nul(record):
                log.add(number, NUL_PROBLEM)
                continue
            yield number, record


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _claim_id(record: dict[str, Any], number: int, log: ProblemLog) -> int | None:
    if "id" not in record:
        log.add(number, 'no "id": every line needs the integer id of its claim')
        return None
    if not _is_int(record["id"]):
        log.add(number, f"claim id {record['id']!r} is not an integer")
        return None
    return int(record["id"])


def _evidence(record: dict[str, Any], number: int, log: ProblemLog) -> dict[str, Any] | None:
    evidence = record.get("evidence")
    if not isinstance(evidence, dict):
        problem = 'no "evidence"' if "evidence" not in record else '"evidence" is not an object'
        log.add(number, f"{problem} (an object from document id to its evidence; {{}} for none)")
        return None
    return evidence


def _sentences(value: object, where: str, number: int, log: ProblemLog) -> tuple[int, ...] | None:
    if not isinstance(value, list) or not set(map(type, value)) <= {int}:  # bool is no index
        log.add(number, f'{where}: "sentences" must be a list of integer sentence indices')
        return None
    return tuple(value)


def _label(value: object, where: str, number: int, log: ProblemLog) -> str | None:
    if value not in LABELS:
        log.add(number, f"{where}: label {value!r} is neither SUPPORT nor CONTRADICT")
        return None
    return str(value)


def _gold_abstract(
    doc_id: str, entries: object, claim: int, number: int, log: ProblemLog
) -> GoldAbstract | None:
    where = f"claim {claim}, abstract {doc_id}"
    if not isinstance(entries, list) or not entries:
        log.add(
            number,
            f"{where}: expected a non-empty list of rationales"
            " (the evaluator crashes on an empty one)",
        )
        return None
    labels, rationales = [], []
    for entry in entries:
        if not isinstance(entry, dict):
            log.add(number, f'{where}: a rationale must be an object with "sentences" and "label"')
            return None
        sentences = _sentences(entry.get("sentences"), where, number, log)
        label = _label(entry.get("label"), where, number, log)
        if sentences is None or label is None:
            return None
        labels.append(label)
        rationales.append(sentences)
    if len(set(labels)) > 1:
        log.add(
            number,
            f"{where}: conflicting labels {' and '.join(sorted(set(labels)))}"
            " (one abstract has one label)",
        )
        return None
    owners: dict[int, int] = {}
    for index, rationale in enumerate(rationales):
        for sentence in set(rationale):
            if owners.setdefault(sentence, index) != index:
                log.add(
                    number,
                    f"{where}: sentence {sentence} is in two rationales"
                    " (the evaluator stops on an assertion when it is predicted)",
                )
                return None
    return GoldAbstract(labels[0], tuple(rationales))


def read_claims(source: Source, *, name: str | None = None) -> dict[int, GoldClaim]:
    """The gold claims by id, in file order."""
    log = ProblemLog(source_name(source, name))
    claims: dict[int, GoldClaim] = {}
    for number, record in _records(source, log):
        claim = _claim_id(record, number, log)
        evidence = _evidence(record, number, log)
        if claim is None or evidence is None:
            continue
        if claim in claims:
            log.add(number, f"claim {claim} again (first on line {claims[claim].line})")
            continue
        abstracts = {}
        for doc_id, entries in evidence.items():
            abstract = _gold_abstract(doc_id, entries, claim, number, log)
            if abstract is not None:
                abstracts[doc_id] = abstract
        if len(abstracts) == len(evidence):
            claims[claim] = GoldClaim(claim, number, abstracts)
    if log.ok and not claims:
        log.add(0, "no claims")
    if not log.ok:
        raise InputError.from_log(log)
    return claims


def prediction_lines(
    source: Source,
    gold: dict[int, GoldClaim],
    *,
    name: str | None = None,
    progress: Progress | None = None,
) -> Iterator[PredictedClaim]:
    """The predictions a line at a time, each checked: one line for every gold claim,
    no other. Once the file is all read, InputError with every problem."""
    log = ProblemLog(source_name(source, name))
    lines: dict[int, int] = {}  # each claim's line
    for number, record in _records(source, log, progress):
        claim = _claim_id(record, number, log)
        evidence = _evidence(record, number, log)
        if claim is None or evidence is None:
            continue
        if claim not in gold:
            log.add(number, f"claim {claim} is not one of the gold claims")
            continue
        if claim in lines:
            log.add(number, f"claim {claim} again (first on line {lines[claim]})")
            continue
        lines[claim] = number
        abstracts = {}
        for doc_id, prediction in evidence.items():
            where = f"claim {claim}, abstract {doc_id}"
            if not isinstance(prediction, dict):
                log.add(number, f'{where}: expected an object with "sentences" and "label"')
                continue
            sentences = _sentences(prediction.get("sentences"), where, number, log)
            label = _label(prediction.get("label"), where, number, log)
            if sentences is not None and label is not None:
                abstracts[doc_id] = PredictedAbstract(label, sentences)
        if len(abstracts) == len(evidence):
            yield PredictedClaim(claim, number, abstracts)
    if log.ok:
        missing = [claim for claim in gold if claim not in lines]
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
            log.add(
                0,
                f"no prediction for {len(missing)} gold claim{'s' if len(missing) > 1 else ''}"
                f" ({shown}): give each one a line, with empty evidence when nothing is predicted",
            )
    if not log.ok:
        raise InputError.from_log(log)


def read_predictions(
    source: Source, gold: dict[int, GoldClaim], *, name: str | None = None
) -> dict[int, PredictedClaim]:
    """The predictions by claim id, for small files; scoring reads them a line at a
    time (`prediction_lines`)."""
    return {claim.id: claim for claim in prediction_lines(source, gold, name=name)}


# --------------------------------------------------------------------------
# Scoring


@dataclass
class Counts:
    relevant_abstracts: int = 0
    retrieved_abstracts: int = 0
    correct_label_only: int = 0
    correct_rationalized: int = 0
    relevant_sentences: int = 0
    retrieved_sentences: int = 0
    correct_selection: int = 0
    correct_label: int = 0

    def __iadd__(self, other: Counts) -> Counts:
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def _divide(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def _prf(relevant: int, retrieved: int, correct: int, title: str) -> dict[str, float]:
    precision = _divide(correct, retrieved)
    recall = _divide(correct, relevant)
    f1 = _divide(2 * precision * recall, precision + recall)
    return {f"{title}_precision": precision, f"{title}_recall": recall, f"{title}_f1": f1}


def _correct_sentences(rationales: list[set[int]], predicted: set[int]) -> int:
    """Distinct predicted sentences whose whole gold rationale was predicted."""
    return sum(
        1
        for sentence in predicted
        for rationale in rationales
        if sentence in rationale and rationale <= predicted
    )


def claim_counts(claim: GoldClaim, predicted: PredictedClaim) -> Counts:
    """The evaluator's counts of one claim."""
    counts = Counts()
    counts.relevant_abstracts += len(claim.evidence)
    for abstract in claim.evidence.values():
        counts.relevant_sentences += sum(len(rationale) for rationale in abstract.rationales)
    for doc_id, guess in predicted.evidence.items():
        counts.retrieved_abstracts += 1
        counts.retrieved_sentences += len(guess.sentences)
        truth = claim.evidence.get(doc_id)
        if truth is None:
            continue
        rationales = [set(rationale) for rationale in truth.rationales]
        correct = _correct_sentences(rationales, set(guess.sentences))
        counts.correct_selection += correct
        if guess.label != truth.label:
            continue
        counts.correct_label += correct
        counts.correct_label_only += 1
        kept = max(ABSTRACT_SENTENCES, min(len(rationale) for rationale in rationales))
        first = set(guess.sentences[:kept])
        if any(rationale <= first for rationale in rationales):
            counts.correct_rationalized += 1
    return counts


def count(gold: dict[int, GoldClaim], predictions: dict[int, PredictedClaim]) -> Counts:
    counts = Counts()
    for claim in gold.values():
        counts += claim_counts(claim, predictions[claim.id])
    return counts


def scores_of(counts: Counts) -> dict[str, float]:
    """The evaluator's twelve numbers of the counts, in its order (`KEYS`)."""
    result: dict[str, float] = {}
    abstracts = (counts.relevant_abstracts, counts.retrieved_abstracts)
    sentences = (counts.relevant_sentences, counts.retrieved_sentences)
    result |= _prf(*abstracts, counts.correct_label_only, "abstract_label_only")
    result |= _prf(*abstracts, counts.correct_rationalized, "abstract_rationalized")
    result |= _prf(*sentences, counts.correct_selection, "sentence_selection")
    result |= _prf(*sentences, counts.correct_label, "sentence_label")
    return result


def score(gold: dict[int, GoldClaim], predictions: dict[int, PredictedClaim]) -> dict[str, float]:
    """The evaluator's twelve numbers, in its order (`KEYS`)."""
    return scores_of(count(gold, predictions))


def per_claim(
    gold: dict[int, GoldClaim], predictions: dict[int, PredictedClaim]
) -> dict[int, dict[str, float]]:
    """Each claim's twelve numbers, in gold order: the evaluator's scores of that claim
    alone (a claim with no gold evidence and nothing predicted gets zeros, as a file
    of that one claim would)."""
    return {
        claim: scores_of(claim_counts(truth, predictions[claim])) for claim, truth in gold.items()
    }


def score_lines(
    gold: dict[int, GoldClaim], predictions: Iterable[PredictedClaim]
) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    """The twelve numbers and each claim's (`score`, `per_claim`) of predictions given
    one at a time: memory for the gold and each claim's numbers, not the file."""
    total = Counts()
    claims: dict[int, Counts] = {}
    for predicted in predictions:
        counts = claims[predicted.id] = claim_counts(gold[predicted.id], predicted)
        total += counts
    return scores_of(total), {claim: scores_of(claims[claim]) for claim in gold}


def text_lines(result: dict[str, float]) -> list[str]:
    """A table: one row a measure, precision, recall and F1 to four decimals."""
    width = max(map(len, MEASURES))
    lines = [f"{'':{width}}  precision  recall      f1"]
    for measure in MEASURES:
        p, r, f = (result[f"{measure}_{part}"] for part in ("precision", "recall", "f1"))
        lines.append(f"{measure:{width}}  {p:9.4f}  {r:6.4f}  {f:6.4f}")
    return lines
