"""`manage.py sample_eval`: inferred measures from a stratified pool, as sample_eval.pl.

A thin shell over `scoring.core.sample_eval.main`, which reads the raw arguments.

    python manage.py sample_eval [-q] QRELS RUN...
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from scoring.core.sample_eval import main
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Inferred measures (infAP, infNDCG, ...) of runs, as NIST's sample_eval.pl (see --help)."

    def run_from_argv(self, argv: list[str]) -> None:
        # argv: [program, "sample_eval", *arguments]
        sys.exit(main(argv[2:], sys.stdout, sys.stderr))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="sample_eval's arguments")

    def handle(self, *args: Any, **options: Any) -> None:
        """For call_command("sample_eval", "qrels.txt", "run.txt", "-q"): files first."""
        status = main(options["arguments"], self.stdout, self.stderr)
        if status:
            raise CommandError("sample_eval failed", returncode=status)
