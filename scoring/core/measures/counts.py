"""Counts and labels: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret."""

from __future__ import annotations

import numpy as np

from scoring.core.measures.base import Measure, ValueKind
from scoring.core.measures.params import Params
from scoring.core.measures.rankings import Rankings
from scoring.core.measures.summary import SummaryContext, total


def _run_tag(rankings: Rankings, params: Params) -> np.ndarray:
    return rankings.run_tag


def _tag_of_run(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    return np.asarray(context.run_tags, dtype=object)[:, None]


def _one(rankings: Rankings, params: Params) -> np.ndarray:
    return np.ones(len(rankings.num_ret))


def _topics_averaged(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    return context.num_queries[:, None].astype(np.float64)


def _num_ret(rankings: Rankings, params: Params) -> np.ndarray:
    return rankings.num_ret.astype(np.float64)


def _num_rel(rankings: Rankings, params: Params) -> np.ndarray:
    return rankings.num_rel.astype(np.float64)


def _relevant_judgments(values: np.ndarray, context: SummaryContext) -> np.ndarray:
    """Under -c trec_eval recounts the qrels, taking labels > 0 whatever -l says."""
    if context.complete:
        return np.full((values.shape[1], 1), float(context.judgments.positive_total))
    return total(values, context)


def _num_rel_ret(rankings: Rankings, params: Params) -> np.ndarray:
    return rankings.num_rel_ret.astype(np.float64)


def _num_nonrel_judged_ret(rankings: Rankings, params: Params) -> np.ndarray:
    judged = np.count_nonzero((rankings.label >= 0) & rankings.valid, axis=0)
    return (judged - rankings.num_rel_ret).astype(np.float64)


RUNID = Measure(
    "runid",
    _run_tag,
    "The run tag, from the last line of the run file.",
    summary=_tag_of_run,
    per_query=False,
    kind=ValueKind.TAG,
)
NUM_Q = Measure(
    "num_q",
    _one,
    "Number of topics averaged over (all qrels topics under -c).",
    summary=_topics_averaged,
    per_query=False,
    kind=ValueKind.COUNT,
)
NUM_RET = Measure(
    "num_ret",
    _num_ret,
    "Number of documents retrieved; the summary is a sum.",
    summary=total,
    kind=ValueKind.COUNT,
    reset_for_missing_topic=True,
)
NUM_REL = Measure(
    "num_rel",
    _num_rel,
    "Number of relevant documents in the qrels; the summary is a sum.",
    summary=_relevant_judgments,
    kind=ValueKind.COUNT,
)
NUM_REL_RET = Measure(
    "num_rel_ret",
    _num_rel_ret,
    "Number of relevant documents retrieved; the summary is a sum.",
    summary=total,
    kind=ValueKind.COUNT,
)
NUM_NONREL_JUDGED_RET = Measure(
    "num_nonrel_judged_ret",
    _num_nonrel_judged_ret,
    "Number of judged non-relevant documents retrieved; the summary is a sum.",
    summary=total,
    kind=ValueKind.COUNT,
)
