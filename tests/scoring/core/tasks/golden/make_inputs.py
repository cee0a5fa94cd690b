"""Write the inputs of the golden cases (run_official.py then scores them officially).

    python tests/scoring/core/tasks/golden/make_inputs.py [--out DIR]

Every case is a directory of input files; the same seed always writes the
same bytes. Hand-made cases exercise one rule each (named after it), random
ones mix everything. Layout:

    codiesp/<case>/        gold.tsv pred.tsv codes.tsv                (D/P)
    codiesp-x/<case>/      gold.tsv pred.tsv codes_D.tsv codes_P.tsv  (X)
    codiesp-crash/<case>/  the inputs the official scripts crash on or misread
    scifact/<case>/        claims.jsonl preds.jsonl
    scifact-crash/<case>/  likewise
    nuggets/<case>/        assignments.jsonl (nuggetizer's assign output)
    nuggets-unusual/<case>/  files nuggetizer scores or crashes on that we refuse or read differently
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _write(directory: Path, name: str, lines: Sequence[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _tsv(rows: Sequence[Sequence[object]]) -> list[str]:
    return ["\t".join(map(str, row)) for row in rows]


# --------------------------------------------------------------------------
# CodiEsp D/P


def _codes_file(codes: Sequence[str]) -> list[str]:
    """A valid-code list as distributed: code, Spanish and English descriptions."""
    return _tsv([(code, f"descripción {code}", f"description {code}") for code in codes])


def _icd_code(rng: random.Random) -> str:
    letter = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    code = f"{letter}{rng.randint(0, 99):02d}"
    if rng.random() < 0.7:
        code += "." + "".join(rng.choice("0123456789X") for _ in range(rng.randint(1, 3)))
    return code.lower()


def _universe(rng: random.Random, size: int) -> list[str]:
    codes: set[str] = set()
    while len(codes) < size:
        codes.add(_icd_code(rng))
    return sorted(codes)


def _case_id(rng: random.Random, number: int) -> str:
    return f"S{rng.randint(1000, 9999)}-{rng.randint(10, 99)}{number:04d}-{rng.randint(1, 4)}"


def _shout(rng: random.Random, code: str, rate: float) -> str:
    return code.upper() if rng.random() < rate else code


def random_ranked_case(seed: int, cases: int) -> dict[str, list[str]]:
    """Gold with repeated mentions and codes outside the list; a run with upper-case,
    repeated and invalid codes, cases missing either side, interleaved lines."""
    rng = random.Random(seed)
    universe = _universe(rng, 400)
    valid = universe[:320]  # the rest appear in files but are not valid
    case_ids = sorted({_case_id(rng, n) for n in range(cases)})
    gold_rows: list[tuple[str, str]] = []
    blocks: list[list[tuple[str, str]]] = []
    for case in case_ids:
        in_gold, in_run = rng.random() < 0.9, rng.random() < 0.85
        truth = rng.sample(universe, rng.randint(1, 12))
        if in_gold:
            for code in truth:
                for _ in range(rng.choice((1, 1, 1, 2, 3))):
                    gold_rows.append((case, _shout(rng, code, 0.1)))
        if in_run:
            guesses = [code for code in truth if rng.random() < 0.6]
            guesses += rng.sample(universe, rng.randint(0, 25))
            rng.shuffle(guesses)
            guesses += [rng.choice(guesses) for _ in range(rng.randint(0, 3)) if guesses]
            guesses += [f"zz{rng.randint(0, 99)}" for _ in range(rng.randint(0, 2))]
            if rng.random() < 0.2:
                rng.shuffle(guesses)
            if guesses:
                blocks.append([(case, _shout(rng, code, 0.15)) for code in guesses])
    if rng.random() < 0.5:
        rng.shuffle(gold_rows)
    run_rows = _interleave(rng, blocks)
    return {
        "gold.tsv": _tsv(gold_rows),
        "pred.tsv": _tsv(run_rows),
        "codes.tsv": _codes_file([_shout(rng, code, 0.3) for code in valid]),
    }


def _interleave(rng: random.Random, blocks: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """Mostly one case after the other; some cases' lines merged at random."""
    rows: list[tuple[str, str]] = []
    index = 0
    while index < len(blocks):
        if rng.random() < 0.3 and index + 1 < len(blocks):
            first, second = list(blocks[index]), list(blocks[index + 1])
            while first or second:
                source = first if first and (not second or rng.random() < 0.5) else second
                rows.append(source.pop(0))
            index += 2
        else:
            rows.extend(blocks[index])
            index += 1
    return rows


