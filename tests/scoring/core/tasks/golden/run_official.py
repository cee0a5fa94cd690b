"""Score every golden case with the official scripts and keep what they print.

    python tests/scoring/core/tasks/golden/run_official.py \\
        --codiesp /path/to/codiesp-evaluation-script --codiesp-python /tmp/codiesp-env/bin/python \\
        --scifact /path/to/scifact-evaluator --scifact-python /tmp/scifact-env/bin/python \\
        --nuggetizer-python /tmp/nuggetizer-venv/bin/python \\
        [--codiesp-commit SHA] [--scifact-commit SHA] [--nuggetizer-commit SHA]

Each tool is optional: the cases of the tools given are scored again, the
others' files are left as they are.

The official code is not part of this repository: check it out yourself
(README.md beside this file says which commits and environments made the
files kept here). Each script runs as it is, in its own pinned environment,
in a scratch directory (codiespD_P_evaluation.py writes its intermediate
files into the working directory). For each case this writes:

    codiesp/<case>/map.stdout, f1.stdout     what the scripts print (stdout)
    codiesp/<case>/map.json, f1.json         the same numbers at full precision
    codiesp-x/<case>/x.stdout, x.json
    scifact/<case>/metrics.json               the evaluator's own output file (--verbose)
    nuggets/<case>/nuggetizer.json            nuggetizer's scores of each record and of each run
    *-crash/<case>/official.txt               each script's exit status and last line
    nuggets-unusual/<case>/official.txt       nuggetizer's exit status, and its scores or last line
    codiesp-crash/<case>/<kind>.stdout, .json the outputs of a script that did not crash

The full-precision numbers are read from the scripts' own variables after
their main block ran (`runpy`), so that nothing of theirs is re-implemented
here; `map.json` also holds trectools' per-case AP (get_map(per_query=True)
on the script's own TrecEval object).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Runs inside the official environment (Python 3.8), so it keeps to that
# version's syntax. argv: script, output JSON, the script's own arguments.
HELPER = r"""
import contextlib, io, json, math, runpy, sys

script, output = sys.argv[1], sys.argv[2]
sys.argv = [script] + sys.argv[3:]
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    names = runpy.run_path(script, run_name="__main__")
sys.stdout.write(printed.getvalue())


def number(value):
    value = float(value)
    return None if math.isnan(value) else value


def series(values):
    return {str(key): number(value) for key, value in values.items()}


found = {}
if "MAP" in names:
    found["map"] = number(names["MAP"])
    per_query = names["te"].get_map(trec_eval=False, per_query=True)
    found["ap"] = series(per_query.iloc[:, 0])
else:
    for key in ("P", "R", "F1"):
        found[key] = number(names[key])
    found["F1_is_int"] = isinstance(names["F1"], int)
    for key in ("P_per_cc", "R_per_cc", "F1_per_cc"):
        found[key] = series(names[key])
with open(output, "w") as file:
    json.dump(found, file, indent=1, sort_keys=True)
"""

# Runs inside nuggetizer's environment (Python 3.12, the package installed from
# the checkout, without the dependencies its LLM code needs: its metrics module
# imports none). argv: the assignment file, the output JSON. nuggetizer's
# pipeline scores one run's assignment file at a time (`calculate_global_metrics`
# over its records); a golden file holds several runs, so each run's records, in
# file order, are given to it as that run's file would be (an empty file, as one
# run's empty file).
NUGGETIZER_HELPER = r"""
import dataclasses, json, sys
from nuggetizer.cli.io import read_jsonl
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

path, output = sys.argv[1], sys.argv[2]
records = read_jsonl(path)
runs = {}
for record in records:
    runs.setdefault(record.get("run_id"), []).append(record)
if not records:  # the file is the one run's file
    runs[None] = records
found = {
    "per_record": [
        {"run_id": record.get("run_id"),
         **dataclasses.asdict(calculate_nugget_scores(record["qid"], record["nuggets"]))}
        for record in records
    ],
    "runs": [{"run_id": run, **calculate_global_metrics(rows)} for run, rows in runs.items()],
}
with open(output, "w") as file:
    json.dump(found, file, indent=1)
