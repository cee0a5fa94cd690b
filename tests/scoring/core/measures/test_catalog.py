"""How -m picks measures and parameters."""

import re

import pytest

from scoring.core.measures.catalog import TREC, MeasureError


def _names(arguments):
    return [name for requested in TREC.select(arguments) for name in requested.names]


def test_without_measures_the_official_ones_are_computed():
    assert _names([])[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert _names([])[-1] == "P_1000"


def test_measures_come_out_in_trec_eval_order_whatever_the_order_asked():
    assert _names(["P.5", "map", "num_q"]) == ["num_q", "map", "P_5"]


def test_the_first_parameters_given_to_a_measure_win():
    assert _names(["P.5", "P.10", "P"]) == ["P_5"]
    with_all = _names(["all_trec", "P.5"])
    assert "P_5" in with_all
    assert "P_10" not in with_all


def test_parameters_of_a_measure_without_parameters_are_ignored():
    assert _names(["map.5"]) == ["map"]


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("nosuch", "unknown measure 'nosuch'"),
        ("P.", "empty parameter list"),
        ("P.0", "measure 'P': cutoffs must be positive"),
        ("prefs_simp", "rel_info format 'prefs'"),
        ("P_avgjg", "'qrels_jg'"),
    ],
)
def test_measures_that_cannot_be_computed_are_errors(argument, message):
    with pytest.raises(MeasureError, match=message):
        TREC.select([argument])


def test_all_trec_has_every_measure_but_dcg_ideal_dcg_and_yaap():
    all_trec = {requested.measure.name for requested in TREC.select(["all_trec"])}
    assert {measure.name for measure in TREC.measures} - all_trec == {"dcg", "ideal_dcg", "yaap"}


@pytest.mark.parametrize(
    ("printed", "names"),
    [
        ("P_10", ("P_10",)),
        ("ndcg_cut_20", ("ndcg_cut_20",)),
        ("Rprec_mult_1.5", ("Rprec_mult_1.50",)),
        ("iprec_at_recall_0.10", ("iprec_at_recall_0.10",)),
        ("num_rel_ret", ("num_rel_ret",)),
    ],
)
def test_a_measure_as_trec_eval_prints_it_is_read_as_the_argument_it_comes_from(printed, names):
    assert TREC.select([printed])[0].names == names


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("P.1e400", "is not a whole number (trec_eval would read 1)"),
        ("P_1e400", "is not a whole number"),
        ("ndcg_cut.99999999999999999999", "past the largest"),
        ("success.18446744073709551616", "past the largest"),
        ("P.99999999999999999999", "past the largest"),
    ],
)
def test_a_measure_whose_parameters_are_read_only_in_part_is_an_error(argument, message):
    with pytest.raises(MeasureError, match=re.escape(message)):
        TREC.select([argument])


def test_one_measure_value_is_named_once_and_several_are_refused():
    assert TREC.select_one("P.10").names == ("P_10",)
    assert TREC.select_one("Rprec_mult_1.5").names == ("Rprec_mult_1.50",)
    with pytest.raises(MeasureError, match=r"names 2 values \(recall_1, recall_2\): name one"):
        TREC.select_one("recall.1,2")
    with pytest.raises(MeasureError, match="name one"):
        TREC.select_one("official")
