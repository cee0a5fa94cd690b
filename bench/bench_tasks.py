"""CodiEsp and SciFact scoring of large submissions: ours against the official scripts.

    python bench/bench_tasks.py [--lines 3300000] [--claims 6000] [--out bench/out/tasks]
        [--codiesp CHECKOUT --codiesp-python PYTHON3.8] [--scifact CHECKOUT --scifact-python PY]

Generates, with fixed seeds, a CodiEsp D run of --lines lines (about 46 MiB at
3.3 million: the size that killed a worker in issue 22) and one of half as
many, against a valid-code list of ICD-10-CM's size and a gold of 250 cases
(3,000 predicted cases of ~1,100 ranked codes each, as a team ranks codes
for every test and background case; some codes repeated, invalid or in
upper case), and a SciFact prediction file for --claims gold claims (~50
abstracts predicted per claim).

Each scorer runs as a whole process, start-up included, on the same files in
the same run: `manage.py codiesp` (MAP, P/R/F1 and the extras in one reading)
against the official codiespD_P_evaluation.py (MAP) and comp_f1_diag_proc.py
(P/R/F1) in their pinned environment, and `manage.py scifact` against
evaluator/eval.py. Prints wall time, the ratio official / ours, and each
process's peak resident memory (getrusage of that child, from wait4), and
checks that the printed numbers are the same digits. The official code is
not part of this repository (tests/scoring/core/tasks/golden/README.md says how to
check it out and build its environments); without it, ours is timed alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


# --------------------------------------------------------------------------
# Inputs


def _codes(rng: random.Random, size: int) -> list[str]:
    codes: set[str] = set()
    while len(codes) < size:
        code = f"{rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ')}{rng.randint(0, 99):02d}"
        if rng.random() < 0.9:
            code += "." + "".join(rng.choice("0123456789X") for _ in range(rng.randint(1, 4)))
        codes.add(code.lower())
    return sorted(codes)


def write_codiesp(out: Path, lines: int, *, seed: int = 1) -> dict[str, Path]:
    """codes.tsv (71,486 codes, ICD-10-CM 2018's count), gold.tsv (250 cases, ~10
    codes each) and a run of `lines` lines over 3,000 cases."""
    out.mkdir(parents=True, exist_ok=True)
    files = {name: out / f"{name}.tsv" for name in ("codes", "gold")}
    files["run"] = out / f"run-{lines}.tsv"
    rng = random.Random(seed)
    codes = _codes(rng, 71_486)
    cases = [f"cc{n:05d}" for n in range(3000)]
    gold_cases = rng.sample(cases, 250)
    truth = {case: rng.sample(codes, rng.randint(3, 18)) for case in gold_cases}
    if not files["codes"].exists():
        with files["codes"].open("w") as file:
            file.writelines(f"{code.upper()}\tdescripción\tdescription\n" for code in codes)
        with files["gold"].open("w") as file:
            file.writelines(f"{case}\t{code}\n" for case, found in truth.items() for code in found)
    if files["run"].exists():
        return files
    per_case = lines // len(cases)
    with files["run"].open("w") as file:
        for number, case in enumerate(cases):
            count = per_case + (1 if number < lines % len(cases) else 0)
            ranked = rng.sample(codes, count)
            for code in truth.get(case, ()):  # a team finds most gold codes, fairly high
                if rng.random() < 0.7:
                    ranked[rng.randint(0, min(count - 1, 60))] = code
            for position in rng.sample(range(count), count // 100):  # repeats, invalid codes
                ranked[position] = rng.choice((ranked[0], "zz99.9"))
            file.writelines(
                f"{case}\t{code.upper() if rng.random() < 0.05 else code}\n" for code in ranked
            )
    return files


def write_scifact(out: Path, claims: int, *, seed: int = 2) -> dict[str, Path]:
    """claims.jsonl (each claim 0-3 gold abstracts) and predictions with ~50 abstracts a
    claim, each 1-8 sentences (the gold ones found often)."""
    out.mkdir(parents=True, exist_ok=True)
    files = {"claims": out / f"claims-{claims}.jsonl", "preds": out / f"preds-{claims}.jsonl"}
    if files["preds"].exists():
        return files
    rng = random.Random(seed)
    labels = ("SUPPORT", "CONTRADICT")
    with files["claims"].open("w") as gold, files["preds"].open("w") as preds:
        for claim in range(1, claims + 1):
            evidence = {}
            for _ in range(rng.choice((0, 1, 1, 2, 3))):
                label = rng.choice(labels)
                pool = rng.sample(range(40), 6)
                evidence[str(rng.randint(10_000, 99_999_999))] = [
                    {"sentences": sorted(pool[:3]), "label": label},
                    {"sentences": sorted(pool[3:4]), "label": label},
                ]
            gold.write(json.dumps({"id": claim, "claim": f"claim {claim}", "evidence": evidence}))
            gold.write("\n")
            predicted = {}
            for doc, rationales in evidence.items():
                if rng.random() < 0.8:
                    sentences = [s for r in rationales for s in r["sentences"]]
                    predicted[doc] = {"sentences": sentences, "label": rationales[0]["label"]}
            for _ in range(rng.randint(30, 70)):
                sentences = rng.sample(range(40), rng.randint(1, 8))
                doc = str(rng.randint(10_000, 99_999_999))
                predicted[doc] = {"sentences": sentences, "label": rng.choice(labels)}
            preds.write(json.dumps({"id": claim, "evidence": predicted}) + "\n")
    return files


# --------------------------------------------------------------------------
# Running


def run(command: list[str], *, cwd: Path | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak resident bytes of the child (wait4's rusage) and stdout."""
    with tempfile.TemporaryFile() as stdout:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        stderr = child.stderr.read().decode() if child.stderr else ""
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-2000:]}")
        stdout.seek(0)
        return seconds, usage.ru_maxrss * 1024, stdout.read().decode()


