from pathlib import Path

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from pooling import services
from pooling.commands import campaign_or_error, pool_or_error
from pooling.core.document_files import DOCUMENT_FORMATS
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = (
        "Stream documents into a campaign from JSONL, TREC SGML or TSV files, in bounded "
        "memory. A file with any problem is rolled back whole."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--format", choices=DOCUMENT_FORMATS, help="default: detect")
        only = parser.add_mutually_exclusive_group()
        only.add_argument(
            "--only-docnos",
            type=Path,
            help="load only the docnos listed in this file (the first word of each line)",
        )
        only.add_argument(
            "--only-pool", type=int, metavar="POOL_ID", help="load only the documents of this pool"
        )
        parser.add_argument("files", nargs="+")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        only = None
        if options["only_docnos"]:
            listing = existing_file(str(options["only_docnos"]))
            only = frozenset(line.split()[0] for line in listing.open() if line.strip())
        elif options["only_pool"] is not None:
            pool = pool_or_error(options["only_pool"])
            if pool.campaign_id != campaign.pk:
                raise CommandError(f"pool {pool.pk} belongs to campaign {pool.campaign.slug}")
            only = frozenset(pool.entries.values_list("docno", flat=True))
        for path in options["files"]:
            file = existing_file(path)
            with (
                file.open("rb") as stream,
                tqdm(desc=str(path), unit=" docs", disable=None, file=self.stderr) as bar,
            ):
                try:
                    result = services.documents_import(
                        campaign=campaign,
                        stream=stream,
                        name=str(path),
                        format=options["format"],
                        only=only,
                        on_batch=bar.update,
                    )
                except InputError as error:
                    raise CommandError(f"rejected, nothing stored:\n{error}") from None
            self.stdout.write(f"{path}: documents {result}")
