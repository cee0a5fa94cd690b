from django.core.management.base import CommandError, CommandParser

from judging import services
from judging.core.judgment_files import judgments_from_qrels
from pooling.commands import campaign_or_error
from pooling.errors import PoolBuildError
from scoring.core.qrels import THREE_ASPECT_QRELS, TREC_QRELS, read_qrels
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError

LAYOUTS = {"qrels": TREC_QRELS, "aspects": THREE_ASPECT_QRELS}


class Command(WorkbenchCommand):
    help = (
        "Import a qrels file made elsewhere as one assessor's judgments: trec_eval qrels "
        "(topic 0 docno rel) or Decision-track aspect qrels (topic 0 docno rel eff cred). "
        "Lines with rel < 0 (pooled, not judged) are skipped. With --make-pool, the "
        "judged documents also become a pool (every entry judged, stratum 1, probability 1) "
        "that can be adjudicated, exported and scored. A file with any problem stores nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument(
            "--assessor", required=True, help="whose judgments these become, e.g. nist"
        )
        parser.add_argument("--format", choices=list(LAYOUTS), default="qrels")
        parser.add_argument(
            "--make-pool", metavar="NAME", help="also make a pool of the judged documents"
        )
        parser.add_argument("file")

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        path = existing_file(options["file"])
        data = path.read_bytes()
        layout = LAYOUTS[options["format"]]
        # A file of the other layout is one problem that names the flag reading it.
        hints = {
            len(other.columns): f"read it with --format {flag}"
            for flag, other in LAYOUTS.items()
            if other is not layout
        }
        try:
            frame = read_qrels(
                data, name=str(path), layout=layout, with_lines=True, width_hints=hints
            )
        except InputError as error:
            raise CommandError(f"rejected, nothing stored:\n{error}") from None
        aspects = campaign.schema.aspect_ids
        columns = {}
        if options["format"] == "aspects":
            columns = dict(zip(("aspect_2", "aspect_3"), aspects, strict=False))
        rows, log, skipped = judgments_from_qrels(
            frame.to_dict(orient="records"),
            frame["line"].tolist(),
            name=str(path),
            schema=campaign.schema,
            known_topics=campaign.topics.values_list("topic_id", flat=True),
            assessor=options["assessor"],
            aspect_columns=columns,
        )
        if not log.ok:
            raise CommandError(f"rejected, nothing stored:\n{InputError.from_log(log)}")
        make_pool = (
            None
            if options["make_pool"] is None
            else services.PoolOfImport(
                options["make_pool"],
                source=f"qrels file {path.name}, imported by import_qrels as {options['assessor']}",
            )
        )
        try:
            result = services.judgments_import(
                campaign=campaign, rows=rows, create_assessors=True, make_pool=make_pool
            )
        except PoolBuildError as error:
            raise CommandError(f"rejected, nothing stored: {error}") from None
        self.stdout.write(f"{path}: judgments {result}; {skipped:,} unjudged lines skipped")
