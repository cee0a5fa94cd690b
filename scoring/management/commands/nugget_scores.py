"""`manage.py nugget_scores`: score nugget assignments exactly as nuggetizer does.

    python manage.py nugget_scores --assignments A.jsonl [--format text|json] [-q]

A thin shell over `scoring.core.tasks.nuggets` (see its docstring and docs/tasks.md).
Not a `TaskCommand`: those score a submission against a gold file, and an
assignment file is both at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from django.core.management.base import CommandError, CommandParser

from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "Score generated answers by their nugget assignments as nuggetizer does: all, "
        "strict_all, vital, strict_vital (0.0 for a topic without vital nuggets), weighted and "
        "strict_weighted (vital 1, okay 0.5) per answer, and each run's mean over the topics "
        "it answered. Reads nuggetizer's assign output (JSONL: qid, run_id, nuggets with "
        "text, importance, assignment). Bad input exits with status 2."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--assignments", required=True, help="nuggetizer's assign output (JSONL), any runs"
        )
        parser.add_argument(
            "--format",
            choices=["text", "json"],
            default="text",
            help="text: a table, 4 decimals; json: runs and per_topic at full precision",
        )
        parser.add_argument(
            "-q",
            "--per-topic",
            action="store_true",
            dest="per_topic",
            help="text: each answer's scores too, after the runs",
        )

    @quiet_on_closed_stdout
    def handle(self, *args: Any, **options: Any) -> None:
        # Imported here: `manage.py help` and the other commands start without them.
        from tqdm import tqdm

        from scoring.core.tasks import nuggets
        from workbench.core.problems import InputError

        path = options["assignments"]
        file = existing_file(path)
        with (
            file.open("rb") as stream,
            tqdm(
                total=file.stat().st_size,
                desc=path,
                unit="B",
                unit_scale=True,
                disable=None,
                file=self.stderr,
            ) as bar,
        ):
            try:
                answers = nuggets.read_assignments(_counted(stream, bar.update), name=path)
            except InputError as error:
                raise CommandError(str(error)) from None
        result = nuggets.score(answers)
        if options["format"] == "json":
            self.stdout.write(json.dumps(nuggets.as_json(result), indent=2, allow_nan=False))
        else:
            lines = nuggets.text_lines(result, per_topic=options["per_topic"])
            self.stdout.write("\n".join(lines))


def _counted(stream: IO[bytes], update: Any) -> Iterator[bytes]:
    """The file's lines, each one's bytes counted by `update` (the progress bar)."""
    for line in stream:
        update(len(line))
        yield line
