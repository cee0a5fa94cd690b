"""Time scoring a workload: our trec_eval against pytrec_eval and NIST's trec_eval.

    python bench/gen_workload.py --out /tmp/wl
    python bench/bench_score.py /tmp/wl [--repeat 5] [--nist-trec-eval PATH]

1. In this process: parse the qrels and every run file, score map, P_10,
   ndcg_cut_10, recall_1000, Rprec and bpref per topic, and average them per
   run. Ours is `scoring.core.trec_eval.main` on the runs directory (output
   formatted into memory); pytrec_eval parses with its own `parse_qrel` /
   `parse_run` and evaluates run after run. Best of `--repeat`, the ratio,
   and ours with `-m all_trec`.
2. As a user runs it, a whole process each, start-up included: the
   `wb-trec-eval` console script, `manage.py trec_eval`, a Python script
   doing the same with pytrec_eval (bench/pytrec_eval_score.py), and NIST's
   trec_eval if one is given or on PATH (one call per run: it takes one).
   Python runs as users run it, with its bytecode caches (without
   PYTHONDONTWRITEBYTECODE), after a first untimed round.
   Two jobs: one run with map and P.10 (target: at least as fast as the
   pytrec_eval script), and the 80 runs with the six measures (target: 2x
   faster). Best of `--repeat`, the rounds interleaved so that every command
   sees the same machine load; prints the ratios.

NIST's trec_eval is not built here: pass `--nist-trec-eval` a binary built
from https://github.com/usnistgov/trec_eval (`make`), or have `trec_eval`
on PATH; without one its rows are skipped with a message.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytrec_eval
from common import ROOT, best_time

sys.path.insert(0, str(ROOT))

from scoring.core.trec_eval import main

MEASURES = ["map", "P.10", "ndcg_cut.10", "recall.1000", "Rprec", "bpref"]
PYTREC_MEASURES = {"map", "P_10", "ndcg_cut_10", "recall_1000", "Rprec", "bpref"}


def ours(workload: Path, measures: list[str]) -> str:
    arguments = [option for name in measures for option in ("-m", name)]
    out, err = io.StringIO(), io.StringIO()
    status = main([*arguments, str(workload / "qrels.txt"), str(workload / "runs")], out, err)
    if status:
        raise SystemExit(f"trec_eval failed: {err.getvalue()}")
    return out.getvalue()


def theirs(workload: Path) -> dict[str, dict[str, float]]:
    """Mean of each measure per run file, as pytrec_eval computes it."""
    with (workload / "qrels.txt").open() as qrels_file:
        evaluator = pytrec_eval.RelevanceEvaluator(
            pytrec_eval.parse_qrel(qrels_file), PYTREC_MEASURES
        )
    means = {}
    for path in sorted((workload / "runs").iterdir()):
        with path.open() as run_file:
            per_topic = evaluator.evaluate(pytrec_eval.parse_run(run_file))
        means[path.name] = {
            measure: statistics.fmean(values[measure] for values in per_topic.values())
            for measure in PYTREC_MEASURES
        }
    return means


def check_agreement(workload: Path) -> None:
    """Our summary map equals pytrec_eval's mean map (4 decimals) for every run."""
    ours_map = [
        line.split("\t")[2] for line in ours(workload, ["map"]).splitlines() if line[:4] == "map "
    ]
    theirs_map = [f"{means['map']:.4f}" for means in theirs(workload).values()]
    if ours_map != theirs_map:
        raise SystemExit("map differs from pytrec_eval's")


# The whole-process jobs: (title, our measures, pytrec_eval's names, how many runs).
JOBS = [
    ("one run, map and P.10", ["map", "P.10"], ["map", "P_10"], 1),
    ("all runs, six measures", MEASURES, sorted(PYTREC_MEASURES), None),
]
TARGETS = {JOBS[0][0]: 1.0, JOBS[1][0]: 2.0}  # pytrec_eval's time / ours, at least


def commands(
    workload: Path, measures: list[str], pytrec: list[str], runs: list[Path], nist: str | None
) -> dict[str, list[list[str]]]:
    """Each contender's command lines for one job (several: one process each, in turn)."""
    qrels = str(workload / "qrels.txt")
    options = [option for name in measures for option in ("-m", name)]
    names = [str(run) for run in runs]
    script = Path(sys.executable).parent / "wb-trec-eval"
    result = {
        "ours (wb-trec-eval)": [[str(script), *options, qrels, *names]],
        "ours (manage.py trec_eval)": [
            [sys.executable, str(ROOT / "manage.py"), "trec_eval", *options, qrels, *names]
        ],
        "pytrec_eval script": [
            [sys.executable, str(ROOT / "bench" / "pytrec_eval_score.py"), qrels, *names]
            + [option for name in pytrec for option in ("-m", name)]
        ],
    }
    if nist:
        result["NIST trec_eval (a call per run)"] = [[nist, *options, qrels, run] for run in names]
    return result


