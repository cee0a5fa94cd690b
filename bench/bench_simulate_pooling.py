"""Time `manage.py simulate_pooling` as a process: 4 strategies over 80 runs x 50
topics x 1,000 documents, at 10 budgets.

    python bench/bench_simulate_pooling.py [--workload bench/workload-50] [--repeat 1]

The workload (bench/gen_workload.py --topics 50, generated if missing): 80 runs
x 50 topics x 1000, qrels judging the depth-100 pool (about 100,000
documents). The command replays mtf, hedge, bandit and active (the strategies a
live pool offers) with candidates to depth 100, at 10 budgets from 5% to 50% of
the depth-100 pool, one budget over all topics, map as the measure; timed from
process start to exit (start-up, reading, ranking, replay, 41 scorings and
active's estimates), best of --repeat, against the 30 s target. For scale, one
`wb-trec-eval -m map` of the same runs is timed in the same way (the simulator
scores the runs 41 times, and replays up to 4 x 50,000 judgments).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT

TARGET_SECONDS = 30.0
STRATEGIES = "mtf,hedge,bandit,active"


def timed(command: list[str], repeat: int) -> tuple[float, float]:
    """The best wall-clock time of `repeat` runs, and the CPU time (user + system) of
    that run: on a machine shared with other work the CPU time is what the
    process would take alone, give or take its reading threads."""
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if completed.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{completed.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, (elapsed, cpu))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", type=Path, default=ROOT / "bench" / "workload-50")
    parser.add_argument("--repeat", type=int, default=1)
    arguments = parser.parse_args()

    workload = arguments.workload
    if not (workload / "runs").is_dir():
        generator = ROOT / "bench" / "gen_workload.py"
        command = [sys.executable, str(generator), "--topics", "50", "--out", str(workload)]
        subprocess.run(command, check=True)
    qrels = workload / "qrels.txt"
    pool = sum(1 for _ in qrels.open())  # the workload's qrels judge the depth-100 pool
    budgets = ",".join(str(pool * k // 20) for k in range(1, 11))
    simulate = [sys.executable, "manage.py", "simulate_pooling", "--qrels", str(qrels)]
    simulate += ["--strategy", STRATEGIES, "--budget", budgets, "--allocation", "adaptive"]
    simulate += ["--format", "json", str(workload / "runs")]
    seconds, cpu = timed(simulate, arguments.repeat)
    trec_eval = [str(Path(sys.executable).with_name("wb-trec-eval")), "-m", "map", str(qrels)]
    one_scoring, one_cpu = timed([*trec_eval, str(workload / "runs")], arguments.repeat)

    print(
        f"80 runs x 50 topics x 1000, depth-100 pool {pool:,} documents; {STRATEGIES} at 10 "
        f"budgets up to {pool // 2:,}; whole process, best of {arguments.repeat}"
    )
    verdict = "within" if seconds <= TARGET_SECONDS else "OVER"
    target = f"{verdict} the {TARGET_SECONDS:.0f} s target"
    print(f"  simulate_pooling         {seconds:7.2f} s, cpu {cpu:6.2f} s  ({target})")
    print(
        f"  one wb-trec-eval -m map  {one_scoring:7.2f} s, cpu {one_cpu:6.2f} s  (the simulation "
        f"takes {seconds / one_scoring:.1f} times one scoring)"
    )
    print(f"  load average when done: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
