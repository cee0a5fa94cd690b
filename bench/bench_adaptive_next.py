"""Live adaptive pools: the time to choose an assessor's next document.

    python bench/bench_adaptive_next.py [--database-url URL] [--judgments N]
        [--strategies mtf,hedge,bandit,thompson,active]

Sets up a PostgreSQL database of its own as bench_judging does (created if
missing, emptied first), imports RUNS runs of 50 topics x 1,000 documents,
each drawn from a topic's 2,000 documents (so the union, the pool, is
about 100,000 entries), and for each strategy builds an adaptive pool of
depth 1,000 and budget 100,000. An assessor then judges N documents of one
topic as the judging page does (`judgment_submit`, then
`Assignment.next_unjudged`, which the page and the API's next-document
path call); each next_unjudged is timed: the queue query, the strategy
advanced by the new judgment and the draw claimed. The first request of a
process, which reads the runs into the strategy's candidates, is timed
apart. Target: median < 20 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_judging import analyze, create_database, setup  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/wb_adaptive_live_bench"
TOPICS, PER_TOPIC, DEPTH, RUNS = 50, 2_000, 1_000, 10


def run_text(tag: str, seed: int) -> bytes:
    """A run ranking, on every topic, DEPTH of the topic's PER_TOPIC documents."""
    rng = random.Random(seed)
    lines = []
    for t in range(1, TOPICS + 1):
        docs = rng.sample(range(PER_TOPIC), DEPTH)
        for rank, d in enumerate(docs, 1):
            lines.append(f"{t} Q0 D{t * PER_TOPIC + d:06d} {rank} {DEPTH - rank + 1} {tag}\n")
    return "".join(lines).encode()


def relevant(docno: str) -> int:
    """About one document in five relevant, more among the low numbers (a signal to learn)."""
    n = int(docno[1:]) % PER_TOPIC
    return int((n * 2654435761) % 97 < (40 if n < 400 else 12))


def build_campaign():
    from pooling import run_services
    from pooling.models import Campaign, Topic
    from workbench.core.label_schema import SCHEMA_PRESETS

    campaign = Campaign.objects.create(
        name="bench", slug="bench", label_schema=SCHEMA_PRESETS["binary"].schema()
    )
    Topic.objects.bulk_create(
        Topic(campaign=campaign, topic_id=str(t), title=f"topic {t}", position=t)
        for t in range(1, TOPICS + 1)
    )
    uploads = [run_services.RunUpload(f"r{i}.txt", run_text(f"r{i}", i)) for i in range(RUNS)]
    run_services.runs_import(campaign=campaign, uploads=uploads)
    return campaign


def bench_strategy(campaign, strategy: str, n: int) -> dict[str, float]:
    from django.contrib.auth.models import User

    from judging import services
    from pooling import pool_services
    from pooling.core.spec import PoolSpec

    spec = PoolSpec(depth=DEPTH, strategy=strategy, budget=TOPICS * PER_TOPIC, seed=1)
    pool = pool_services.pool_build(
        campaign=campaign, spec=spec, name=strategy, confirm_over_budget=True
    )
    analyze()
    assessor = User.objects.create_user(f"assessor-{strategy}", password="x")
    [assignment] = services.assignments_create(
        pool=pool, topics=list(campaign.topics.filter(topic_id="1")), assessors=[assessor]
    )
    start = time.perf_counter()
    entry = assignment.next_unjudged()
    cold = time.perf_counter() - start
    times = []
    for _ in range(n):
        services.judgment_submit(
            assignment=assignment, docno=entry.docno, relevance=relevant(entry.docno), aspects={}
        )
        start = time.perf_counter()
        entry = assignment.next_unjudged()
        times.append(time.perf_counter() - start)
        if entry is None:
            raise SystemExit(f"{strategy}: nothing drawn after {len(times)} judgments")
    ms = sorted(t * 1000 for t in times)
    return {
        "entries": pool.entries.count(),
        "cold": cold * 1000,
        "median": statistics.median(ms),
        "p95": ms[int(0.95 * (len(ms) - 1))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--judgments", type=int, default=300)
    parser.add_argument("--strategies", default="mtf,hedge,bandit,thompson,active")
    args = parser.parse_args()
    create_database(args.database_url)
    setup(args.database_url)
    start = time.perf_counter()
    campaign = build_campaign()
    print(
        f"{RUNS} runs x {TOPICS} topics x {DEPTH} imported in {time.perf_counter() - start:.0f} s"
    )
    for strategy in args.strategies.split(","):
        result = bench_strategy(campaign, strategy, args.judgments)
        print(
            f"{strategy:8} pool of {result['entries']:,} entries (PostgreSQL), "
            f"{args.judgments} judgments: next document median {result['median']:.1f} ms, "
            f"p95 {result['p95']:.1f} ms (first request, reading the runs: "
            f"{result['cold']:.0f} ms)"
        )
    print("target: median < 20 ms")


if __name__ == "__main__":
    main()
