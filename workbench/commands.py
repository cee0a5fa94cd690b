"""The base class of the workbench's management commands."""

from __future__ import annotations

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
