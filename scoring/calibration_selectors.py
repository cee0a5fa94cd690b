"""A machine assessor's calibration report (issue 25 item 6): its labels against the
humans' final labels, and the runs ranked under human, machine and
human-then-machine qrels. It needs scores under several label sources, so it
lives in scoring.

On the documents judged by both, per aspect of the schema: Cohen's kappa plain,
linear and quadratic, the confusion matrix, per-topic kappa and the machine's
sample disagreement (`judging.core.calibration`). On the runs, per measure:
Kendall's tau and tau_AP between the rankings, the leaders, top 3 and top 5, and
the significant pairs (the leaderboard's default test and correction) that agree,
flip, vanish or appear (`scoring.core.label_comparison`).

A pool scored in a request (WORKBENCH_SYNC_SCORING_CELLS) gets its report inline;
a larger one from a job (`scoring.jobs.pool_calibration`), found again by
`calibration_params`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pandas as pd
from django.db.models import Exists, OuterRef

from judging import selectors as judging_selectors
from judging.core import agreement_table, calibration
from judging.core.label_sources import HUMAN_THEN_MACHINE, MACHINE
from judging.machine_selectors import machine_labels_frame
from judging.models import MachineAssessor, MachineSample
from pooling.models import Pool, PoolEntry
from scoring import export_selectors, leaderboard_selectors, selectors
from scoring.core import label_comparison
from scoring.core.analysis.leaderboard import Leaderboard
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from workbench.core.label_schema import NOT_ASKED
from workbench.jobs import job_latest
from workbench.models import Job

# The measures compared when none is asked: the leaderboard's usual ones.
DEFAULT_MEASURES = ("ndcg_cut.10", "P.10", "map")
COMPARED = (MACHINE, HUMAN_THEN_MACHINE)  # each against human
CALIBRATION_JOB = "scoring.jobs.pool_calibration"

# What the numbers mean, as the page and the text report say it (Clarke & Dietz).
READING = (
    "Kappa counts agreement beyond chance on the documents both judged: 0 is chance, "
    "1 is perfect; linear and quadratic kappa give partial credit to near grades.",
    "A high Kendall's tau over all runs can hide disagreement among the best systems "
    "(Clarke & Dietz): read tau_AP, which weighs the top of the ranking, and whether "
    "the same runs lead.",
    "Circularity: if the model that judges also ranks (or resembles a run's model), "
    "machine qrels favour it; such runs should not be compared on machine labels.",
    "Machine labels can be gamed: a run tuned to the judging model's preferences "
    "scores well under it without being better for people.",
)


class CalibrationError(selectors.ScoringError):
    """A machine, measure or pool the report cannot be made for (400 / exit 2)."""


def calibration_machine(pool: Pool, name: str | None) -> MachineAssessor:
    """The machine named (or the only one with labels on the pool when `name` is
    empty); CalibrationError naming the choices otherwise."""
    try:
        choice = selectors.label_choice(pool, MACHINE, name)
    except selectors.LabelChoiceError as error:
        raise CalibrationError(str(error)) from None
    return MachineAssessor.objects.select_related("account").get(
        campaign=pool.campaign_id, name=choice.machine
    )


def calibration_measures(measures: Sequence[str] | None) -> list[str]:
    """The measures asked (default DEFAULT_MEASURES), each naming one value;
    CalibrationError for one the leaderboard cannot rank by."""
    chosen = list(dict.fromkeys(measures or DEFAULT_MEASURES))
    for measure in chosen:
        try:
            selectors.leaderboard_measure_name(measure)
        except selectors.ScoringError as error:
            raise CalibrationError(f"measure {measure!r}: {error}") from None
    return chosen


def calibration_in_request(pool: Pool) -> bool:
    """Whether the report is made while you wait: three scorings of the campaign's
    runs, each small enough for a request."""
    return selectors.scores_in_request(pool)


def calibration_params(pool: Pool, machine: MachineAssessor, measures: list[str]) -> dict:
    """A report job's params: the state of the human and the machine's labels, by
    which the page and the API find the job again."""
    choice = selectors.LabelChoice(HUMAN_THEN_MACHINE, machine.name)
    return {
        "pool": pool.pk,
        "machine": machine.name,
        "measures": measures,
        "version": selectors.scores_version(pool, measures, choice),
    }


def calibration_job(pool: Pool, machine: MachineAssessor, measures: list[str]) -> Job | None:
    return job_latest(kind=CALIBRATION_JOB, params=calibration_params(pool, machine, measures))


def _sample_frame(pool: Pool, machine: MachineAssessor) -> pd.DataFrame:
    """The machine's good samples of the pool's documents, the latest per (topic,
    document, sample index) (a re-run adds cached copies), a row per sample."""
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    rows = (
        MachineSample.objects.filter(machine=machine, ok=True)
        .filter(Exists(in_pool))
        .order_by("topic__topic_id", "docno", "sample", "-id")
        .values_list("topic__topic_id", "docno", "sample", "labels")
    )
    relevance = pool.campaign.schema.relevance.id
    aspects = pool.campaign.schema.aspect_ids
    latest: dict[tuple[str, str, int], dict] = {}
    for topic, docno, sample, labels in rows:
        latest.setdefault((topic, docno, sample), labels or {})
    frame = pd.DataFrame(
        [
            (topic, docno, int(labels.get(relevance, NOT_ASKED)))
            for (topic, docno, _), labels in latest.items()
        ],
        columns=["query_id", "doc_id", "relevance"],
    ).astype({"relevance": "int64"})
    for aspect in aspects:
        frame[aspect] = pd.array(
            [int(labels.get(aspect, NOT_ASKED)) for labels in latest.values()], dtype="int64"
        )
    return frame


def label_calibrations(
    pool: Pool, machine: MachineAssessor, human: pd.DataFrame
) -> list[calibration.Calibration]:
    """Per aspect of the schema: the machine's labels (MachineJudgment, the majority
    of its samples) against the pool's final human labels `human`, on the documents
    both labelled; the sample disagreement from its latest samples."""
    labels = machine_labels_frame(pool, machine)
    samples = _sample_frame(pool, machine)
    several = samples.groupby(["query_id", "doc_id"]).size().gt(1).any() if len(samples) else False
    results = []
    for aspect in agreement_table.schema_aspects(pool.campaign.schema):
        result = calibration.calibrate_frames(human, labels, aspect=aspect)
        if several:
            spread = calibration.calibrate_frames(human, samples, aspect=aspect).samples
            result = replace(result, samples=spread)
        results.append(result)
    return results


def _boards(
    pool: Pool, choice: selectors.LabelChoice, measures: list[str], human: pd.DataFrame
) -> dict[str, Leaderboard]:
    """Each measure's leaderboard (the default test and correction) on `choice`'s labels."""
    report = selectors.pool_scores_report(
        pool=pool, measures=measures, per_topic=True, choice=choice, human=human
    )
    options = LeaderboardOptions()
    return {
        measure: leaderboard_selectors.leaderboard_of(
            leaderboard_selectors.score_table_of(report, measure), options
        )
        for measure in measures
    }


def run_comparisons(
    pool: Pool,
    machine: MachineAssessor,
    measures: list[str],
    human: pd.DataFrame,
    progress: Any = None,
) -> dict[str, Any]:
    """Per measure, the runs ranked on the final human labels `human` against each of
    COMPARED. `progress` (a job's) counts the three scorings."""
    options = LeaderboardOptions()
    test = options.tests[0]
    if progress is not None:
        progress(done=0, total=len(COMPARED) + 1)
    boards = {selectors.HUMAN_LABELS: _boards(pool, selectors.HUMAN_CHOICE, measures, human)}
    for source in COMPARED:
        if progress is not None:
            progress.advance()
        choice = selectors.LabelChoice(source, machine.name)
        boards[source] = _boards(pool, choice, measures, human)
    if progress is not None:
        progress.advance()
    rows = []
    for measure in measures:
        human = boards[selectors.HUMAN_LABELS][measure]
        means = {row.run: row.mean for row in human.runs}
        comparisons = []
        for source in COMPARED:
            other = boards[source][measure]
            ranking = label_comparison.compare_rankings(
                means, {row.run: row.mean for row in other.runs}
            )
            significance = label_comparison.compare_significance(
                label_comparison.pair_tests(human.pairs, test),
                label_comparison.pair_tests(other.pairs, test),
            )
            comparisons.append(
                {
                    "labels": source,
                    "ranking": ranking.to_json(),
                    "significance": significance.to_json(),
                }
            )
        rows.append({"measure": measure, "name": human.measure, "comparisons": comparisons})
    return {
        "test": test,
        "correction": options.correction,
        "alpha": options.alpha,
        "n_runs": pool.campaign.runs.count(),
        "measures": rows,
    }


def pool_calibration(
    *, pool: Pool, machine: MachineAssessor, measures: list[str], progress: Any = None
) -> dict[str, Any]:
    """The report as JSON-ready data (the API's body, the command's --format json).
    NothingJudged before any human final label; NoRuns without runs."""
    human = judging_selectors.final_labels(pool)
    if human.empty:
        raise selectors.NothingJudged("nothing is judged by a human in this pool yet")
    aspects = label_calibrations(pool, machine, human)
    return {
        "pool": pool.pk,
        "campaign": pool.campaign.slug,
        "machine": export_selectors.machine_provenance(pool, machine.name)
        | {"baseline": machine.kind == MachineAssessor.LEXICAL},
        "aspects": [each.to_json() for each in aspects],
        "runs": run_comparisons(pool, machine, measures, human, progress),
        "reading": list(READING),
    }


def calibration_text(report: dict[str, Any]) -> str:
    """The report as plain text (`manage.py machine_report --format text`)."""
    machine = report["machine"]
    baseline = " (a lexical baseline, not a language model)" if machine["baseline"] else ""
    lines = [
        f"Calibration of machine {machine['name']}{baseline} on pool {report['pool']} "
        f"({report['campaign']}), model {machine['model'] or '-'}",
        "",
    ]
    for aspect in report["aspects"]:
        kappa = aspect["kappa"]
        lines.append(
            f"{aspect['aspect']}: {aspect['n']} documents judged by both; kappa "
            f"plain {_number(kappa['plain'])}, linear {_number(kappa['linear'])}, "
            f"quadratic {_number(kappa['quadratic'])}"
        )
        values = aspect["values"]
        lines.append("  confusion (rows human, columns machine): " + " ".join(map(str, values)))
        for value, row in zip(values, aspect["confusion"]["counts"], strict=True):
            lines.append(f"    {value}: " + " ".join(f"{count:>5}" for count in row))
        topics = ", ".join(
            f"{t['query_id']} {_number(t['kappa']['plain'])}" for t in aspect["per_topic"]
        )
        lines.append(f"  per topic (plain kappa): {topics or 'none'}")
        if aspect["samples"]:
            samples = aspect["samples"]
            lines.append(
                f"  samples disagree on {samples['n_disagreeing']} of "
                f"{samples['n_documents']} documents with several samples"
            )
    runs = report["runs"]
    lines += [
        "",
        f"Runs ({runs['n_runs']}); significant pairs by the {runs['test']} test, "
        f"{runs['correction']} correction, alpha {runs['alpha']}:",
    ]
    for measure in runs["measures"]:
        for each in measure["comparisons"]:
            ranking, pairs = each["ranking"], each["significance"]
            tops = ", ".join(
                f"top {t['k']} shares {t['shared']}{' (same)' if t['identical'] else ''}"
                for t in ranking["tops"]
            )
            lines.append(
                f"  {measure['name']}, human vs {each['labels']}: tau "
                f"{_float(ranking['kendall_tau_b'])}, tau_AP {_float(ranking['tau_ap'])}, "
                f"leader {ranking['first_leader']} vs {ranking['second_leader']} "
                f"({'same' if ranking['same_leader'] else 'different'}), {tops}; pairs "
                f"agree {pairs['agree']}, flip {pairs['flip']}, vanish {pairs['vanish']}, "
                f"appear {pairs['appear']} of {pairs['n_pairs']}"
            )
    lines += ["", *report["reading"]]
    return "\n".join(lines) + "\n"


def _number(agreement: dict[str, Any]) -> str:
    value = agreement.get("value")
    return "undefined" if value is None else f"{value:.3f}"


def _float(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def calibration_report(
    pool: Pool, machine: MachineAssessor, measures: list[str]
) -> tuple[dict[str, Any] | None, Job | None]:
    """The report of the current labels and the job that made it (None inline): made
    here for a pool scored in a request, else read from the job on the current labels
    (None while it has not made one)."""
    if calibration_in_request(pool):
        return pool_calibration(pool=pool, machine=machine, measures=measures), None
    if judging_selectors.final_labels(pool).empty:
        raise selectors.NothingJudged("nothing is judged by a human in this pool yet")
    job = calibration_job(pool, machine, measures)
    if job is not None and job.state == Job.DONE:
        return job.result["report"], job
    return None, job
