"""SciFact scoring rules, one hand-computed case each; readers' errors; a brute-force property."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.tasks import scifact
from workbench.core.problems import InputError

S, C = "SUPPORT", "CONTRADICT"


def _lines(records) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def _gold(claim_id, evidence):
    return {
        "id": claim_id,
        "evidence": {
            doc: [{"sentences": sentences, "label": label} for sentences, label in rationales]
            for doc, rationales in evidence.items()
        },
    }


def _pred(claim_id, evidence):
    return {
        "id": claim_id,
        "evidence": {doc: {"sentences": s, "label": label} for doc, (s, label) in evidence.items()},
    }


def _score(gold_records, pred_records) -> dict[str, float]:
    gold = scifact.read_claims(_lines(gold_records), name="claims.jsonl")
    return scifact.score(gold, scifact.read_predictions(_lines(pred_records), gold, name="p.jsonl"))


def test_the_worked_example():
    """Abstract 7 (rationales [2, 3] and [9]) predicted with [3, 9, 14], abstract 8 missed,
    abstract 5 predicted though not gold."""
    result = _score(
        [_gold(4, {"7": [([2, 3], S), ([9], S)], "8": [([1], S)]})],
        [_pred(4, {"7": ([3, 9, 14], S), "5": ([0, 6], C)})],
    )
    assert result["abstract_label_only_precision"] == 1 / 2
    assert result["abstract_rationalized_recall"] == 1 / 2
    assert result["sentence_selection_precision"] == 1 / 5  # only 9: [2, 3] lacks 2
    assert result["sentence_selection_recall"] == 1 / 4
    assert result["sentence_label_f1"] == 2 * (1 / 5) * (1 / 4) / (1 / 5 + 1 / 4)


def test_abstract_rationalized_keeps_the_first_three_sentences():
    gold = [_gold(1, {"10": [([4], S)]})]
    assert _score(gold, [_pred(1, {"10": ([0, 1, 2, 4], S)})])["abstract_rationalized_f1"] == 0
    assert _score(gold, [_pred(1, {"10": ([0, 1, 4], S)})])["abstract_rationalized_f1"] == 1


def test_abstract_rationalized_keeps_more_when_the_shortest_rationale_is_longer():
    gold = [_gold(1, {"10": [([0, 1, 2, 3], S)]})]
    assert _score(gold, [_pred(1, {"10": ([3, 2, 1, 0, 9], S)})])["abstract_rationalized_f1"] == 1
    assert _score(gold, [_pred(1, {"10": ([3, 2, 1, 9, 0], S)})])["abstract_rationalized_f1"] == 0


def test_a_wrong_label_earns_sentences_selection_but_not_label():
    result = _score([_gold(1, {"10": [([1], S)]})], [_pred(1, {"10": ([1], C)})])
    assert result["sentence_selection_f1"] == 1.0
    assert result["sentence_label_f1"] == 0.0
    assert result["abstract_label_only_f1"] == 0.0


def test_repeated_sentences_count_in_the_denominator_once_as_correct():
    result = _score([_gold(1, {"10": [([1, 2], S)]})], [_pred(1, {"10": ([1, 1, 1, 2], S)})])
    assert result["sentence_selection_precision"] == 2 / 4
    assert result["sentence_selection_recall"] == 1.0
    # the first three are {1}: the rationale [1, 2] is not in them
    assert result["abstract_rationalized_precision"] == 0.0


def test_document_ids_compare_as_strings():
    result = _score([_gold(1, {"12": [([0], S)]})], [_pred(1, {"012": ([0], S)})])
    assert result["abstract_label_only_precision"] == 0.0


def test_empty_denominators_give_zero():
    result = _score([_gold(1, {})], [_pred(1, {})])
    assert set(result.values()) == {0.0}
    assert list(result) == list(scifact.KEYS)


# --------------------------------------------------------------------------
# Readers


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"id": 1}\n', 'claims.jsonl:1: no "evidence"'),
        ('{"evidence": {}}\n', 'claims.jsonl:1: no "id"'),
        ('{"id": "1", "evidence": {}}\n', "claims.jsonl:1: claim id '1' is not an integer"),
        ('{"id": true, "evidence": {}}\n', "claims.jsonl:1: claim id True is not an integer"),
        ('{"id": 1, "evidence": []}\n', 'claims.jsonl:1: "evidence" is not an object'),
        ('{"id": 1, "evidence": {}}\n{"id": 1, "evidence": {}}\n', "claims.jsonl:2: claim 1 again"),
        (
            '{"id": 1, "evidence": {"5": []}}\n',
            "claims.jsonl:1: claim 1, abstract 5: expected a non-empty list",
        ),
        (
            '{"id": 1, "evidence": {"5": [{"sentences": [1], "label": "NOT_ENOUGH_INFO"}]}}\n',
            "claims.jsonl:1: claim 1, abstract 5: label 'NOT_ENOUGH_INFO' is neither",
        ),
        (
            '{"id": 1, "evidence": {"5": [{"sentences": ["1"], "label": "SUPPORT"}]}}\n',
            'claims.jsonl:1: claim 1, abstract 5: "sentences" must be a list of integer',
        ),
        (
            '{"id": 1, "evidence": {"5": [{"sentences": [1], "label": "SUPPORT"}, {"sentences": [2], "label": "CONTRADICT"}]}}\n',
            "claims.jsonl:1: claim 1, abstract 5: conflicting labels CONTRADICT and SUPPORT",
        ),
        (
            '{"id": 1, "evidence": {"5": [{"sentences": [1, 2], "label": "SUPPORT"}, {"sentences": [2], "label": "SUPPORT"}]}}\n',
            "claims.jsonl:1: claim 1, abstract 5: sentence 2 is in two rationales",
        ),
        ('{"id": 1, "evidence": {}\n', "claims.jsonl:1: not valid JSON"),
        ("[1]\n", "claims.jsonl:1: expected a JSON object"),
        ("\n\n", "claims.jsonl: no claims"),
    ],
)
def test_claims_reader_rejects_with_file_line_and_reason(text, reason):
    with pytest.raises(InputError) as error:
        scifact.read_claims(text.encode(), name="claims.jsonl")
    assert str(error.value).startswith(reason)


GOLD = scifact.read_claims(_lines([_gold(1, {"5": [([1], S)]}), _gold(2, {})]), name="c.jsonl")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"id": 1, "evidence": {}}\n', "p.jsonl: no prediction for 1 gold claim (2): give each"),
        (
            '{"id": 1, "evidence": {}}\n{"id": 2, "evidence": {}}\n{"id": 3, "evidence": {}}\n',
            "p.jsonl:3: claim 3 is not one of the gold claims",
        ),
        (
            '{"id": 1, "evidence": {}}\n{"id": 1, "evidence": {}}\n{"id": 2, "evidence": {}}\n',
            "p.jsonl:2: claim 1 again (first on line 1)",
        ),
        (
            '{"id": 1, "evidence": {"5": {"sentences": [1], "label": "REFUTES"}}}\n{"id": 2, "evidence": {}}\n',
            "p.jsonl:1: claim 1, abstract 5: label 'REFUTES' is neither SUPPORT nor CONTRADICT",
        ),
        (
            '{"id": 1, "evidence": {"5": {"label": "SUPPORT"}}}\n{"id": 2, "evidence": {}}\n',
            'p.jsonl:1: claim 1, abstract 5: "sentences" must be a list',
        ),
        (
            '{"id": 1, "evidence": {"5": [1]}}\n{"id": 2, "evidence": {}}\n',
            'p.jsonl:1: claim 1, abstract 5: expected an object with "sentences" and "label"',
        ),
    ],
)
def test_predictions_reader_rejects_with_file_line_and_reason(text, reason):
    with pytest.raises(InputError) as error:
        scifact.read_predictions(text.encode(), GOLD, name="p.jsonl")
    assert str(error.value).startswith(reason)
    assert "Unallowed" not in str(error.value)


def test_predictions_pair_with_claims_by_id_in_any_order():
    text = b'{"id": 2, "evidence": {}}\n\n{"id": 1, "evidence": {"5": {"sentences": [1], "label": "SUPPORT"}}}\n'
    result = scifact.score(GOLD, scifact.read_predictions(text, GOLD))
    assert result["sentence_label_f1"] == 1.0


# --------------------------------------------------------------------------
# Property: the counts are the worked definitions, written another way

SENTENCES = st.lists(st.integers(0, 8), max_size=6)
LABEL = st.sampled_from([S, C])


@st.composite
def claims(draw):
    gold, preds = [], []
    for claim_id in range(draw(st.integers(1, 4))):
        evidence = {}
        for doc in draw(st.lists(st.sampled_from("abcd"), unique=True, max_size=3)):
            label = draw(LABEL)
            pool = draw(st.permutations(range(9)))
            sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
            rationales, start = [], 0
            for size in sizes:
                rationales.append((sorted(pool[start : start + size]), label))
                start += size
            evidence[doc] = rationales
        gold.append(_gold(claim_id, evidence))
        predicted = {
            doc: (draw(SENTENCES), draw(LABEL))
            for doc in draw(st.lists(st.sampled_from("abcde"), unique=True, max_size=3))
        }
        preds.append(_pred(claim_id, predicted))
    return gold, preds


@settings(max_examples=300, deadline=None)
@given(claims())
def test_counts_are_the_definitions(case):
    gold, preds = case
    result = _score(gold, preds)
    retrieved = relevant = correct_rationalized = 0
    selected = correct_sentences = relevant_sentences = 0
    for truth, guess in zip(gold, preds, strict=True):
        relevant += len(truth["evidence"])
        relevant_sentences += sum(
            len(r["sentences"]) for doc in truth["evidence"].values() for r in doc
        )
        for doc, prediction in guess["evidence"].items():
            retrieved += 1
            selected += len(prediction["sentences"])
            rationales = [set(r["sentences"]) for r in truth["evidence"].get(doc, [])]
            if not rationales:
                continue
            chosen = set(prediction["sentences"])
            correct_sentences += sum(
                len(rationale) for rationale in rationales if rationale <= chosen
            )
            label = truth["evidence"][doc][0]["label"]
            shortest = min(len(r) for r in rationales)
            first = set(prediction["sentences"][: max(3, shortest)])
            if prediction["label"] == label and any(r <= first for r in rationales):
                correct_rationalized += 1
    assert result["abstract_rationalized_precision"] == (
        correct_rationalized / retrieved if retrieved else 0.0
    )
    assert result["abstract_rationalized_recall"] == (
        correct_rationalized / relevant if relevant else 0.0
    )
    assert result["sentence_selection_precision"] == (
        correct_sentences / selected if selected else 0.0
    )
    assert result["sentence_selection_recall"] == (
        correct_sentences / relevant_sentences if relevant_sentences else 0.0
    )


def test_per_claim_scores_each_claim_alone_and_one_claim_is_the_whole():
    gold_records = [
        _gold(1, {"10": [([4], S)]}),
        _gold(2, {"20": [([0, 1], C)]}),
        _gold(3, {}),
    ]
    pred_records = [
        _pred(2, {"20": ([0, 1], S), "21": ([3], C)}),
        _pred(1, {"10": ([4], S)}),
        _pred(3, {}),
    ]
    gold = scifact.read_claims(_lines(gold_records), name="claims.jsonl")
    predictions = scifact.read_predictions(_lines(pred_records), gold, name="p.jsonl")
    claims = scifact.per_claim(gold, predictions)
    assert list(claims) == [1, 2, 3]  # gold order
    assert set(claims[1].values()) == {1.0}
    assert claims[2]["abstract_label_only_precision"] == 0.0  # wrong label on 20
    assert claims[2]["sentence_selection_precision"] == 2 / 3  # 0 and 1 of [0, 1, 3]
    assert claims[2]["sentence_selection_recall"] == 1.0
    assert set(claims[3].values()) == {0.0}
    assert claims[1] == _score([gold_records[0]], [pred_records[1]])


def test_a_nul_escaped_anywhere_in_a_line_is_refused():
    text = _lines([_pred(1, {"5\x00": ([1], S)})])
    assert b"\\u0000" in text
    with pytest.raises(InputError, match=r"p\.jsonl:1: contains a NUL character"):
        scifact.read_predictions(text, GOLD, name="p.jsonl")


def test_sentence_indices_are_integers_not_booleans_or_floats():
    for sentences in ([True], [1.0], ["1"]):
        with pytest.raises(InputError, match='"sentences" must be a list of integer'):
            scifact.read_predictions(_lines([_pred(1, {"5": (sentences, S)})]), GOLD)
