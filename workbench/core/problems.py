"""Problems found in input files, and the error that reports them. Pure core, no Django.

Every reader of the workbench (runs, topics, documents, qrels, judgments)
reports bad input as `Problem`s naming the file, the line and the reason,
collected in a `ProblemLog`, and raises `InputError` with all of them before
anything is stored. Cores of every app import this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_REPORTED_PROBLEMS = 50


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file; line is 1-based, 0 for the whole file."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return (
            f"{self.file}:{self.line}: {self.reason}"
            if self.line
            else f"{self.file}: {self.reason}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "reason": self.reason}


@dataclass
class ProblemLog:
    """Collects problems; reports the `limit` earliest by line and counts all."""

    file: str
    limit: int = MAX_REPORTED_PROBLEMS
    problems: list[Problem] = field(default_factory=list)
    total: int = 0

    def add(self, line: int, reason: str) -> None:
        self.total += 1
        self.problems.append(Problem(self.file, line, reason))
        if len(self.problems) > 4 * self.limit:
            self.problems = self.sorted()

    def count_unlisted(self, count: int) -> None:
        """Count problems that the caller found but did not list one by one."""
        self.total += count

    @property
    def ok(self) -> bool:
        return self.total == 0

    def sorted(self) -> list[Problem]:
        return sorted(self.problems, key=lambda p: p.line)[: self.limit]

    def summary_lines(self) -> list[str]:
        listed = self.sorted()
        lines = [str(p) for p in listed]
        if self.total > len(listed):
            lines.append(f"{self.file}: ... and {self.total - len(listed)} more problems")
        return lines


class InputError(ValueError):
    """Raised with every problem found in one or more input files."""

    def __init__(
        self, problems: list[Problem], total: int | None = None, *, lines: list[str] | None = None
    ):
        self.problems = problems
        self.total = len(problems) if total is None else total
        if lines is None:
            lines = [str(p) for p in problems]
            if self.total > len(problems):
                lines.append(f"... and {self.total - len(problems)} more problems")
        super().__init__("\n".join(lines))

    @classmethod
    def from_logs(cls, *logs: ProblemLog) -> InputError:
        """One error for the files that have problems, each summarised on its own."""
        failing = [log for log in logs if not log.ok]
        return cls(
            [p for log in failing for p in log.sorted()],
            sum(log.total for log in failing),
            lines=[line for log in failing for line in log.summary_lines()],
        )

    from_log = from_logs

    @property
    def unlisted(self) -> int:
        """Problems counted but not listed (past the first 50 of a file)."""
        return self.total - len(self.problems)

    def as_dict(self) -> dict[str, Any]:
        """For JSON error responses: the listed problems and the total count."""
        return {"errors": [p.as_dict() for p in self.problems], "total": self.total}
