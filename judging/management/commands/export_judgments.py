from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from judging.machine_selectors import judgments_export_tsv
from pooling.models import Pool
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Write a pool's stored judgments, human and machine (machine rows under the machine "
        "account's username), as the TSV import_judgments reads: assessor, topic, docno, "
        "rel and the schema's aspects, with a header row."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument("--assessor", help="only this username or machine name")
        parser.add_argument("--out", required=True, help="file to write")

    def handle(self, *args: object, **options: Any) -> None:
        pool = Pool.objects.select_related("campaign").filter(pk=options["pool"]).first()
        if pool is None:
            raise CommandError(f"--pool {options['pool']}: no such pool")
        text, count = judgments_export_tsv(pool, assessor=options["assessor"])
        if options["assessor"] and not count:
            raise CommandError(f"--assessor {options['assessor']}: no judgments in pool {pool.pk}")
        out = Path(options["out"])
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"{out}: cannot write ({error.strerror})") from None
        self.stdout.write(f"{out}: {count} judgments")
