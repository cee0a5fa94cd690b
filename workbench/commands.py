"""What every management command shares: its base class (bad input exits 2) and files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

# A command refused for bad input exits with 2, as trec_eval does and argparse
# does for usage errors; Django's own default is 1.
BAD_INPUT = 2


class WorkbenchCommand(BaseCommand):
    """A management command whose refusals (CommandError) exit with status 2."""

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except CommandError as error:
            if error.returncode == 1:  # not chosen by the command
                error.returncode = BAD_INPUT
            raise


def existing_file(path: str) -> Path:
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    return file


class BarProgress:
    """A tqdm bar that a service reports to as it would to a job's JobProgress:
    `progress(done=, total=, unit=)` and `progress.advance(steps)`."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def __call__(
        self, done: int | None = None, total: int | None = None, unit: str | None = None
    ) -> None:
        if unit is not None:
            self.bar.unit = f" {unit}"
        if total is not None:
            self.bar.total = total
        if done is not None:
            self.bar.n = done
        self.bar.refresh()

    def advance(self, steps: int = 1) -> None:
        self.bar.update(steps)

    def note(self, line: str) -> None:
        self.bar.write(line)
