"""Which labels make the qrels: the humans', a machine's, or the humans' with
the machine's filling the gaps (issue 25 item 6, "qrels variants"). Pure core.

One rule, `labels_for_source`, used by every reader of a qrels variant
(export_qrels, the scores page, the leaderboard, the bundle):

- "human": the final human labels;
- "machine": the machine's labels;
- "human-then-machine": for each (query_id, doc_id), the human label where
  one exists, else the machine's.

Both frames have the columns of a final labels frame: query_id, doc_id,
relevance and one column per aspect (NOT_ASKED, -1, when not asked), one row
per (query_id, doc_id).
"""

from __future__ import annotations

import pandas as pd

from workbench.core.label_schema import NOT_ASKED

HUMAN = "human"
MACHINE = "machine"
HUMAN_THEN_MACHINE = "human-then-machine"
LABEL_SOURCES = (HUMAN, MACHINE, HUMAN_THEN_MACHINE)

KEY = ["query_id", "doc_id"]


def label_source(text: str) -> str:
    """The label source named by `text`; ValueError naming the allowed ones otherwise."""
    if text not in LABEL_SOURCES:
        allowed = ", ".join(LABEL_SOURCES)
        raise ValueError(f"unknown label source {text!r}: use one of {allowed}")
    return text


def _checked(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    missing = [c for c in [*KEY, "relevance"] if c not in frame.columns]
    if missing:
        raise ValueError(f"the {name} labels lack the columns {missing}")
    duplicated = frame.duplicated(KEY)
    if duplicated.any():
        first = frame.loc[duplicated, KEY].iloc[0]
        raise ValueError(
            f"the {name} labels have several rows for query {first['query_id']!r}, "
            f"document {first['doc_id']!r}"
        )
    return frame


def labels_for_source(human: pd.DataFrame, machine: pd.DataFrame, source: str) -> pd.DataFrame:
    """The labels of `source` (one of LABEL_SOURCES), one row per (query_id, doc_id),
    sorted by query_id then doc_id.

    "human-then-machine" has the human frame's columns: an aspect the machine
    frame lacks is NOT_ASKED on its rows; machine columns the human frame
    lacks are dropped.
    """
    source = label_source(source)
    human, machine = _checked(human, HUMAN), _checked(machine, MACHINE)
    if source == HUMAN:
        chosen = human
    elif source == MACHINE:
        chosen = machine
    else:
        judged = pd.MultiIndex.from_frame(human[KEY])
        machine_only = machine[~pd.MultiIndex.from_frame(machine[KEY]).isin(judged)]
        filled = machine_only.reindex(columns=human.columns, fill_value=NOT_ASKED)
        parts = [part for part in (human, filled) if len(part)]
        chosen = pd.concat(parts, ignore_index=True) if parts else human.iloc[0:0]
        chosen = chosen.astype(human.dtypes.to_dict()) if len(chosen) else chosen
    return chosen.sort_values(KEY, kind="stable").reset_index(drop=True)
