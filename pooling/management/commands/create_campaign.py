from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from pooling import services
from pooling.models import TaskKind
from workbench.commands import WorkbenchCommand
from workbench.core.file_input import JSONProblem, parse_json
from workbench.core.label_schema import DEFAULT_PRESET, SCHEMA_PRESETS


class Command(WorkbenchCommand):
    help = (
        "Create a campaign with a preset label schema (--schema-preset, default "
        f"{DEFAULT_PRESET}) or one of your own (--label-schema FILE.json)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--slug", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument("--description", default="")
        parser.add_argument("--guidelines", default="")
        parser.add_argument("--budget", type=int, default=None, help="judgment budget")
        parser.add_argument(
            "--task-kind",
            choices=TaskKind.values,
            default=TaskKind.RANKED,
            help="ranked (default): runs, pools and judging; codiesp or scifact: "
            "submissions scored against a gold file",
        )
        schema = parser.add_mutually_exclusive_group()
        schema.add_argument(
            "--schema-preset",
            choices=list(SCHEMA_PRESETS),
            default=None,
            help="; ".join(f"{p.name}: {p.label}" for p in SCHEMA_PRESETS.values())
            + f" (default {DEFAULT_PRESET})",
        )
        schema.add_argument(
            "--label-schema", type=Path, default=None, metavar="FILE.json", help="your own schema"
        )

    def handle(self, *args: object, **options: Any) -> None:
        if options["label_schema"]:
            schema = _read_schema(options["label_schema"])
        else:
            schema = SCHEMA_PRESETS[options["schema_preset"] or DEFAULT_PRESET].schema()
        try:
            campaign = services.campaign_create(
                slug=options["slug"],
                name=options["name"],
                description=options["description"],
                guidelines=options["guidelines"],
                judgment_budget=options["budget"],
                label_schema=schema,
                task_kind=options["task_kind"],
            )
        except ValidationError as error:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())
            raise CommandError(problems) from None
        self.stdout.write(f"created campaign {campaign.slug}")


def _read_schema(path: Path) -> Any:
    try:
        return parse_json(path.read_bytes())
    except OSError as error:
        raise CommandError(f"{path}: cannot read ({error.strerror})") from None
    except JSONProblem as error:
        raise CommandError(f"{path}: {error}") from None
