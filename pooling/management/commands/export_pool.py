from collections.abc import Iterable

from django.core.management.base import CommandError, CommandParser

from pooling import selectors
from pooling.commands import pool_or_error
from pooling.core.strategies import order_tsv_lines, pool_tsv_lines
from workbench.commands import WorkbenchCommand
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "Export a pool: the full TSV (--format tsv), each topic's documents in "
        "presentation order (--format order: topic, order, docno), or the docnos to "
        "judge that have no text loaded, one a line (--format without-text)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument("--format", choices=["tsv", "order", "without-text"], default="tsv")
        parser.add_argument("--topic", help="only this topic")
        parser.add_argument("--out", help="write here instead of standard output")

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        if options["format"] == "without-text":
            if options["topic"]:
                raise CommandError("--topic does not apply to --format without-text")
            lines = [f"{docno}\n" for docno in selectors.docnos_without_text(pool)]
            self._write(lines, options["out"])
            return
        frame = selectors.pool_entries_frame(pool)
        if options["topic"]:
            if options["topic"] not in set(frame["query_id"]):
                raise CommandError(f"pool {pool.pk} has no entries for topic {options['topic']!r}")
            frame = frame[frame["query_id"] == options["topic"]]
        lines = pool_tsv_lines(frame) if options["format"] == "tsv" else order_tsv_lines(frame)
        self._write(lines, options["out"])

    def _write(self, lines: Iterable[str], path: object) -> None:
        if path:
            with open(str(path), "w", encoding="utf-8", newline="") as out:
                out.writelines(lines)
        else:
            for line in lines:
                self.stdout.write(line, ending="")
