import json

from django.core.management.base import CommandError, CommandParser

from pooling.commands import pool_or_error
from scoring import calibration_selectors, selectors
from workbench.commands import WorkbenchCommand
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "A machine assessor's calibration report on a pool: its labels against the human "
        "final labels (kappa plain, linear, quadratic; confusion; per topic), and the runs "
        "ranked on human, machine and human-then-machine qrels (tau, tau_AP, leaders, "
        "top 3 and 5, significant pairs)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument(
            "--machine",
            help="the machine's name (default: the only machine with labels on the pool)",
        )
        parser.add_argument(
            "--measure",
            action="append",
            help="a measure to compare the rankings by, repeatable (default: "
            f"{' '.join(calibration_selectors.DEFAULT_MEASURES)})",
        )
        parser.add_argument("--format", choices=["text", "json"], default="text")

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        name = options["machine"]
        try:
            machine = calibration_selectors.calibration_machine(pool, str(name) if name else None)
            measures = calibration_selectors.calibration_measures(
                options["measure"]  # type: ignore[arg-type]
            )
            report = calibration_selectors.pool_calibration(
                pool=pool, machine=machine, measures=measures
            )
        except selectors.ScoringError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(calibration_selectors.calibration_text(report), ending="")