# Python as users run it: writing and reusing its bytecode caches (an environment
# with PYTHONDONTWRITEBYTECODE would compile every changed module on every start).
ENVIRONMENT = {
    name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"
}


def time_processes(lines: list[list[str]]) -> tuple[float, float]:
    """(wall, cpu) seconds of running the command lines one after the other; CPU
    time (user + system, summed over threads) is steadier on a shared machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for line in lines:
        subprocess.run(line, stdout=subprocess.DEVNULL, check=True, cwd=ROOT, env=ENVIRONMENT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def whole_process(workload: Path, repeat: int, nist: str | None) -> None:
    runs = sorted((workload / "runs").iterdir())
    if not (Path(sys.executable).parent / "wb-trec-eval").exists():
        raise SystemExit("wb-trec-eval is not installed in this environment: run make first")
    if nist is None:
        print("NIST trec_eval: skipped (none on PATH; pass --nist-trec-eval PATH to a binary)")
    print(f"whole process, start-up included; best of {repeat}, rounds interleaved")
    for title, measures, pytrec, count in JOBS:
        chosen = runs[:count] if count else runs
        contenders = commands(workload, measures, pytrec, chosen, nist)
        wall = dict.fromkeys(contenders, float("inf"))
        cpu = dict.fromkeys(contenders, float("inf"))
        for lines in contenders.values():  # a first round, untimed: caches warm
            time_processes(lines[:1])
        for _ in range(repeat):
            for name, lines in contenders.items():
                seconds, cpu_seconds = time_processes(lines)
                wall[name], cpu[name] = min(wall[name], seconds), min(cpu[name], cpu_seconds)
        ours = "ours (wb-trec-eval)"
        print(
            f"  {title} ({len(chosen)} run{'s' if len(chosen) > 1 else ''}):{'wall':>17}{'cpu':>10}"
        )
        for name in contenders:
            print(
                f"    {name:<34}{wall[name]:7.3f} s{cpu[name]:7.3f} s"
                f"   {wall[name] / wall[ours]:5.2f}x ours"
            )
        ratio, cpu_ratio = (
            wall["pytrec_eval script"] / wall[ours],
            cpu["pytrec_eval script"] / cpu[ours],
        )
        target = TARGETS[title]
        verdict = "met" if ratio >= target else "NOT met"
        print(
            f"    pytrec_eval / ours = {ratio:.2f} wall, {cpu_ratio:.2f} cpu"
            f" (target >= {target:.1f}: {verdict})"
        )


def check_whole_process_agreement(workload: Path, nist: str | None) -> None:
    """The one-run job prints the same map and P_10 from every contender."""
    run = sorted((workload / "runs").iterdir())[0]
    contenders = commands(workload, ["map", "P.10"], ["map", "P_10"], [run], nist)
    outputs = {
        name: subprocess.run(
            lines[0], capture_output=True, text=True, check=True, cwd=ROOT, env=ENVIRONMENT
        ).stdout
        for name, lines in contenders.items()
    }
    values = {
        name: [line.split()[-1] for line in out.splitlines()] for name, out in outputs.items()
    }
    if len({tuple(found) for found in values.values()}) != 1:
        raise SystemExit(f"the contenders disagree: {values}")


def in_process(workload: Path, repeat: int) -> None:
    runs = len(list((workload / "runs").iterdir()))
    check_agreement(workload)
    ours_time = best_time(lambda: ours(workload, MEASURES), repeat)
    theirs_time = best_time(lambda: theirs(workload), repeat)
    all_trec_time = best_time(lambda: ours(workload, ["all_trec"]), repeat)
    print(f"{runs} runs, measures {' '.join(MEASURES)}; best of {repeat}, parsing included")
    print("in this process:")
    print(f"  ours (scoring.core.trec_eval)  {ours_time:7.3f} s")
    print(f"  pytrec_eval               {theirs_time:7.3f} s")
    print(f"  ratio                     {theirs_time / ours_time:7.2f}x faster")
    print(f"  ours with -m all_trec     {all_trec_time:7.3f} s")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--nist-trec-eval",
        default=os.environ.get("NIST_TREC_EVAL") or shutil.which("trec_eval"),
        help="a trec_eval binary built from usnistgov/trec_eval (default: trec_eval on PATH)",
    )
    parser.add_argument("--whole-process-only", action="store_true")
    args = parser.parse_args()
    if not args.whole_process_only:
        in_process(args.workload, args.repeat)
    check_whole_process_agreement(args.workload, args.nist_trec_eval)
    whole_process(args.workload, args.repeat, args.nist_trec_eval)


if __name__ == "__main__":
    run()
