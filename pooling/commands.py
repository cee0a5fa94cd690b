"""What the pooling commands share: finding campaigns and pools, and the pool spec options."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.core.management.base import CommandError

from pooling.core.spec import (
    LIVE_STRATEGIES,
    ORDER_MODES,
    PoolSpec,
    PoolSpecError,
    parse_pool_spec,
)

if TYPE_CHECKING:
    from pooling.models import Campaign, Pool


# --------------------------------------------------------------------------
# Finding what a command names


def campaign_or_error(slug: str) -> Campaign:
    from pooling.models import Campaign

    try:
        return Campaign.objects.get(slug=slug)
    except Campaign.DoesNotExist:
        known = ", ".join(Campaign.objects.values_list("slug", flat=True)) or "none yet"
        raise CommandError(f"no campaign with slug {slug!r} (campaigns: {known})") from None


def pool_or_error(pool_id: int) -> Pool:
    from pooling.models import Pool

    try:
        return Pool.objects.select_related("campaign").get(pk=pool_id)
    except Pool.DoesNotExist:
        raise CommandError(f"no pool with id {pool_id}") from None


# --------------------------------------------------------------------------
# Pool spec options


def add_pool_spec_arguments(parser: argparse.ArgumentParser, *, adaptive: bool = False) -> None:
    """Add --depth, --stratum, --topic-depth, --seed and --order to a parser
    (a Django management command's included), with `adaptive` --strategy and --budget
    too; read back with `pool_spec_from_options`."""
    parser.add_argument("--depth", help="pool every document ranked <= DEPTH by any run")
    parser.add_argument(
        "--stratum",
        action="append",
        default=[],
        metavar="LO-HI:RATE",
        help="sample RATE of the documents whose best rank is in LO-HI (repeatable)",
    )
    parser.add_argument(
        "--topic-depth",
        action="append",
        default=[],
        metavar="TOPIC:DEPTH",
        help="a different depth for one topic (repeatable)",
    )
    parser.add_argument("--seed", default=None, help="seed for sampling and shuffling (default 0)")
    parser.add_argument(
        "--order",
        choices=ORDER_MODES,
        default="shuffled",
        help="presentation order (default shuffled)",
    )
    parser.add_argument(
        "--allow-gaps",
        action="store_true",
        help="leave out on purpose the ranks between the depth and the first stratum "
        "or between strata (otherwise an error)",
    )
    if not adaptive:
        return
    parser.add_argument(
        "--strategy",
        default="",
        help=f"a live adaptive pool ({', '.join(LIVE_STRATEGIES)}): the next document is "
        "chosen from the judgments so far, among those ranked <= --depth",
    )
    parser.add_argument(
        "--budget", default=None, help="an adaptive pool's judgments, shared over its topics"
    )


def pool_spec_from_options(options: Mapping[str, Any]) -> PoolSpec:
    """The spec from parsed options (`vars(args)` or a management command's options)."""
    return parse_pool_spec(
        depth=options.get("depth"),
        strata=options.get("stratum") or (),
        topic_depths=options.get("topic_depth") or (),
        seed=options.get("seed"),
        order=options.get("order") or "shuffled",
        allow_gaps=bool(options.get("allow_gaps")),
        strategy=options.get("strategy") or "",
        budget=options.get("budget"),
    )


def spec_or_error(options: Mapping[str, Any]) -> PoolSpec:
    try:
        return pool_spec_from_options(options)
    except PoolSpecError as error:
        raise CommandError(str(error)) from None