def ranked_cases() -> dict[str, dict[str, list[str]]]:
    cases: dict[str, dict[str, list[str]]] = {}
    # Hand-checked: a ranks x3 x1 x9 x2 (AP 2.75/3), b x9 x1 (1/2), c is not in the gold.
    cases["hand_small"] = {
        "gold.tsv": _tsv([("a", "x1"), ("a", "x2"), ("a", "x3"), ("b", "x1")]),
        "pred.tsv": _tsv(
            [
                ("a", "X3"),
                ("b", "x9"),
                ("a", "x1"),
                ("b", "x1"),
                ("a", "x9"),
                ("a", "x2"),
                ("a", "x3"),
                ("c", "x1"),
            ]
        ),
        "codes.tsv": ["x1", "x2", "X3", "x9"],
    }
    # A repeat of a code ranks nowhere; an invalid code neither (x2 lands at rank 2).
    cases["repeats_and_invalid_before_ranking"] = {
        "gold.tsv": _tsv([("a", "x1"), ("a", "x2"), ("a", "x2"), ("a", "bad")]),
        "pred.tsv": _tsv([("a", "x1"), ("a", "X1"), ("a", "nope"), ("a", "x2"), ("a", "x1")]),
        "codes.tsv": ["x1", "x2"],
    }
    # Nothing right anywhere: F1 is set to 0 (printed "0").
    cases["nothing_found"] = {
        "gold.tsv": _tsv([("a", "x1"), ("b", "x2")]),
        "pred.tsv": _tsv([("a", "x2"), ("b", "x1"), ("c", "x1")]),
        "codes.tsv": ["x1", "x2"],
    }
    # No valid prediction at all: MAP and precision are NaN.
    cases["no_valid_prediction"] = {
        "gold.tsv": _tsv([("a", "x1"), ("b", "x2")]),
        "pred.tsv": _tsv([("a", "y1"), ("b", "y2")]),
        "codes.tsv": ["x1", "x2"],
    }
    # 1,200 valid codes in one case, relevant ones at 999, 1000, 1001 and 1200:
    # MAP stops at 1000, precision and recall do not.
    deep = [f"c{n:04d}" for n in range(1, 1201)]
    cases["deeper_than_1000"] = {
        "gold.tsv": _tsv([("a", deep[998]), ("a", deep[999]), ("a", deep[1000]), ("a", deep[1199])])
        + _tsv([("b", "c0001")]),
        "pred.tsv": _tsv([("a", code) for code in deep] + [("b", "c0002"), ("b", "c0001")]),
        "codes.tsv": deep,
    }
    sizes = {1: 12, 2: 60, 3: 150, 4: 300, 5: 40}
    for seed, size in sizes.items():
        cases[f"random_{seed}"] = random_ranked_case(seed, size)
    return cases


# --------------------------------------------------------------------------
# CodiEsp X


def _position(fragments: Sequence[tuple[int, int]]) -> str:
    return ";".join(f"{start} {end}" for start, end in fragments)


