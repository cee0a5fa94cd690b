"""The agreement table of `manage.py agreement`: one line per value. Pure core, no Django.

    LABELS file --read_labels--> labels frame --agreement_lines--> lines --format_text/json

The numbers come from `judging.core.agreement` (`pairwise_agreement` and
`group_agreement`, the functions behind the organiser's agreement page); this
module only chooses, names and orders them. Each line has the columns
LINE_COLUMNS:

- aspect: `rel` (the schema's relevance), `rel_binary` (rel >= 1), `eff` and
  `cred` (the schema's first and second aspect, when it has them);
- scope: a topic id, or `all`: the items of every topic pooled into one table
  (not an average over topics);
- statistic and raters: `observed_agreement`, `cohen_kappa`,
  `cohen_kappa_linear`, `cohen_kappa_quadratic` and, for rel only,
  `voorhees_overlap` (of the items labelled >= 1), for each pair of assessors
  `X|Y` (X < Y in code-point order) who labelled a common item in the scope,
  over the items both gave a value in the aspect; then
  `krippendorff_alpha_nominal`, `krippendorff_alpha_ordinal` and
  `fleiss_kappa` over all assessors, raters `*` (see `judging.core.agreement` for
  which items Fleiss' kappa uses when items have different numbers of ratings);
- value: a float, or None with the reason in `reason`.

Order: by aspect (rel, rel_binary, eff, cred), then scope (topics in
`topic_sort_key` order: numeric ids numerically, then the others; `all`
last), then statistic (in the order above), then raters (pairs by X, then Y).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judging.core.agreement import (
    Statistic,
    group_agreement,
    pairwise_agreement,
)
from judging.core.agreement_statistics import schema_aspects
from judging.core.judgment_files import (
    ALL_RATERS,
    ALL_TOPICS,
    LABELS_ASPECT_COLUMNS,
    PAIR_MARK,
    read_labels_tsv,
)
from workbench.core.label_schema import LabelSchema
from workbench.core.problems import InputError
from workbench.core.topic_ids import topic_sort_key

LINE_COLUMNS = ("aspect", "scope", "statistic", "raters", "value", "reason")
PAIR_STATISTICS = (
    Statistic.P_OBSERVED,
    Statistic.COHEN_KAPPA,
    Statistic.COHEN_KAPPA_LINEAR,
    Statistic.COHEN_KAPPA_QUADRATIC,
    Statistic.VOORHEES_OVERLAP,
)
GROUP_STATISTICS = (Statistic.ALPHA_NOMINAL, Statistic.ALPHA_ORDINAL, Statistic.FLEISS_KAPPA)
UNDEFINED = "undefined"


def aspect_names(schema: LabelSchema) -> dict[str, str]:
    """Each agreement aspect's name in the labels frame -> its name in the table, in table order.

    Raises ValueError for a schema with more aspects than the table has names for.
    """
    if len(schema.aspects) > len(LABELS_ASPECT_COLUMNS):
        raise ValueError(
            f"the schema has {len(schema.aspects)} aspects ({', '.join(schema.aspect_ids)}); "
            f"the agreement table has names for {len(LABELS_ASPECT_COLUMNS)} "
            f"({', '.join(LABELS_ASPECT_COLUMNS)})"
        )
    names = {"relevance": "rel", "relevance_binary": "rel_binary"}
    return names | dict(zip(schema.aspect_ids, LABELS_ASPECT_COLUMNS, strict=False))


def read_labels(data: bytes, *, name: str, schema: LabelSchema) -> pd.DataFrame:
    """A LABELS file (see `judgment_files.read_labels_tsv`) as a labels frame.

    Columns: assessor, query_id, doc_id, relevance and one per schema aspect
    (nullable integers, NA where no label was given). Raises InputError with
    every problem (file, line, reason).
    """
    columns, log = read_labels_tsv(data, name=name, schema=schema)
    if not log.ok:
        raise InputError.from_log(log)
    frame = pd.DataFrame(columns)
    labels = ["relevance", *schema.aspect_ids]
    return frame.astype(dict.fromkeys(labels, "Int64"))


def agreement_lines(labels: pd.DataFrame, *, schema: LabelSchema) -> pd.DataFrame:
    """Every line of the agreement table of a labels frame (columns LINE_COLUMNS, in order).

    labels: `assessor, query_id, doc_id, relevance` and a column per schema
    aspect; a null or negative value is no label.
    """
    aspects = schema_aspects(schema)
    pairs = pairwise_agreement(labels, aspects=aspects)
    groups = group_agreement(labels, aspects=aspects)
    return lines_of(pairs, groups, schema=schema)


def lines_of(pairs: pd.DataFrame, groups: pd.DataFrame, *, schema: LabelSchema) -> pd.DataFrame:
    """The table's lines from `pairwise_agreement` and `group_agreement` frames of the schema."""
    names = aspect_names(schema)
    pairs = pairs[pairs.statistic.isin(PAIR_STATISTICS)]
    groups = groups[groups.statistic.isin(GROUP_STATISTICS)]
    frame = pd.concat(
        [
            pairs.assign(
                raters=pairs.assessor_a.astype(str) + PAIR_MARK + pairs.assessor_b.astype(str)
            ),
            groups.assign(raters=ALL_RATERS, assessor_a="", assessor_b=""),
        ],
        ignore_index=True,
    )
    frame = frame[frame.aspect.isin(names)]
    topics = sorted(frame.query_id.dropna().unique(), key=topic_sort_key)
    per_topic = frame.scope == "topic"
    scope = frame.query_id.where(per_topic, ALL_TOPICS)
    order = {
        "aspect_rank": frame.aspect.map({name: i for i, name in enumerate(names)}),
        "scope_rank": frame.query_id.map({t: i for i, t in enumerate(topics)}).where(
            per_topic, len(topics)
        ),
        "statistic_rank": frame.statistic.map(
            {s.value: i for i, s in enumerate([*PAIR_STATISTICS, *GROUP_STATISTICS])}
        ),
    }
    ranked = frame.assign(**order, scope=scope).sort_values(
        [*order, "assessor_a", "assessor_b"], kind="stable"
    )
    lines = pd.DataFrame(
        {
            "aspect": ranked.aspect.map(names),
            "scope": ranked.scope,
            "statistic": ranked.statistic,
            "raters": ranked.raters,
            "value": ranked.value.astype(np.float64),
            "reason": ranked.undefined_reason,
        }
    )
    return lines.reset_index(drop=True)


