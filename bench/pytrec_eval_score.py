"""Score run files with pytrec_eval, as a user's script would: bench_score.py's yardstick.

    python bench/pytrec_eval_score.py QRELS RUN... -m map -m P_10

Reads the qrels once and each run with pytrec_eval's own parsers, evaluates
run after run and prints, per run, `measure  all  value`: the mean over the
run's topics, as trec_eval's summary line. Measure names are pytrec_eval's
(P_10, ndcg_cut_10, recall_1000).
"""

from __future__ import annotations

import argparse
import statistics

import pytrec_eval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("runs", nargs="+")
    parser.add_argument("-m", dest="measures", action="append", required=True)
    args = parser.parse_args()
    with open(args.qrels) as qrels_file:
        evaluator = pytrec_eval.RelevanceEvaluator(
            pytrec_eval.parse_qrel(qrels_file), set(args.measures)
        )
    for path in args.runs:
        with open(path) as run_file:
            per_topic = evaluator.evaluate(pytrec_eval.parse_run(run_file))
        for measure in args.measures:
            mean = statistics.fmean(values[measure] for values in per_topic.values())
            print(f"{measure:<22}\tall\t{mean:.4f}")


if __name__ == "__main__":
    main()
