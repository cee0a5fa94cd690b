"""Run frames for the pooling tests: from inline TREC text, generated at
random, and the brute-force answers they are checked against."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from workbench.core.run_files import read_run


def runs_from_text(*texts: str) -> pd.DataFrame:
    """A runs frame from inline TREC run texts (topic Q0 docno rank score tag)."""
    tables = [read_run(text.encode(), name=f"run{i}").table for i, text in enumerate(texts)]
    frames = [table.to_pandas()[["run_id", "query_id", "doc_id", "score"]] for table in tables]
    return pd.concat(frames, ignore_index=True)


def random_runs(
    seed: int, *, runs: int = 6, topics: int = 3, docs: int = 60, depth: int = 40
) -> pd.DataFrame:
    """Runs over a small docno space, with many score ties, rows in random order."""
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(runs):
        for topic in range(topics):
            chosen = rng.choice(docs, size=depth, replace=False)
            scores = rng.integers(0, 8, size=depth) / 2  # few distinct scores: many ties
            for doc, score in zip(chosen, scores, strict=True):
                rows.append((f"run{run}", str(topic + 1), f"d{doc:03d}", float(score)))
    frame = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def brute_force_ranks(runs: pd.DataFrame) -> dict[tuple[str, str, str], int]:
    """(run, topic, docno) -> rank, by sorting each (run, topic) in plain Python."""
    groups: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for run, topic, doc, score in runs[["run_id", "query_id", "doc_id", "score"]].itertuples(
        index=False
    ):
        groups[run, topic].append((score, doc))
    ranks = {}
    for (run, topic), entries in groups.items():
        entries.sort(key=lambda entry: (entry[0], entry[1].encode()), reverse=True)
        for rank, (_, doc) in enumerate(entries, start=1):
            ranks[run, topic, doc] = rank
    return ranks


def brute_force_depth_pool(
    runs: pd.DataFrame, depth_of: dict[str, int]
) -> dict[tuple[str, str], tuple[int, int]]:
    """(topic, docno) -> (best rank, run count) over every run's top depth_of[topic]."""
    pool: dict[tuple[str, str], tuple[int, int]] = {}
    for (_, topic, doc), rank in brute_force_ranks(runs).items():
        if rank <= depth_of[topic]:
            best, count = pool.get((topic, doc), (rank, 0))
            pool[topic, doc] = (min(best, rank), count + 1)
    return pool
