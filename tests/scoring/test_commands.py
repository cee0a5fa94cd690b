"""manage.py trec_eval, end to end in a subprocess (Django's argv handling included)."""

import io
import subprocess
import sys
from pathlib import Path

from scoring.core.trec_eval import main

ROOT = Path(__file__).resolve().parents[2]


def _manage(*arguments: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "manage.py", "trec_eval", *map(str, arguments)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def test_command_prints_what_trec_eval_main_prints(tmp_path):
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "run").write_text("1 Q0 b 1 2 t\n1 Q0 a 2 1 t\n")
    arguments = ["-q", "-M1", "-mP.1,2", "-mrelstring.3", tmp_path / "qrels", tmp_path / "run"]
    out = io.StringIO()
    assert main([str(argument) for argument in arguments], out, io.StringIO()) == 0
    completed = _manage(*arguments)
    assert (completed.returncode, completed.stdout) == (0, out.getvalue())


def test_command_errors_exit_2_with_one_line(tmp_path):
    completed = _manage("-m", "nosuch", tmp_path / "qrels", tmp_path / "run")
    assert completed.returncode == 2
    assert completed.stderr == "trec_eval: unknown measure 'nosuch'\n"


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """`trec_eval ... | head -1`: no error message, no traceback, status 0."""
    (tmp_path / "qrels").write_text(
        "".join(f"{t} 0 d{i} 1\n" for t in range(300) for i in range(3))
    )
    (tmp_path / "run").write_text(
        "".join(f"{t} Q0 d{i} 1 {i} r\n" for t in range(300) for i in range(3))
    )
    pipeline = (
        f"{sys.executable} manage.py trec_eval -q -m all_trec --format tsv {tmp_path}/qrels {tmp_path}/run"
        " | head -1; exit ${PIPESTATUS[0]}"
    )
    completed = subprocess.run(["bash", "-c", pipeline], cwd=ROOT, capture_output=True, text=True)
    assert completed.stdout.startswith("run\trun_id")
    assert completed.stderr == ""
    assert completed.returncode == 0