def random_x_case(seed: int, cases: int) -> dict[str, list[str]]:
    """References with several fragments and several per code; predictions around
    the tolerance (offsets -3..14 on each side), wrong codes, invalid codes."""
    rng = random.Random(seed)
    universe = _universe(rng, 200)
    valid_d, valid_p = universe[:80], universe[80:160]
    gold_rows, run_rows = [], []
    for case in sorted({_case_id(rng, n) for n in range(cases)}):
        in_gold, in_run = rng.random() < 0.9, rng.random() < 0.85
        for code in rng.sample(universe, rng.randint(1, 8)):
            label = "DIAGNOSTICO" if code in valid_d else "PROCEDIMIENTO"
            for _ in range(rng.choice((1, 1, 2, 3))):
                start = rng.randint(0, 3000)
                fragments = [(start, start + rng.randint(3, 40))]
                if rng.random() < 0.2:
                    gap = fragments[0][1] + rng.randint(1, 20)
                    fragments.append((gap, gap + rng.randint(2, 15)))
                if in_gold:
                    text = f"mención {code}"
                    gold_rows.append(
                        (case, label, _shout(rng, code, 0.1), text, _position(fragments))
                    )
                if in_run and rng.random() < 0.7:
                    begin = fragments[0][0] - rng.randint(-3, 14)
                    end = max(begin, fragments[-1][1] + rng.randint(-3, 14))
                    predicted = code if rng.random() < 0.85 else rng.choice(universe)
                    if begin >= 0:
                        run_rows.append(
                            (case, f"{begin} {end}", label, _shout(rng, predicted, 0.1))
                        )
        if in_run:
            for _ in range(rng.randint(0, 3)):
                begin = rng.randint(0, 3000)
                code = rng.choice(universe) if rng.random() < 0.8 else f"zz{rng.randint(0, 9)}"
                run_rows.append((case, f"{begin} {begin + 12}", "DIAGNOSTICO", code))
    if rng.random() < 0.5:
        rng.shuffle(run_rows)
    return {
        "gold.tsv": _tsv(gold_rows),
        "pred.tsv": _tsv(run_rows),
        "codes_D.tsv": _codes_file(valid_d),
        "codes_P.tsv": _codes_file([_shout(rng, code, 0.3) for code in valid_p]),
    }


def x_cases() -> dict[str, dict[str, list[str]]]:
    cases: dict[str, dict[str, list[str]]] = {}
    d, p = "DIAGNOSTICO", "PROCEDIMIENTO"
    # a: x1 found through its discontinuous reference (200..220 covered by 190..230),
    # x2 within 10 before and 1 after; b predicted, nothing found (NaN, not 0);
    # c not predicted; d not in the gold (counts in the micro precision only).
    cases["hand_small"] = {
        "gold.tsv": _tsv(
            [
                ("a", d, "x1", "t", "100 110"),
                ("a", d, "x1", "t", "200 210;215 220"),
                ("a", p, "x2", "t", "50 60"),
                ("b", d, "x1", "t", "10 20"),
                ("c", d, "x9", "t", "10 20"),
            ]
        ),
        "pred.tsv": _tsv(
            [
                ("a", "190 230", d, "X1"),
                ("a", "40 61", d, "x2"),
                ("b", "0 50", d, "x1"),
                ("d", "1 2", d, "x1"),
            ]
        ),
        "codes_D.tsv": ["x1", "x2"],
        "codes_P.tsv": ["x9"],
    }
    # Tolerance edges against gold 100..120: 10 either side counts, 11 does not,
    # a span inside the reference does not; the label is not compared.
    edges = [(90, 130, "k1"), (89, 120, "k2"), (100, 131, "k3"), (101, 120, "k4")]
    edges += [(100, 119, "k5"), (95, 125, "k6")]
    cases["tolerance_edges"] = {
        "gold.tsv": _tsv([("a", d, code, "t", "100 120") for *_, code in edges]),
        "pred.tsv": _tsv([("a", f"{s} {e}", p, code) for s, e, code in edges]),
        "codes_D.tsv": [code for *_, code in edges],
        "codes_P.tsv": ["q1"],
    }
    # Nothing found: F1 set to 0.
    cases["nothing_found"] = {
        "gold.tsv": _tsv([("a", d, "x1", "t", "10 20")]),
        "pred.tsv": _tsv([("a", "500 510", d, "x1")]),
        "codes_D.tsv": ["x1"],
        "codes_P.tsv": ["q1"],
    }
    for seed, size in {11: 10, 12: 50, 13: 120, 14: 200}.items():
        cases[f"random_{seed}"] = random_x_case(seed, size)
    return cases


