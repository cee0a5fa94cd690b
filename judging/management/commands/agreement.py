"""`manage.py agreement LABELS.tsv`: inter-assessor agreement from the command line.

A thin shell over `judging.core.agreement_table` (see its docstring for the
lines, their order and the formats). A file needs no database and this
command opens none for it; `--pool ID` reads the pool's stored judgments
(and its campaign's schema) through the agreement page's report instead.
Bad input and usage exit with status 2 and `file:line: reason`.

The computing modules (pandas, scikit-learn) are imported inside `handle`,
so `--help` and Django's command listing stay fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from workbench.commands import WorkbenchCommand
from workbench.core.label_schema import DEFAULT_PRESET, SCHEMA_PRESETS
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "Inter-assessor agreement of a LABELS.tsv file (header: assessor topic docno rel eff "
        "cred) or of a pool's stored judgments (--pool): one line per aspect, scope (topic or "
        "all), statistic and raters, tab-separated, with the reason when a value is undefined."
    )
    # A file needs neither the database nor the checks that import every URL and view.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "labels", nargs="?", metavar="LABELS.tsv", help="tab-separated labels with a header"
        )
        parser.add_argument(
            "--pool",
            type=int,
            metavar="ID",
            help="the stored judgments of this pool instead of a file (its campaign's schema)",
        )
        parser.add_argument(
            "--schema",
            metavar="NAME|FILE.json",
            help=f"for a file: a preset ({', '.join(SCHEMA_PRESETS)}) or a label-schema JSON "
            f"file; default {DEFAULT_PRESET}",
        )
        parser.add_argument(
            "--no-machines",
            action="store_true",
            help="with --pool: leave machine assessors out (by default they take part when "
            "the pool has machine labels, named machine.<campaign>.<name>)",
        )
        parser.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="text: tab-separated with a header line (default); json: a list of objects",
        )

    @quiet_on_closed_stdout
    def handle(self, *args: Any, **options: Any) -> None:
        lines = self._lines(options)
        from judging.core.agreement_table import format_json, format_text

        write = format_json if options["format"] == "json" else format_text
        self.stdout.write(write(lines), ending="")

    def _lines(self, options: dict[str, Any]) -> Any:
        if (options["labels"] is None) == (options["pool"] is None):
            raise CommandError("give either a LABELS.tsv file or --pool ID")
        if options["pool"] is not None:
            if options["schema"]:
                raise CommandError("--schema is for a file; a pool uses its campaign's schema")
            return _pool_lines(options["pool"], machines=False if options["no_machines"] else None)
        if options["no_machines"]:
            raise CommandError("--no-machines is for --pool; a file has no machine assessors")
        return _file_lines(options["labels"], options["schema"] or DEFAULT_PRESET)


def _file_lines(name: str, schema_spec: str) -> Any:
    """The table of a LABELS file; touches no database."""
    from judging.core.agreement_table import agreement_lines, read_labels
    from workbench.core.label_schema import LabelSchemaError, load_schema
    from workbench.core.problems import InputError

    try:
        schema = load_schema(schema_spec)
    except LabelSchemaError as error:
        raise CommandError(f"--schema: {error}") from None
    path = Path(name)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CommandError(f"{name}: {error.strerror or 'cannot read'}") from None
    try:
        return agreement_lines(read_labels(data, name=name, schema=schema), schema=schema)
    except InputError as error:
        raise CommandError(str(error)) from None


def _pool_lines(pool_id: int, *, machines: bool | None) -> Any:
    from judging import selectors
    from judging.core.agreement_table import aspect_names
    from pooling.commands import pool_or_error

    pool = pool_or_error(pool_id)
    try:
        aspect_names(pool.campaign.schema)
    except ValueError as error:  # more aspects than the table has names for
        raise CommandError(f"pool {pool_id}: {error}") from None
    return selectors.agreement_lines(pool, machines=machines)
