"""Helpers shared by the pooling commands."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from pooling.models import Campaign


def campaign_or_error(slug: str) -> Campaign:
    try:
        return Campaign.objects.get(slug=slug)
    except Campaign.DoesNotExist:
        known = ", ".join(Campaign.objects.values_list("slug", flat=True)) or "none yet"
        raise CommandError(f"no campaign with slug {slug!r} (campaigns: {known})") from None


def existing_file(path: str) -> Path:
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    return file
