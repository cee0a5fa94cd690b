"""Our CodiEsp and SciFact scores against the official scripts' own outputs.

The cases and outputs are under golden/ (README.md there says how they were
made): the printed digits must be the same strings, and the full-precision
numbers read from the official scripts the same floats.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from scoring.core.tasks import codiesp, scifact
from workbench.core.problems import InputError

GOLDEN = Path(__file__).parent / "golden"


def _cases(group: str) -> list[Path]:
    return sorted(path for path in (GOLDEN / group).iterdir() if path.is_dir())


def _ids(paths: list[Path]) -> list[str]:
    return [path.name for path in paths]


def _same(ours: float, theirs: float | None) -> bool:
    return math.isnan(ours) if theirs is None else ours == theirs


def printed_sections(stdout: str) -> dict[str, dict[str, str]]:
    """The per-case tables of comp_f1_diag_proc.py and codiespX_evaluation.py."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in stdout.splitlines():
        if line.startswith("Clinical case name"):
            current = sections.setdefault(line.split("\t")[-1], {})
        elif "\t\t" in line and current is not None:
            case, value = line.split("\t\t")
            current[case] = value
        elif line.startswith("Micro-average"):
            current = None
    return sections


def printed_summary(stdout: str) -> dict[str, str]:
    """The last 'Micro-average ... = value' of each measure, and MAP."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("MAP estimate: "):
            found["map"] = line.removeprefix("MAP estimate: ")
        for name in ("precision", "recall", "F-score"):
            if line.startswith(f"Micro-average {name} = "):
                found[name] = line.split(" = ")[1]
    return found


def _ranked(case: Path, average: codiesp.Average = "official") -> codiesp.Result:
    """The run scored as the commands and the web score it: read a block at a time."""
    return codiesp.score_ranked_file(
        codiesp.read_gold_sets(case / "gold.tsv"),
        case / "pred.tsv",
        codiesp.read_codes(case / "codes.tsv"),
        average=average,
    )


def _x(case: Path) -> codiesp.Result:
    codes = codiesp.read_codes(case / "codes_D.tsv") | codiesp.read_codes(case / "codes_P.tsv")
    return codiesp.score_x_file(codiesp.read_x_gold(case / "gold.tsv"), case / "pred.tsv", codes)


def _our_summary(result: codiesp.Result, subtask: str) -> dict[str, str]:
    lines = codiesp.summary_lines(result, subtask=subtask)
    found = printed_summary("\n".join(lines))
    return found


# --------------------------------------------------------------------------
# CodiEsp D/P


@pytest.mark.parametrize("case", _cases("codiesp"), ids=_ids(_cases("codiesp")))
def test_map_prints_the_official_digits(case: Path):
    ours = _our_summary(_ranked(case), "D")
    theirs = printed_summary((case / "map.stdout").read_text())
    assert ours["map"] == theirs["map"]


@pytest.mark.parametrize("case", _cases("codiesp"), ids=_ids(_cases("codiesp")))
def test_map_is_the_official_float(case: Path):
    result = _ranked(case)
    official = json.loads((case / "map.json").read_text())
    assert result.map is not None
    assert _same(result.map, official["map"])


@pytest.mark.parametrize("case", _cases("codiesp"), ids=_ids(_cases("codiesp")))
def test_average_precision_of_each_case_is_trectools(case: Path):
    """trectools gives NaN to a predicted case missing from the gold (which its mean
    counts as 0, as our per-document ap says); every other case is the same float."""
    result = _ranked(case)
    official = json.loads((case / "map.json").read_text())["ap"]
    gold = {row.case for row in codiesp.read_codings(case / "gold.tsv")}
    assert set(official) == set(result.per_document) | {
        c for c in official if official[c] is None and c not in result.per_document
    }
    for name, value in official.items():
        if name not in result.per_document:
            assert value is None  # a case whose codes are all invalid
            continue
        ours = result.per_document[name].ap
        if name not in gold:
            assert (value, ours) == (None, 0.0)
        else:
            assert _same(ours, value), name


@pytest.mark.parametrize("case", _cases("codiesp"), ids=_ids(_cases("codiesp")))
def test_micro_precision_recall_f1_print_as_comp_f1(case: Path):
    ours = _our_summary(_ranked(case), "D")
    theirs = printed_summary((case / "f1.stdout").read_text())
    assert {k: ours[k] for k in ("precision", "recall", "F-score")} == {
        k: theirs[k] for k in ("precision", "recall", "F-score")
    }


def _assert_comp_f1s_floats(result: codiesp.Result, official: dict) -> None:
    assert _same(result.precision, official["P"])
    assert _same(result.recall, official["R"])
    assert _same(result.f1, official["F1"])
    assert result.f1_set_to_zero is official["F1_is_int"]
    for key, attribute in (("P_per_cc", "precision"), ("F1_per_cc", "f1")):
        assert set(official[key]) == set(result.per_document)
        for name, value in official[key].items():
            assert _same(getattr(result.per_document[name], attribute), value), (key, name)
    for name, value in official["R_per_cc"].items():  # the gold cases only
        assert _same(result.per_document[name].recall, value), name


@pytest.mark.parametrize("case", _cases("codiesp"), ids=_ids(_cases("codiesp")))
def test_micro_and_per_case_values_are_comp_f1s_floats(case: Path):
    _assert_comp_f1s_floats(_ranked(case), json.loads((case / "f1.json").read_text()))


@pytest.mark.parametrize("case", _cases("codiesp"), ids=_ids(_cases("codiesp")))
def test_per_case_tables_print_as_comp_f1(case: Path):
    result = _ranked(case)
    sections = printed_sections((case / "f1.stdout").read_text())
    for section, attribute in (("Precision", "precision"), ("Recall", "recall"), ("F-score", "f1")):
        for name, printed in sections[section].items():
            value = getattr(result.per_document[name], attribute)
            assert codiesp.official_digits(value) == printed, (section, name)


# --------------------------------------------------------------------------
# CodiEsp X


@pytest.mark.parametrize("case", _cases("codiesp-x"), ids=_ids(_cases("codiesp-x")))
def test_x_prints_the_official_digits(case: Path):
    stdout = (case / "x.stdout").read_text()
    result = _x(case)
    assert _our_summary(result, "X") == printed_summary(stdout)
    sections = printed_sections(stdout)
    for section, attribute in (("Precision", "precision"), ("Recall", "recall"), ("F-score", "f1")):
        assert set(sections[section]) == set(result.per_document)
        for name, printed in sections[section].items():
            value = getattr(result.per_document[name], attribute)
            assert codiesp.official_digits(value) == printed, (section, name)


@pytest.mark.parametrize("case", _cases("codiesp-x"), ids=_ids(_cases("codiesp-x")))
def test_x_values_are_the_official_floats(case: Path):
    result = _x(case)
    official = json.loads((case / "x.json").read_text())
    assert _same(result.precision, official["P"])
    assert _same(result.recall, official["R"])
    assert _same(result.f1, official["F1"])
    assert result.f1_set_to_zero is official["F1_is_int"]
    for key, attribute in (("P_per_cc", "precision"), ("R_per_cc", "recall"), ("F1_per_cc", "f1")):
        assert set(official[key]) == set(result.per_document)
        for name, value in official[key].items():
            assert _same(getattr(result.per_document[name], attribute), value), (key, name)


# --------------------------------------------------------------------------
# Where the official CodiEsp scripts crash or misread


def _official(case: str) -> str:
    return (GOLDEN / "codiesp-crash" / case / "official.txt").read_text()


@pytest.mark.parametrize(
    ("case", "file", "reader", "crash", "reason"),
    [
        ("empty_gold", "gold.tsv", codiesp.read_codings, "ZeroDivisionError", "empty file"),
        ("three_column_run", "pred.tsv", codiesp.read_codings, "ImportError", ":1: expected 2"),
        ("x_discontinuous_run", "pred.tsv", codiesp.read_x_run, "invalid literal", ":1: a disc"),
        ("x_three_column_run", "pred.tsv", codiesp.read_x_run, "ImportError", ":1: expected 4"),
    ],
)
def test_inputs_the_official_scripts_crash_on_are_rejected(case, file, reader, crash, reason):
    assert crash in _official(case)
    with pytest.raises(InputError) as error:
        reader(GOLDEN / "codiesp-crash" / case / file)
    assert reason in str(error.value)
    assert "official" in str(error.value)


def test_comp_f1_reads_a_three_column_run_silently_as_columns_two_and_three():
    assert "comp_f1_diag_proc.py: exit status 0\n  1.0|0.667|0.8" in _official("three_column_run")


def test_an_empty_run_scores_as_comp_f1_does_where_the_map_script_crashes():
    """A team that predicted nothing gets its scores: precision undefined, recall 0."""
    case = GOLDEN / "codiesp-crash" / "empty_run"
    assert "codiespD_P_evaluation.py: exit status 1" in _official("empty_run")
    result = _ranked(case)
    _assert_comp_f1s_floats(result, json.loads((case / "f1.json").read_text()))
    theirs = printed_summary((case / "f1.stdout").read_text())
    assert _our_summary(result, "D") == {**theirs, "map": "nan"}
    # The MAP script's mean for a run without a valid prediction (golden
    # no_valid_prediction): NaN; over the gold cases, each of them 0.
    assert math.isnan(result.map)
    assert _ranked(case, "gold").map == 0.0


def test_an_empty_x_run_scores_as_a_run_without_a_valid_code():
    assert "EmptyDataError" in _official("x_empty_run")
    empty, no_valid = (_x(GOLDEN / "codiesp-crash" / c) for c in ("x_empty_run", "x_no_valid_code"))
    assert math.isnan(empty.precision)
    assert math.isnan(empty.f1)
    assert empty.recall == 0.0
    assert empty.per_document.keys() == no_valid.per_document.keys() == {"a"}
    assert empty.per_document["a"].recall == 0.0


def test_a_run_without_a_valid_code_scores_where_the_x_script_crashes():
    assert "not enough values to unpack" in _official("x_no_valid_code")
    result = _x(GOLDEN / "codiesp-crash" / "x_no_valid_code")
    assert math.isnan(result.precision)
    assert result.recall == 0.0
    assert math.isnan(result.f1)


# --------------------------------------------------------------------------
# SciFact


def _scifact(case: Path, preds: str = "preds.jsonl") -> dict[str, float]:
    gold = scifact.read_claims(case / "claims.jsonl")
    return scifact.score(gold, scifact.read_predictions(case / preds, gold))


@pytest.mark.parametrize("case", _cases("scifact"), ids=_ids(_cases("scifact")))
def test_scifact_is_the_evaluators_metrics_file(case: Path):
    official = json.loads((case / "metrics.json").read_text())
    ours = _scifact(case)
    assert list(ours) == list(official)
    assert ours == official


def _scifact_official(case: str) -> str:
    return (GOLDEN / "scifact-crash" / case / "official.txt").read_text()


@pytest.mark.parametrize(
    ("case", "file", "crash", "reason"),
    [
        ("missing_claim", "preds", "do not match gold", "no prediction for 1 gold claim (2)"),
        ("unknown_claim", "preds", "do not match gold", ":3: claim 3 is not one of the gold"),
        ("unallowed_label", "preds", "Unallowed label", ":1: claim 1, abstract 10: label 'REF"),
        ("conflicting_gold_labels", "claims", "Conflicting labels", ":1: claim 1, abstract 10: c"),
        ("empty_gold_rationales", "claims", "IndexError", "non-empty list of rationales"),
        ("sentence_in_two_rationales", "claims", "AssertionError", "sentence 2 is in two"),
        ("malformed_json", "preds", "JSONDecodeError", ":2: not valid JSON"),
    ],
)
def test_inputs_the_evaluator_crashes_on_are_rejected(case, file, crash, reason):
    assert crash in _scifact_official(case)
    with pytest.raises(InputError) as error:
        _scifact(GOLDEN / "scifact-crash" / case)
    assert reason in str(error.value)
    assert f"{file}.jsonl" in str(error.value)


def test_predictions_in_another_order_are_paired_by_claim_id():
    """The evaluator refuses them; the same lines in the gold's order score as here."""
    case = GOLDEN / "scifact-crash" / "predictions_reordered"
    assert "do not match gold" in _scifact_official("predictions_reordered")
    lines = (case / "preds.jsonl").read_text().splitlines()
    reordered = "\n".join(reversed(lines)).encode()
    gold = scifact.read_claims(case / "claims.jsonl")
    assert _scifact(case) == scifact.score(gold, scifact.read_predictions(reordered, gold))


def test_a_blank_line_is_skipped_where_the_evaluator_crashes():
    assert "JSONDecodeError" in _scifact_official("blank_line")
    result = _scifact(GOLDEN / "scifact-crash" / "blank_line")
    assert result["abstract_label_only_precision"] == 1.0
