"""Generate a deterministic TREC-style workload: run files, qrels and topics.

Default scale is TREC Clinical Decision Support 2014: 30 topics, 80 runs of
1000 documents per topic, docnos drawn from a 733,000-document collection.

Real runs overlap heavily: most systems put the same strong documents near
the top, and runs from one team differ only a little. We model that with a
latent per-topic document quality shared by all runs, plus a team-level
perturbation and a smaller run-level one, so the pool grows sub-linearly with
depth and team siblings look alike.

    python bench/gen_workload.py --out bench/workload
    python bench/gen_workload.py --topics 50 --runs 200 --out bench/workload-large

Writes OUT/runs/<tag>.txt, OUT/qrels.txt (graded, the depth-100 pool judged
from the latent quality) and OUT/topics.jsonl. The same arguments always give
byte-identical files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

CANDIDATES_PER_TOPIC = 20_000
RUNS_PER_TEAM = 4
QRELS_DEPTH = 100


def collection_docnos(size: int, rng: np.random.Generator) -> np.ndarray:
    """PubMed-Central-like docnos ("PMC" + 7 digits), unique, in random order."""
    ids = rng.choice(9_000_000, size=size, replace=False) + 1_000_000
    return np.char.add("PMC", ids.astype(str))


def topic_rankings(
    n_runs: int, depth: int, n_docs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Top-`depth` candidate indices and scores for each run on one topic.

    Returns (indices, scores), both shaped (n_runs, depth), best first.
    """
    quality = rng.lognormal(mean=0.0, sigma=1.0, size=n_docs)
    log_quality = np.log(quality)
    n_teams = -(-n_runs // RUNS_PER_TEAM)
    team_noise = rng.normal(0.0, 0.9, size=(n_teams, n_docs))
    indices = np.empty((n_runs, depth), dtype=np.int64)
    scores = np.empty((n_runs, depth), dtype=np.float64)
    for run in range(n_runs):
        noisy = log_quality + team_noise[run // RUNS_PER_TEAM] + rng.normal(0.0, 0.4, n_docs)
        top = np.argpartition(-noisy, depth - 1)[:depth]
        top = top[np.argsort(-noisy[top], kind="stable")]
        indices[run] = top
        # Scores on a run-specific scale, rounded like real systems print them;
        # rounding creates the occasional tie that the docno rule must break.
        scale = rng.uniform(5.0, 30.0)
        scores[run] = np.round(scale + noisy[top], 4)
    return indices, scores


def run_tags(n_runs: int) -> list[str]:
    return [
        f"team{run // RUNS_PER_TEAM + 1:02d}_run{run % RUNS_PER_TEAM + 1}" for run in range(n_runs)
    ]


def generate(out: Path, *, topics: int, runs: int, depth: int, collection: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    docnos = collection_docnos(collection, rng)
    tags = run_tags(runs)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    run_lines: list[list[str]] = [[] for _ in range(runs)]
    qrels_lines: list[str] = []
    topic_lines: list[str] = []
    ranks = np.arange(1, depth + 1).astype(str)
    for topic in range(1, topics + 1):
        topic_id = str(topic)
        candidates = rng.choice(collection, size=CANDIDATES_PER_TOPIC, replace=False)
        indices, scores = topic_rankings(runs, depth, CANDIDATES_PER_TOPIC, rng)
        for run in range(runs):
            names = docnos[candidates[indices[run]]]
            lines = [
                f"{topic_id} Q0 {name} {rank} {score:.4f} {tags[run]}"
                for name, rank, score in zip(names, ranks, scores[run], strict=True)
            ]
            run_lines[run].extend(lines)
        pooled = np.unique(indices[:, :QRELS_DEPTH])
        # Grade by how many runs rank the document in their top 100: a cheap,
        # deterministic stand-in for an assessor that rewards consensus.
        votes = np.bincount(indices[:, :QRELS_DEPTH].ravel(), minlength=CANDIDATES_PER_TOPIC)
        grade = np.select([votes[pooled] >= runs // 4, votes[pooled] >= runs // 10], [2, 1], 0)
        for doc, rel in sorted(zip(docnos[candidates[pooled]], grade, strict=True)):
            qrels_lines.append(f"{topic_id} 0 {doc} {rel}")
        topic_lines.append(
            json.dumps({"topic_id": topic_id, "title": f"Synthetic topic {topic_id}"})
        )
    for tag, lines in zip(tags, run_lines, strict=True):
        (out / "runs" / f"{tag}.txt").write_text("\n".join(lines) + "\n")
    (out / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    (out / "topics.jsonl").write_text("\n".join(topic_lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("bench/workload"))
    parser.add_argument("--topics", type=int, default=30)
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--collection", type=int, default=733_000)
    parser.add_argument("--seed", type=int, default=2014)
    args = parser.parse_args()
    generate(
        args.out,
        topics=args.topics,
        runs=args.runs,
        depth=args.depth,
        collection=args.collection,
        seed=args.seed,
    )
    print(f"wrote {args.runs} runs x {args.topics} topics x {args.depth} to {args.out}")


if __name__ == "__main__":
    main()
