"""ranx's paired tests on generated score tables, kept as golden numbers.

Run with ranx's own environment (not the workbench's):

    python3 -m venv /tmp/ranx-venv && /tmp/ranx-venv/bin/pip install ranx
    /tmp/ranx-venv/bin/python tests/scoring/core/analysis/golden/ranx/make_golden.py

It writes ranx.json beside it: the tables, and for every pair ranx's paired
t-test and Fisher randomisation p-values, and Tukey's HSD matrix.
tests/scoring/core/analysis/test_ranx.py compares ours with them.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from ranx.statistical_tests import (
    fisher_randomization_test,
    paired_student_t_test,
    tukey_hsd_test,
)

PERMUTATIONS = 10_000


def table(seed: int, runs: int = 6, topics: int = 25) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.6, size=topics)
    effect = rng.normal(0, 0.05, size=runs)
    return np.clip(base + effect[:, None] + rng.normal(0, 0.12, size=(runs, topics)), 0, 1)


def main() -> None:
    cases = []
    for seed in range(1, 6):
        scores = table(seed)
        names = [f"r{k}" for k in range(len(scores))]
        pairs = []
        for a in range(len(scores)):
            for b in range(a + 1, len(scores)):
                t_p, _ = paired_student_t_test(scores[a], scores[b])
                fisher_p, _ = fisher_randomization_test(
                    scores[a], scores[b], n_permutations=PERMUTATIONS, random_seed=42
                )
                pairs.append({"a": a, "b": b, "t": float(t_p), "fisher": float(fisher_p)})
        tukey = tukey_hsd_test(names, list(scores), max_p=0.05)
        matrix = [[None] * len(names) for _ in names]
        for row in tukey:
            matrix[names.index(row["control"])][names.index(row["treatment"])] = float(
                row["p-value"]
            )
        cases.append({"seed": seed, "scores": scores.tolist(), "pairs": pairs, "tukey": matrix})
    versions = {name: version(name) for name in ("ranx", "numpy", "scipy", "numba")}
    out = {"versions": versions, "fisher_permutations": PERMUTATIONS, "cases": cases}
    (Path(__file__).parent / "ranx.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
