"""Agreement with pytrec_eval on generated collections (hypothesis).

pytrec_eval-terrier wraps trec_eval 9.0.x. Generated collections have ties,
near-ties, graded labels, labels below 0 (pooled, not judged), topics of the
qrels missing from the run, topics of the run missing from the qrels,
topics without relevant documents, and unusual topic and docno strings.
Every measure both compute is compared per topic, to 1e-12; they agree on
everything else, after these known differences:

- Scores: trec_eval 9 and pytrec_eval keep them as float32, 10.0 as doubles,
  so two scores equal in float32 would rank differently. Generated scores
  are multiples of 1/4 and near-ties 2**-20 apart, exact and distinct in both.
- Recall points (iprec_at_recall, 11pt_avg): 9.x takes the (long)(f x R + 0.9)-th
  relevant document, 10.0 the lround(f x R)-th. Points are compared where the
  two rules agree for the topic's R; 11pt_avg when all eleven agree.
- -c: pytrec_eval has none; both skip qrels topics missing from the run
  without it, which is what is compared.
- rbp, rbp_resid, unj (10.0) and yaap are not in pytrec_eval; runid and
  relstring come back as 0.0 from it; all are left out.
- gm_map and gm_bpref come back per topic as the logarithms trec_eval keeps
  (the geometric mean is taken over topics); ours are compared as such.
- A qrels topic whose labels are all below 0 makes trec_eval read its count
  of label levels before setting it (undefined behaviour; pytrec_eval
  crashes when such a topic comes first). Ours counts no levels there;
  generated topics have one label >= 0 at least.

Found by experiment: nothing else. In particular bpref, infAP, ndcg_rel,
Rndcg and G agree with labels below 0 in the qrels, with -l 2 and with -J.
"""

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.evaluation import EvalOptions, evaluate
from scoring.core.measures.catalog import TREC
from scoring.core.measures.numerics import c_long, lround

TOPICS = ["1", "2", "10", "a-3"]
DOCS = [*(f"d{i}" for i in range(14)), "D7", "d07", "doc.x"]
LABELS = [-1, 0, 0, 0, 1, 1, 2, 3]
LEFT_OUT = {"runid", "relstring"}
SHARED = sorted(pytrec_eval.supported_measures - LEFT_OUT)
RECALL_POINTS = [point / 10 for point in range(11)]

scores = st.one_of(
    st.integers(0, 12).map(lambda k: k / 4),
    st.integers(0, 6).map(lambda k: 1 + k * 2.0**-20),
)


@st.composite
def collections(draw):
    qrels: dict[str, dict[str, int]] = {}
    for topic in draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True)):
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
        labels = [draw(st.sampled_from(LABELS)) for _ in judged]
        if max(labels) < 0:
            labels[0] = 0  # see the module docstring: trec_eval crashes on such a topic
        qrels[topic] = dict(zip(judged, labels, strict=True))
    run: dict[str, dict[str, float]] = {}
    for topic in draw(st.lists(st.sampled_from([*TOPICS, "99"]), min_size=1, unique=True)):
        retrieved = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=14, unique=True))
        run[topic] = {doc: draw(scores) for doc in retrieved}
    return qrels, run


def _ours(qrels, run, options):
    qrels_frame = pd.DataFrame(
        [(topic, doc, label) for topic, docs in qrels.items() for doc, label in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    rows = [(topic, doc, score) for topic, docs in run.items() for doc, score in docs.items()]
    run_table = pa.table(
        {
            "query_id": [row[0] for row in rows],
            "doc_id": [row[1] for row in rows],
            "score": [row[2] for row in rows],
            "run_id": ["run"] * len(rows),
        }
    )
    evaluation = evaluate(qrels_frame, [run_table], TREC.select(SHARED), options)
    result: dict[str, dict[str, float]] = {}
    for name, topic, value, _ in evaluation.rows(0, summary=False):
        result.setdefault(topic, {})[name] = value
    # Measures printed for the summary only are kept per topic all the same.
    for values in evaluation.measures:
        if not values.requested.measure.per_query:
            for group, topic in enumerate(evaluation.group_topic):
                for name, value in zip(
                    values.requested.names, values.per_topic[group], strict=True
                ):
                    result[evaluation.topics[topic]][name] = value
    return result


def _rules_agree(fraction: float, num_rel: int) -> bool:
    product = np.array([fraction * num_rel])
    return c_long(product + 0.9)[0] == lround(product)[0]


def _comparable(name: str, num_rel: int) -> bool:
    if name.startswith("iprec_at_recall_"):
        return _rules_agree(float(name.rsplit("_", 1)[1]), num_rel)
    if name == "11pt_avg":
        return all(_rules_agree(point, num_rel) for point in RECALL_POINTS)
    return True


def _check_agreement(qrels, run, *, relevance_level=1, judged_only=False):
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, SHARED, relevance_level=relevance_level, judged_docs_only_flag=judged_only
    ).evaluate(run)
    options = EvalOptions(relevance_level=relevance_level, judged_only=judged_only)
    ours = _ours(qrels, run, options)
    assert set(ours) == set(theirs)
    for topic, expected in theirs.items():
        num_rel = int(expected["num_rel"])
        for name, value in expected.items():
            if _comparable(name, num_rel):
                assert _same(ours[topic][name], value), (topic, name)


def _same(ours: float, theirs: float) -> bool:
    """Equal to 1e-12, NaN included (both give 0/0 for a ranking -J empties)."""
    both_nan = math.isnan(ours) and math.isnan(theirs)
    return both_nan or math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=150, deadline=None)
@given(collections())
def test_every_shared_measure_agrees_with_pytrec_eval(collection):
    _check_agreement(*collection)


@settings(max_examples=60, deadline=None)
@given(collections())
def test_relevance_level_two_agrees_with_pytrec_eval(collection):
    _check_agreement(*collection, relevance_level=2)


@settings(max_examples=60, deadline=None)
@given(collections())
def test_judged_documents_only_agrees_with_pytrec_eval(collection):
    _check_agreement(*collection, judged_only=True)
