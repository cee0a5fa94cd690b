"""Measure parameters read as trec_eval reads them."""

import re

import pytest

from scoring.core.measures.params import (
    ParamError,
    Params,
    ParamStyle,
    c_atof,
    c_atol,
    parse_params,
    value_names,
)


def test_cutoffs_are_sorted_integers():
    params = parse_params(ParamStyle.CUTOFFS, "10,20,23,5")
    assert params.cutoffs == (5, 10, 20, 23)
    assert value_names("ndcg_cut", ParamStyle.CUTOFFS, params) == (
        "ndcg_cut_5",
        "ndcg_cut_10",
        "ndcg_cut_20",
        "ndcg_cut_23",
    )


@pytest.mark.parametrize(
    ("style", "text", "reason"),
    [
        # trec_eval reads the numeric prefix of each: P_23, P_1, P_10, iprec_at_recall_0.50.
        (ParamStyle.CUTOFFS, "10,23.4", "'23.4' is not a whole number (trec_eval would read 23)"),
        (ParamStyle.CUTOFFS, "1e400", "'1e400' is not a whole number (trec_eval would read 1)"),
        (ParamStyle.CUTOFFS, "10abc", "'10abc' is not a whole number"),
        (ParamStyle.FRACTIONS, ".5x", "'.5x' is not a number (trec_eval would read 0.5)"),
        (ParamStyle.FRACTIONS, "1e400", "'1e400' is not a finite number"),
        (ParamStyle.NUMBERS, "nan", "'nan' is not a finite number"),
        (ParamStyle.PAIRS, "1=3x", "'3x' is not a number"),
        # Past any ranking, and past what C's long holds: refused, not clamped.
        (ParamStyle.CUTOFFS, "99999999999999999999", "past the largest, 2,147,483,647"),
        (ParamStyle.CUTOFFS, "18446744073709551616", "past the largest"),
        (ParamStyle.CUTOFFS, "9" * 10_000, "past the largest"),
    ],
)
def test_a_parameter_read_only_in_part_or_past_its_range_is_refused(style, text, reason):
    with pytest.raises(ParamError, match=re.escape(reason)):
        parse_params(style, text)


@pytest.mark.parametrize(
    ("style", "text", "numbers"),
    [
        # Every form trec_eval's documentation gives is read as trec_eval reads it.
        (ParamStyle.CUTOFFS, "5,10", (5.0, 10.0)),
        (ParamStyle.CUTOFFS, " 7", (7.0,)),
        (ParamStyle.CUTOFFS, "2147483647", (2147483647.0,)),
        (ParamStyle.FRACTIONS, ".1,.5", (0.1, 0.5)),
        (ParamStyle.FRACTIONS, "1.5", (1.5,)),
        (ParamStyle.NUMBERS, "2,-1,0,0", (2.0, -1.0, 0.0, 0.0)),
        (ParamStyle.NUMBERS, "1e-1", (0.1,)),
    ],
)
def test_every_parameter_trec_eval_reads_whole_is_read_as_it_reads_it(style, text, numbers):
    assert parse_params(style, text).numbers == numbers
    assert all(c_atof(part) == n for part, n in zip(text.split(","), numbers, strict=True))


@pytest.mark.parametrize(
    ("style", "text"),
    [
        (ParamStyle.CUTOFFS, "0,5"),
        (ParamStyle.CUTOFFS, "5,5"),
        (ParamStyle.CUTOFFS, "five"),
        (ParamStyle.FRACTIONS, ".5,0.50"),
        (ParamStyle.PAIRS, "1=3,2"),
        (ParamStyle.PAIRS, "1=3,,2=4"),
        (ParamStyle.PAIRS, "1==3"),
    ],
)
def test_parameters_trec_eval_refuses_are_errors(style, text):
    with pytest.raises(ParamError):
        parse_params(style, text)


def test_fractions_are_sorted_and_named_with_two_decimals():
    params = parse_params(ParamStyle.FRACTIONS, ".10,.20,.25,.75,.50")
    assert params.numbers == (0.1, 0.2, 0.25, 0.5, 0.75)
    assert value_names("iprec_at_recall", ParamStyle.FRACTIONS, params)[2] == (
        "iprec_at_recall_0.25"
    )


def test_long_fraction_names_are_cut_as_trec_eval_cuts_them():
    params = Params(numbers=(5.0, 123456.0))
    assert value_names("Rprec_mult", ParamStyle.FRACTIONS, params) == (
        "Rprec_mult_5.00",
        "Rprec_mult_123456.0",
    )


def test_numbers_keep_their_order_and_the_given_text_names_the_value():
    params = parse_params(ParamStyle.NUMBERS, "2,-1,0,0")
    assert params.numbers == (2.0, -1.0, 0.0, 0.0)
    assert value_names("utility", ParamStyle.NUMBERS, params) == ("utility_2,-1,0,0",)
    assert value_names("utility", ParamStyle.NUMBERS, Params(numbers=(1.0,))) == ("utility",)


def test_pairs_are_names_with_numbers():
    params = parse_params(ParamStyle.PAIRS, "1=3,2=9,4=4.5,p=0.95")
    assert params.pairs == (("1", 3.0), ("2", 9.0), ("4", 4.5), ("p", 0.95))
    assert parse_params(ParamStyle.PAIRS, "=3").pairs == (("", 3.0),)


def test_numbers_are_read_from_their_longest_numeric_prefix_like_c():
    assert (c_atol(" 12abc"), c_atol("-3.9")) == (12, -3)
    assert (c_atof(".5x"), c_atof("1e-1"), c_atof("1e"), c_atof("-INF")) == (
        0.5,
        0.1,
        1.0,
        float("-inf"),
    )
    with pytest.raises(ParamError):
        c_atof("x1")
