"""Random label tables for the agreement tests, and the LABELS files that hold them."""

from __future__ import annotations

import numpy as np

HEADER = "assessor\ttopic\tdocno\trel\teff\tcred\n"

Row = dict  # assessor, topic, docno, rel, eff, cred: an int, or None for no label


def random_rows(
    seed: int, *, n_topics: int = 4, n_docs: int = 12, n_assessors: int = 3, p_judge: float = 0.6
) -> list[Row]:
    """Correlated labels of the Decision schema: a latent grade per item plus noise.

    Assessors skip items (some items get one rating only), eff and cred are
    absent when rel is 0 and sometimes missing when it is not. Topics are
    "2", "10", "covid-1", "7" (as many as asked), rows in random order.
    """
    rng = np.random.default_rng(seed)
    topics = ["2", "10", "covid-1", "7"][:n_topics]
    assessors = ["ann", "bob", "cat", "dan"][:n_assessors]
    rows = []
    for topic in topics:
        for doc in range(n_docs):
            truth = int(rng.integers(0, 3))
            eff_truth = int(rng.integers(0, 4))
            for assessor in assessors:
                if rng.random() > p_judge:
                    continue
                noisy = rng.random() < 0.3
                rel = int(np.clip(truth + noisy * rng.integers(-1, 2), 0, 2))
                agrees = rng.random() < 0.7
                eff = (eff_truth if agrees else int(rng.integers(0, 4))) if rel else None
                cred = int(rng.integers(0, 2)) if rel else None
                if rel and rng.random() < 0.15:
                    eff = None
                if rel and rng.random() < 0.1:
                    cred = None
                rows.append(
                    {"assessor": assessor, "topic": topic, "docno": f"d{doc}"}
                    | {"rel": rel, "eff": eff, "cred": cred}
                )
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]


def labels_file(rows: list[Row], *, seed: int = 0, stored_codes: bool = False) -> bytes:
    """A LABELS file of the rows.

    No label is written as an empty cell, -1 or -2 at random; with
    `stored_codes`, as the judgments import accepts it: empty where rel is 0
    (not asked), -2 where rel > 0 (should have been judged and was not).
    """
    rng = np.random.default_rng(seed)
    lines = [HEADER]
    for row in rows:
        cells = [row["assessor"], row["topic"], row["docno"]]
        for column in ("rel", "eff", "cred"):
            value = row[column]
            if value is not None:
                cells.append(str(value))
            elif stored_codes:
                cells.append("-2" if row["rel"] else "")
            else:
                cells.append(str(rng.choice(["", "-1", "-2"])))
        lines.append("\t".join(cells) + "\n")
    return "".join(lines).encode()
