from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from pooling import run_services
from pooling.commands import campaign_or_error
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = (
        "Check run files line by line and store them in a campaign. By default the batch is "
        "all or nothing: if any file is rejected, none is stored and the exit status is 2."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument(
            "--keep-valid",
            action="store_true",
            help="store the valid files even when others are rejected (exit status still 1)",
        )
        parser.add_argument("files", nargs="+")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        files = [existing_file(path) for path in options["files"]]
        uploads = [run_services.RunUpload(str(f), f.read_bytes()) for f in files]
        try:
            runs = run_services.runs_import(
                campaign=campaign,
                uploads=uploads,
                keep_valid=options["keep_valid"],
                progress=lambda items: tqdm(
                    items, desc="checking runs", unit=" files", disable=None, file=self.stderr
                ),
            )
        except run_services.RunsPartlyImported as error:
            for run in error.stored:
                self.stdout.write(f"stored run {run.tag} ({run.line_count:,} lines)")
            raise CommandError(f"rejected:\n{error}") from None
        except InputError as error:
            raise CommandError(f"rejected, nothing stored:\n{error}") from None
        for run in runs:
            self.stdout.write(
                f"stored run {run.tag}: {run.line_count:,} lines, {run.topic_count:,} topics, "
                f"depth {run.depth}"
            )
