"""The scorer's console scripts, `wb-trec-eval` and `wb-sample-eval`. Pure core.

Installed with the package (pyproject's [project.scripts]); the same flags
and the same bytes out as `manage.py trec_eval` and `manage.py sample_eval`,
without Django: importing this module loads the scorer and NumPy, not Django,
pandas or pyarrow (tests/scoring/test_console.py checks it), so that a shell
loop calling it once per run pays for what scoring needs and no more.
"""

from __future__ import annotations

import sys

from scoring import sample_eval as sample_eval_command
from scoring import trec_eval as trec_eval_command


def trec_eval() -> int:
    """`wb-trec-eval [options] QRELS RUN...`: see `scoring.trec_eval`."""
    return trec_eval_command.main(sys.argv[1:], sys.stdout, sys.stderr)


def sample_eval() -> int:
    """`wb-sample-eval [-q] QRELS RUN...`: see `scoring.sample_eval`."""
    return sample_eval_command.main(sys.argv[1:], sys.stdout, sys.stderr)
