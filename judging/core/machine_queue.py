"""Which documents people should judge first when machines have labelled a topic
(issue 25 item 6, the pool option `queue_order = machine_first`). Pure core.

A document is *settled* by the machines when at least one machine has a label for
it and every machine sample of it gives the same relevance grade: each machine's
latest sample per sample index (a re-run with `--documents all` adds copies; the
latest counts), over every machine of the campaign. Any other document (no machine
label, or samples that disagree, within one machine or between machines) comes
first in an assessor's queue. Only relevance is compared: the aspects follow it.
"""

from __future__ import annotations

from collections.abc import Iterable


def settled_documents(
    labelled: Iterable[str], samples: Iterable[tuple[int, str, int, int, int]]
) -> set[str]:
    """The docnos whose machine labels need no human first.

    labelled: docnos with a machine label (any machine).
    samples: the good samples as (machine id, docno, sample index, row id,
    relevance); of several rows with the same (machine, docno, sample index) the
    one with the highest row id counts.
    """
    latest: dict[tuple[int, str, int], tuple[int, int]] = {}
    for machine, docno, index, row, relevance in samples:
        key = (machine, docno, index)
        if key not in latest or row > latest[key][0]:
            latest[key] = (row, relevance)
    grades: dict[str, set[int]] = {}
    for (_, docno, _), (_, relevance) in latest.items():
        grades.setdefault(docno, set()).add(relevance)
    return {docno for docno in set(labelled) if len(grades.get(docno, ())) <= 1}
