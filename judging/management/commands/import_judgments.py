from django.core.management.base import CommandError, CommandParser

from judging import services
from pooling.commands import campaign_or_error
from pooling.errors import PoolBuildError
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = (
        "Import judgments made elsewhere from a TSV file: assessor, topic, docno, rel and "
        "the schema's aspects (default eff, cred). With --make-pool, the judged documents "
        "also become a pool (every entry judged, stratum 1, probability 1). Every line is "
        "checked first; a file with any problem stores nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument(
            "--create-assessors",
            action="store_true",
            help="make accounts (without a password) for assessors not yet known",
        )
        parser.add_argument(
            "--make-pool", metavar="NAME", help="also make a pool of the judged documents"
        )
        parser.add_argument("file")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        path = existing_file(options["file"])
        make_pool = (
            None
            if options["make_pool"] is None
            else services.PoolOfImport(
                options["make_pool"],
                source=f"judgments file {path.name}, imported by import_judgments",
            )
        )
        try:
            result = services.judgments_import_file(
                campaign=campaign,
                data=path.read_bytes(),
                name=str(path),
                create_assessors=options["create_assessors"],
                make_pool=make_pool,
            )
        except InputError as error:
            raise CommandError(f"rejected, nothing stored:\n{error}") from None
        except (services.JudgmentError, PoolBuildError) as error:
            raise CommandError(f"rejected, nothing stored: {error}") from None
        self.stdout.write(f"{path}: judgments {result}")
