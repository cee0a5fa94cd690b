from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from pooling.commands import pool_or_error
from scoring import release_selectors, selectors, services
from scoring.core.analysis.corrections import CORRECTIONS
from scoring.core.analysis.leaderboard import TESTS, LeaderboardError
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from workbench.commands import BarProgress, WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Release a pool's results as they are now: its qrels, every run's scores and the "
        "leaderboard by --measure, frozen as the pool's next version (printed: version N). "
        "Teams see it; manage.py release_bundle writes its bundle."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument(
            "--measure", required=True, help="the leaderboard's measure (trec_eval -m syntax)"
        )
        parser.add_argument(
            "--measures",
            help="every measure to score, comma-separated (default: "
            f"{','.join(selectors.DEFAULT_MEASURES)}, and --measure)",
        )
        parser.add_argument("--reason", default="", help="why it is released (shown with it)")
        parser.add_argument("--by", help="the username it is released by (recorded with it)")
        parser.add_argument(
            "--test", action="append", choices=TESTS, help="the leaderboard's tests (default t)"
        )
        parser.add_argument("--correction", choices=list(CORRECTIONS), default="holm")
        parser.add_argument("--alpha", type=float, default=0.05, help="significance level")
        parser.add_argument(
            "--labels",
            choices=selectors.LABEL_SOURCES,
            default=selectors.HUMAN_LABELS,
            help="whose labels (default human: the final labels, adjudications first; "
            "machine; human-then-machine: a human label where one exists, else the machine's)",
        )
        parser.add_argument(
            "--machine", help="with a machine source: the machine's name (needed when several)"
        )

    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        by = None
        if options["by"]:
            by = get_user_model().objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"no account named {options['by']}")
        chosen = options["measures"]
        measures = None if chosen is None else [m.strip() for m in str(chosen).split(",")]
        try:
            leaderboard = LeaderboardOptions(
                tests=tuple(options["test"] or ("t",)),
                correction=str(options["correction"]),
                alpha=float(options["alpha"]),
            )
        except LeaderboardError as error:
            raise CommandError(str(error)) from None
        with tqdm(desc="scoring runs", unit=" runs", disable=None, file=self.stderr) as bar:
            try:
                release = services.release_create(
                    pool=pool,
                    measure=str(options["measure"]),
                    measures=measures,
                    options=leaderboard,
                    labels=str(options["labels"]),
                    machine=str(options["machine"]) if options["machine"] else None,
                    reason=str(options["reason"]),
                    released_by=by,
                    progress=BarProgress(bar),
                )
            except (release_selectors.ReleaseError, selectors.ScoringError) as error:
                raise CommandError(str(error)) from None
        self.stdout.write(f"version {release.version}")