def line_records(lines: pd.DataFrame) -> list[dict[str, Any]]:
    """The lines as dicts: value a float or None, reason a string or None."""
    return [
        {
            "aspect": aspect,
            "scope": scope,
            "statistic": statistic,
            "raters": raters,
            # + 0.0 turns a -0.0 into 0.0.
            "value": None if np.isnan(value) else float(value) + 0.0,
            "reason": reason if isinstance(reason, str) else None,
        }
        for aspect, scope, statistic, raters, value, reason in lines[list(LINE_COLUMNS)].itertuples(
            index=False
        )
    ]


def format_text(lines: pd.DataFrame) -> str:
    """Tab-separated: a header line, then `aspect scope statistic raters value` per line.

    The value is Python's shortest repr that reads back to the same float
    (up to 17 significant digits); an undefined value is `undefined`
    followed by a sixth column, the reason.
    """
    rows = ["\t".join(LINE_COLUMNS)]
    for record in line_records(lines):
        cells = [record[c] for c in LINE_COLUMNS[:4]]
        if record["value"] is None:
            cells += [UNDEFINED, record["reason"]]
        else:
            cells.append(repr(record["value"]))
        rows.append("\t".join(cells))
    return "\n".join(rows) + "\n"


def format_json(lines: pd.DataFrame) -> str:
    """A JSON list with one object per line (keys LINE_COLUMNS; value null when undefined)."""
    return _json_lines(line_records(lines))


def _json_lines(records: Sequence[dict[str, Any]]) -> str:
    # One object per text line: valid JSON that still greps and diffs line by line.
    if not records:
        return "[]\n"
    body = ",\n".join(json.dumps(record, allow_nan=False) for record in records)
    return f"[\n{body}\n]\n"
