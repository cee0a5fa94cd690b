"""Spreadsheet cells: a cell a spreadsheet would run as a formula is written as text."""

from __future__ import annotations

import csv
import io

import pytest

from workbench.core.spreadsheets import csv_text, spreadsheet_cell, tsv_line, tsv_text


@pytest.mark.parametrize(
    "text",
    ["=cmd|'/C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A2)", "\tx", "\rx", "-", "+", "=", "-inf"],
)
def test_a_cell_that_would_start_a_formula_gets_a_leading_quote(text):
    assert spreadsheet_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["-0.5", "+3", "-1e-05", "0.4722", "-12", -0.5, -3, 1e-300])
def test_numbers_stay_numbers(value):
    assert spreadsheet_cell(value) == str(value)


@pytest.mark.parametrize("text", ["bm25", "a=b", "x-1", "'quoted", "", "nan", "0-1"])
def test_other_cells_are_written_as_they_are(text):
    assert spreadsheet_cell(text) == text


def test_a_tsv_row_keeps_its_columns_whatever_a_cell_holds():
    line = tsv_line(["=a\tb", "c\nd", 0.5])
    assert line.split("\t") == ["'=a b", "c d", "0.5"]
    assert tsv_text(["run", "map"], [["-run", -0.25]]) == "run\tmap\n'-run\t-0.25\n"


def test_a_csv_reads_back_to_the_neutralised_cells():
    text = csv_text(("run", "value"), [('=HYPERLINK("x","y")', -0.5), ("a,b", 1)])
    assert list(csv.reader(io.StringIO(text))) == [
        ["run", "value"],
        ['\'=HYPERLINK("x","y")', "-0.5"],
        ["a,b", "1"],
    ]
