from django.core.management.base import CommandError, CommandParser

from pooling import selectors
from pooling.commands import add_pool_spec_arguments, campaign_or_error, spec_or_error
from pooling.core.budget import fit_depth, fit_scale, whatif
from pooling.errors import PoolBuildError
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Show how many judgments pools of several depths (and a strata spec) would "
        "cost, against what is already judged and what the budget has left."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument(
            "--depths", default="10,20,30,40,50,60,70,80,90,100", help="comma-separated depths"
        )
        parser.add_argument(
            "--budget",
            type=int,
            help="new judgments available (default: what the campaign's budget has left)",
        )
        parser.add_argument("--per-topic", action="store_true", help="also list each topic")
        add_pool_spec_arguments(parser)

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        try:
            depths = sorted({int(d) for d in options["depths"].split(",") if d.strip()})
        except ValueError:
            raise CommandError(
                f"--depths must be comma-separated integers: {options['depths']!r}"
            ) from None
        if not depths or depths[0] < 1:
            raise CommandError("--depths needs at least one depth of 1 or more")
        specs = [spec_or_error(options)] if options["stratum"] else []
        deepest = max([depths[-1], *(s.max_depth for s in specs)])
        try:
            ranked = selectors.ranked_runs(campaign, max_depth=deepest)
        except PoolBuildError as error:
            raise CommandError(str(error)) from None
        judged = selectors.judged_pairs(campaign)
        table = whatif(ranked, depths=depths, specs=specs, judged=judged)
        self._print(table.totals, key=["scheme"])
        if options["per_topic"]:
            self.stdout.write("")
            self._print(table.per_topic, key=["scheme", "query_id"])
        budget = options["budget"]
        if budget is None:
            state = selectors.campaign_budget(campaign)
            self.stdout.write(state.describe())
            budget = None if state.remaining is None else max(state.remaining, 0)
        if budget is not None:
            self._fit(ranked, budget, specs, judged)

    def _print(self, frame, *, key: list[str]) -> None:
        columns = [*key, "pool_size", "judged", "needed"]
        rows = [[str(value) for value in row] for row in frame[columns].itertuples(index=False)]
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
        line = "  ".join(
            f"{{:<{w}}}" if i < len(key) else f"{{:>{w}}}" for i, w in enumerate(widths)
        )
        self.stdout.write(line.format(*columns))
        for row in rows:
            self.stdout.write(line.format(*row))

    def _fit(self, ranked, budget: int, specs, judged) -> None:
        depth = fit_depth(ranked, budget, judged=judged)
        if depth is None:
            self.stdout.write(f"{budget:,} left: even depth 1 needs more judgments")
        else:
            self.stdout.write(
                f"{budget:,} left: largest depth that fits is {depth.depth} "
                f"({depth.pool_size:,} in the pool, {depth.needed:,} still to judge)"
            )
        for spec in specs:
            scale = fit_scale(ranked, spec, budget, judged=judged)
            if scale is None:
                self.stdout.write(f"{budget:,} left: the strata do not fit at any rate")
            else:
                self.stdout.write(
                    f"{budget:,} left: strata rates scaled by {scale.factor:.2f} fit "
                    f"({scale.pool_size:,} in the pool, {scale.needed:,} still to judge)"
                )
