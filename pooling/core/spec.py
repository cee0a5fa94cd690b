"""How to build a pool: its depth, sampled strata, seed and order. Pure core, no Django.

A `PoolSpec` is stored with each pool (`to_dict`) and can rebuild it byte
for byte; it is written on the command line as `--depth 20 --stratum
21-100:0.8 --stratum 101-500:0.5 --seed 7` (`to_args`, `parse_pool_spec`)
and named in one line by `spec_label`. Presets are the specs the pool form
offers.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

OrderMode = Literal["shuffled", "docno"]
# The strategies a live adaptive pool may use (docs/adaptive_pooling.md, "Live adaptive pools").
LIVE_STRATEGIES = ("mtf", "hedge", "bandit", "thompson", "active")
ORDER_MODES: tuple[OrderMode, ...] = ("shuffled", "docno")
RATE_DECIMALS = 6
RATE_UNIT = 10**RATE_DECIMALS  # rates are whole millionths
# The deepest rank a depth or stratum may name: what a database integer holds (a
# depth far past the runs is costed from what they hold, so no lower bound is due).
MAX_RANK = 2**63 - 1
MAX_SEED = 2**63 - 1


class PoolSpecError(ValueError):
    """A pool specification that is malformed or inconsistent."""


# --------------------------------------------------------------------------
# Specification


@dataclass(frozen=True)
class Stratum:
    """Ranks lo..hi (inclusive, 1-based, over best_rank) sampled at `rate`.

    The rate has at most six decimals, so that `rate * size` is exact in
    integer arithmetic and its rounding never depends on float error.
    """

    lo: int
    hi: int
    rate: float

    def __post_init__(self) -> None:
        for name, value in (("lo", self.lo), ("hi", self.hi)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise PoolSpecError(f"stratum {name} must be an integer, not {value!r}")
        if isinstance(self.rate, bool) or not isinstance(self.rate, int | float):
            raise PoolSpecError(f"stratum rate must be a number, not {self.rate!r}")
        if self.lo < 1:
            raise PoolSpecError(f"stratum {self}: ranks start at 1")
        if self.hi > MAX_RANK:
            raise PoolSpecError(f"stratum {self}: ranks end at {MAX_RANK:,}")
        if self.lo > self.hi:
            raise PoolSpecError(
                f"stratum {self}: its first rank {self.lo} is after its last {self.hi}"
            )
        if not 0.0 <= self.rate <= 1.0:
            raise PoolSpecError(f"stratum {self}: the rate must be between 0 and 1")
        if abs(self.rate * RATE_UNIT - round(self.rate * RATE_UNIT)) > 1e-6:
            raise PoolSpecError(f"stratum {self}: the rate has more than {RATE_DECIMALS} decimals")

    @property
    def rate_units(self) -> int:
        """The rate in millionths, exactly."""
        return round(self.rate * RATE_UNIT)

    def __str__(self) -> str:
        return f"{self.lo}-{self.hi}:{_format_rate(self.rate)}"


def _format_rate(rate: float) -> str:
    """0.8 -> "0.8", 1.0 -> "1.0": the shortest text with at most six decimals."""
    text = f"{rate:.{RATE_DECIMALS}f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


@dataclass(frozen=True)
class PoolSpec:
    """How to build a pool; stored with the pool (see `to_dict`).

    - depth: pool every document ranked <= depth by any run, i.e. a first
      stratum 1-depth at rate 1.0 before `strata`;
    - strata: further strata, in rank order, not overlapping, all deeper
      than `depth`; ranks between or after the strata are not pooled;
    - topic_depths: per-topic depths replacing `depth` for those topics
      (each still above the first stratum); needs `depth`. Topics without
      runs are ignored;
    - seed: for the draws and the shuffle (a non-negative integer);
    - order: "shuffled" (a seeded random permutation per topic, independent
      of rank, run and docno) or "docno" (byte order);
    - allow_gaps: ranks left out between the depth and the first stratum,
      between strata, or above a first stratum without a depth, are an error
      (usually a typo that silently shrinks the pool) unless this is set.
    - source: for a pool not built from runs, where its entries came from
      (judgments imported from a qrels file: see `pool_of_judged`); such a
      pool has no depth and no strata, and takes no late runs.
    - strategy, budget: a live adaptive pool (one of LIVE_STRATEGIES): the
      documents ranked <= depth are its candidates, none drawn at the build;
      the assessor's next document is chosen when she asks for it, until
      `budget` judgments (shared over the topics: `topic_budgets`). Needs a
      depth and no strata.
    """

    depth: int | None = None
    strata: tuple[Stratum, ...] = ()
    topic_depths: Mapping[str, int] = field(default_factory=dict)
    seed: int = 0
    order: OrderMode = "shuffled"
    allow_gaps: bool = False
    source: str = ""
    strategy: str = ""
    budget: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "strata", tuple(self.strata))
        object.__setattr__(self, "topic_depths", dict(self.topic_depths))
        if self.source:
            if self.depth is not None or self.strata or self.topic_depths:
                raise PoolSpecError("a pool of imported judgments has no depth or strata")
        elif self.depth is None and not self.strata:
            raise PoolSpecError("give a depth (--depth K) or a stratum (--stratum LO-HI:RATE)")
        if self.depth is None and self.topic_depths:
            raise PoolSpecError("per-topic depths replace --depth for their topics: give it too")
        not_strings = [topic for topic in self.topic_depths if not isinstance(topic, str)]
        if not_strings:
            raise PoolSpecError(f"topic ids are strings, not {not_strings[0]!r}")
        _check_strata_order(self.strata)
        depths = [("depth", self.depth)] + [
            (f"depth of topic {topic!r}", depth) for topic, depth in self.topic_depths.items()
        ]
        for label, depth in depths:
            _check_depth(label, depth, self.strata)
        if not self.allow_gaps:
            _check_no_gaps(depths, self.strata)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise PoolSpecError(f"the seed must be a non-negative integer, not {self.seed!r}")
        if self.seed > MAX_SEED:
            raise PoolSpecError(f"the seed must be at most {MAX_SEED:,}, not {self.seed}")
        if self.order not in ORDER_MODES:
            modes = ", ".join(ORDER_MODES)
            raise PoolSpecError(f"order must be one of {modes}, not {self.order!r}")
        _check_adaptive(self)

    @property
    def is_adaptive(self) -> bool:
        """Whether the assessors' documents are chosen live (`strategy`)."""
        return bool(self.strategy)

    def topic_budgets(self, topics: Sequence[str]) -> dict[str, int]:
        """An adaptive pool's budget shared over `topics` (in topic order): each gets
        budget // n, the first budget % n one more (the equal allocation)."""
        budget, n = self.budget or 0, len(topics)
        return {t: budget // n + (i < budget % n) for i, t in enumerate(topics)} if n else {}

    def strata_for(self, topic_id: str) -> tuple[Stratum, ...]:
        """Every stratum of this topic, the depth stratum (if any) first."""
        depth = self.topic_depths.get(topic_id, self.depth)
        return ((Stratum(1, depth, 1.0),) if depth is not None else ()) + self.strata

    def pooled_depth(self, topic_id: str) -> int:
        """The deepest rank pooled for this topic: the bottom of its last stratum."""
        return self.strata_for(topic_id)[-1].hi

    def full_depth(self, topic_id: str) -> int | None:
        """The k for which this topic's pool is a depth-k pool: every document some
        run ranks <= k, and nothing else. None when the topic's pool samples (a
        rate below 1), leaves ranks out (allowed gaps) or holds imported judgments."""
        depth = self.covered_depth(topic_id)
        if depth is None or any(s.rate != 1.0 for s in self.strata_for(topic_id)):
            return None
        return depth

    def covered_depth(self, topic_id: str) -> int | None:
        """The deepest rank of this topic's pool when its strata cover every rank
        from 1 down to it, sampled or not. None when it leaves ranks out (allowed
        gaps) or holds imported judgments."""
        if self.source:
            return None
        strata = self.strata_for(topic_id)
        if strata[0].lo != 1:
            return None
        if any(after.lo != before.hi + 1 for before, after in itertools.pairwise(strata)):
            return None
        return strata[-1].hi

    @property
    def max_depth(self) -> int:
        """The deepest rank any topic's pool looks at."""
        if self.strata:
            return self.strata[-1].hi
        return max([self.depth or 0, *self.topic_depths.values()])

    @property
    def is_depth_only(self) -> bool:
        """Whether every pooled document is judged (every rate is 1.0)."""
        return all(stratum.rate == 1.0 for stratum in self.strata)

    @property
    def accepts_late_runs(self) -> bool:
        """Whether late runs can add their documents (see `add_runs_to_pool`)."""
        return self.is_depth_only and not self.source and not self.strategy

    def scaled(self, factor: float) -> PoolSpec:
        """This spec with the rate of every stratum in `strata` times `factor`,
        capped at 1.0 and rounded to six decimals.

        The depth stratum (`depth`, `topic_depths`) is judged in full at any
        factor: write it as a stratum `1-K:1.0` to have it scaled too.
        """
        if not factor >= 0:
            raise PoolSpecError(f"the scale factor must be a non-negative number, not {factor}")
        strata = tuple(
            replace(s, rate=round(min(1.0, s.rate * factor), RATE_DECIMALS)) for s in self.strata
        )
        return replace(self, strata=strata)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, read back by `from_dict`."""
        data: dict[str, Any] = {
            "depth": self.depth,
            "strata": [str(stratum) for stratum in self.strata],
            "topic_depths": dict(self.topic_depths),
            "seed": self.seed,
            "order": self.order,
        }
        # Only when set, so that the stored specs of other pools stay as they were.
        return (
            data
            | ({"allow_gaps": True} if self.allow_gaps else {})
            | ({"source": self.source} if self.source else {})
            | ({"strategy": self.strategy, "budget": self.budget} if self.strategy else {})
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PoolSpec:
        return cls(
            depth=data.get("depth"),
            strata=tuple(parse_stratum(text) for text in data.get("strata", ())),
            topic_depths=dict(data.get("topic_depths", {})),
            seed=data.get("seed", 0),
            order=data.get("order", "shuffled"),
            allow_gaps=bool(data.get("allow_gaps", False)),
            source=data.get("source", ""),
            strategy=data.get("strategy", ""),
            budget=data.get("budget"),
        )

    def to_args(self) -> list[str]:
        """The command-line arguments that give this spec (see `add_pool_spec_arguments`)."""
        args = ["--depth", str(self.depth)] if self.depth is not None else []
        for stratum in self.strata:
            args += ["--stratum", str(stratum)]
        for topic, depth in self.topic_depths.items():
            args += ["--topic-depth", f"{topic}:{depth}"]
        if self.strategy:
            args += ["--strategy", self.strategy, "--budget", str(self.budget)]
        args += ["--seed", str(self.seed), "--order", self.order]
        return [*args, "--allow-gaps"] if self.allow_gaps else args

    def __str__(self) -> str:
        return " ".join(self.to_args())


def _check_adaptive(spec: PoolSpec) -> None:
    """A live adaptive pool: a known strategy, a positive budget, candidates to depth."""
    if not spec.strategy:
        if spec.budget is not None:
            raise PoolSpecError("a budget is for an adaptive pool: give --strategy too")
        return
    if spec.strategy not in LIVE_STRATEGIES:
        raise PoolSpecError(
            f"unknown strategy {spec.strategy!r} (one of {', '.join(LIVE_STRATEGIES)})"
        )
    budget = spec.budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise PoolSpecError(f"an adaptive pool's budget must be 1 or more, not {budget!r}")
    if spec.depth is None or spec.strata or spec.topic_depths:
        raise PoolSpecError(
            "an adaptive pool chooses among the documents ranked <= --depth: "
            "give a depth and no strata or per-topic depths"
        )


def _check_depth(label: str, depth: object, strata: Sequence[Stratum]) -> None:
    """A depth is a positive integer above the first stratum."""
    if depth is None:
        return
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise PoolSpecError(f"{label} must be an integer, not {depth!r}")
    if depth < 1:
        raise PoolSpecError(f"{label} must be at least 1, not {depth}")
    if depth > MAX_RANK:
        raise PoolSpecError(f"{label} must be at most {MAX_RANK:,}, not {depth}")
    if strata and depth >= strata[0].lo:
        raise PoolSpecError(
            f"{label} {depth} overlaps stratum {strata[0]}: strata must start below the depth"
        )


def _check_no_gaps(depths: list[tuple[str, int | None]], strata: Sequence[Stratum]) -> None:
    """Every rank from 1 to the last stratum is in some stratum of every topic."""
    for before, after in itertools.pairwise(strata):
        if after.lo > before.hi + 1:
            _gap(f"strata {before} and {after}", before.hi + 1, after.lo - 1)
    if not strata:
        return
    first = strata[0]
    for label, depth in depths:
        if depth is None:
            if first.lo > 1:
                _gap(f"stratum {first}, with no depth before it,", 1, first.lo - 1)
        elif first.lo > depth + 1:
            _gap(f"{label} {depth} and stratum {first}", depth + 1, first.lo - 1)


def _gap(between: str, lo: int, hi: int) -> None:
    ranks = f"rank {lo}" if lo == hi else f"ranks {lo}-{hi}"
    raise PoolSpecError(
        f"{between} leave {ranks} out of the pool: close the gap, or allow gaps "
        "(--allow-gaps) to leave them out on purpose"
    )


def _check_strata_order(strata: Sequence[Stratum]) -> None:
    for before, after in itertools.pairwise(strata):
        if after.lo <= before.hi:
            problem = "overlap" if after.hi >= before.lo else "are out of order"
            raise PoolSpecError(f"strata {before} and {after} {problem}: list them by rank, apart")


_STRATUM_PATTERN = re.compile(r"(\d+)-(\d+):(\d*\.?\d+)")


def parse_stratum(text: str) -> Stratum:
    """`"21-100:0.8"` -> Stratum(21, 100, 0.8); PoolSpecError when malformed."""
    match = _STRATUM_PATTERN.fullmatch(text.strip())
    if not match:
        raise PoolSpecError(f"stratum {text!r} is not LO-HI:RATE (for example 21-100:0.8)")
    lo, hi, rate = match.groups()
    if max(len(lo), len(hi)) > len(str(MAX_RANK)):
        raise PoolSpecError(f"stratum {text[:40]!r}: ranks end at {MAX_RANK:,}")
    return Stratum(int(lo), int(hi), float(rate))


def parse_strata(text: str) -> tuple[Stratum, ...]:
    """Whitespace-separated strata: `"1-20:1.0 21-100:0.8 101-500:0.5"`."""
    strata = tuple(parse_stratum(part) for part in text.split())
    _check_strata_order(strata)
    return strata


def _parse_int(label: str, text: str | int) -> int:
    if isinstance(text, int):
        return text
    try:
        return int(text.strip())
    except ValueError:  # not digits, or more than Python converts (4,300)
        raise PoolSpecError(f"{label} {text[:40]!r} is not an integer") from None


def _parse_topic_depth(text: str) -> tuple[str, int]:
    topic, separator, depth = text.rpartition(":")
    if not separator or not topic:
        raise PoolSpecError(f"per-topic depth {text!r} is not TOPIC:DEPTH (for example 301:50)")
    return topic, _parse_int(f"per-topic depth {text!r}:", depth)


def parse_pool_spec(
    *,
    depth: str | int | None = None,
    strata: Iterable[str] = (),
    topic_depths: Iterable[str] = (),
    seed: str | int | None = None,
    order: str = "shuffled",
    allow_gaps: bool = False,
    strategy: str = "",
    budget: str | int | None = None,
) -> PoolSpec:
    """A spec from command-line texts: `--depth 20 --stratum 21-100:0.8
    --topic-depth 301:50 --seed 7 --order docno [--allow-gaps]` (strata and
    topic depths repeatable). A missing seed is 0. Raises PoolSpecError
    saying what is wrong.
    """
    topic_depth_pairs = [_parse_topic_depth(text) for text in topic_depths]
    counts = Counter(topic for topic, _ in topic_depth_pairs)
    repeated = [topic for topic, count in counts.items() if count > 1]
    if repeated:
        raise PoolSpecError(
            f"per-topic depth given twice for topic(s) {', '.join(sorted(repeated))}"
        )
    if order not in ORDER_MODES:
        raise PoolSpecError(f"order must be one of {', '.join(ORDER_MODES)}, not {order!r}")
    return PoolSpec(
        depth=None if depth is None else _parse_int("depth", depth),
        strata=tuple(parse_stratum(text) for text in strata),
        topic_depths=dict(topic_depth_pairs),
        seed=0 if seed is None else _parse_int("seed", seed),
        order=order,
        allow_gaps=allow_gaps,
        strategy=strategy or "",
        budget=None if budget is None else _parse_int("budget", budget),
    )


# --------------------------------------------------------------------------
# Presets


@dataclass(frozen=True)
class Preset:
    """A named spec the pool form offers; set the seed with `dataclasses.replace`."""

    key: str
    label: str
    spec: PoolSpec


CDS_2014 = PoolSpec(depth=20, strata=parse_strata("21-100:0.8 101-500:0.5"))
"""TREC Clinical Decision Support 2014: strata 1-20:1.0 21-100:0.8 101-500:0.5."""

PRESETS: dict[str, Preset] = {
    preset.key: preset
    for preset in (
        *(
            Preset(f"depth-{k}", f"Depth {k}: every document ranked 1-{k}", PoolSpec(depth=k))
            for k in (10, 20, 50, 100)
        ),
        Preset(
            "cds-2014", "TREC CDS 2014: ranks 1-20 all, 21-100 at 80%, 101-500 at 50%", CDS_2014
        ),
    )
}


def spec_label(spec: PoolSpec) -> str:
    """The strata of a spec as one text, the depth stratum written out:
    "1-20:1.0 21-100:0.8 101-500:0.5"; per-topic depths are noted."""
    text = " ".join(str(stratum) for stratum in spec.strata_for(""))
    if spec.topic_depths:
        text += f" ({len(spec.topic_depths)} topics with their own depth)"
    if spec.strategy:
        text = f"adaptive {spec.strategy}, {spec.budget} judgments, among {text}"
    return text
