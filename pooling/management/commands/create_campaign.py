import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from pooling import services


class Command(BaseCommand):
    help = "Create a campaign (the default label schema unless --label-schema FILE.json)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--slug", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument("--description", default="")
        parser.add_argument("--guidelines", default="")
        parser.add_argument("--budget", type=int, default=None, help="judgment budget")
        parser.add_argument("--label-schema", type=Path, default=None, help="a JSON file")

    def handle(self, *args: object, **options: object) -> None:
        schema = None
        if options["label_schema"]:
            path = options["label_schema"]
            try:
                schema = json.loads(Path(path).read_text())
            except (OSError, ValueError) as error:
                raise CommandError(f"{path}: {error}") from None
        try:
            campaign = services.campaign_create(
                slug=options["slug"],
                name=options["name"],
                description=options["description"],
                guidelines=options["guidelines"],
                judgment_budget=options["budget"],
                label_schema=schema,
            )
        except ValidationError as error:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())
            raise CommandError(problems) from None
        self.stdout.write(f"created campaign {campaign.slug}")