def crash_cases() -> dict[str, dict[str, list[str]]]:
    """Inputs the official CodiEsp scripts crash on or misread."""
    gold = _tsv([("a", "x1"), ("a", "x2"), ("b", "x1")])
    x_gold = _tsv([("a", "DIAGNOSTICO", "x1", "t", "10 20")])
    return {
        "empty_run": {"gold.tsv": gold, "pred.tsv": [], "codes.tsv": ["x1", "x2"]},
        "empty_gold": {"gold.tsv": [], "pred.tsv": gold, "codes.tsv": ["x1", "x2"]},
        "three_column_run": {
            "gold.tsv": gold,
            "pred.tsv": _tsv([("z", "a", "x1"), ("z", "a", "x2")]),
            "codes.tsv": ["x1", "x2"],
        },
        "x_discontinuous_run": {
            "gold.tsv": x_gold,
            "pred.tsv": _tsv([("a", "10 15;17 20", "DIAGNOSTICO", "x1")]),
            "codes_D.tsv": ["x1"],
            "codes_P.tsv": ["q1"],
        },
        "x_three_column_run": {
            "gold.tsv": x_gold,
            "pred.tsv": _tsv([("a", "10 20", "x1")]),
            "codes_D.tsv": ["x1"],
            "codes_P.tsv": ["q1"],
        },
        "x_empty_run": {
            "gold.tsv": x_gold,
            "pred.tsv": [],
            "codes_D.tsv": ["x1"],
            "codes_P.tsv": ["q1"],
        },
        # Not bad input: we score it (precision NaN, recall 0), the X script crashes.
        "x_no_valid_code": {
            "gold.tsv": x_gold,
            "pred.tsv": _tsv([("a", "10 20", "DIAGNOSTICO", "nope")]),
            "codes_D.tsv": ["x1"],
            "codes_P.tsv": ["q1"],
        },
    }


# --------------------------------------------------------------------------
# SciFact


def _jsonl(records: Sequence[object]) -> list[str]:
    return [json.dumps(record) for record in records]


def _claim(claim_id: int, evidence: dict[str, list[tuple[list[int], str]]]) -> dict[str, object]:
    return {
        "id": claim_id,
        "claim": f"claim {claim_id}",
        "evidence": {
            doc: [{"sentences": sentences, "label": label} for sentences, label in rationales]
            for doc, rationales in evidence.items()
        },
        "cited_doc_ids": [int(doc) for doc in evidence],
    }


def _prediction(claim_id: int, evidence: dict[str, tuple[list[int], str]]) -> dict[str, object]:
    return {
        "id": claim_id,
        "evidence": {
            doc: {"sentences": sentences, "label": label}
            for doc, (sentences, label) in evidence.items()
        },
    }


