from django.core.management.base import CommandError, CommandParser

from pooling import pool_services
from pooling.commands import pool_or_error
from pooling.errors import OverBudget, PoolBuildError
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Add late runs to a depth-k pool: only their new documents are added."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument("--run", action="append", required=True, help="run tag (repeatable)")
        parser.add_argument(
            "--confirm-over-budget",
            action="store_true",
            help="add even past the budget (the overrun is recorded)",
        )

    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        runs = list(pool.campaign.runs.filter(tag__in=options["run"]))
        missing = sorted(set(options["run"]) - {run.tag for run in runs})
        if missing:
            raise CommandError(
                f"no run tagged {', '.join(missing)} in campaign {pool.campaign.slug}"
            )
        try:
            addition = pool_services.pool_add_runs(
                pool=pool, runs=runs, confirm_over_budget=options["confirm_over_budget"]
            )
        except OverBudget as error:
            raise CommandError(f"{error} (--confirm-over-budget)") from None
        except PoolBuildError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"pool {pool.pk}: added {addition.entries.count():,} entries")
