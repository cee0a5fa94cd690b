from django.core.management.base import CommandError, CommandParser

from pooling import services
from pooling.commands import campaign_or_error
from pooling.core.topic_files import TOPIC_FORMATS
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = "Add topics to a campaign from TREC SGML, TREC XML, JSONL or TSV files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--format", choices=TOPIC_FORMATS, help="default: detect")
        parser.add_argument("files", nargs="+")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        for path in options["files"]:
            file = existing_file(path)
            try:
                result = services.topics_import(
                    campaign=campaign,
                    data=file.read_bytes(),
                    name=str(path),
                    format=options["format"],
                )
            except InputError as error:
                raise CommandError(f"rejected, nothing stored:\n{error}") from None
            self.stdout.write(f"{path}: topics {result}")
