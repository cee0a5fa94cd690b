"""Writes of a generated-answers campaign's scores: a release to its teams."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max

from pooling.models import Campaign
from scoring import answer_selectors
from scoring.models import AnswerScoresRelease


def answer_scores_release(
    *, campaign: Campaign, reason: str = "", released_by: Any = None
) -> AnswerScoresRelease:
    """Freeze the campaign's current nugget and citation scores as its next release:
    its teams see their runs' scores in it, never the live labels."""
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()  # one at a time
        last = campaign.answer_scores_releases.aggregate(v=Max("version"))["v"] or 0
        return AnswerScoresRelease.objects.create(
            campaign=campaign,
            version=last + 1,
            nuggets=answer_selectors.nugget_scores_json(campaign),
            citations=answer_selectors.citation_scores_json(campaign),
            reason=reason.strip(),
            released_by=released_by,
        )
