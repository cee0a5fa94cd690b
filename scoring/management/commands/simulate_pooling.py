"""`manage.py simulate_pooling`: replay adaptive pooling strategies on earlier qrels
(docs/adaptive_pooling.md).

A thin shell over `scoring.core.pool_simulation_cli.main`, which reads the raw
arguments, shows a progress bar and reports bad input as one line with exit
status 2.

    python manage.py simulate_pooling --qrels QRELS --budget N[,N...]
        [--strategy depth,mtf,hedge,bandit,thompson,active] [--allocation equal|adaptive]
        [-m MEASURE] [-l LEVEL] [--depth K|all] [--seed S] [--groups FILE]
        [--order FILE] [--plot FILE.svg|.png|.csv] [--format text|json] RUN...
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from scoring.core.pool_simulation_cli import main
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Replay adaptive pooling strategies on earlier qrels (see --help)."

    def run_from_argv(self, argv: list[str]) -> None:
        # argv: [program, "simulate_pooling", *arguments]
        sys.exit(main(argv[2:], sys.stdout, sys.stderr))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the simulator's arguments")

    def handle(self, *args: Any, **options: Any) -> None:
        """For call_command("simulate_pooling", "run.txt", "--qrels", "qrels.txt", ...): a
        run first (Django's parser would take a leading option for one of its own)."""
        status = main(options["arguments"], self.stdout, self.stderr)
        if status:
            raise CommandError("simulate_pooling failed", returncode=status)
