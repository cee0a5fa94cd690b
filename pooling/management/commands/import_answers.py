from django.core.management.base import CommandError, CommandParser

from pooling import services
from pooling.commands import campaign_or_error
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = (
        "Set the topics' accepted answers from a file as NIST publishes it (topics_efficacy): "
        "`topic answer` per line, answer -1 (not helpful), 0 (inconclusive) or 1 (helpful). "
        "The correctness qrels map effectiveness against these answers. A file with any "
        "problem changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("file")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        path = existing_file(options["file"])
        try:
            result = services.topic_answers_import(
                campaign=campaign, data=path.read_bytes(), name=str(path)
            )
        except InputError as error:
            raise CommandError(f"rejected, nothing stored:\n{error}") from None
        self.stdout.write(f"{path}: {result}")
