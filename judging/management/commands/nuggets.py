from django.core.management.base import CommandError, CommandParser

from judging import answer_selectors, answer_services
from judging.core import nugget_files
from pooling.commands import campaign_or_error
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError


class Command(WorkbenchCommand):
    help = (
        "A generated-answers campaign's nuggets in nuggetizer's JSONL (qid, query, nuggets: "
        "[{text, importance}]): --import FILE gives each topic of the file its next version "
        "(any problem, file:line: reason, saves nothing and exits with status 2); without it, "
        "every topic's current nuggets are written to standard output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--import", dest="file", help="nuggetizer JSONL to import")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        if not campaign.is_answers:
            raise CommandError(f"{campaign.slug} is not a generated-answers campaign")
        if options["file"]:
            path = existing_file(str(options["file"]))
            known = set(campaign.topics.values_list("topic_id", flat=True))
            try:
                read = nugget_files.read_nuggets(
                    path.read_bytes(), name=str(path), known_topics=known
                )
            except InputError as error:
                raise CommandError(f"rejected, nothing saved:\n{error}") from None
            saved = answer_services.nuggets_import(campaign=campaign, read=read)
            versions = ", ".join(f"{s.topic.topic_id} v{s.version}" for s in saved)
            self.stdout.write(f"{path}: nuggets of {len(saved)} topic(s): {versions}")
            return
        for topic in campaign.topics.all():
            current = answer_services.current_nuggets(topic)
            if current is not None:
                texts = answer_selectors.nugget_texts(current)
                query = topic.title or topic.description
                self.stdout.write(nugget_files.nugget_record(topic.topic_id, query, texts))
