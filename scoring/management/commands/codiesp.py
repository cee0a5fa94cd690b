"""`manage.py codiesp`: score a CodiEsp run exactly as the official scripts.

    python manage.py codiesp --subtask D|P|X --gold GOLD.tsv --pred RUN.tsv --codes CODES.tsv
                             [--codes CODES_P.tsv] [--average official|gold]
                             [--format text|json] [-q]

A thin shell over `scoring.core.tasks.codiesp` (see its docstring and docs/tasks.md),
through `scoring.management.task_command`.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from scoring.management.task_command import TaskCommand, TaskInputs


class Command(TaskCommand):
    help = (
        "Score a CodiEsp (CLEF eHealth 2020) run as the official scripts do: MAP and "
        "micro P/R/F1 for the D and P subtasks, P/R/F1 with text references for X. "
        "Bad input exits with status 2 naming the file, line and reason."
    )

    def add_inputs(self, parser: CommandParser) -> None:
        parser.add_argument("--subtask", required=True, choices=["D", "P", "X"])
        parser.add_argument("--gold", required=True, help="the gold standard (TSV)")
        parser.add_argument("--pred", required=True, help="the run to score (TSV)")
        parser.add_argument(
            "--codes",
            required=True,
            action="append",
            help="a valid-code list (code in the first column); X: give D's and P's",
        )
        parser.add_argument(
            "--average",
            choices=["official", "gold"],
            default="official",
            help="MAP's mean: over the cases with a valid prediction (official, default) "
            "or over every gold case (trec_eval -c); D and P only",
        )
        parser.add_argument(
            "-q", dest="per_document", action="store_true", help="text: each case's values too"
        )

    def inputs(self, options: dict[str, Any]) -> TaskInputs:
        if options["subtask"] == "X" and options["average"] != "official":
            raise CommandError("--average applies to the D and P subtasks (X has no MAP)")
        return TaskInputs(
            "codiesp",
            options["subtask"],
            options["gold"],
            options["pred"],
            tuple(options["codes"]),
            options["average"],
        )
