"""Memory and time of `manage.py nugget_scores` on large assignment files.

    python bench/bench_nugget_scores.py [--megabytes 10 100]

Writes an assignment file of about each size (nuggetizer's assign output:
runs of 300 topics, 30 nuggets an answer, answer texts of ~2 KB as nuggetizer
copies them into its records) and scores it in a child process twice: with
our reader (`scoring.core.tasks.nuggets`, a line at a time, counts kept) and, as
the reference, the way nuggetizer does it (every record loaded with
`json.loads` into a list, then scored). Prints each child's peak resident
memory and CPU time, and their ratios. The reader's memory should stay flat as
the file grows (it grows with the number of answers, a few hundred bytes
each, not with the text); the reference's grows with the file. On 2 shared
cores: 10 MB, 19 MiB against 46 MiB, CPU 1.14 times the reference's (our
reader checks every field); 100 MB, 34 MiB against 307 MiB, 1.18 times.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOPICS = 300
NUGGETS = 30


def write_assignments(path: Path, megabytes: int) -> int:
    """About `megabytes` MB of records; returns how many."""
    rng = random.Random(megabytes)
    labels = ("support", "partial_support", "not_support")
    written = count = 0
    with path.open("w") as out:
        while written < megabytes * 1_000_000:
            run, topic = f"run-{count // TOPICS}", str(1000 + count % TOPICS)
            record = {
                "query": f"query {topic}",
                "qid": topic,
                "answer_text": " ".join(
                    rng.choice(("lorem", "ipsum", "dolor")) for _ in range(340)
                ),
                "run_id": run,
                "nuggets": [
                    {
                        "text": f"nugget {n} of topic {topic}, a short fact",
                        "importance": rng.choice(("vital", "okay")),
                        "assignment": rng.choice(labels),
                    }
                    for n in range(NUGGETS)
                ],
            }
            line = json.dumps(record) + "\n"
            out.write(line)
            written += len(line)
            count += 1
    return count


def child(path: str, how: str) -> None:
    from scoring.core.tasks import nuggets

    start = time.process_time()
    if how == "ours":
        answers = nuggets.read_assignments(path)
    else:  # as nuggetizer: every record in memory, then scored
        with open(path, encoding="utf-8") as file:
            records = [json.loads(line) for line in file]
        answers = [
            nuggets.AnswerTally(
                record["run_id"],
                record["qid"],
                nuggets.tally((n["importance"], n["assignment"]) for n in record["nuggets"]),
            )
            for record in records
        ]
    result = nuggets.score(answers)
    seconds = time.process_time() - start
    peak = next(
        int(line.split()[1])
        for line in Path("/proc/self/status").read_text().splitlines()
        if line.startswith("VmHWM:")
    )
    print(len(result.per_topic), seconds, peak)


def measure(path: Path, how: str) -> tuple[int, float, float]:
    """(answers, seconds, peak MiB) of one child process."""
    output = subprocess.run(
        [sys.executable, __file__, "--child", str(path), how],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.split()
    return int(output[0]), float(output[1]), int(output[2]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-nuggets-") as work:
        print(f"{'MB':>5} {'answers':>8}  {'ours':>20}  {'all in memory':>20}  memory  time")
        for megabytes in args.megabytes:
            path = Path(work) / f"assignments-{megabytes}.jsonl"
            write_assignments(path, megabytes)
            answers, our_time, our_peak = measure(path, "ours")
            _, their_time, their_peak = measure(path, "reference")
            print(
                f"{megabytes:>5} {answers:>8}  {our_peak:7.0f} MiB {our_time:7.2f} s"
                f"  {their_peak:7.0f} MiB {their_time:7.2f} s"
                f"  {our_peak / their_peak:6.2f}  {our_time / their_time:4.2f}"
            )
            path.unlink()


if __name__ == "__main__":
    main()
