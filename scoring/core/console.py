"""The scorer's console scripts, `wb-trec-eval` and `wb-sample-eval`. Pure core.

Installed with the package (pyproject's [project.scripts]); the same flags
and the same bytes out as `manage.py trec_eval` and `manage.py sample_eval`,
without Django: each loads its command, the scorer and NumPy, and neither
Django nor pandas nor pyarrow for small plain inputs (tests/scoring/
test_console.py checks it), so that a shell loop calling it once per run
pays for what scoring needs and no more.
"""

from __future__ import annotations

import sys


def trec_eval() -> int:
    """`wb-trec-eval [options] QRELS RUN...`: see `scoring.core.trec_eval`."""
    from scoring.core.trec_eval import main  # each script loads its own command only

    return main(sys.argv[1:], sys.stdout, sys.stderr)


def sample_eval() -> int:
    """`wb-sample-eval [-q] QRELS RUN...`: see `scoring.core.sample_eval`."""
    from scoring.core.sample_eval import main

    return main(sys.argv[1:], sys.stdout, sys.stderr)
