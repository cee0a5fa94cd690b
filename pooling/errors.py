"""What the pooling services refuse, with a message that says why; nothing is stored."""

from __future__ import annotations

from pooling.core.ledger import BudgetState


class PoolBuildError(ValueError):
    """A pool that cannot be built or extended; nothing was stored."""


class RunInUse(ValueError):
    """A run that a pool was built from: it can no longer be deleted or replaced."""


class OverBudget(ValueError):
    """Work that costs more judgments than the budget has left, not confirmed; nothing stored."""

    def __init__(self, state: BudgetState, cost: int, action: str):
        self.state, self.cost, self.action = state, cost, action
        super().__init__(
            f"{action} asks for {cost:,} new judgments and the {state.describe()}: "
            f"{state.over_by(cost):,} over. Confirm to go past the budget."
        )


class SubmissionRefused(ValueError):
    """A team's run refused before its file is read: past the deadline (and not
    accepted late), or over the campaign's most runs per team; nothing stored."""


class TeamError(ValueError):
    """A team that cannot be made or changed as asked (name, members, precedence)."""
