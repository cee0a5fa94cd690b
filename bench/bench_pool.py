"""Benchmark pool construction and the what-if table.

    python bench/bench_pool.py bench/workload            # 30 topics x 80 runs x 1000
    python bench/bench_pool.py bench/workload-large      # 50 topics x 200 runs x 1000

Prints, for WORKLOAD/runs/*.txt:

1. the time to build a depth-100 pool from the run files with
   `pool_from_run_files` (read and check every file with run_files, rank,
   pool, sample, shuffle), and the time of plain polars versions of the same
   depth-100 pool (parse, rank by score then docno descending, group by topic
   and docno): two formulations, each on the in-memory and the streaming
   engine, the fastest being the baseline. Best of --repeat runs each,
   alternated so that all see the same machine load; wall and CPU time
   (CPU time, summed over threads, is steadier on a shared machine); the
   ratio to the baseline (target <= 1.5); and a check that every version
   gives the same (topic, docno, best_rank, n_runs);
2. the peak resident memory of each build, run alone in a child process
   (target < 3 GiB for the large workload);
3. the time of the what-if table from the Parquet run caches: read and rank
   the caches, then depths 10, 20, ..., 100 and the TREC CDS 2014 strata
   (target < 2 s at 30 x 80).

Arrow allocates from the same memory pool as in workbench processes (the C
library's malloc: ARROW_DEFAULT_MEMORY_POOL=system, which manage.py sets by
default; ARROW_DEFAULT_MEMORY_POOL=mimalloc measures pyarrow's default instead).
Polars keeps its own allocator either way.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pandas as pd

if TYPE_CHECKING:
    import polars as pl

from common import ARROW_MEMORY_POOL, ROOT, run_files

sys.path.insert(0, str(ROOT))

from pooling.core.budget import WhatIf, whatif
from pooling.core.ranking import rank_run_caches
from pooling.core.spec import CDS_2014, PoolSpec
from pooling.core.strategies import pool_from_run_files
from workbench.core.run_files import read_run, write_run_cache

DEPTH = 100
RUN_FILE_FIELDS = ["query_id", "q0", "doc_id", "rank", "score", "run_id"]


def pool_with_workbench(files: list[Path]) -> pd.DataFrame:
    return pool_from_run_files(files, PoolSpec(depth=DEPTH))


def polars_top_k_per_group(files: list[Path], engine: str) -> pl.DataFrame:
    """Plain polars: scan every file, keep the top DEPTH documents of each
    (run, topic) by score then docno descending, then best rank and run count
    per (topic, docno)."""
    import polars as pl

    return (
        _scan(files)
        .group_by("run_id", "query_id")
        .agg(pl.col("doc_id").sort_by(["score", "doc_id"], descending=[True, True]).head(DEPTH))
        .with_columns(rank=pl.int_ranges(1, pl.col("doc_id").list.len() + 1))
        .explode("doc_id", "rank")
        .group_by("query_id", "doc_id")
        .agg(best_rank=pl.col("rank").min(), n_runs=pl.len())
        .collect(engine=engine)
    )


def polars_rank_over(files: list[Path], engine: str) -> pl.DataFrame:
    """Plain polars: an ordinal rank of (score, docno) descending over each
    (run, topic), filtered to DEPTH, then best rank and run count."""
    import polars as pl

    rank = pl.struct("score", "doc_id").rank("ordinal", descending=True)
    return (
        _scan(files)
        .with_columns(rank=rank.over("run_id", "query_id"))
        .filter(pl.col("rank") <= DEPTH)
        .group_by("query_id", "doc_id")
        .agg(best_rank=pl.col("rank").min(), n_runs=pl.len())
        .collect(engine=engine)
    )


def _scan(files: list[Path]) -> pl.LazyFrame:
    import polars as pl

    types = {"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64, "run_id": pl.String}
    return pl.scan_csv(
        files, separator=" ", has_header=False, new_columns=RUN_FILE_FIELDS, schema_overrides=types
    ).select("run_id", "query_id", "doc_id", "score")


POLARS_VARIANTS: dict[str, Callable[[list[Path]], pl.DataFrame]] = {
    f"polars {name}, {engine}": functools.partial(function, engine=engine)
    for name, function in (
        ("top-k per group", polars_top_k_per_group),
        ("rank over", polars_rank_over),
    )
    for engine in ("in-memory", "streaming")
}


def same_pool(ours: pd.DataFrame, theirs: pl.DataFrame) -> bool:
    columns = ["query_id", "doc_id", "best_rank", "n_runs"]
    left = ours[columns].sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    right = theirs.to_pandas()[columns].sort_values(["query_id", "doc_id"])
    right = right.reset_index(drop=True).astype(left.dtypes.to_dict())
    return left.equals(right)


class Timing(NamedTuple):
    wall: float
    cpu: float  # process CPU time, all threads: steadier than wall time on a busy machine


def best_times(builders: dict[str, Callable[[], object]], repeat: int) -> dict[str, Timing]:
    """Best wall and CPU time of each builder, alternating builders on every round."""
    best = dict.fromkeys(builders, Timing(float("inf"), float("inf")))
    for _ in range(repeat):
        for name, build in builders.items():
            wall, cpu = time.perf_counter(), time.process_time()
            build()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = Timing(min(best[name].wall, wall), min(best[name].cpu, cpu))
    return best


def peak_memory_mib(builder: str, workload: Path) -> float:
    """Peak RSS of one build run alone in a child process.

    The child reports its own VmHWM (the high-water mark of its address
    space). Not getrusage(RUSAGE_CHILDREN): subprocess starts children with
    vfork, and Linux carries the parent's peak over exec into the child's
    ru_maxrss, so every child would seem as large as this process.
    """
    command = [sys.executable, __file__, str(workload), "--child", builder]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return int(output.split()[-1]) / 1024


def own_peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise SystemExit("no VmHWM in /proc/self/status (the memory check needs Linux)")


def time_whatif(files: list[Path], repeat: int) -> tuple[float, int]:
    """Best time of the what-if table from Parquet caches; and its row count."""
    with tempfile.TemporaryDirectory() as cache_dir:
        caches = []
        for path in files:
            cache = Path(cache_dir) / f"{path.stem}.parquet"
            write_run_cache(read_run(path), cache)
            caches.append(cache)

        def table() -> WhatIf:
            depths = range(10, DEPTH + 1, 10)
            ranked = rank_run_caches(caches, max_depth=max(DEPTH, CDS_2014.max_depth))
            return whatif(ranked, depths=depths, specs=[CDS_2014])

        rows = len(table().per_topic)
        return best_times({"whatif": table}, repeat)["whatif"].wall, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    files = run_files(args.workload)
    if args.child:
        builders = {"workbench": pool_with_workbench, **POLARS_VARIANTS}
        builders[args.child](files)
        print(own_peak_kib())
        return

    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"workload {args.workload}: {len(files)} run files, {lines:,} lines")
    print(f"Arrow memory pool: {ARROW_MEMORY_POOL} (ARROW_DEFAULT_MEMORY_POOL)")
    ours = pool_with_workbench(files)  # also warms the page cache up
    for name, build in POLARS_VARIANTS.items():
        if not same_pool(ours, build(files)):
            raise SystemExit(f"{name} and the workbench disagree on the pool")
    builders = {"workbench pool_from_run_files": lambda: pool_with_workbench(files)}
    builders |= {name: functools.partial(build, files) for name, build in POLARS_VARIANTS.items()}
    times = best_times(builders, args.repeat)
    ours_time = times.pop("workbench pool_from_run_files")
    baseline = min(times, key=lambda name: times[name].wall)
    print(f"depth-{DEPTH} pool, {len(ours):,} entries, best of {args.repeat} (same pool in all):")
    print(f"  {'':36s} {'wall':>7s}   {'cpu':>7s}")
    print(f"  {'workbench pool_from_run_files':36s} {ours_time.wall:7.3f} s {ours_time.cpu:7.3f} s")
    for name, timing in times.items():
        mark = "   <- baseline (fastest wall time)" if name == baseline else ""
        print(f"  {name:36s} {timing.wall:7.3f} s {timing.cpu:7.3f} s{mark}")
    wall_ratio = ours_time.wall / times[baseline].wall
    cpu_ratio = ours_time.cpu / times[baseline].cpu
    print(f"  {'ratio to the baseline':36s} {wall_ratio:7.2f}   {cpu_ratio:7.2f}   (target <= 1.5)")

    print("peak RSS of one build, alone in a child process:")
    for name in ("workbench", baseline):
        target = "   (target < 3072 MiB)" if name == "workbench" else ""
        print(f"  {name:36s} {peak_memory_mib(name, args.workload):7.0f} MiB{target}")

    seconds, rows = time_whatif(files, args.repeat)
    print(f"what-if from Parquet caches (depths 10..{DEPTH} + CDS 2014, {rows} rows):")
    print(f"  {'read caches + rank + table':36s} {seconds:7.3f} s   (target < 2 s)")


if __name__ == "__main__":
    main()
