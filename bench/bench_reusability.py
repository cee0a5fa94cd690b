"""Time `manage.py reusability` as a process on the generated workload.

    python bench/bench_reusability.py [--workload bench/workload] [--depth 100] [--repeat 2]

The default workload (bench/gen_workload.py, generated if missing): 80 runs x
30 topics x 1000 documents, qrels judging the depth-100 pool. The command is
run twice: leaving out each run, then each run and each team too (a groups
file made from the tags, teamNN_runM -> teamNN: 20 teams of 4). Each is
timed from process start to exit, best of --repeat, against the 30 s target;
the largest resident set of any run is printed too.

With --sampled, the same for a stratified pool made from that qrels: ranks 1-10
judged in full, 11 to --depth sampled at 20% (seeded), the rest of the pool
-1 (pooled, not sampled), scored with infAP (`--stratified`).
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
    parser.add_argument("--sampled", action="store_true", help="a stratified pool, infAP")
    arguments = parser.parse_args()

    files = run_files(arguments.workload)
    qrels = arguments.workload / "qrels.txt"
    with tempfile.TemporaryDirectory() as directory:
        if arguments.sampled:
            stratified = Path(directory) / "stratified.txt"
            write_stratified(qrels, files, arguments.depth, stratified)
            base = [sys.executable, "manage.py", "reusability", "--stratified", str(stratified)]
            base += ["-m", "infAP"]
        else:
            base = [sys.executable, "manage.py", "reusability", "--qrels", str(qrels)]
        base += ["--depth", str(arguments.depth), "--format", "json"]
        base.append(str(arguments.workload / "runs"))
        groups = Path(directory) / "groups.tsv"
        tags = [file.stem for file in files]
        groups.write_text("".join(f"{tag}\t{tag.split('_')[0]}\n" for tag in tags))
        n_groups = len({tag.split("_")[0] for tag in tags})
        by_run = timed(base, arguments.repeat)
        with_groups = timed([*base, "--groups", str(groups)], arguments.repeat)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    kind = "stratified (1-10 in full, then 20%), infAP" if arguments.sampled else "depth-k"
    print(
        f"{len(files)} runs, {kind}, depth {arguments.depth}, qrels {qrels} "
        f"({sum(1 for _ in qrels.open()):,} judgments); whole process, best of {arguments.repeat}"
    )
    for label, seconds in [
        (f"each run left out ({len(files)} units)", by_run),
        (f"each run and each team ({len(files)} + {n_groups} units)", with_groups),
    ]:
        verdict = "within" if seconds <= TARGET_SECONDS else "OVER"
        print(f"  {label:<42} {seconds:7.2f} s  ({verdict} the {TARGET_SECONDS:.0f} s target)")
    print(f"  peak resident set of a run: {peak:,.0f} MiB")


def write_stratified(qrels: Path, files: list[Path], depth: int, out: Path) -> None:
    """A stratified qrels of the depth-k pool: stratum 1 (best rank 1-10) judged in
    full, stratum 2 (11 to depth) sampled at 20%, unsampled documents -1."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from pooling.core.ranking import pooled_documents, rank_run_files

    labels = {}
    for line in qrels.open():
        topic, _, docno, relevance = line.split()
        labels[(topic, docno)] = relevance
    pool = pooled_documents(rank_run_files(files, max_depth=depth), depth).to_pydict()
    rng = np.random.default_rng(0)
    with out.open("w") as stream:
        for topic, docno, best in zip(
            pool["query_id"], pool["doc_id"], pool["best_rank"], strict=True
        ):
            stratum = 1 if best <= 10 else 2
            sampled = stratum == 1 or rng.random() < 0.2
            label = labels.get((topic, docno), "0") if sampled else "-1"
            stream.write(f"{topic} 0 {docno} {stratum} {label}\n")


if __name__ == "__main__":
    main()
