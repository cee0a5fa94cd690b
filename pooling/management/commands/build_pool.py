from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from pooling import pool_services, selectors
from pooling.commands import add_pool_spec_arguments, campaign_or_error, spec_or_error
from pooling.errors import OverBudget, PoolBuildError
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Build a pool from every run of a campaign (or each team's first N runs by "
        "precedence: --runs-per-team N) and store it: depth-k (--depth 20), stratified "
        "(--stratum 21-100:0.8 ...) or both; or adaptive (--depth 100 --strategy mtf --budget N: "
        "the next document chosen from the judgments so far)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--name", default="", help="a name for the pool (default: its strata)")
        parser.add_argument(
            "--confirm-over-budget",
            action="store_true",
            help="build even if the pool asks for more new judgments than the budget has left "
            "(the overrun is recorded)",
        )
        parser.add_argument(
            "--runs-per-team",
            type=int,
            default=None,
            metavar="N",
            help="pool each team's first N runs by the team's precedence (late runs left out) "
            "and the organiser's own runs, instead of every run",
        )
        add_pool_spec_arguments(parser, adaptive=True)

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        spec = spec_or_error(options)
        per_team = options["runs_per_team"]
        if per_team is not None and per_team < 1:
            raise CommandError(f"--runs-per-team must be 1 or more, not {per_team}")
        n_runs = len(selectors.pool_runs(campaign, runs_per_team=per_team))
        with tqdm(desc="pooling topics", unit=" topics", disable=None, file=self.stderr) as bar:

            def topics_ready(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            try:
                pool = pool_services.pool_build(
                    campaign=campaign,
                    spec=spec,
                    name=options["name"],
                    progress=topics_ready,
                    confirm_over_budget=options["confirm_over_budget"],
                    runs_per_team=per_team,
                )
            except OverBudget as error:
                raise CommandError(f"{error} (--confirm-over-budget)") from None
            except PoolBuildError as error:
                raise CommandError(str(error)) from None
        entries = pool.entries.count()
        sampled = pool.entries.filter(sampled=True).count()
        topics = pool.entries.values("topic").distinct().count()
        self.stdout.write(
            f"pool {pool.pk} ({pool.name}): {entries:,} entries over {topics:,} topics, "
            f"{sampled:,} to judge, from {n_runs:,} runs"
        )
