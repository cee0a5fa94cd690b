"""Helpers shared by the pooling commands."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from pooling.models import Campaign, Pool
from pooling.strategies import PoolSpec, PoolSpecError, pool_spec_from_options


def campaign_or_error(slug: str) -> Campaign:
    try:
        return Campaign.objects.get(slug=slug)
    except Campaign.DoesNotExist:
        known = ", ".join(Campaign.objects.values_list("slug", flat=True)) or "none yet"
        raise CommandError(f"no campaign with slug {slug!r} (campaigns: {known})") from None


def pool_or_error(pool_id: int) -> Pool:
    try:
        return Pool.objects.select_related("campaign").get(pk=pool_id)
    except Pool.DoesNotExist:
        raise CommandError(f"no pool with id {pool_id}") from None


def existing_file(path: str) -> Path:
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    return file


def spec_or_error(options: Mapping[str, Any]) -> PoolSpec:
    try:
        return pool_spec_from_options(options)
    except PoolSpecError as error:
        raise CommandError(str(error)) from None
