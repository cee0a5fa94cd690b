from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from pooling.commands import pool_or_error
from scoring import export_selectors
from scoring.core.exports import DEFAULT_BUNDLE, FORMATS, INCLUSION_FILE, ExportError
from scoring.selectors import HUMAN_LABELS, LABEL_SOURCES, pool_state
from workbench.commands import WorkbenchCommand
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "Export a pool's final labels as qrels in one format (--format, to --out or "
        "standard output), or as a zip bundle with a manifest (--bundle FILE.zip)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        output = parser.add_mutually_exclusive_group(required=True)
        output.add_argument("--format", choices=list(FORMATS), help="one format")
        output.add_argument("--bundle", type=Path, help="write a zip bundle here")
        parser.add_argument(
            "--formats",
            help=(
                "formats in the bundle, comma-separated (default: every one of "
                f"{','.join(DEFAULT_BUNDLE)} that the pool can produce; a DL campaign "
                "without aspects or accepted answers gives qrels,relevance,stratified,infap)"
            ),
        )
        parser.add_argument("--out", type=Path, help="with --format: write here (default: stdout)")
        parser.add_argument(
            "--labels",
            choices=list(LABEL_SOURCES),
            default=HUMAN_LABELS,
            help=(
                "whose labels: the assessors' final labels (human, the default), a "
                "machine's, or human-then-machine (a human label where one exists, "
                "else the machine's)"
            ),
        )
        parser.add_argument(
            "--machine",
            help="with a machine source: the machine's name (needed when several have labels)",
        )
        parser.add_argument(
            "--aspect", help="twoaspects: the aspect besides relevance (default credibility)"
        )

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        chosen_labels = {"labels": str(options["labels"]), "machine": options["machine"]}
        try:
            if options["bundle"]:
                chosen = options["formats"]
                formats = None if chosen is None else [f.strip() for f in chosen.split(",")]
                data = export_selectors.qrels_bundle(
                    pool=pool, formats=formats, two_aspect=options["aspect"], **chosen_labels
                )
                options["bundle"].write_bytes(data)
                self.stderr.write(f"wrote {options['bundle']} ({len(data):,} bytes)")
                return
            state = pool_state(pool, **chosen_labels)
            files = export_selectors.qrels_export(
                pool=pool, fmt=options["format"], two_aspect=options["aspect"], state=state
            )
        except ExportError as error:
            raise CommandError(str(error)) from None
        qrels, *extra = files
        if options["out"] is None:
            self.stdout.write(qrels.text, ending="")
            if extra:
                self.stderr.write(f"{INCLUSION_FILE} is written only with --out")
            return
        options["out"].write_bytes(qrels.data)
        for file in extra:
            (options["out"].parent / file.name).write_bytes(file.data)
        written = ", ".join(str(options["out"].parent / f.name) for f in extra)
        self.stderr.write(f"wrote {options['out']}" + (f" and {written}" if written else ""))
