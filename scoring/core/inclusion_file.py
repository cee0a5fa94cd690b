"""inclusion.tsv, each pooled document's inclusion probability in a stratified pool
(written by `scoring.core.exports.inclusion_text`): read and checked. Pure core.

    topic<TAB>docno<TAB>stratum<TAB>inclusion_probability

A first line naming the columns (as the workbench writes it) is skipped, and
so are blank lines. Every problem names the file and line: not four fields,
a stratum that is not an integer, a probability not in (0, 1], a (topic,
docno) twice, two probabilities in one (topic, stratum) (the estimates assume
a uniform draw within a stratum) and, against the qrels (`check_strata`), a
document in another stratum than the qrels put it in.

Frame returned: query_id, doc_id (str), stratum (int64), inclusion_probability
(float64), line (int64, 1-based), in file order.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.problems import InputError, ProblemLog

if TYPE_CHECKING:
    import pandas as pd

HEADER = ("topic", "docno", "stratum", "inclusion_probability")
COLUMNS = ("query_id", "doc_id", "stratum", "inclusion_probability", "line")


def read_inclusion(path: str) -> pd.DataFrame:
    """The file's rows; raises InputError naming each bad line."""
    import pandas as pd

    log = ProblemLog(path)
    rows: list[tuple[str, str, int, float, int]] = []
    seen: dict[tuple[str, str], int] = {}
    stratum_at: dict[tuple[str, int], tuple[float, int]] = {}
    for number, raw in enumerate(Path(path).read_bytes().splitlines(), start=1):
        try:
            fields = raw.decode("utf-8").split()
        except UnicodeDecodeError:
            log.add(number, "not UTF-8 text")
            continue
        if not fields or (number == 1 and tuple(fields) == HEADER):
            continue
        if len(fields) != 4:
            log.add(
                number,
                f"expected 'topic docno stratum inclusion_probability', got {len(fields)} fields",
            )
            continue
        topic, doc, stratum_text, probability_text = fields
        try:
            stratum = int(stratum_text)
        except ValueError:
            log.add(number, f"stratum {stratum_text!r} is not an integer")
            continue
        try:
            probability = float(probability_text)
        except ValueError:
            probability = math.nan
        if not 0 < probability <= 1:
            log.add(number, f"inclusion probability {probability_text!r} is not in (0, 1]")
            continue
        if (topic, doc) in seen:
            log.add(number, f"topic {topic} docno {doc} is on line {seen[topic, doc]} too")
            continue
        seen[topic, doc] = number
        first = stratum_at.setdefault((topic, stratum), (probability, number))
        if first[0] != probability:
            log.add(
                number,
                f"topic {topic} stratum {stratum}: inclusion probability {probability!r}, "
                f"but {first[0]!r} on line {first[1]} (one probability a stratum)",
            )
            continue
        rows.append((topic, doc, stratum, probability, number))
    if not log.ok:
        raise InputError.from_log(log)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype({"stratum": "int64", "inclusion_probability": "float64", "line": "int64"})


def check_strata(path: str, inclusion: pd.DataFrame, qrels: pd.DataFrame) -> None:
    """Raise InputError for each document the file puts in another stratum than
    the stratified qrels (query_id, doc_id, stratum) do."""
    both = inclusion.merge(
        qrels[["query_id", "doc_id", "stratum"]], on=["query_id", "doc_id"], suffixes=("", "_qrels")
    )
    wrong = both[both["stratum"] != both["stratum_qrels"]]
    if wrong.empty:
        return
    log = ProblemLog(path)
    for topic, doc, stratum, given, line in wrong[
        ["query_id", "doc_id", "stratum", "stratum_qrels", "line"]
    ].itertuples(index=False):
        log.add(
            int(line), f"topic {topic} docno {doc} is in stratum {stratum}, the qrels say {given}"
        )
    raise InputError.from_log(log)
