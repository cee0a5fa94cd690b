"""CodiEsp scoring rules, one hand-computed case each; readers' errors; properties
against brute-force definitions."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.tasks import codiesp, line_blocks, sets
from scoring.core.tasks.codiesp import Codings
from scoring.core.tasks.line_blocks import Block
from workbench.core.problems import InputError, ProblemLog


def _codings(text: str) -> list[codiesp.Coding]:
    return codiesp.read_codings(text.encode(), name="f.tsv")


def _score(gold: str, run: str, codes: str = "x1\nx2\nx3\nx4\n", **options) -> codiesp.Result:
    return codiesp.score_ranked(
        _codings(gold), _codings(run), codiesp.read_codes(codes.encode()), **options
    )


# --------------------------------------------------------------------------
# D and P


def test_ap_divides_by_the_distinct_gold_codes_of_the_case():
    result = _score("a\tx1\na\tx1\na\tx2\n", "a\tx2\na\tx3\n")
    assert result.map == 0.5  # x2 at rank 1; two distinct gold codes


def test_codes_compare_case_insensitively():
    result = _score("a\tX1\n", "a\tx1\n", codes="X1\n")
    assert result.map == 1.0


def test_repeated_and_invalid_codes_are_dropped_before_ranking():
    # x9 is invalid and x1 repeated: x2 is ranked 2nd, not 4th
    result = _score("a\tx1\na\tx2\n", "a\tx1\na\tx9\na\tX1\na\tx2\n")
    assert result.map == 1.0


def test_lines_of_different_cases_may_interleave():
    interleaved = _score("a\tx1\nb\tx2\n", "a\tx3\nb\tx2\na\tx1\n")
    grouped = _score("a\tx1\nb\tx2\n", "a\tx3\na\tx1\nb\tx2\n")
    assert interleaved.map == grouped.map == (1 / 2 + 1) / 2


def test_only_the_first_1000_codes_rank():
    codes = "".join(f"c{n}\n" for n in range(1001))
    run = "".join(f"a\tc{n}\n" for n in range(1001))
    result = _score("a\tc1000\n", run, codes=codes)
    assert result.map == 0.0
    assert result.recall == 1.0  # comp_f1_diag_proc.py has no depth


def test_official_mean_is_over_cases_with_a_valid_prediction():
    gold = "a\tx1\nb\tx1\nc\tx1\n"
    run = "a\tx1\nb\tx9\nd\tx1\n"  # b has no valid code; d is not in the gold
    official = _score(gold, run)
    assert (official.map, official.cases_averaged) == ((1.0 + 0.0) / 2, 2)
    gold_mean = _score(gold, run, average="gold")
    assert (gold_mean.map, gold_mean.cases_averaged) == (1 / 3, 3)


def test_per_document_ap_is_nan_outside_the_mean_used():
    gold, run = "a\tx1\nc\tx1\n", "a\tx1\nd\tx1\n"
    official = _score(gold, run).per_document
    assert (official["a"].ap, official["d"].ap) == (1.0, 0.0)
    assert math.isnan(official["c"].ap)
    by_gold = _score(gold, run, average="gold").per_document
    assert (by_gold["a"].ap, by_gold["c"].ap) == (1.0, 0.0)
    assert math.isnan(by_gold["d"].ap)


def test_no_valid_prediction_gives_nan_map_and_precision():
    result = _score("a\tx1\n", "a\tx9\n")
    assert math.isnan(result.map)
    assert math.isnan(result.precision)
    assert result.recall == 0.0
    assert math.isnan(result.f1)
    assert codiesp.summary_lines(result, subtask="D")[0] == "MAP estimate: nan"


def test_micro_precision_counts_predicted_cases_missing_from_the_gold():
    result = _score("a\tx1\na\tx2\n", "a\tx1\na\tx3\nb\tx1\n")
    assert (result.precision, result.recall) == (1 / 3, 1 / 2)
    assert result.counts == sets.Confusion(tp=1, fp=2, fn=1)


def test_f1_is_set_to_zero_and_printed_as_an_integer():
    result = _score("a\tx1\n", "a\tx2\n")
    assert result.f1_set_to_zero
    assert result.f1 == 0.0
    assert codiesp.summary_lines(result, subtask="D")[-1] == "Micro-average F-score = 0"


def test_per_document_values_as_comp_f1():
    result = _score("a\tx1\na\tx2\nb\tx1\nc\tx1\n", "a\tx1\na\tx3\nb\tx2\nd\tx1\n")
    a, b, c, d = (result.per_document[case] for case in "abcd")
    assert (a.precision, a.recall, a.f1) == (0.5, 0.5, 0.5)
    assert (b.precision, b.recall) == (0.0, 0.0)
    assert math.isnan(b.f1)
    assert math.isnan(c.precision)
    assert c.recall == 0.0
    assert math.isnan(c.f1)
    assert math.isnan(d.precision)
    assert math.isnan(d.recall)


def test_extras_score_categories_and_learning_accuracy_beside_the_official_numbers():
    codes = "n20.0\nn20.9\nk02.9\nm81.0\n"
    result = _score("a\tN20.0\na\tm81.0\n", "a\tn20.9\na\tk02.9\nb\tn20.0\n", codes=codes)
    assert result.precision == 0.0  # no code right
    # categories: a predicts n20, k02 against n20, m81; b predicts n20 against nothing
    assert result.extras["category_precision"] == 1 / 3
    assert result.extras["category_recall"] == 1 / 2
    # n20.9 against n20.0: 1/2; k02.9 shares no ancestor: 0; b is not in the gold: 0
    assert result.extras["learning_accuracy"] == pytest.approx((0.5 + 0 + 0) / 3)


def test_printing_rounds_as_numpy_for_d_and_p_and_as_python_for_x_micro():
    """numpy 1.18 (the official environment) prints np.round(0.0025, 3) as 0.002 and
    np.round(0.0055, 3) as 0.006; Python's round gives 0.003 and 0.005 (the floats
    are just above and just below the half)."""
    assert codiesp.official_digits(0.0025) == "0.002"
    assert codiesp.official_digits(0.0055) == "0.006"
    assert codiesp.official_digits(0.0025, numpy_round=False) == "0.003"
    assert codiesp.official_digits(0.0055, numpy_round=False) == "0.005"
    assert codiesp.official_digits(1.0) == "1.0"
    assert codiesp.official_digits(math.nan) == "nan"


# --------------------------------------------------------------------------
# X


def _x(gold: str, run: str, codes: str = "x1\nx2\n") -> codiesp.Result:
    return codiesp.score_x(
        codiesp.read_x_gold(gold.encode(), name="gold.tsv"),
        codiesp.read_x_run(run.encode(), name="run.tsv"),
        codiesp.read_codes(codes.encode()),
    )


def test_x_a_prediction_must_cover_the_reference_within_ten_characters():
    gold = "a\tDIAGNOSTICO\tx1\tt\t100 120\n"
    assert _x(gold, "a\t90 130\tDIAGNOSTICO\tx1\n").recall == 1.0
    assert _x(gold, "a\t89 120\tDIAGNOSTICO\tx1\n").recall == 0.0
    assert _x(gold, "a\t100 131\tDIAGNOSTICO\tx1\n").recall == 0.0
    assert _x(gold, "a\t105 115\tDIAGNOSTICO\tx1\n").recall == 0.0


def test_x_discontinuous_reference_spans_first_start_to_last_end():
    gold = "a\tDIAGNOSTICO\tx1\tt\t100 110;150 160\n"
    assert _x(gold, "a\t100 160\tPROCEDIMIENTO\tX1\n").recall == 1.0  # label not compared
    assert _x(gold, "a\t100 110\tDIAGNOSTICO\tx1\n").recall == 0.0


def test_x_one_reference_of_a_code_is_enough_and_the_code_counts_once():
    gold = "a\tD\tx1\tt\t10 20\na\tD\tx1\tt\t500 520\n"
    result = _x(gold, "a\t500 520\tD\tx1\na\t0 5\tD\tx1\n")
    assert (result.precision, result.recall, result.counts.tp) == (1.0, 1.0, 1)


def test_x_a_predicted_case_with_nothing_found_is_nan_not_zero():
    result = _x("a\tD\tx1\tt\t10 20\nb\tD\tx1\tt\t10 20\n", "a\t10 20\tD\tx1\nb\t50 60\tD\tx1\n")
    b = result.per_document["b"]
    assert math.isnan(b.precision)
    assert math.isnan(b.recall)
    assert math.isnan(b.f1)


def test_x_predicted_cases_missing_from_the_gold_count_in_precision_only():
    result = _x("a\tD\tx1\tt\t10 20\n", "a\t10 20\tD\tx1\nz\t10 20\tD\tx1\n")
    assert (result.precision, result.recall) == (0.5, 1.0)
    assert set(result.per_document) == {"a"}


# --------------------------------------------------------------------------
# Readers


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "f.tsv: empty file: no lines (the official scripts crash on an empty file)"),
        ("a\tx1\tx2\n", "f.tsv:1: expected 2 tab-separated columns (case<TAB>code), found 3"),
        ("a\n", "f.tsv:1: expected 2 tab-separated columns (case<TAB>code), found 1"),
        ("a\tx1\n\ta\n", "f.tsv:2: empty clinical case"),
        ("a\t\n", "f.tsv:1: empty code"),
        ("a b\tx1\n", "f.tsv:1: clinical case 'a b' contains whitespace"),
        ("a\tx1 \n", "f.tsv:1: code 'x1 ' contains whitespace"),
        ("a\tx\x001\n", "f.tsv:1: contains a NUL character"),
        ("a\tx1\n\xff\n", "f.tsv:2: not UTF-8"),
    ],
)
def test_codings_reader_rejects_with_file_line_and_reason(text, reason):
    data = text.encode("latin-1") if "\xff" in text else text.encode()
    with pytest.raises(InputError) as error:
        codiesp.read_codings(data, name="f.tsv")
    assert str(error.value).startswith(reason)


def test_codings_reader_skips_blank_lines_and_crlf_and_bom():
    rows = codiesp.read_codings(b"\xef\xbb\xbfa\tX1\r\n\r\nb\tx2\n", name="f.tsv")
    assert [(row.case, row.code, row.line) for row in rows] == [("a", "x1", 1), ("b", "x2", 3)]


def test_codings_reader_lists_every_problem():
    with pytest.raises(InputError) as error:
        codiesp.read_codings(b"a\n\nb\tc\td\n", name="f.tsv")
    assert [p.line for p in error.value.problems] == [1, 3]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a\t1 2;3 4\tD\tx1\n", "run.tsv:1: a discontinuous position '1 2;3 4'"),
        ("a\t12\tD\tx1\n", "run.tsv:1: a position '12': a prediction gives one 'start end'"),
        ("a\t-1 2\tD\tx1\n", "run.tsv:1: a position '-1 2'"),
        ("a\t20 10\tD\tx1\n", "run.tsv:1: the span ends (10) before it starts (20)"),
        ("a\t1 2\tx1\n", "run.tsv:1: expected 4 tab-separated columns"),
    ],
)
def test_x_run_reader_rejects(text, reason):
    with pytest.raises(InputError) as error:
        codiesp.read_x_run(text.encode(), name="run.tsv")
    assert str(error.value).startswith(reason)
    assert "official" in str(error.value) or "before it starts" in reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a\tD\tx1\tt\t1 2;3\n", "gold.tsv:1: position '1 2;3' is not 'start end'"),
        ("a\tD\tx1\tt\t30 40;10 20\n", "gold.tsv:1: the reference ends (20) before it starts (30)"),
        ("a\tD\tx1\t1 2\n", "gold.tsv:1: expected 5 tab-separated columns"),
    ],
)
def test_x_gold_reader_rejects(text, reason):
    with pytest.raises(InputError) as error:
        codiesp.read_x_gold(text.encode(), name="gold.tsv")
    assert str(error.value).startswith(reason)


def test_codes_reader_takes_the_first_column_lower_cased():
    codes = codiesp.read_codes(b"N20.0\tlitiasis\tcalculus\nbw40zzz\n", name="codes.tsv")
    assert codes == {"n20.0", "bw40zzz"}
    with pytest.raises(InputError, match=r"codes.tsv:2: empty code"):
        codiesp.read_codes(b"x1\n\tnothing\n", name="codes.tsv")


# --------------------------------------------------------------------------
# Properties against brute-force definitions

CASES = st.sampled_from(["a", "b", "c", "d"])
CODES = st.sampled_from(["x1", "x2", "X2", "x3", "x4", "x5", "bad"])
VALID = frozenset({"x1", "x2", "x3", "x4"})


def _brute_force_map(gold, run, average):
    relevant = {}
    for case, code in gold:
        relevant.setdefault(case, set()).add(code.lower())
    ranking = {}
    for case, code in run:
        code = code.lower()
        if code in VALID and code not in ranking.setdefault(case, []):
            ranking[case].append(code)
    ranking = {case: codes for case, codes in ranking.items() if codes}
    averaged = set(ranking) if average == "official" else set(relevant)
    if not averaged:
        return math.nan
    total = 0.0
    for case in averaged:
        flags = [code in relevant.get(case, ()) for code in ranking.get(case, [])]
        total += sets.ap_over_relevant(flags, len(relevant[case])) if case in relevant else 0.0
    return total / len(averaged)


def _text(rows):
    return "".join(f"{case}\t{code}\n" for case, code in rows).encode()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(CASES, CODES), min_size=1, max_size=25),
    st.lists(st.tuples(CASES, CODES), min_size=1, max_size=25),
    st.sampled_from(codiesp.AVERAGES),
)
def test_map_is_the_brute_force_definition(gold, run, average):
    result = codiesp.score_ranked(
        codiesp.read_codings(_text(gold)), codiesp.read_codings(_text(run)), VALID, average=average
    )
    expected = _brute_force_map(gold, run, average)
    if math.isnan(expected):
        assert math.isnan(result.map)
    else:
        assert result.map == pytest.approx(expected)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(CASES, CODES), min_size=1, max_size=25),
    st.lists(st.tuples(CASES, CODES), min_size=1, max_size=25),
)
def test_micro_scores_are_the_set_definitions(gold, run):
    result = codiesp.score_ranked(
        codiesp.read_codings(_text(gold)), codiesp.read_codings(_text(run)), VALID
    )
    gold_pairs = {(case, code.lower()) for case, code in gold}
    run_pairs = {(case, code.lower()) for case, code in run if code.lower() in VALID}
    counts = sets.confusion(run_pairs, gold_pairs)
    assert result.counts == counts
    assert result.recall == sets.recall(counts)
    if run_pairs:
        assert result.precision == sets.precision(counts)
        assert result.f1 == pytest.approx(sets.f_alpha(counts, empty=0.0))
    else:
        assert math.isnan(result.precision)


SPANS = st.tuples(st.integers(0, 60), st.integers(0, 30)).map(lambda s: (s[0], s[0] + s[1]))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(CASES, CODES, SPANS), min_size=1, max_size=12),
    st.lists(st.tuples(CASES, CODES, SPANS), min_size=1, max_size=12),
)
def test_x_is_the_brute_force_definition(gold, run):
    gold_text = "".join(f"{c}\tD\t{k}\tt\t{s} {e}\n" for c, k, (s, e) in gold)
    run_text = "".join(f"{c}\t{s} {e}\tD\t{k}\n" for c, k, (s, e) in run)
    result = codiesp.score_x(
        codiesp.read_x_gold(gold_text.encode()), codiesp.read_x_run(run_text.encode()), VALID
    )
    gold_pairs = {(c, k.lower()) for c, k, _ in gold}
    found = {
        (c, k.lower())
        for c, k, span in gold
        for c2, k2, pspan in run
        if (c, k.lower()) == (c2, k2.lower())
        and k2.lower() in VALID
        and sets.lenient_match(span, pspan, 10)
    }
    predicted = {(c, k.lower()) for c, k, _ in run if k.lower() in VALID}
    assert result.counts.tp == len(found)
    assert result.recall == len(found) / len(gold_pairs)
    if predicted:
        assert result.precision == len(found) / len(predicted)


# --------------------------------------------------------------------------
# Reading and scoring a block at a time

LINES = st.lists(
    st.text(alphabet="ab\t \r\x00é", max_size=8).map(lambda line: line.replace("\n", "")),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_the_fast_reading_of_a_block_is_the_line_by_line_reading(lines):
    """A block of well-formed lines is read at C speed; any other block line by line.
    Wherever the fast reading accepts a block, the slow one reads the same, silently."""
    text = "".join(f"{line}\n" for line in lines)
    fast = codiesp._well_formed(text)
    log = ProblemLog("f.tsv")
    slow = codiesp._checked(Block(1, text), log)
    if fast is not None:
        assert log.ok
        assert (fast.cases, fast.codes) == (slow.cases, slow.codes)
        assert Codings(fast.cases, fast.codes, 1, fast.lines).line_numbers() == slow.numbers


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(CASES, CODES), min_size=1, max_size=25),
    st.lists(st.tuples(CASES, CODES), max_size=40),
    st.lists(st.integers(0, 40), max_size=5),
    st.sampled_from(codiesp.AVERAGES),
)
def test_a_run_fed_in_any_blocks_scores_as_one_block(gold, run, cuts, average):
    whole = codiesp.score_ranked(
        codiesp.read_codings(_text(gold)),
        codiesp.read_codings(_text(run), empty_ok=True),
        VALID,
        average=average,
    )
    scorer = codiesp.RankedScorer(codiesp.read_gold_sets(_text(gold)), VALID)
    for start, end in itertools.pairwise([0, *sorted(cuts), len(run)]):
        part = run[start:end]
        scorer.add([case for case, _ in part], [code.lower() for _, code in part])
    assert repr(scorer.result(average)) == repr(whole)  # NaN where it is NaN


CODE_TEXT = st.text(alphabet="ab1.", max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(CODE_TEXT, min_size=1, max_size=8, unique=True),
    st.lists(CODE_TEXT, max_size=4),
)
def test_learning_accuracy_over_a_case_is_the_scalar_definition(predicted, gold):
    codes = sorted(set(predicted) | {"x"})
    ids = np.array([codes.index(code) for code in predicted])
    taxonomy = codiesp._Taxonomy(codes)
    expected = [
        max((sets.learning_accuracy(code, truth) for truth in gold), default=0.0)
        for code in predicted
    ]
    assert taxonomy.learning_accuracies(ids, gold).tolist() == expected


def test_learning_accuracy_of_codes_of_dots_only_is_defined():
    assert sets.learning_accuracy(".", "..") == 1.0
    assert sets.learning_accuracy("n20", ".") == 0.0
    assert sets.learning_accuracy(".", "n20") == 0.0
    result = _score("a\t.\n", "a\t.\na\tn20\n", codes=".\nn20\n")
    assert result.extras["learning_accuracy"] == 0.5


def test_an_empty_run_predicts_nothing_and_an_empty_gold_is_refused():
    gold = codiesp.read_gold_sets(b"a\tx1\nb\tx2\n")
    result = codiesp.score_ranked_file(gold, b"", VALID)
    assert (math.isnan(result.precision), result.recall, math.isnan(result.map)) == (
        True,
        0.0,
        True,
    )
    assert codiesp.score_ranked_file(gold, b"\n\n", VALID, average="gold").map == 0.0
    with pytest.raises(InputError, match=r"g\.tsv: empty file"):
        codiesp.read_gold_sets(b"", name="g.tsv")


def test_a_bad_line_anywhere_in_a_large_run_is_reported_after_it_is_all_read(monkeypatch):
    monkeypatch.setattr(line_blocks, "BLOCK_BYTES", 64)
    run = b"".join(b"a\tx%d\n" % (n % 4 + 1) for n in range(100)) + b"a\tx1\tx2\n" + b"b\tx1\n" * 50
    with pytest.raises(InputError) as error:
        codiesp.score_ranked_file({"a": {"x1"}}, run, VALID, name="run.tsv")
    assert str(error.value).startswith("run.tsv:101: expected 2 tab-separated columns")


def test_scoring_memory_does_not_grow_with_the_lines_of_a_run(monkeypatch):
    """Four times the lines (each code repeated) in blocks of 64 KiB: the peak of what
    scoring allocates stays flat, as no line is kept."""
    monkeypatch.setattr(line_blocks, "BLOCK_BYTES", 64 * 1024)
    valid = frozenset(f"c{n:04d}" for n in range(2000))
    gold = {f"case{n}": {f"c{n:04d}", f"c{n + 1:04d}"} for n in range(50)}
    codes = sorted(valid)

    def peak(repeat: int) -> int:
        run = b"".join(
            b"case%d\t%s\n" % (case, code.encode())
            for case in range(50)
            for code in codes[case * 30 : case * 30 + 400]
            for _ in range(repeat)
        )
        tracemalloc.start()
        codiesp.score_ranked_file(gold, run, valid)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    once, four_times = peak(1), peak(4)
    assert four_times < 1.3 * once
