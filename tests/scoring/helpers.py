"""Test helpers: collections written as tiny inline TREC strings."""

from __future__ import annotations

import re
from pathlib import Path
from textwrap import dedent
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from scoring.core.evaluation import EvalOptions, Evaluation, evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.qrels import read_qrels
from workbench.core.run_files import read_run


def make_qrels(text: str) -> pd.DataFrame:
    """qrels from `topic docno label` lines (the iteration column is added)."""
    lines = [line.split() for line in dedent(text).strip().splitlines()]
    body = "".join(f"{topic} 0 {doc} {label}\n" for topic, doc, label in lines)
    return read_qrels(body.encode(), name="qrels")


def make_run(text: str, tag: str = "run") -> pa.Table:
    """A run from `topic docno score` lines (Q0, rank and tag are added)."""
    lines = [line.split() for line in dedent(text).strip().splitlines()]
    body = "".join(f"{topic} Q0 {doc} 0 {score} {tag}\n" for topic, doc, score in lines)
    parsed = read_run(body.encode(), name=tag)
    assert parsed.ok, parsed.problems.summary_lines()
    return parsed.table


def evaluate_strings(
    qrels: str, runs: list[str], measures: list[str], **options: Any
) -> Evaluation:
    return evaluate(
        make_qrels(qrels),
        [make_run(run, tag=f"run{index}") for index, run in enumerate(runs)],
        TREC.select(measures),
        EvalOptions(**options),
    )


def values(qrels: str, run: str, measures: list[str], **options: Any) -> dict[str, float | str]:
    """{"name topic": value} for one run, summaries under the topic "all"."""
    evaluation = evaluate_strings(qrels, [run], measures, **options)
    return {f"{name} {topic}": value for name, topic, value, _ in evaluation.rows(0)}


def reference_cases(directory: Path) -> list[Any]:
    """(arguments, expected file) of each row of the CASES.md table in `directory`."""
    table = (directory / "CASES.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", table, re.MULTILINE)
    assert rows, f"no cases in {directory / 'CASES.md'}"
    return [pytest.param(arguments, expected, id=arguments) for arguments, expected in rows]
