"""`manage.py codiesp`: score a CodiEsp run exactly as the official scripts.

    python manage.py codiesp --subtask D|P|X --gold GOLD.tsv --pred RUN.tsv --codes CODES.tsv
                             [--codes CODES_P.tsv] [--average official|gold]
                             [--format text|json] [-q]

A thin shell over `scoring.tasks.codiesp` (see its docstring and docs/tasks.md).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from workbench.commands import WorkbenchCommand, existing_file


class Command(WorkbenchCommand):
    help = (
        "Score a CodiEsp (CLEF eHealth 2020) run as the official scripts do: MAP and "
        "micro P/R/F1 for the D and P subtasks, P/R/F1 with text references for X. "
        "Bad input exits with status 2 naming the file, line and reason."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
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
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument(
            "-q", dest="per_document", action="store_true", help="text: each case's values too"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from pooling.problems import InputError
        from scoring.tasks import codiesp

        subtask = options["subtask"]
        if subtask == "X" and options["average"] != "official":
            raise CommandError("--average applies to the D and P subtasks (X has no MAP)")
        gold_path, pred_path = existing_file(options["gold"]), existing_file(options["pred"])
        code_paths = [existing_file(path) for path in options["codes"]]
        try:
            codes = frozenset().union(*(codiesp.read_codes(path) for path in code_paths))
            if subtask == "X":
                result = codiesp.score_x(
                    codiesp.read_x_gold(gold_path), codiesp.read_x_run(pred_path), codes
                )
            else:
                result = codiesp.score_ranked(
                    codiesp.read_codings(gold_path),
                    codiesp.read_codings(pred_path),
                    codes,
                    average=options["average"],
                )
        except InputError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(codiesp.as_json(result), indent=2, allow_nan=False))
            return
        lines = codiesp.per_document_lines(result) if options["per_document"] else []
        lines += codiesp.summary_lines(result, subtask=subtask)
        self.stdout.write("\n".join(lines))
