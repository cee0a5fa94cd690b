"""The pure cores import no Django, so they can be used, tested and benchmarked alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE_CORES = [
    "pooling.problems",
    "pooling.topic_ids",
    "pooling.file_input",
    "pooling.streams",
    "pooling.run_files",
    "pooling.topic_files",
    "pooling.document_files",
    "pooling.label_schema",
    "pooling.string_keys",
    "pooling.ranking_rule",
    "pooling.ranking",
    "pooling.spec",
    "pooling.strategies",
    "pooling.adaptive_base",
    "pooling.adaptive_greedy",
    "pooling.adaptive_sampling",
    "pooling.adaptive",
    "pooling.revisions",
    "pooling.budget",
    "pooling.ledger",
    "pooling.pool_plots",
    "judging.agreement",
    "judging.agreement_statistics",
    "judging.agreement_table",
    "judging.overlap",
    "judging.labels",
    "judging.judgment_files",
    "judging.progress",
    "scoring.stability",
    "scoring.qrels",
    "scoring.inclusion_file",
    "scoring.plain_files",
    "scoring.measures.columns",
    "scoring.command_line",
    "scoring.console",
    "scoring.exports",
    "scoring.evaluation",
    "scoring.trec_eval",
    "scoring.sample_eval",
    "scoring.report",
    "scoring.pool_estimates",
    "scoring.pool_simulation",
    "scoring.pool_simulation_cli",
    "scoring.analysis.quiet",
    "scoring.analysis.intervals",
    "scoring.analysis.paired",
    "scoring.analysis.corrections",
    "scoring.analysis.studentized_range",
    "scoring.analysis.tukey",
    "scoring.analysis.leaderboard",
    "scoring.analysis.render",
    "scoring.analysis.cli",
    "scoring.analysis.pr_curve",
    "scoring.analysis.correlation",
    "scoring.analysis.ranks",
    "scoring.analysis.reusability",
    "scoring.analysis.reusability_render",
    "scoring.analysis.reusability_cli",
    "scoring.analysis.arguments",
    "scoring.plots",
    "workbench.plots",
    "scoring.tasks.sets",
    "scoring.tasks.codiesp",
    "scoring.tasks.scifact",
    "scoring.tasks.subtasks",
    "workbench.demo_content",
    "workbench.charts",
]


@pytest.mark.parametrize("module", PURE_CORES)
def test_pure_core_does_not_import_django(module: str):
    code = f"import sys, {module}; sys.exit('django' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
