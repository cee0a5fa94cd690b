from django.core.management.base import CommandError, CommandParser

from pooling import answer_services
from pooling.commands import campaign_or_error
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = (
        "Store the runs of a file of generated answers (the TREC 2024 RAG track's format: "
        "run_id, topic_id, topic, references, response_length, answer) in a generated-answers "
        "campaign. Every line is checked; any problem (file:line: reason) stores nothing and "
        "exits with status 2. --pool-cited also stores each run's cited segments as a ranked "
        "run, to pool them for relevance judging."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--pool-cited", action="store_true", dest="pool_cited")
        parser.add_argument("file")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        path = existing_file(str(options["file"]))
        try:
            runs = answer_services.answer_runs_import(
                campaign=campaign,
                data=path.read_bytes(),
                name=str(path),
                pool_cited=bool(options["pool_cited"]),
            )
        except InputError as error:
            raise CommandError(f"rejected, nothing stored:\n{error}") from None
        answers = sum(run.answers.count() for run in runs)
        tags = ", ".join(run.tag for run in runs)
        self.stdout.write(f"{path}: {len(runs)} run(s) of answers, {answers:,} answers: {tags}")