def _mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"


def _line(what: str, seconds: float, peak: int) -> None:
    print(f"  {what:<44} {seconds:7.1f} s  peak {_mib(peak):>9}")


def bench_codiesp(files: dict[str, Path], args: argparse.Namespace) -> None:
    run_file = files["run"]
    size = run_file.stat().st_size
    lines = sum(1 for _ in run_file.open("rb"))
    print(f"CodiEsp D: {run_file.name}, {lines:,} lines, {_mib(size)}")
    common = ["--gold", str(files["gold"]), "--pred", str(run_file), "--codes", str(files["codes"])]
    ours_s, ours_peak, ours_out = run(
        [PYTHON, str(ROOT / "manage.py"), "codiesp", "--subtask", "D", *common]
    )
    _line("ours: manage.py codiesp (MAP, P/R/F1, extras)", ours_s, ours_peak)
    if not args.codiesp:
        print("  official scripts: not given (--codiesp, --codiesp-python): ours alone")
        return
    official = ["-g", str(files["gold"]), "-p", str(run_file), "-c", str(files["codes"])]
    with tempfile.TemporaryDirectory() as scratch:  # the MAP script writes files where it runs
        map_s, map_peak, map_out = run(
            [args.codiesp_python, str(args.codiesp / "codiespD_P_evaluation.py"), *official],
            cwd=Path(scratch),
        )
    _line("official codiespD_P_evaluation.py (MAP)", map_s, map_peak)
    with tempfile.TemporaryDirectory() as scratch:
        f1_s, f1_peak, f1_out = run(
            [args.codiesp_python, str(args.codiesp / "comp_f1_diag_proc.py"), *official],
            cwd=Path(scratch),
        )
    _line("official comp_f1_diag_proc.py (P/R/F1)", f1_s, f1_peak)
    print(
        f"  official / ours: {(map_s + f1_s) / ours_s:.2f}x the time for the two scripts"
        f" ({map_s / ours_s:.2f}x MAP alone),"
        f" {max(map_peak, f1_peak) / ours_peak:.1f}x the peak memory"
    )
    theirs = {
        "map": re.search(r"MAP estimate: (\S+)", map_out)[1],  # type: ignore[index]
        "prf": f1_out.strip().splitlines()[-1],
    }
    ours = {
        "map": re.search(r"MAP estimate: (\S+)", ours_out)[1],  # type: ignore[index]
        "prf": "|".join(re.findall(r"Micro-average [\w-]+ = (\S+)", ours_out)),
    }
    same = "same digits" if ours == theirs else f"DIFFERENT: ours {ours}, official {theirs}"
    print(f"  MAP {ours['map']}, P|R|F1 {ours['prf']}: {same}")


def bench_scifact(files: dict[str, Path], args: argparse.Namespace) -> None:
    size = files["preds"].stat().st_size
    print(f"SciFact: {files['preds'].name}, {_mib(size)}")
    with tempfile.TemporaryDirectory() as scratch:
        ours_json = Path(scratch) / "ours.json"
        ours_s, ours_peak, out = run(
            [
                PYTHON,
                str(ROOT / "manage.py"),
                "scifact",
                "--labels",
                str(files["claims"]),
                "--preds",
                str(files["preds"]),
                "--format",
                "json",
            ]
        )
        ours_json.write_text(out)
        _line("ours: manage.py scifact", ours_s, ours_peak)
        if not args.scifact:
            print("  official evaluator: not given (--scifact, --scifact-python): ours alone")
            return
        metrics = Path(scratch) / "metrics.json"
        official_s, official_peak, _ = run(
            [
                args.scifact_python,
                str(args.scifact / "evaluator" / "eval.py"),
                *("--labels_file", str(files["claims"]), "--preds_file", str(files["preds"])),
                *("--metrics_output_file", str(metrics), "--verbose"),
            ]
        )
        _line("official evaluator/eval.py --verbose", official_s, official_peak)
        print(
            f"  official / ours: {official_s / ours_s:.2f}x the time,"
            f" {official_peak / ours_peak:.1f}x the peak memory"
        )
        same = json.loads(out) == json.loads(metrics.read_text())
        print(f"  twelve numbers: {'the same floats' if same else 'DIFFERENT'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=3_300_000)
    parser.add_argument("--claims", type=int, default=6000)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "tasks")
    parser.add_argument("--codiesp", type=Path, help="a checkout of codiesp-evaluation-script")
    parser.add_argument("--codiesp-python", default="python3.8")
    parser.add_argument("--scifact", type=Path, help="a checkout of scifact-evaluator")
    parser.add_argument("--scifact-python", default="python3.9")
    args = parser.parse_args()
    for lines in (args.lines // 2, args.lines):
        bench_codiesp(write_codiesp(args.out / "codiesp", lines), args)
    for claims in (args.claims // 2, args.claims):
        bench_scifact(write_scifact(args.out / "scifact", claims), args)


if __name__ == "__main__":
    main()
