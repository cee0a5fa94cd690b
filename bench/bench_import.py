"""Import benchmark: our run import against plain pandas.read_csv(engine="pyarrow").

    python bench/bench_import.py [WORKLOAD_DIR] [--repeat N]

Three timings over every run file of the workload (made by gen_workload.py
if the directory does not exist), best of N each, in this one process:

  baseline  pandas.read_csv(path, sep=" ", header=None, engine="pyarrow")
  core      read + validate every line + write the Parquet cache (run_files)
  service   the whole runs_import into a fresh SQLite campaign: the core,
            plus storing the original file and the run rows in one transaction

Target: core and service at most 2x the baseline.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd
from common import ROOT, best_time, run_files

sys.path.insert(0, str(ROOT))


def baseline(files: list[Path]) -> None:
    for path in files:
        pd.read_csv(path, sep=" ", header=None, engine="pyarrow")


def core(files: list[Path], topics: set[str], cache_dir: Path) -> None:
    """What runs_import does before the database: read every file (in parallel
    threads, as the service does), check it, and write its Parquet cache."""
    from workbench.core import file_input, problems, run_files

    def read_and_cache(indexed: tuple[int, Path]) -> None:
        index, path = indexed
        run = run_files.read_run(path)
        run_files.validate_run_for_campaign(run, known_topics=topics, used_tags=())
        if not run.ok:
            raise SystemExit(str(problems.InputError.from_log(run.problems)))
        run_files.write_run_cache(run, cache_dir / f"{index}.parquet")

    for _ in file_input.map_in_threads(read_and_cache, enumerate(files)):
        pass


def setup_django(data_dir: Path) -> None:
    os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.pop("DATABASE_URL", None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def service(files: list[Path], topics: set[str], number: list[int]) -> None:
    from pooling import run_services, services

    number[0] += 1
    campaign = services.campaign_create(name="bench", slug=f"bench-{number[0]}")
    data = "\n".join(f"{t}\tTopic {t}" for t in sorted(topics)).encode()
    services.topics_import(campaign=campaign, data=data, name="topics.tsv")
    uploads = [run_services.RunUpload(path.name, path.read_bytes()) for path in files]
    run_services.runs_import(campaign=campaign, uploads=uploads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", nargs="?", type=Path, default=ROOT / "bench" / "workload")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = run_files(args.workload)
    lines = sum(1 for path in files for _ in path.open("rb"))
    topics = {line.split()[0] for line in files[0].read_text().splitlines()}
    print(f"{len(files)} run files, {lines:,} lines, {len(topics)} topics; best of {args.repeat}")

    base = best_time(lambda: baseline(files), args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        ours = best_time(lambda: core(files, topics, Path(tmp)), args.repeat)
        setup_django(Path(tmp) / "data")
        counter = [0]
        full = best_time(lambda: service(files, topics, counter), args.repeat)

    print(f"pandas.read_csv(engine='pyarrow')      {base:7.3f} s")
    print(f"core: parse + validate + cache          {ours:7.3f} s   ratio {ours / base:4.2f}x")
    print(f"service: runs_import into SQLite        {full:7.3f} s   ratio {full / base:4.2f}x")
    print("target: ratio <= 2.00x")


if __name__ == "__main__":
    main()
