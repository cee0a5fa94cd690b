"""The task scorers behind one interface: files checked together, the measures of
each subtask equal to the task's own scorer, and the one sort rule of score tables."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from scoring.core.tasks import codiesp, scifact, subtasks
from scoring.core.tasks.subtasks import NamedFile
from workbench.core.problems import InputError

GOLDEN = Path(__file__).parent / "golden"
HAND = GOLDEN / "codiesp" / "hand_small"
HAND_X = GOLDEN / "codiesp-x" / "hand_small"
WORKED = GOLDEN / "scifact" / "worked_example"


def _file(path: Path) -> NamedFile:
    return NamedFile(path.name, path)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_every_task_has_its_subtasks():
    assert [s.code for s in subtasks.SUBTASKS["codiesp"]] == ["D", "P", "X"]
    assert [s.code for s in subtasks.SUBTASKS["scifact"]] == ["claims"]
    assert subtasks.subtask("scifact", "claims").measures == scifact.KEYS
    with pytest.raises(KeyError):
        subtasks.subtask("codiesp", "claims")


def test_codiesp_d_scores_are_the_cores():
    d = subtasks.subtask("codiesp", "D")
    gold = subtasks.read_gold(d, _file(HAND / "gold.tsv"), [_file(HAND / "codes.tsv")])
    scores = subtasks.score(gold, subtasks.read_submission(gold, _file(HAND / "pred.tsv")))
    core = codiesp.score_ranked(
        codiesp.read_codings(HAND / "gold.tsv"),
        codiesp.read_codings(HAND / "pred.tsv"),
        codiesp.read_codes(HAND / "codes.tsv"),
    )
    assert list(scores.measures) == ["map", "precision", "recall", "f1"]
    assert scores.measures == {"map": core.map, "precision": 4 / 7, "recall": 1.0, "f1": core.f1}
    assert list(scores.documents) == ["a", "b", "c"]
    for case, values in core.per_document.items():
        row = scores.documents[case]
        assert list(row) == ["ap", "precision", "recall", "f1"]
        for name in row:
            assert _same(row[name], getattr(values, name))
    assert (gold.documents, subtasks.read_submission(gold, _file(HAND / "pred.tsv")).documents) == (
        2,
        3,
    )


def test_codiesp_x_takes_the_union_of_its_code_lists():
    x = subtasks.subtask("codiesp", "X")
    codes = [_file(HAND_X / "codes_D.tsv"), _file(HAND_X / "codes_P.tsv")]
    gold = subtasks.read_gold(x, _file(HAND_X / "gold.tsv"), codes)
    assert gold.codes == codiesp.read_codes(HAND_X / "codes_D.tsv") | codiesp.read_codes(
        HAND_X / "codes_P.tsv"
    )
    scores = subtasks.score(gold, subtasks.read_submission(gold, _file(HAND_X / "pred.tsv")))
    assert scores.measures == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert list(scores.documents["a"]) == ["precision", "recall", "f1"]


def test_scifact_scores_and_each_claim():
    s = subtasks.subtask("scifact", "claims")
    gold = subtasks.read_gold(s, _file(WORKED / "claims.jsonl"))
    scores = subtasks.score(gold, subtasks.read_submission(gold, _file(WORKED / "preds.jsonl")))
    core = scifact.read_claims(WORKED / "claims.jsonl")
    predictions = scifact.read_predictions(WORKED / "preds.jsonl", core)
    assert scores.measures == scifact.score(core, predictions)
    assert scores.documents == {"4": scores.measures}  # one claim: it is the whole


def test_every_problem_of_the_gold_and_its_code_lists_is_reported_at_once():
    d = subtasks.subtask("codiesp", "D")
    with pytest.raises(InputError) as error:
        subtasks.read_gold(
            d,
            NamedFile("gold.tsv", b"a\tx1\tx2\n"),
            [NamedFile("codes.tsv", b"x1\n\tcomment\n"), NamedFile("more.tsv", b"x2\n")],
        )
    assert str(error.value).splitlines() == [
        "gold.tsv:1: expected 2 tab-separated columns (case<TAB>code), found 3 (the official MAP"
        " script stops with an ImportError or a parser error, and comp_f1_diag_proc.py reads a"
        " 3-column file as columns 2 and 3)",
        "codes.tsv:2: empty code (the official scripts crash on an empty one)",
    ]
    assert error.value.total == 2


def test_codiesp_needs_code_lists_and_scifact_takes_none():
    with pytest.raises(InputError, match=r"^gold.tsv: CodiEsp D needs valid codes"):
        subtasks.read_gold(subtasks.subtask("codiesp", "D"), NamedFile("gold.tsv", b"a\tx\n"))
    with pytest.raises(InputError, match=r"^codes.tsv: Claim verification takes no valid-code"):
        subtasks.read_gold(
            subtasks.subtask("scifact", "claims"),
            _file(WORKED / "claims.jsonl"),
            [NamedFile("codes.tsv", b"x\n")],
        )


def test_a_scifact_submission_is_checked_against_the_gold_claims():
    s = subtasks.subtask("scifact", "claims")
    gold = subtasks.read_gold(s, _file(WORKED / "claims.jsonl"))
    with pytest.raises(InputError, match=r"^p.jsonl:1: claim 9 is not one of the gold claims"):
        subtasks.read_submission(gold, NamedFile("p.jsonl", b'{"id": 9, "evidence": {}}\n'))


ROWS = [
    ("a", {"map": 0.5, "f1": 0.2}),
    ("b", {"map": math.nan, "f1": 0.9}),
    ("c", {"map": 0.7, "f1": 0.2}),
    ("d", {"map": 0.5}),
]


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        ("-map", ["c", "a", "d", "b"]),  # ties in the order given, NaN last
        ("map", ["a", "d", "c", "b"]),  # NaN last ascending too
        ("-f1", ["b", "a", "c", "d"]),  # a missing value is last
        ("f1", ["a", "c", "b", "d"]),
        ("name", ["a", "b", "c", "d"]),
        ("-name", ["d", "c", "b", "a"]),
    ],
)
def test_sort_rows(sort, order):
    rows = subtasks.sort_rows(ROWS, sort, values=lambda row: row[1])
    assert [name for name, _ in rows] == order


def test_sort_choices_and_defaults():
    d = subtasks.subtask("codiesp", "D")
    assert subtasks.sort_choices(d)[:4] == ["-name", "name", "-map", "map"]
    assert "-ap" in subtasks.sort_choices(d, documents=True)
    assert subtasks.default_sort(d) == "-map"
    assert subtasks.default_sort(subtasks.subtask("codiesp", "X")) == "-f1"
    assert subtasks.default_sort(d, documents=True) == "name"
