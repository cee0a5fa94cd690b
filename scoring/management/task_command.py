"""What `manage.py codiesp` and `manage.py scifact` share: read the inputs, score
them through `scoring.core.tasks.subtasks`, print text or JSON, and exit with status 2
naming every file, line and reason when an input is bad."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core.management.base import CommandError, CommandParser

from workbench.commands import WorkbenchCommand, existing_file

if TYPE_CHECKING:
    from scoring.core.tasks.subtasks import Scores


@dataclass(frozen=True)
class TaskInputs:
    """What one command line scores: a subtask's gold, submission and valid codes."""

    task: str
    subtask: str
    gold: str
    submission: str
    codes: tuple[str, ...] = ()
    average: str = "official"


class TaskCommand(WorkbenchCommand):
    """A task scorer's command. Subclasses add their input options and say, from the
    parsed options, what to score (`inputs`); this class does the rest."""

    requires_system_checks: list[str] = []
    json_help = "json: full precision"

    def add_inputs(self, parser: CommandParser) -> None:
        raise NotImplementedError

    def inputs(self, options: dict[str, Any]) -> TaskInputs:
        raise NotImplementedError

    def add_arguments(self, parser: CommandParser) -> None:
        self.add_inputs(parser)
        parser.add_argument(
            "--format", choices=["text", "json"], default="text", help=self.json_help
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Imported here: `manage.py help` and the other commands start without them.
        from scoring.core.tasks import subtasks

        scores = _score(self.inputs(options))
        if options["format"] == "json":
            self.stdout.write(json.dumps(subtasks.as_json(scores), indent=2, allow_nan=False))
        else:
            per_document = options.get("per_document", False)
            self.stdout.write("\n".join(subtasks.text_lines(scores, per_document=per_document)))


def _score(wanted: TaskInputs) -> Scores:
    from scoring.core.tasks import subtasks
    from workbench.core.problems import InputError

    gold, submission = _named(wanted.gold), _named(wanted.submission)
    codes = [_named(path) for path in wanted.codes]
    try:
        task_subtask = subtasks.subtask(wanted.task, wanted.subtask)
        checked = subtasks.read_gold(task_subtask, gold, codes)
        # The submission is checked and scored in one reading, a block at a time.
        return subtasks.score(checked, submission, average=wanted.average)  # type: ignore[arg-type]
    except InputError as error:
        raise CommandError(str(error)) from None


def _named(path: str) -> Any:
    """The file as the readers take it, named by the path given (a missing one: exit 2)."""
    from scoring.core.tasks.subtasks import NamedFile

    file: Path = existing_file(path)
    return NamedFile(path, file)
