"""Agreement and disagreement of a pool's judgments, computed from the ORM's frames.

Thin glue between `frames` and the pure cores `agreement` and `labels`; the
agreement report is cached until a judgment changes, because scikit-learn's
kappa costs about a millisecond per pair, topic and aspect.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from django.core.cache import cache
from django.db.models import Max

from judging import agreement, agreement_table, frames, labels
from judging.models import Adjudication, JudgmentEvent, PoolPolicy
from pooling.models import Pool


@dataclass(frozen=True)
class AgreementReport:
    labels: pd.DataFrame
    aspects: tuple[agreement.Aspect, ...]
    pairs: pd.DataFrame
    groups: pd.DataFrame
    assessors: pd.DataFrame

    def aspect(self, name: str) -> agreement.Aspect:
        return next(a for a in self.aspects if a.name == name)

    def summary(self) -> dict:
        return agreement.agreement_summary(self.pairs, self.groups)


def schema_aspects(pool: Pool) -> tuple[agreement.Aspect, ...]:
    return agreement_table.schema_aspects(pool.campaign.schema)


def agreement_report(pool: Pool) -> AgreementReport:
    # Any judgment change appends an event; a late run adds entries.
    version = JudgmentEvent.objects.filter(topic__campaign=pool.campaign).aggregate(Max("id"))
    key = f"agreement:{pool.pk}:{version['id__max']}:{pool.entries.count()}"
    report = cache.get(key)
    if report is None:
        table = frames.judgments_frame(pool)
        aspects = schema_aspects(pool)
        pairs = agreement.pairwise_agreement(table, aspects=aspects)
        report = AgreementReport(
            labels=table,
            aspects=aspects,
            pairs=pairs,
            groups=agreement.group_agreement(table, aspects=aspects),
            assessors=agreement.assessor_agreement(pairs),
        )
        cache.set(key, report, timeout=3600)
    return report


def agreement_lines(pool: Pool) -> pd.DataFrame:
    """The agreement table (`manage.py agreement --pool`) from the page's report."""
    report = agreement_report(pool)
    return agreement_table.lines_of(report.pairs, report.groups, schema=pool.campaign.schema)


def policy_of(pool: Pool) -> PoolPolicy:
    """The pool's stored policy, or the default one (unsaved: reading writes nothing)."""
    return PoolPolicy.objects.filter(pool=pool).first() or PoolPolicy(pool=pool)


def disagreements(pool: Pool) -> pd.DataFrame:
    """The adjudication queue under the pool's disagreement mode, worst first."""
    policy = policy_of(pool)
    table = frames.judgments_frame(pool)
    if table.empty:
        return table
    mode = policy.disagreement_mode
    aspect_ids = pool.campaign.schema.aspect_ids
    return labels.find_disagreements(
        table,
        mode=mode,
        aspects=None if mode == PoolPolicy.RELEVANCE_LINE else ("relevance", *aspect_ids),
        adjudications=frames.adjudications_frame(pool),
    )


def final_labels(pool: Pool) -> pd.DataFrame:
    """Every judged item's final label under the pool's stored policy, with provenance."""
    policy = policy_of(pool)
    return labels.final_labels(
        frames.judgments_frame(pool),
        frames.adjudications_frame(pool),
        policy=labels.LabelPolicy.from_dict(policy.label_policy),
        aspects=pool.campaign.schema.aspect_ids,
    )


def adjudicated_count(pool: Pool) -> int:
    return Adjudication.objects.filter(topic__campaign=pool.campaign).count()
