"""What a release is made of, and what changed between two. Pure core.

A release freezes a pool's results: its qrels, every run's scores and the
leaderboard (`scoring.services.release_create` stores them). Its scores are
what `wb-trec-eval` (and, for a sampled pool, `wb-sample-eval`) print for the
release's own files, so that a reader reproduces every number byte for byte
with the commands of `reproduce_script`:

    wb-trec-eval -q -c -M 1000 -m map ... --format tsv qrels.txt runs/

`scores.tsv` holds those rows as `run measure topic value` (the run's tag, the
measure as trec_eval names it, the topic or `all` for the mean, the value at
full precision), one awk step from the scorer's TSV (`scores_rows`, the same
step as the script's).

Comparing two releases (`label_changes`, `score_changes`, `significance_flips`)
says which labels were added, changed or removed, which runs' means or ranks
moved, and which pairs of runs a test no longer (or now) separates.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.core.analysis.ranks import ranks
from scoring.core.exports import FORMATS, sort_items

if TYPE_CHECKING:
    import pandas as pd

# How a release scores its runs: trec_eval -c -M 1000 over the judged topics (a
# judged topic a run lacks counts 0), each topic and the mean (-q), every digit.
TREC_EVAL_OPTIONS = ("-q", "-c", "-M", "1000")
SAMPLE_EVAL_OPTIONS = ("-q",)
INFERRED_MEASURES = ("infAP", "infNDCG")  # what a sampled pool's release keeps of sample_eval
QRELS_FILE = FORMATS["qrels"].file  # qrels.txt
STRATIFIED_FILE = FORMATS["stratified"].file  # qrels_stratified.txt
RUNS_FOLDER = "runs"
SCORES_FILE = "scores.tsv"
SCORES_HEADER = "run\tmeasure\ttopic\tvalue\n"
SCRIPT_FILE = "reproduce.sh"

# A run file's name in the bundle: its tag, unless the tag cannot be a file name
# (a slash, a leading dot that `runs/` would skip as hidden, ...).
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+=,@%-][A-Za-z0-9_.+=,@%-]*")


def trec_eval_arguments(measures: Sequence[str]) -> list[str]:
    """wb-trec-eval's options for a release's scores (files not included)."""
    return [*TREC_EVAL_OPTIONS, *(f"-m{measure}" for measure in measures), "--format", "tsv"]


def sample_eval_arguments() -> list[str]:
    return [*SAMPLE_EVAL_OPTIONS, "--format", "tsv"]


def bundle_run_names(tags: Iterable[str]) -> dict[str, str]:
    """Each run tag's file name under runs/: the tag itself where it is a plain file
    name, else the tag with every other character as `_` and a number if that is
    taken. Distinct tags always get distinct names."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    unsafe = []
    for tag in sorted(tags):
        if _SAFE_NAME.fullmatch(tag) and len(tag.encode()) <= 200:
            names[tag] = tag
            taken.add(tag)
        else:
            unsafe.append(tag)
    for tag in unsafe:
        base = re.sub(r"[^A-Za-z0-9_.+=,@%-]", "_", tag).lstrip(".")[:150] or "run"
        base = base if _SAFE_NAME.fullmatch(base) else f"_{base}"
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}_{number}"
        names[tag] = name
        taken.add(name)
    return names


def run_order(names: Mapping[str, str]) -> list[str]:
    """The tags in the order `wb-trec-eval runs/` reads their files: by file name."""
    return sorted(names, key=lambda tag: names[tag])


def scores_rows(scorer_tsv: str, *, keep: Sequence[str] | None = None) -> str:
    """`run measure topic value` lines (no header) of the scorer's `--format tsv`
    output (`run run_id query_id measure value` after a header line): exactly what
    the script's awk step prints. `keep`: only these measures."""
    lines = []
    for line in scorer_tsv.splitlines()[1:]:
        _, run_id, topic, measure, value = line.split("\t")
        if keep is None or measure in keep:
            lines.append(f"{run_id}\t{measure}\t{topic}\t{value}\n")
    return "".join(lines)


def _awk(keep: Sequence[str] | None) -> str:
    test = "NR > 1"
    if keep:
        test += " && (" + " || ".join(f'$4 == "{measure}"' for measure in keep) + ")"
    return f'awk -F \'\\t\' \'{test} {{ print $2 "\\t" $4 "\\t" $3 "\\t" $5 }}\''


