"""`manage.py scifact`: score SciFact predictions exactly as the leaderboard's evaluator.

    python manage.py scifact --labels CLAIMS.jsonl --preds PREDICTIONS.jsonl [--format text|json]

A thin shell over `scoring.core.tasks.scifact` (see its docstring and docs/tasks.md),
through `scoring.management.task_command`.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from scoring.management.task_command import TaskCommand, TaskInputs


class Command(TaskCommand):
    help = (
        "Score SciFact claim-verification predictions as the leaderboard's evaluator does: "
        "precision, recall and F1 at the abstract level (label only, rationalized) and the "
        "sentence level (selection, selection + label). Bad input exits with status 2."
    )
    json_help = "json: the evaluator's twelve keys at full precision"

    def add_inputs(self, parser: CommandParser) -> None:
        parser.add_argument("--labels", required=True, help="the gold claims (JSONL)")
        parser.add_argument("--preds", required=True, help="the predictions (JSONL)")

    def inputs(self, options: dict[str, Any]) -> TaskInputs:
        return TaskInputs("scifact", "claims", options["labels"], options["preds"])
