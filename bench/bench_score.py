"""Time scoring every run of a workload: our trec_eval against pytrec_eval.

    python bench/gen_workload.py --out /tmp/wl
    python bench/bench_score.py /tmp/wl [--repeat 5]

Both sides do the whole job in this process: parse the qrels and every run
file, score map, P_10, ndcg_cut_10, recall_1000, Rprec and bpref per topic,
and average them per run. Ours is `scoring.trec_eval.main` on the runs
directory (output formatted into memory); pytrec_eval parses with its own
`parse_qrel` / `parse_run` and evaluates run after run. Prints the best of
`--repeat` repetitions of each, the ratio, and ours with `-m all_trec`.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
from pathlib import Path

import pytrec_eval
from common import ROOT, best_time

sys.path.insert(0, str(ROOT))

from scoring.trec_eval import main

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


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = len(list((args.workload / "runs").iterdir()))
    check_agreement(args.workload)
    ours_time = best_time(lambda: ours(args.workload, MEASURES), args.repeat)
    theirs_time = best_time(lambda: theirs(args.workload), args.repeat)
    all_trec_time = best_time(lambda: ours(args.workload, ["all_trec"]), args.repeat)
    print(f"{runs} runs, measures {' '.join(MEASURES)}; best of {args.repeat}, parsing included")
    print(f"  ours (scoring.trec_eval)  {ours_time:7.3f} s")
    print(f"  pytrec_eval               {theirs_time:7.3f} s")
    print(f"  ratio                     {theirs_time / ours_time:7.2f}x faster")
    print(f"  ours with -m all_trec     {all_trec_time:7.3f} s")


if __name__ == "__main__":
    run()
