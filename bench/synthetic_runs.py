"""Make TREC runs of varied quality for published qrels, to replay pooling on.

    python bench/synthetic_runs.py --qrels /work/shared/data/qrels/qrels.robust05.txt \\
        --out bench/out/robust05 [--runs 80] [--teams 20] [--depth 1000] [--seed 1]

TREC runs are not public, so the pooling simulator (`manage.py
simulate_pooling`) is replayed on real qrels with runs made here. Writes
OUT/runs/<tag>.txt (one run a file, `topic Q0 docno rank score tag`) and
OUT/groups.tsv (`tag<TAB>team`); prints each run's map against the qrels.
The same arguments give the same files.

The model, per topic of the qrels (nothing in it knows about any pooling
strategy; its parameters were set once, before any replay, so that the runs'
map spreads as published TREC runs' do, about 0.05 to 0.4):

- documents: the qrels' judged documents of the topic, and PSEUDO unjudged
  pseudo-documents (`u<topic>-<k>`), which count as not relevant, as
  trec_eval counts a document the qrels do not list;
- every document has a retrievability z, shared by all systems (how well it
  matches the query's words): N(0, 1) for a pseudo-document and N(JUDGED_MEAN,
  1) for a judged one (the qrels' documents were ranked high by the systems
  of the year, or they would not have been pooled; relevant and judged
  non-relevant alike);
- each team has a quality, uniform in [0, QUALITY_MAX]; each run's is its
  team's plus N(0, RUN_SPREAD), and on each topic plus N(0, TOPIC_SPREAD)
  (a system good on average fails on some topics); never below 0;
- a run scores each document z + quality * relevance + team noise + run noise,
  relevance 1 for grade 1 and 1 + (grade - 1) / 4 above (0 for not relevant),
  team noise N(0, TEAM_NOISE) shared by a team's runs, run noise N(0,
  RUN_NOISE); it returns its top DEPTH, scores rounded to 4 decimals (ties,
  broken by the decided rule, as in real runs).

So systems share documents (retrievability, and more so within a team),
relevant documents are spread over the ranks by each run's quality, and some
relevant documents (low retrievability) are found by few runs or none.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

PSEUDO = 20_000  # unjudged documents per topic
JUDGED_MEAN = 2.0
QUALITY_MAX = 1.5
RUN_SPREAD = 0.25
TOPIC_SPREAD = 0.5
TEAM_NOISE = 0.8
RUN_NOISE = 0.5


def read_qrels(path: Path) -> dict[str, list[tuple[str, int]]]:
    """topic -> [(docno, grade)], grades below 0 (pooled, not judged) left out."""
    topics: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        fields = line.split()
        if len(fields) == 4 and int(fields[3]) >= 0:
            topics[fields[0]].append((fields[2], int(fields[3])))
    return topics


def generate(qrels: Path, out: Path, *, runs: int, teams: int, depth: int, seed: int) -> list[str]:
    """Write the runs and groups; returns the run tags."""
    rng = np.random.default_rng(seed)
    team_of = np.arange(runs) % teams
    team_quality = rng.uniform(0.0, QUALITY_MAX, size=teams)
    run_quality = team_quality[team_of] + rng.normal(0.0, RUN_SPREAD, size=runs)
    tags = [f"team{team_of[r] + 1:02d}_run{r // teams + 1}" for r in range(runs)]
    lines: list[list[str]] = [[] for _ in range(runs)]
    for topic, judged in sorted(read_qrels(qrels).items()):
        docnos = np.array([d for d, _ in judged] + [f"u{topic}-{k}" for k in range(PSEUDO)])
        grade = np.array([g for _, g in judged] + [0] * PSEUDO)
        relevance = np.where(grade >= 1, 1.0 + (grade - 1) / 4.0, 0.0)
        z = rng.normal(0.0, 1.0, size=len(docnos))
        z[: len(judged)] += JUDGED_MEAN
        team_noise = rng.normal(0.0, TEAM_NOISE, size=(teams, len(docnos)))
        quality = np.maximum(run_quality + rng.normal(0.0, TOPIC_SPREAD, size=runs), 0.0)
        for r in range(runs):
            score = z + quality[r] * relevance + team_noise[team_of[r]]
            score += rng.normal(0.0, RUN_NOISE, size=len(docnos))
            top = np.argpartition(-score, depth - 1)[:depth]
            top = top[np.argsort(-score[top], kind="stable")]
            printed = np.round(score[top] + 10.0, 4)
            lines[r].extend(
                f"{topic} Q0 {d} {k} {s:.4f} {tags[r]}"
                for k, (d, s) in enumerate(zip(docnos[top], printed, strict=True), start=1)
            )
    (out / "runs").mkdir(parents=True, exist_ok=True)
    for tag, run_lines in zip(tags, lines, strict=True):
        (out / "runs" / f"{tag}.txt").write_text("\n".join(run_lines) + "\n")
    (out / "groups.tsv").write_text("".join(f"{tag}\t{tag.split('_')[0]}\n" for tag in tags))
    return tags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--teams", type=int, default=20)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    generate(
        arguments.qrels,
        arguments.out,
        runs=arguments.runs,
        teams=arguments.teams,
        depth=arguments.depth,
        seed=arguments.seed,
    )
    print(f"wrote {arguments.runs} runs to {arguments.out / 'runs'}")


if __name__ == "__main__":
    main()