def reproduce_script(
    *,
    title: str,
    measures: Sequence[str],
    sampled: bool,
    workbench: Mapping[str, Any],
) -> str:
    """reproduce.sh: prints scores.tsv again from the bundle's files, with the
    workbench's own scorers (`wb-trec-eval`, `wb-sample-eval`) on the PATH."""
    version = workbench.get("version") or "?"
    commit = workbench.get("commit")
    at = f" (commit {commit})" if commit else ""
    trec_eval = shlex.join(["wb-trec-eval", *trec_eval_arguments(measures), QRELS_FILE])
    lines = [
        "#!/usr/bin/env bash",
        f"# Reproduces scores.tsv of {title} from the files beside this script.",
        f"# Scored with the judging workbench {version}{at}: install that version",
        "# (pip install judging-workbench, or `pip install .` in a clone of it), then here:",
        "#",
        "#     bash reproduce.sh | cmp - scores.tsv && echo reproduced",
        "#",
        "# trec_eval -c -M 1000: every judged topic counts (0 for a run that lacks it),",
        "# at most 1000 documents per topic; -q: each topic, then `all` (the mean).",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "printf 'run\\tmeasure\\ttopic\\tvalue\\n'",
        f"{trec_eval} {RUNS_FOLDER}/ | {_awk(None)}",
    ]
    if sampled:
        sample_eval = shlex.join(["wb-sample-eval", *sample_eval_arguments(), STRATIFIED_FILE])
        lines += [
            "# The pool samples its strata: infAP and infNDCG as sample_eval infers them.",
            f"{sample_eval} {RUNS_FOLDER}/ | {_awk(INFERRED_MEASURES)}",
        ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Two releases compared


def label_changes(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The labels that differ between two qrels (`query_id, doc_id, relevance`):
    `query_id, doc_id, old, new, change` (added, changed or removed; old or new
    is None where the label is absent), by topic (numeric ids numerically) then
    docno in byte order."""
    import pandas as pd

    keys = ["query_id", "doc_id"]
    both = old[[*keys, "relevance"]].merge(
        new[[*keys, "relevance"]], on=keys, how="outer", suffixes=("_old", "_new")
    )
    was, now = both["relevance_old"], both["relevance_new"]
    changed = was.isna() | now.isna() | (was != now)
    rows = both[changed]
    before = [None if math.isnan(v) else int(v) for v in rows["relevance_old"]]
    after = [None if math.isnan(v) else int(v) for v in rows["relevance_new"]]
    frame = pd.DataFrame(
        {
            "query_id": rows["query_id"].astype(str).to_numpy(),
            "doc_id": rows["doc_id"].astype(str).to_numpy(),
            "old": pd.Series(before, dtype=object).to_numpy(),
            "new": pd.Series(after, dtype=object).to_numpy(),
            "change": [
                "added" if o is None else "removed" if n is None else "changed"
                for o, n in zip(before, after, strict=True)
            ],
        }
    )
    return sort_items(frame)


@dataclass(frozen=True)
class ScoreChange:
    """A run whose mean or rank by one measure moved; None where the run is in one
    release only."""

    run: str
    measure: str
    old: float | None
    new: float | None
    old_rank: int | None
    new_rank: int | None

    @property
    def difference(self) -> float | None:
        if self.old is None or self.new is None:
            return None
        return self.new - self.old


def _ranked(means: Mapping[str, float]) -> dict[str, int]:
    runs = list(means)
    values = np.array([means[run] for run in runs], dtype=np.float64)
    return dict(zip(runs, (int(rank) for rank in ranks(runs, values)), strict=True))


def score_changes(
    old: Mapping[str, Mapping[str, float]],
    new: Mapping[str, Mapping[str, float]],
    measures: Sequence[str],
) -> list[ScoreChange]:
    """For each measure, the runs whose mean or rank differ (`old`, `new`: run ->
    measure -> mean over the topics), ranked as the leaderboard ranks
    (`analysis.ranks`: highest first, ties by tag), and the runs in one release
    only; in `measures` order, then by new rank (then old)."""
    changes = []
    for measure in measures:
        before = {run: m[measure] for run, m in old.items() if measure in m}
        after = {run: m[measure] for run, m in new.items() if measure in m}
        rank_before, rank_after = _ranked(before), _ranked(after)
        moved = []
        for run in sorted(set(before) | set(after)):
            change = ScoreChange(
                run,
                measure,
                before.get(run),
                after.get(run),
                rank_before.get(run),
                rank_after.get(run),
            )
            same = change.old == change.new or _both_nan(change.old, change.new)
            if not same or change.old_rank != change.new_rank:
                moved.append(change)
        moved.sort(key=lambda c: (c.new_rank or math.inf, c.old_rank or math.inf, c.run))
        changes.extend(moved)
    return changes


def _both_nan(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isnan(a) and math.isnan(b)


@dataclass(frozen=True)
class SignificanceFlip:
    """A pair of runs that one test separates in one release and not in the other
    (a and b as the newer release ranks them)."""

    a: str
    b: str
    test: str
    old_significant: bool
    new_significant: bool
    old_p_adjusted: float | None
    new_p_adjusted: float | None


def significance_flips(
    old_pairs: Sequence[Mapping[str, Any]], new_pairs: Sequence[Mapping[str, Any]]
) -> list[SignificanceFlip]:
    """The pairs (`a, b, test, p_adjusted, significant`, as the leaderboard's JSON
    holds them) in both releases whose significance differs, in the newer
    release's order. Pairs with a run in one release only are not compared."""

    def key(pair: Mapping[str, Any]) -> tuple[frozenset[str], str]:
        return frozenset((pair["a"], pair["b"])), pair["test"]

    before = {key(pair): pair for pair in old_pairs}
    flips = []
    for pair in new_pairs:
        was = before.get(key(pair))
        if was is not None and bool(was["significant"]) != bool(pair["significant"]):
            flips.append(
                SignificanceFlip(
                    pair["a"],
                    pair["b"],
                    pair["test"],
                    bool(was["significant"]),
                    bool(pair["significant"]),
                    was["p_adjusted"],
                    pair["p_adjusted"],
                )
            )
    return flips
