"""`manage.py reusability`: would a run that was not pooled be scored fairly with
these qrels? Each run (and group of runs) left out of a depth-k or sampled pool
in turn (docs/reusability.md).

A thin shell over `scoring.core.analysis.reusability_cli.main`, which reads the raw
arguments and reports bad input as one line with exit status 2; this command
adds `--pool ID`, read by `scoring.reusability_selectors.pool_reusability_inputs`.

    python manage.py reusability --qrels QRELS --depth K [-m MEASURE] [-c]
        [--groups FILE] [--format text|json] RUN...
    python manage.py reusability --stratified QRELS --depth K [--inclusion FILE]
        [-m infAP|infNDCG] [-c] [--groups FILE] [--format text|json] RUN...
    python manage.py reusability --pool ID [-m MEASURE] [--groups FILE] [--format text|json]
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from django.core.management.base import CommandError, CommandParser

from scoring.core.analysis.reusability_cli import main
from scoring.core.command_line import UsageError
from workbench.commands import WorkbenchCommand

if TYPE_CHECKING:
    from scoring.core.analysis.reusability import ReusabilityInputs


def load_pool(pool_id: int) -> ReusabilityInputs:
    """The stored pool's qrels, runs and depths (stratified for a sampled pool);
    UsageError when there is none to read."""
    from pooling.models import Pool
    from scoring.reusability_selectors import pool_reusability_inputs
    from scoring.selectors import ScoringError

    try:
        pool = Pool.objects.select_related("campaign").get(pk=pool_id)
        return pool_reusability_inputs(pool=pool)
    except Pool.DoesNotExist:
        raise UsageError(f"no pool with id {pool_id}") from None
    except ScoringError as error:
        raise UsageError(str(error)) from None


class Command(WorkbenchCommand):
    help = "Leave each run out of a depth-k or sampled pool and score it again (see --help)."

    def run_from_argv(self, argv: list[str]) -> None:
        # argv: [program, "reusability", *arguments]
        sys.exit(main(argv[2:], sys.stdout, sys.stderr, load_pool=load_pool))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="reusability's arguments")

    def handle(self, *args: Any, **options: Any) -> None:
        """For call_command("reusability", "run.txt", "--qrels", "qrels.txt", ...): a run
        first (Django's parser would take a leading option for one of its own)."""
        status = main(options["arguments"], self.stdout, self.stderr, load_pool=load_pool)
        if status:
            raise CommandError("reusability failed", returncode=status)
