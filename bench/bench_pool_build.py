"""Pool build benchmark: the service's store of the entries against bulk_create.

    python bench/bench_pool_build.py [WORKLOAD_DIR] [--repeat N]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_pool python bench/bench_pool_build.py

Imports the workload's runs (made by gen_workload.py if the directory does
not exist) into a fresh campaign (SQLite in a temporary directory, or the
database DATABASE_URL names, which must exist and is migrated), then, best
of N each, in this one process:

  reference  PoolEntry.objects.bulk_create of the depth-100 pool's entries,
             in one transaction (how the build stored them before)
  store      the build's insert of the same entries (`workbench.db.bulk_insert`:
             COPY on PostgreSQL, executemany on SQLite)
  build      the whole `pool_services.pool_build`: rank the run caches, pool, make the
             entries a topic at a time (its progress), store in one transaction

and the time the build spends storing (in its transaction, where no progress
can be seen). Target: store at most a third of the reference (commit included).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from common import ROOT, best_time, run_files


def setup_django(data_dir: Path) -> None:
    os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", nargs="?", type=Path, default=ROOT / "bench" / "workload")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = run_files(args.workload)
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp) / "data")
        from django.db import connection, transaction

        from pooling import pool_services, run_services, selectors, services
        from pooling.core.spec import PoolSpec
        from pooling.core.strategies import pool_from_ranked
        from pooling.models import Pool, PoolEntry

        slug = f"bench-build-{os.getpid()}"
        campaign = services.campaign_create(name=slug, slug=slug)
        topics = sorted({line.split()[0] for line in files[0].read_text().splitlines()})
        data = "".join(f"{t}\tTopic {t}\n" for t in topics).encode()
        services.topics_import(campaign=campaign, data=data, name="topics.tsv")
        uploads = [run_services.RunUpload(path.name, path.read_bytes()) for path in files]
        run_services.runs_import(campaign=campaign, uploads=uploads)
        spec = PoolSpec(depth=100)
        entries = pool_from_ranked(selectors.ranked_runs(campaign, max_depth=100), spec)
        topic_ids = dict(campaign.topics.values_list("topic_id", "pk"))
        rows = pool_services._entry_rows(entries, topic_ids)
        print(
            f"{connection.vendor}: {len(files)} runs, {len(topics)} topics, "
            f"{len(entries):,} entries; best of {args.repeat}"
        )

        def fresh_pool() -> Pool:
            return Pool.objects.create(campaign=campaign, name=f"p{time.time_ns()}", spec={})

        def reference() -> None:
            pool = fresh_pool()
            with transaction.atomic():
                PoolEntry.objects.bulk_create(
                    (PoolEntry(pool=pool,
                               **dict(zip(pool_services._ENTRY_FIELDS, row, strict=True)))
                     for topic_rows in rows for row in topic_rows),
                    batch_size=5000,
                )  # fmt: skip

        def store() -> None:
            pool = fresh_pool()
            with transaction.atomic():
                pool_services._insert_entries(pool, rows, addition=None)

        inserting: list[float] = []
        insert = pool_services._insert_entries

        def timed_insert(*args, **kwargs):  # the bulk of the build's one transaction
            start = time.perf_counter()
            insert(*args, **kwargs)
            inserting.append(time.perf_counter() - start)

        def build() -> None:
            pool_services._insert_entries = timed_insert
            try:
                name = f"b{time.time_ns()}"
                pool_services.pool_build(
                    campaign=campaign, spec=spec, name=name, confirm_over_budget=True
                )
            finally:
                pool_services._insert_entries = insert

        base = best_time(reference, args.repeat)
        ours = best_time(store, args.repeat)
        whole = best_time(build, args.repeat)
        campaign.delete()
    print(f"reference: bulk_create             {base:7.2f} s")
    print(f"store: bulk_insert                 {ours:7.2f} s   ratio {ours / base:4.2f}x")
    print(f"build: pool_build                  {whole:7.2f} s   storing {min(inserting):5.2f} s")
    print("target: store ratio <= 0.33x")


if __name__ == "__main__":
    main()
