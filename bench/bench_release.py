"""A release of a TREC-sized campaign, against scoring it live.

    python bench/bench_release.py [--database-url URL] [--runs 40] [--topics 50] [--repeat 3]

Builds, in a database of its own (SQLite in a temporary folder by default), a
campaign of --runs runs of 1,000 documents on each of --topics topics, a
depth-20 pool of them and a judgment for every pooled document. Then times,
best of --repeat:

- the reference: the scores page's scoring of every run, per topic
  (`selectors.pool_scores_report`), the same measures;
- a release (`services.release_create`): the qrels in every layout, every run
  scored by the scorer from its file as uploaded, the leaderboard, the files
  written, the rows stored;
- the bundle (`release_selectors.release_bundle`) into memory.

Prints each time and the ratio to the reference. A release reads the run
files as text (what a reader's wb-trec-eval reads), where the scores page reads
the Parquet cached at upload: the ratio says what that costs.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def build(runs: int, topics: int) -> object:
    from django.contrib.auth.models import User

    from judging import services as judging_services
    from judging.core.judgment_files import ImportedJudgment
    from pooling import pool_services, run_services, services
    from pooling.core.spec import PoolSpec

    campaign = services.campaign_create(name="bench", slug="bench")
    lines = "".join(f"{t}\tTopic {t}\tWhat about {t}?\n" for t in range(1, topics + 1))
    services.topics_import(campaign=campaign, data=lines.encode(), name="topics.tsv")
    rng = random.Random(7)
    uploads = []
    for r in range(runs):
        rows = []
        for t in range(1, topics + 1):
            docs = rng.sample(range(3000), 1000)
            rows += [
                f"{t} Q0 D{d:05d} {k + 1} {1000 - k}.5 run{r:03d}\n" for k, d in enumerate(docs)
            ]
        uploads.append(run_services.RunUpload(f"run{r:03d}.txt", "".join(rows).encode()))
    run_services.runs_import(campaign=campaign, uploads=uploads)
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=20), name="bench")
    User.objects.create_user("nist", password="x")
    judging_services.judgments_import(
        campaign=campaign,
        rows=[
            ImportedJudgment("nist", topic, docno, int(rng.random() < 0.3), {})
            for topic, docno in pool.entries.values_list("topic__topic_id", "docno")
        ],
    )
    return pool


def best(job, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-release-"))
    os.environ["WORKBENCH_DATA_DIR"] = str(folder / "data")
    from bench_judging import setup

    setup(options.database_url or f"sqlite:///{folder / 'db.sqlite3'}")

    from scoring import release_selectors, selectors, services

    start = time.perf_counter()
    pool = build(options.runs, options.topics)
    print(
        f"campaign: {options.runs} runs x {options.topics} topics x 1,000 documents, "
        f"{pool.entries.count():,} pooled and judged ({time.perf_counter() - start:.1f} s)"
    )
    measures = list(selectors.DEFAULT_MEASURES)
    live = best(
        lambda: selectors.pool_scores_report(pool=pool, measures=measures, per_topic=True),
        options.repeat,
    )
    releases = []
    made = best(
        lambda: releases.append(services.release_create(pool=pool, measure="map")),
        options.repeat,
    )
    bundle = io.BytesIO()
    zipped = best(
        lambda: release_selectors.release_bundle(releases[-1], io.BytesIO()), options.repeat
    )
    release_selectors.release_bundle(releases[-1], bundle)
    print(f"scores page (reference): {live:6.2f} s")
    print(f"release:                 {made:6.2f} s  ({made / live:.1f}x the reference)")
    print(
        f"bundle:                  {zipped:6.2f} s  ({zipped / live:.1f}x; "
        f"{len(bundle.getvalue()) / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