def random_scifact_case(seed: int, claims: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    labels = ("SUPPORT", "CONTRADICT")
    gold, preds = [], []
    for claim_id in sorted(rng.sample(range(1, 2000), claims)):
        evidence: dict[str, list[tuple[list[int], str]]] = {}
        for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
            doc = str(rng.randint(10_000, 99_999_999))
            label = rng.choice(labels)
            pool = rng.sample(range(30), rng.randint(1, 12))
            rationales = []
            while pool and len(rationales) < 3:
                size = min(len(pool), rng.choice((1, 1, 2, 2, 3, 4, 5)))
                rationales.append((sorted(pool[:size]), label))
                pool = pool[size:]
            evidence[doc] = rationales
        gold.append(_claim(claim_id, evidence))
        predicted: dict[str, tuple[list[int], str]] = {}
        for doc, rationales in evidence.items():
            if rng.random() < 0.75:
                sentences = [s for rat, _ in rationales for s in rat if rng.random() < 0.75]
                sentences += rng.sample(range(30), rng.randint(0, 3))
                if rng.random() < 0.3:
                    rng.shuffle(sentences)
                if sentences and rng.random() < 0.15:
                    sentences.insert(rng.randint(0, len(sentences)), rng.choice(sentences))
                label = rationales[0][1] if rng.random() < 0.75 else rng.choice(labels)
                predicted[doc] = (sentences, label)
        for _ in range(rng.choice((0, 0, 1, 2))):
            sentences = rng.sample(range(30), rng.randint(0, 4))
            predicted[str(rng.randint(10_000, 99_999_999))] = (sentences, rng.choice(labels))
        preds.append(_prediction(claim_id, predicted))
    return {"claims.jsonl": _jsonl(gold), "preds.jsonl": _jsonl(preds)}


def scifact_cases() -> dict[str, dict[str, list[str]]]:
    s, c = "SUPPORT", "CONTRADICT"
    cases: dict[str, dict[str, list[str]]] = {}
    # Our own worked example: abstract 7 has rationales [2, 3] and [9], abstract 8 one [1];
    # the run predicts 7 with [3, 9, 14] and 5 (not gold): abstracts P = R = 1/2,
    # sentences 1 of 5 predicted, 1 of 4 gold.
    cases["worked_example"] = {
        "claims.jsonl": _jsonl([_claim(4, {"7": [([2, 3], s), ([9], s)], "8": [([1], s)]})]),
        "preds.jsonl": _jsonl([_prediction(4, {"7": ([3, 9, 14], s), "5": ([0, 6], c)})]),
    }
    # Only the first three predicted sentences count for the abstract, unless the
    # shortest gold rationale is longer: then that many.
    cases["first_three_sentences"] = {
        "claims.jsonl": _jsonl(
            [
                _claim(1, {"10": [([4], s)]}),
                _claim(2, {"20": [([0, 1, 2, 3, 4], c)]}),
                _claim(3, {"30": [([0, 1, 2, 3, 4], s), ([8, 9, 10, 11], s)]}),
            ]
        ),
        "preds.jsonl": _jsonl(
            [
                _prediction(1, {"10": ([0, 1, 2, 4], s)}),
                _prediction(2, {"20": ([4, 3, 2, 1, 0, 7], c)}),
                _prediction(3, {"30": ([8, 9, 10, 12, 11], s)}),
            ]
        ),
    }
    # Repeated sentences count in the denominator; repeats among the first three
    # leave fewer distinct sentences for the abstract.
    cases["repeated_sentences"] = {
        "claims.jsonl": _jsonl([_claim(1, {"10": [([1, 2], s)]}), _claim(2, {"5": [([3], c)]})]),
        "preds.jsonl": _jsonl(
            [
                _prediction(1, {"10": ([1, 1, 1, 2], s)}),
                _prediction(2, {"5": ([3, 3], s)}),
            ]
        ),
    }
    # Document ids are strings: "012" is not "12".
    cases["document_ids_are_strings"] = {
        "claims.jsonl": _jsonl([_claim(1, {"12": [([0], s)]})]),
        "preds.jsonl": _jsonl([_prediction(1, {"012": ([0], s)})]),
    }
    # Nothing predicted: every number is 0 (no NaN).
    cases["nothing_predicted"] = {
        "claims.jsonl": _jsonl([_claim(1, {"12": [([0], s)]}), _claim(2, {})]),
        "preds.jsonl": _jsonl([_prediction(1, {}), _prediction(2, {})]),
    }
    for seed, size in {21: 5, 22: 40, 23: 120, 24: 300}.items():
        cases[f"random_{seed}"] = random_scifact_case(seed, size)
    return cases


def scifact_crash_cases() -> dict[str, dict[str, list[str]]]:
    s = "SUPPORT"
    claims = _jsonl([_claim(1, {"10": [([1], s)]}), _claim(2, {"20": [([2], s)]})])
    good = _jsonl([_prediction(1, {"10": ([1], s)}), _prediction(2, {})])
    return {
        "predictions_reordered": {"claims.jsonl": claims, "preds.jsonl": good[::-1]},
        "missing_claim": {"claims.jsonl": claims, "preds.jsonl": good[:1]},
        "unknown_claim": {
            "claims.jsonl": claims,
            "preds.jsonl": [*good, *_jsonl([_prediction(3, {})])],
        },
        "unallowed_label": {
            "claims.jsonl": claims,
            "preds.jsonl": _jsonl([_prediction(1, {"10": ([1], "REFUTES")}), _prediction(2, {})]),
        },
        "conflicting_gold_labels": {
            "claims.jsonl": _jsonl(
                [_claim(1, {"10": [([1], s), ([2], "CONTRADICT")]}), _claim(2, {})]
            ),
            "preds.jsonl": good,
        },
        "empty_gold_rationales": {
            "claims.jsonl": _jsonl([_claim(1, {"10": []}), _claim(2, {})]),
            "preds.jsonl": good,
        },
        "sentence_in_two_rationales": {
            "claims.jsonl": _jsonl([_claim(1, {"10": [([1, 2], s), ([2], s)]}), _claim(2, {})]),
            "preds.jsonl": _jsonl([_prediction(1, {"10": ([2], s)}), _prediction(2, {})]),
        },
        "malformed_json": {"claims.jsonl": claims, "preds.jsonl": [good[0], good[1][:-1]]},
        "blank_line": {"claims.jsonl": claims, "preds.jsonl": [good[0], "", good[1]]},
    }


# --------------------------------------------------------------------------
# Nugget assignments (nuggetizer's assign output)

V, OK = "vital", "okay"
S, PS, NS = "support", "partial_support", "not_support"


def _assigned(
    run: str, qid: str, nuggets: Sequence[tuple[str, str]], **extra: object
) -> dict[str, object]:
    """One record as nuggetizer's answers-mode assign writes it (other keys ignored)."""
    return {
        "query": f"query {qid}",
        "qid": qid,
        **extra,
        "run_id": run,
        "nuggets": [
            {"text": f"nugget {index} of {qid}", "importance": importance, "assignment": label}
            for index, (importance, label) in enumerate(nuggets)
        ],
    }


def random_nugget_case(seed: int, runs: int, topics: int) -> dict[str, list[str]]:
    """Runs that answer most topics (each run its own subset), every topic's nugget list
    shared by the runs that answer it, some topics without vital nuggets or without
    any, records of the runs interleaved, extra keys as nuggetizer writes them."""
    rng = random.Random(seed)
    ids = sorted(
        {str(rng.choice((rng.randint(1, 400), rng.randint(10**6, 10**7)))) for _ in range(topics)}
    )
    ids += [f"2024-{rng.randint(10000, 99999)}" for _ in range(3)]
    nuggets = {}
    for qid in ids:
        size = rng.choice((0, 1, 2, 3, 5, 8, 12, 20, 30)) if rng.random() < 0.9 else 0
        vital_rate = rng.choice((0.0, 0.2, 0.5, 0.8, 1.0))
        nuggets[qid] = [V if rng.random() < vital_rate else OK for _ in range(size)]
    records = []
    for number in range(runs):
        run = f"run-{seed}-{number}" if number % 3 else f"Team{number}_rag.{seed}"
        coverage = rng.choice((1.0, 0.95, 0.7, 0.3))
        weights = [rng.random() for _ in range(3)]
        answered = [qid for qid in ids if rng.random() < coverage] or ids[:1]
        for qid in answered:
            labels = rng.choices((S, PS, NS), weights=weights, k=len(nuggets[qid]))
            extra: dict[str, object] = {}
            if rng.random() < 0.3:
                extra = {"answer_text": "ün answer", "response_length": rng.randint(0, 400)}
            records.append(
                _assigned(run, qid, list(zip(nuggets[qid], labels, strict=True)), **extra)
            )
    rng.shuffle(records)
    return {"assignments.jsonl": _jsonl(records)}


def nugget_cases() -> dict[str, dict[str, list[str]]]:
    cases: dict[str, dict[str, list[str]]] = {}
    # Hand-checked. Run a, topic 1 (vital S, vital PS, okay S, okay NS):
    #   all (2 + 0.5) / 4 = 0.625, strict_all 2/4, vital 1.5/2, strict_vital 1/2,
    #   weighted (1 + 0.5 + 0.5 x 1) / (2 + 2 x 0.5) = 2/3, strict_weighted 1.5/3 = 0.5.
    # Run a, topic 2 (okay PS, okay S): vital and strict_vital 0.0 (no vital nugget),
    #   all 0.75, strict_all 0.5, weighted (0.25 + 0.5) / 1 = 0.75, strict_weighted 0.5.
    # Run a's means: all (0.625 + 0.75) / 2 = 0.6875, vital (0.75 + 0) / 2 = 0.375.
    # Run b answers topic 1 only (vital NS, vital NS, okay PS, okay PS): all 0.25,
    #   vital 0, weighted (0.25 + 0.25) / 3; its means are over that one topic.
    topic_1 = [(V, S), (V, PS), (OK, S), (OK, NS)]
    cases["hand_small"] = {
        "assignments.jsonl": _jsonl(
            [
                _assigned("a", "1", topic_1),
                _assigned("a", "2", [(OK, PS), (OK, S)]),
                _assigned("b", "1", [(V, NS), (V, NS), (OK, PS), (OK, PS)]),
            ]
        )
    }
    # A topic without vital nuggets scores 0.0 on vital and strict_vital, even when
    # every nugget is supported; the run's vital mean counts that 0.0.
    cases["no_vital_nuggets"] = {
        "assignments.jsonl": _jsonl(
            [
                _assigned("r", "7", [(OK, S), (OK, S), (OK, S)]),
                _assigned("r", "8", [(V, S), (OK, NS)]),
            ]
        )
    }
    # An answer with no nugget supported, and one whose topic has no nuggets at all
    # (an empty list): 0.0 everywhere, and both count in the run's means.
    cases["nothing_assigned"] = {
        "assignments.jsonl": _jsonl(
            [
                _assigned("r", "1", [(V, NS), (OK, NS)]),
                _assigned("r", "2", []),
                _assigned("r", "3", [(V, S), (V, S)]),
                _assigned("s", "2", []),
            ]
        )
    }
    # Runs answer different topics: each run's mean is over the topics it answered
    # (x: 1, 2, 3; y: 1 only; z: 2 and 3, written before x's), a missing topic counts nothing.
    three = {"1": [(V, S), (OK, NS)], "2": [(V, PS), (OK, S)], "3": [(V, NS), (V, S), (OK, PS)]}
    cases["runs_missing_topics"] = {
        "assignments.jsonl": _jsonl(
            [
                _assigned("z", "3", three["3"]),
                _assigned("z", "2", three["2"]),
                *(_assigned("x", qid, labels) for qid, labels in three.items()),
                _assigned("y", "1", [(V, NS), (OK, S)]),
            ]
        )
    }
    for seed, (runs, topics) in {31: (2, 4), 32: (5, 30), 33: (8, 60), 34: (4, 200)}.items():
        cases[f"random_{seed}"] = random_nugget_case(seed, runs, topics)
    return cases


def nugget_unusual_cases() -> dict[str, dict[str, list[str]]]:
    """Files nuggetizer scores (or crashes on) that we refuse, or read differently."""
    good = _assigned("r", "1", [(V, S), (OK, PS)])

    def nuggets(*pairs: tuple[str, str]) -> list[str]:
        return _jsonl([good, _assigned("r", "2", list(pairs))])

    return {
        "capitalised_labels": {"assignments.jsonl": nuggets((V, "Support"), ("Vital", S))},
        "failed_assignment": {"assignments.jsonl": nuggets((V, "failed"), (OK, S))},
        "failed_importance": {"assignments.jsonl": nuggets(("failed", S), (V, S))},
        "other_label": {"assignments.jsonl": nuggets((V, "partial support"), (OK, "supported"))},
        "run_topic_twice": {"assignments.jsonl": [*_jsonl([good]), *nuggets((V, NS))]},
        "integer_qid": {
            "assignments.jsonl": _jsonl([good, {**_assigned("r", "2", [(V, S)]), "qid": 2}])
        },
        "no_run_id": {
            "assignments.jsonl": _jsonl(
                [{key: value for key, value in good.items() if key != "run_id"}]
            )
        },
        "blank_line": {"assignments.jsonl": [_jsonl([good])[0], "", *_jsonl([good])[1:]]},
        "malformed_json": {"assignments.jsonl": [_jsonl([good])[0][:-1]]},
        "empty_file": {"assignments.jsonl": []},
    }


# --------------------------------------------------------------------------


GROUPS = (
    "codiesp",
    "codiesp-x",
    "codiesp-crash",
    "scifact",
    "scifact-crash",
    "nuggets",
    "nuggets-unusual",
)


def write_all(out: Path) -> None:
    groups = {
        "codiesp": ranked_cases(),
        "codiesp-x": x_cases(),
        "codiesp-crash": crash_cases(),
        "scifact": scifact_cases(),
        "scifact-crash": scifact_crash_cases(),
        "nuggets": nugget_cases(),
        "nuggets-unusual": nugget_unusual_cases(),
    }
    for group, cases in groups.items():
        for case, files in cases.items():
            directory = out / group / case
            if directory.exists():
                for old in directory.iterdir():
                    if old.is_file() and old.suffix in {".tsv", ".jsonl"}:
                        old.unlink()
            for name, lines in files.items():
                _write(directory, name, lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (default: here)")
    parser.add_argument("--clean", action="store_true", help="remove the case directories first")
    args = parser.parse_args(argv)
    if args.clean:
        for group in GROUPS:
            shutil.rmtree(args.out / group, ignore_errors=True)
    write_all(args.out)


if __name__ == "__main__":
    main()
