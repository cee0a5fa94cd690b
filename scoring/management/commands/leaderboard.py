"""`manage.py leaderboard`: rank runs by a measure, with confidence intervals and
paired significance tests between every pair.

A thin shell over `scoring.core.analysis.cli.main`, which reads the raw arguments
and reports bad input as one line with exit status 2.

    python manage.py leaderboard --qrels QRELS [-m MEASURE] [--test TEST]
        [--correction holm|bonferroni|none] [--format text|tsv|json|latex]
        [--seed N] [--resamples N] [--alpha A] RUN...
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from scoring.core.analysis.cli import main
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Rank runs by a measure and test every pair of them (see --help)."

    def run_from_argv(self, argv: list[str]) -> None:
        # argv: [program, "leaderboard", *arguments]
        sys.exit(main(argv[2:], sys.stdout, sys.stderr))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="leaderboard's arguments")

    def handle(self, *args: Any, **options: Any) -> None:
        """For call_command("leaderboard", "run.txt", "--qrels", "qrels.txt"): a run first
        (Django's parser would take a leading option for one of its own)."""
        status = main(options["arguments"], self.stdout, self.stderr)
        if status:
            raise CommandError("leaderboard failed", returncode=status)
