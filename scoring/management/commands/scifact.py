"""`manage.py scifact`: score SciFact predictions exactly as the leaderboard's evaluator.

    python manage.py scifact --labels CLAIMS.jsonl --preds PREDICTIONS.jsonl [--format text|json]

A thin shell over `scoring.tasks.scifact` (see its docstring and docs/tasks.md).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from workbench.commands import WorkbenchCommand, existing_file


class Command(WorkbenchCommand):
    help = (
        "Score SciFact claim-verification predictions as the leaderboard's evaluator does: "
        "precision, recall and F1 at the abstract level (label only, rationalized) and the "
        "sentence level (selection, selection + label). Bad input exits with status 2."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--labels", required=True, help="the gold claims (JSONL)")
        parser.add_argument("--preds", required=True, help="the predictions (JSONL)")
        parser.add_argument(
            "--format",
            choices=["text", "json"],
            default="text",
            help="json: the evaluator's twelve keys at full precision",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from pooling.problems import InputError
        from scoring.tasks import scifact

        labels, preds = existing_file(options["labels"]), existing_file(options["preds"])
        try:
            gold = scifact.read_claims(labels)
            result = scifact.score(gold, scifact.read_predictions(preds, gold))
        except InputError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write("\n".join(scifact.text_lines(result)))
