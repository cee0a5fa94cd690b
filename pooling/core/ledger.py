"""The budget ledger's one number: what a campaign's stored judgments have spent
of its budget. Pure core, no Django, and light: the dashboard and
`campaign_status` load it without pandas (`pooling.selectors.campaign_budget`
counts the rows).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BudgetState:
    """A campaign's judgment budget against what its stored judgments have spent.

    judgments: distinct (assessor, topic, docno) judged in the campaign, of
    any pool, primary or overlap (a revision is the same judgment);
    adjudications count too when `counts_adjudications`.
    """

    budget: int | None
    judgments: int
    adjudications: int = 0
    counts_adjudications: bool = True

    @property
    def spent(self) -> int:
        return self.judgments + (self.adjudications if self.counts_adjudications else 0)

    @property
    def remaining(self) -> int | None:
        """What is left to spend (negative once overspent); None without a budget."""
        return None if self.budget is None else self.budget - self.spent

    def over_by(self, cost: int) -> int:
        """How far `cost` more judgments would go past the budget (0 if they fit)."""
        remaining = self.remaining
        return 0 if remaining is None else max(0, cost - max(remaining, 0))

    def describe(self) -> str:
        if self.budget is None:
            return f"{self.spent:,} judgments made; no budget set"
        return f"budget {self.budget:,}: {self.spent:,} spent, {self.remaining:,} left"
