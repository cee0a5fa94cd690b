"""Time the leaderboard's randomisation test and Tukey's HSD against SciPy's.

    python bench/bench_leaderboard.py [--runs 80] [--topics 30] [--resamples 10000]
                                      [--scipy-pairs 20] [--repeat 3]

A generated table of per-topic scores (average precision-like: each run a
Beta-distributed level plus topic difficulty, clipped to [0, 1]; seeded),
then Fisher's randomisation test for every pair of runs (80 runs: 3,160
pairs) with --resamples sign flips each, and Holm's correction over them:
`scoring.core.analysis.paired.randomization_test` + `corrections.adjust`, best of
--repeat. Target: well under 5 s.

SciPy's `permutation_test` (permutation_type="samples", the same seed) is
timed on the first --scipy-pairs pairs only and extrapolated to all of them
(it takes about 0.1 s a pair); its p-values for those pairs are checked to be
ours.

Tukey's HSD over all pairs of the same table: `scoring.core.analysis.tukey.tukey_hsd`
(best of --repeat) against one run of `scipy.stats.tukey_hsd(*runs)` (which
integrates the studentized range for every cell of the runs x runs matrix,
about 4 ms each), with the largest absolute difference of their p-values.
Target: well under 1 s for 80 runs.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from common import ROOT, best_time

sys.path.insert(0, str(ROOT))

from scipy import stats

from scoring.core.analysis.corrections import adjust
from scoring.core.analysis.paired import all_pairs, randomization_test
from scoring.core.analysis.tukey import tukey_hsd

SEED = 0


def score_table(runs: int, topics: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    level = rng.beta(2, 5, size=(runs, 1))
    difficulty = rng.normal(0, 0.15, size=(1, topics))
    noise = rng.normal(0, 0.12, size=(runs, topics))
    return np.clip(level + difficulty + noise, 0.0, 1.0)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--topics", type=int, default=30)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--scipy-pairs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()

    scores = score_table(arguments.runs, arguments.topics)
    a, b = all_pairs(arguments.runs)
    n_pairs = len(a)

    def ours() -> np.ndarray:
        diffs = scores[a] - scores[b]
        result = randomization_test(diffs, n_resamples=arguments.resamples, seed=SEED)
        return adjust(result.p_value, "holm")

    seconds = best_time(ours, arguments.repeat)
    ours_p = randomization_test(
        scores[a] - scores[b], n_resamples=arguments.resamples, seed=SEED
    ).p_value

    subset = min(arguments.scipy_pairs, n_pairs)
    start = time.perf_counter()
    scipy_p = [
        stats.permutation_test(
            (scores[a[k]], scores[b[k]]),
            _mean_difference,
            permutation_type="samples",
            n_resamples=arguments.resamples,
            rng=SEED,
        ).pvalue
        for k in range(subset)
    ]
    scipy_subset = time.perf_counter() - start
    scipy_all = scipy_subset / subset * n_pairs
    agree = bool(np.array_equal(ours_p[:subset], scipy_p))

    print(
        f"{arguments.runs} runs x {arguments.topics} topics: {n_pairs:,} pairs, "
        f"{arguments.resamples:,} sign flips each, Holm over all pairs"
    )
    print(f"  ours (all pairs, best of {arguments.repeat}): {seconds:8.3f} s")
    print(
        f"  scipy.stats.permutation_test: {scipy_subset:8.3f} s for the first {subset} pairs, "
        f"{scipy_all:,.1f} s for all {n_pairs:,} (extrapolated, not run)"
    )
    print(f"  ratio (scipy extrapolated / ours): {scipy_all / seconds:,.0f}x")
    print(f"  p-values of those {subset} pairs equal to SciPy's: {'yes' if agree else 'NO'}")
    _tukey(scores, arguments.repeat)


def _tukey(scores: np.ndarray, repeat: int) -> None:
    runs, topics = scores.shape
    a, b = all_pairs(runs)
    seconds = best_time(lambda: tukey_hsd(scores), repeat)
    ours = tukey_hsd(scores)
    start = time.perf_counter()
    scipy_result = stats.tukey_hsd(*scores)
    scipy_seconds = time.perf_counter() - start
    statistic_equal = bool(np.array_equal(ours.statistic, scipy_result.statistic[a, b]))
    difference = np.max(np.abs(ours.p_value - scipy_result.pvalue[a, b]))
    print(f"Tukey HSD, {runs} runs x {topics} topics: {len(a):,} pairs, df {runs * (topics - 1):,}")
    print(f"  ours (all pairs, best of {repeat}): {seconds:8.3f} s")
    print(f"  scipy.stats.tukey_hsd ({runs} x {runs} matrix, once): {scipy_seconds:8.3f} s")
    print(f"  ratio (scipy / ours): {scipy_seconds / seconds:,.0f}x")
    print(f"  statistics equal to SciPy's: {'yes' if statistic_equal else 'NO'}")
    print(f"  largest |p-value difference| from SciPy's: {difference:.1e} (tolerance 1e-9)")


if __name__ == "__main__":
    main()
