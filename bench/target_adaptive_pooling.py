"""Issue 26's Target: replay every pooling strategy on published qrels with
synthetic runs, at a quarter of the judgments a depth-100 pool needs.

    python bench/target_adaptive_pooling.py [--qrels NAME ...] [--out bench/out/target]

For each qrels file of /work/shared/data/qrels (read in place; see its
docs/adaptive_pooling.md), runs are made by bench/synthetic_runs.py (generated once into
--out), then `scoring.core.pool_simulation` replays depth, mtf, hedge, bandit,
thompson and active, one budget over all topics (--allocation adaptive),
candidates the depth-100 pool, at 1/8, 1/4 and 1/2 of its size. Printed:
relevant found and tau for each, the best adaptive strategy against depth at
a quarter, and active's map estimate against map under the qrels and under
the qrels' labels of the pool; then active again with every rank a
candidate (the same budgets), as sampling estimators sample whole rankings.

Targets: the best adaptive strategy finds at least 30% more relevant
documents than depth at a quarter of the pool, with tau >= 0.9; active's
estimate of map is within its stated standard error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from common import ROOT

QRELS = Path("/work/shared/data/qrels")
SETS = {
    "robust05": ("qrels.robust05.txt", 1),
    "covid": ("qrels.covid-complete.txt", 1),
    "dl19": ("qrels.dl19-passage.txt", 2),  # trec_eval -l 2: the track's binary relevance
}
ADAPTIVE = ("mtf", "hedge", "bandit", "thompson", "active")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", nargs="*", choices=SETS, default=list(SETS))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "target")
    parser.add_argument("--seed", type=int, default=0, help="the strategies' seed")
    parser.add_argument(
        "--runs-seed", type=int, default=1, help="bench/synthetic_runs.py's seed (default 1)"
    )
    arguments = parser.parse_args()

    from pooling.core.adaptive import Candidates
    from pooling.core.ranking import rank_run_files
    from scoring.core.command_line import read_inputs
    from scoring.core.measures.catalog import TREC
    from scoring.core.pool_simulation import Settings, simulate
    from scoring.core.qrels import TREC_QRELS

    measure = TREC.select(["map"])[0]
    for name in arguments.qrels:
        file, level = SETS[name]
        seed = arguments.runs_seed
        out = arguments.out / (name if seed == 1 else f"{name}-seed{seed}")
        if not (out / "runs").is_dir():
            generator = ROOT / "bench" / "synthetic_runs.py"
            command = [
                sys.executable,
                str(generator),
                "--qrels",
                str(QRELS / file),
                "--out",
                str(out),
                "--seed",
                str(seed),
            ]
            subprocess.run(command, check=True)
        runs = sorted((out / "runs").glob("*.txt"))
        qrels, frames = read_inputs(str(QRELS / file), TREC_QRELS, [str(r) for r in runs], None)
        pool = Candidates.from_ranked(rank_run_files(runs, max_depth=100), depth=100).n_docs
        budgets = (pool // 8, pool // 4, pool // 2)
        groups = dict(line.split("\t") for line in (out / "groups.tsv").read_text().splitlines())
        settings = Settings(
            strategies=("depth", *ADAPTIVE),
            budgets=budgets,
            measure=measure,
            allocation="adaptive",
            seed=arguments.seed,
            depth=100,
            relevance_level=level,
            groups=groups,
        )
        start = time.perf_counter()
        simulation = simulate(qrels, frames, settings)
        seconds = time.perf_counter() - start
        report(name, level, pool, simulation, seconds)
        # Active samples whole rankings (as statAP and Li and Kanoulas do): the same
        # budgets with every rank a candidate, so that no relevant document is
        # beyond the sample unless no run retrieves it.
        deep = simulate(qrels, frames, replace(settings, strategies=("active",), depth=None))
        print(
            f"  active, candidates every rank ({deep.candidates.n_docs:,} documents, "
            f"{deep.relevant_candidates:,} relevant):"
        )
        print_estimates(deep.strategies[0])


def report(name: str, level: int, pool: int, simulation, seconds: float) -> None:
    print(
        f"\n{name}: {len(simulation.run_tags)} runs, {simulation.topics} topics, depth-100 pool "
        f"{pool:,} documents, relevant (label >= {level}) {simulation.relevant_total:,} "
        f"({simulation.relevant_candidates:,} in the pool); replayed in {seconds:.0f} s"
    )
    print(
        f"  {'strategy':<9} "
        + " ".join(f"{'@' + str(b.budget):>22}" for b in simulation.strategies[0].budgets)
    )
    for result in simulation.strategies:
        cells = " ".join(
            f"{b.relevant:>7} rel tau {b.tau:6.3f}"
            if b.tau is not None
            else f"{b.relevant:>7} rel tau      -"
            for b in result.budgets
        )
        print(f"  {result.strategy:<9} {cells}")
    quarter = 1
    depth = simulation.strategies[0].budgets[quarter]
    best = max(simulation.strategies[1:], key=lambda r: r.budgets[quarter].relevant)
    b = best.budgets[quarter]
    gain = b.relevant / depth.relevant - 1 if depth.relevant else float("inf")
    print(
        f"  at a quarter ({b.budget:,} judgments): best adaptive {best.strategy} finds "
        f"{b.relevant:,} relevant vs depth {depth.relevant:,} ({gain:+.0%}; target +30%), "
        f"tau {b.tau:.3f} (target 0.9); depth's tau {depth.tau:.3f}"
    )
    for result in simulation.strategies:
        if result.strategy == "active":
            print_estimates(result)


def print_estimates(result) -> None:
    for a in result.budgets:
        e = a.estimate
        print(
            f"  active @{a.budget:,}: mean stated se {e.mean_standard_error:.4f}; against map "
            f"under the qrels rmse {e.rmse:.4f}, runs within 1 se {e.within(1):.0%}, 2 se "
            f"{e.within(2):.0%}; against the pool's map rmse {e.pool_rmse:.4f}, within 1 se "
            f"{e.within(1, pool=True):.0%}, 2 se {e.within(2, pool=True):.0%}"
        )


if __name__ == "__main__":
    main()
