from django.core.management.base import CommandError, CommandParser

from pooling import selectors
from pooling.commands import pool_or_error
from pooling.core.strategies import order_tsv_lines, pool_tsv_lines
from workbench.commands import WorkbenchCommand
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "Export a pool: the full TSV (--format tsv), or each topic's documents in "
        "presentation order (--format order: topic, order, docno)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument("--format", choices=["tsv", "order"], default="tsv")
        parser.add_argument("--topic", help="only this topic")
        parser.add_argument("--out", help="write here instead of standard output")

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        frame = selectors.pool_entries_frame(pool)
        if options["topic"]:
            if options["topic"] not in set(frame["query_id"]):
                raise CommandError(f"pool {pool.pk} has no entries for topic {options['topic']!r}")
            frame = frame[frame["query_id"] == options["topic"]]
        lines = pool_tsv_lines(frame) if options["format"] == "tsv" else order_tsv_lines(frame)
        if options["out"]:
            with open(options["out"], "w", encoding="utf-8", newline="") as out:
                out.writelines(lines)
        else:
            for line in lines:
                self.stdout.write(line, ending="")
