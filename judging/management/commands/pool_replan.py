"""Re-plan a pool from the command line, printing the judging forecast before and after
(so the command sits in judging, the floor above pooling)."""

from dataclasses import replace
from typing import Any

from django.core.management.base import CommandError, CommandParser

from judging.status import campaign_status
from pooling import pool_services, selectors
from pooling.commands import add_pool_spec_arguments, pool_or_error, spec_or_error
from pooling.core.spec import PoolSpec
from pooling.errors import OverBudget, PoolBuildError
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Re-plan topics of a pool while it is judged (e.g. the unfinished topics cut to a "
        "smaller depth): a new revision of the same pool. Judged documents stay in the "
        "qrels, queues change in place, assignments carry over. The seed and presentation "
        "order stay the pool's, so that draws are nested."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument(
            "--topics",
            default="unfinished",
            help="'unfinished' (default: topics with documents nobody has judged), 'all', "
            "or comma-separated topic ids",
        )
        parser.add_argument("--reason", default="", help="why, for the manifest")
        parser.add_argument("--dry-run", action="store_true", help="print what it would do")
        parser.add_argument(
            "--confirm-over-budget",
            action="store_true",
            help="apply even past the budget (the overrun is recorded)",
        )
        add_pool_spec_arguments(parser, adaptive=True)

    def handle(self, *args: object, **options: Any) -> None:
        pool = pool_or_error(options["pool"])
        base = PoolSpec.from_dict(pool.spec)
        if base.is_adaptive:
            self._set_budget(pool, options)
            return
        requested = spec_or_error(options)
        seed = base.seed if options["seed"] is None else requested.seed
        spec = replace(requested, seed=seed, order=base.order)
        topics = self._topics(pool, options["topics"])
        try:
            preview = selectors.pool_revision_preview(pool, spec=spec, topics=topics)
        except PoolBuildError as error:
            raise CommandError(str(error)) from None
        self._print(preview.summary, selectors.campaign_budget(pool.campaign), preview.cost)
        self._advise(
            selectors.pool_revision_advice(pool, spec=spec, topics=topics, revision=preview),
            preview,
        )
        status = campaign_status(pool.campaign)
        self.stdout.write(f"forecast now: {status.forecast.describe()}")
        self.stdout.write(
            f"with this revision: {status.forecast_with(preview.work_change).describe()}"
        )
        if options["dry_run"]:
            return
        try:
            revision = pool_services.pool_revise(
                pool=pool,
                spec=spec,
                topics=topics,
                reason=options["reason"],
                confirm_over_budget=options["confirm_over_budget"],
            )
        except OverBudget as error:
            raise CommandError(f"{error} (--confirm-over-budget)") from None
        except PoolBuildError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"pool {pool.pk}: revision {revision.number} applied")

    def _set_budget(self, pool: Any, options: Any) -> None:
        """An adaptive pool's re-plan: its budget, raised or lowered."""
        if options["budget"] is None:
            raise CommandError(f"pool {pool.pk} is adaptive: give its new budget (--budget N)")
        try:
            budget = int(options["budget"])
        except ValueError:
            raise CommandError(f"budget {options['budget']!r} is not an integer") from None
        if options["dry_run"]:
            self.stdout.write(f"pool {pool.pk}: the budget would be {budget:,}")
            return
        try:
            pool_services.pool_budget_set(
                pool=pool, budget=budget, confirm_over_budget=options["confirm_over_budget"]
            )
        except OverBudget as error:
            raise CommandError(f"{error} (--confirm-over-budget)") from None
        except PoolBuildError as error:
            raise CommandError(str(error)) from None
        status = campaign_status(pool.campaign)
        self.stdout.write(
            f"pool {pool.pk}: budget {budget:,}; forecast {status.forecast.describe()}"
        )

    def _topics(self, pool: Any, text: str) -> list[str]:
        if text == "unfinished":
            topics = selectors.unfinished_topics(pool)
            if not topics:
                raise CommandError(f"every topic of pool {pool.pk} is finished: nothing to re-plan")
            return topics
        if text == "all":
            return list(pool.campaign.topics.values_list("topic_id", flat=True))
        return [t.strip() for t in text.split(",") if t.strip()]

    def _print(self, summary: Any, budget: Any, cost: int) -> None:
        columns = list(summary.columns)
        rows = [[str(v) for v in row] for row in summary.itertuples(index=False)]
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
        line = "  ".join(f"{{:>{w}}}" if i else f"{{:<{w}}}" for i, w in enumerate(widths))
        self.stdout.write(line.format(*columns))
        for row in rows:
            self.stdout.write(line.format(*row))
        self.stdout.write(f"{cost:,} new judgments; {budget.describe()}")

    def _advise(self, advice: Any, preview: Any) -> None:
        """Say when the plan draws a sampled stratum again, and what keeps the sample."""
        for redraw in advice.redraws:
            was = " and ".join(str(stratum) for stratum in redraw.was)
            self.stdout.write(
                f"warning: {redraw.stratum} is a new draw (other bounds than {was}): "
                f"{preview.joining:,} documents join the queues and "
                f"{preview.judged_out_of_sample:,} judged documents leave the sample"
            )
        if advice.keeping is not None:
            kept, args = advice.keeping_revision, advice.keeping.to_args()
            args = args[: args.index("--seed")]  # the seed and order stay the pool's
            self.stdout.write(
                "to keep the sample, lower the rate instead: "
                f"{' '.join(args)} ({kept.cost:,} new judgments; "
                f"judgments left change by {kept.work_change:+,}, "
                f"{preview.work_change:+,} with this plan)"
            )
