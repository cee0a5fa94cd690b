"""`manage.py trec_eval`: score runs against qrels as trec_eval 10.0 does.

A thin shell over `scoring.core.trec_eval.main`, which reads the arguments the
way trec_eval does (`-M100`, `-mrelstring.20`); Django's argparse would
split those differently, so the raw arguments go straight to it.

    python manage.py trec_eval [-q] [-c] [-n] [-J] [-M N] [-l N] [-m MEASURE[.PARAMS]]...
                               [-R qrels] [--format text|tsv|json] QRELS RUN...
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from scoring.core.trec_eval import main
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Score runs against qrels exactly as trec_eval 10.0 does (see --help)."

    def run_from_argv(self, argv: list[str]) -> None:
        # argv: [program, "trec_eval", *arguments]
        sys.exit(main(argv[2:], sys.stdout, sys.stderr))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="trec_eval's arguments")

    def handle(self, *args: Any, **options: Any) -> None:
        """For call_command("trec_eval", "qrels.txt", "run.txt", "-q"): files first."""
        status = main(options["arguments"], self.stdout, self.stderr)
        if status:
            raise CommandError("trec_eval failed", returncode=status)