"""

SCRIPTS = {
    "map": "codiespD_P_evaluation.py",
    "f1": "comp_f1_diag_proc.py",
    "x": "codiespX_evaluation.py",
}


def _arguments(case: Path) -> dict[str, list[str]]:
    if (case / "codes.tsv").exists():
        common = ["-g", str(case / "gold.tsv"), "-p", str(case / "pred.tsv")]
        common += ["-c", str(case / "codes.tsv")]
        return {"map": common, "f1": common}
    return {
        "x": [
            *("-g", str(case / "gold.tsv"), "-p", str(case / "pred.tsv")),
            *("-cD", str(case / "codes_D.tsv"), "-cP", str(case / "codes_P.tsv")),
        ]
    }


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def run_codiesp(case: Path, official: Path, python: str, *, crash: bool) -> None:
    report = []
    for kind, arguments in _arguments(case).items():
        with tempfile.TemporaryDirectory() as scratch:
            values = Path(scratch) / "values.json"
            command = [python, "-c", HELPER, str(official / SCRIPTS[kind]), str(values)]
            done = subprocess.run(
                [*command, *arguments], cwd=scratch, capture_output=True, text=True, check=False
            )
            if crash:
                last = _last_line(done.stderr) if done.returncode else _last_line(done.stdout)
                report.append(f"{SCRIPTS[kind]}: exit status {done.returncode}")
                report.append(f"  {last.replace(str(case) + '/', '')}")
                if done.returncode == 0:  # the other script crashed: keep what this one made
                    (case / f"{kind}.stdout").write_text(done.stdout)
                    shutil.copyfile(values, case / f"{kind}.json")
                continue
            if done.returncode:
                raise SystemExit(f"{case}: {SCRIPTS[kind]} failed:\n{done.stderr}")
            (case / f"{kind}.stdout").write_text(done.stdout)
            shutil.copyfile(values, case / f"{kind}.json")
    if crash:
        (case / "official.txt").write_text("\n".join(report) + "\n")


def run_scifact(case: Path, official: Path, python: str, *, crash: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        metrics = Path(scratch) / "metrics.json"
        command = [python, str(official / "evaluator" / "eval.py")]
        command += ["--labels_file", str(case / "claims.jsonl")]
        command += ["--preds_file", str(case / "preds.jsonl")]
        command += ["--metrics_output_file", str(metrics), "--verbose"]
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False)
        if crash:
            lines = [f"eval.py: exit status {done.returncode}"]
            if done.returncode:
                lines.append(f"  {_last_line(done.stderr)}")
            else:
                lines.append(f"  {json.dumps(json.loads(metrics.read_text()))}")
            (case / "official.txt").write_text("\n".join(lines) + "\n")
            return
        if done.returncode:
            raise SystemExit(f"{case}: eval.py failed:\n{done.stderr}")
        shutil.copyfile(metrics, case / "metrics.json")


def run_nuggetizer(case: Path, python: str, *, unusual: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        values = Path(scratch) / "values.json"
        command = [python, "-c", NUGGETIZER_HELPER, str(case / "assignments.jsonl"), str(values)]
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False)
        if unusual:
            lines = [f"nuggetizer: exit status {done.returncode}"]
            if done.returncode:
                lines.append(f"  {_last_line(done.stderr)}")
            else:
                lines.append(f"  {json.dumps(json.loads(values.read_text()))}")
            (case / "official.txt").write_text("\n".join(lines) + "\n")
            return
        if done.returncode:
            raise SystemExit(f"{case}: nuggetizer failed:\n{done.stderr}")
        shutil.copyfile(values, case / "nuggetizer.json")


def _environment(python: str) -> str:
    version = subprocess.run(
        [python, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    frozen = subprocess.run(
        [python, "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout
    return f"{version}\n{frozen}"


def _update_environment(path: Path, blocks: dict[str, str]) -> None:
    """Replace the blocks (a blank-line-separated paragraph starting `<repo> at <commit>`)
    of the tools scored this time, keep the others."""
    kept = {}
    if path.exists():
        for block in path.read_text().split("\n\n"):
            if block.strip():
                kept[block.split(" at ", 1)[0]] = block.strip("\n")
    kept |= {repo: block.strip("\n") for repo, block in blocks.items()}
    path.write_text("\n\n".join(kept.values()) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codiesp", type=Path)
    parser.add_argument("--codiesp-python")
    parser.add_argument("--scifact", type=Path)
    parser.add_argument("--scifact-python")
    parser.add_argument("--nuggetizer-python", help="a Python with nuggetizer installed")
    parser.add_argument("--codiesp-commit", default="(not given)")
    parser.add_argument("--scifact-commit", default="(not given)")
    parser.add_argument("--nuggetizer-commit", default="(not given)")
    parser.add_argument("--golden", type=Path, default=HERE)
    args = parser.parse_args(argv)

    blocks = {}
    if args.codiesp and args.codiesp_python:
        for group, crash in (("codiesp", False), ("codiesp-x", False), ("codiesp-crash", True)):
            for case in sorted((args.golden / group).iterdir()):
                run_codiesp(case, args.codiesp, args.codiesp_python, crash=crash)
        blocks["TeMU-BSC/codiesp-evaluation-script"] = (
            f"TeMU-BSC/codiesp-evaluation-script at {args.codiesp_commit}\n"
            f"{_environment(args.codiesp_python)}"
        )
    if args.scifact and args.scifact_python:
        for group, crash in (("scifact", False), ("scifact-crash", True)):
            for case in sorted((args.golden / group).iterdir()):
                run_scifact(case, args.scifact, args.scifact_python, crash=crash)
        blocks["allenai/scifact-evaluator"] = (
            f"allenai/scifact-evaluator at {args.scifact_commit}\n"
            f"{_environment(args.scifact_python)}"
        )
    if args.nuggetizer_python:
        for group, unusual in (("nuggets", False), ("nuggets-unusual", True)):
            for case in sorted((args.golden / group).iterdir()):
                run_nuggetizer(case, args.nuggetizer_python, unusual=unusual)
        blocks["castorini/nuggetizer"] = (
            f"castorini/nuggetizer at {args.nuggetizer_commit}\n"
            f"{_environment(args.nuggetizer_python)}"
        )
    if not blocks:
        parser.error(
            "give at least one tool: --codiesp and --codiesp-python, --scifact and"
            " --scifact-python, or --nuggetizer-python"
        )
    _update_environment(args.golden / "ENVIRONMENT.txt", blocks)


if __name__ == "__main__":
    main()
