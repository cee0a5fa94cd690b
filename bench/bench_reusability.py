"""Time `manage.py reusability` as a process on the generated workload.

    python bench/bench_reusability.py [--workload bench/workload] [--depth 100] [--repeat 2]

The default workload (bench/gen_workload.py, generated if missing): 80 runs x
30 topics x 1000 documents, qrels judging the depth-100 pool. The command is
run twice: leaving out each run, then each run and each team too (a groups
file made from the tags, teamNN_runM -> teamNN: 20 teams of 4). Each is
timed from process start to exit, best of --repeat, against the 30 s target;
the largest resident set of any run is printed too.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, run_files

TARGET_SECONDS = 30.0


def timed(command: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - start
        if completed.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{completed.stderr}")
        best = min(best, elapsed)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", type=Path, default=ROOT / "bench" / "workload")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    arguments = parser.parse_args()

    files = run_files(arguments.workload)
    qrels = arguments.workload / "qrels.txt"
    base = [sys.executable, "manage.py", "reusability", "--qrels", str(qrels)]
    base += ["--depth", str(arguments.depth), "--format", "json", str(arguments.workload / "runs")]
    with tempfile.TemporaryDirectory() as directory:
        groups = Path(directory) / "groups.tsv"
        tags = [file.stem for file in files]
        groups.write_text("".join(f"{tag}\t{tag.split('_')[0]}\n" for tag in tags))
        n_groups = len({tag.split("_")[0] for tag in tags})
        by_run = timed(base, arguments.repeat)
        with_groups = timed([*base, "--groups", str(groups)], arguments.repeat)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(
        f"{len(files)} runs, depth {arguments.depth}, qrels {qrels} "
        f"({sum(1 for _ in qrels.open()):,} judgments); whole process, best of {arguments.repeat}"
    )
    for label, seconds in [
        (f"each run left out ({len(files)} units)", by_run),
        (f"each run and each team ({len(files)} + {n_groups} units)", with_groups),
    ]:
        verdict = "within" if seconds <= TARGET_SECONDS else "OVER"
        print(f"  {label:<42} {seconds:7.2f} s  ({verdict} the {TARGET_SECONDS:.0f} s target)")
    print(f"  peak resident set of a run: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
