"""wb-trec-eval and wb-sample-eval: the manage.py commands' bytes, without Django at start-up."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scoring.core.test_sample_eval import REFERENCE as SAMPLE_EVAL_REFERENCE
from tests.scoring.core.test_sample_eval import deep_case
from tests.scoring.core.test_trec_eval import CONFORMANCE, _conformance_cases
from tests.scoring.core.test_trec_eval_aspects import REFERENCE as ASPECTS_REFERENCE
from tests.scoring.helpers import reference_cases

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _script(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in {BIN}: run `make .venv/.installed`")
    return str(path)


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(command, cwd=cwd, capture_output=True, check=False)


def _both(program: str, arguments: str, cwd: Path) -> tuple[bytes, bytes]:
    """stdout of wb-<program> and of manage.py <program> on the same arguments."""
    script = _run([_script(f"wb-{program.replace('_', '-')}"), *shlex.split(arguments)], cwd)
    managed = _run([sys.executable, str(ROOT / "manage.py"), program, *shlex.split(arguments)], cwd)
    assert (script.returncode, script.stderr) == (0, b"")
    assert (managed.returncode, managed.stderr) == (0, b"")
    return script.stdout, managed.stdout


@pytest.mark.parametrize(("arguments", "expected"), _conformance_cases())
def test_wb_trec_eval_prints_the_bytes_of_manage_py_trec_eval(arguments, expected):
    script, managed = _both("trec_eval", arguments, CONFORMANCE)
    assert script == managed == (CONFORMANCE / expected).read_bytes()


@pytest.mark.parametrize(("arguments", "expected"), reference_cases(ASPECTS_REFERENCE))
def test_wb_trec_eval_reads_the_aspect_formats(arguments, expected):
    script = _run([_script("wb-trec-eval"), *shlex.split(arguments)], ASPECTS_REFERENCE)
    assert script.stdout == (ASPECTS_REFERENCE / expected).read_bytes()


@pytest.mark.parametrize(("arguments", "expected"), reference_cases(SAMPLE_EVAL_REFERENCE))
def test_wb_sample_eval_prints_the_bytes_of_manage_py_sample_eval(arguments, expected, tmp_path):
    for path in SAMPLE_EVAL_REFERENCE.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    qrels, run = deep_case()
    (tmp_path / "deep.qrels").write_text(qrels)
    (tmp_path / "deep.run").write_text(run)
    script, managed = _both("sample_eval", arguments, tmp_path)
    assert script == managed == (SAMPLE_EVAL_REFERENCE / expected).read_bytes()


@pytest.mark.parametrize(
    ("program", "qrels", "run", "message"),
    [
        (
            "wb-trec-eval",
            "1 0 a 1\n1 0 b x\n",
            "1 Q0 a 1 1.0 r\n",
            "trec_eval: {qrels}:2: relevance 'x' is not an integer\n",
        ),
        (
            "wb-trec-eval",
            "1 0 a 1\n",
            "1 Q0 a 1 1.0 r\n1 Q0 b 2 high r\n",
            "trec_eval: {run}:2: score 'high' is not a number\n",
        ),
        (
            "wb-trec-eval",
            "1 0 a 1\n1 0 b 1000000000000000000\n",
            "1 Q0 a 1 1.0 r\n",
            "trec_eval: {qrels}:2: relevance 1000000000000000000 is out of range: "
            "labels are integers from -2147483648 to 2147483647\n",
        ),
        (
            "wb-sample-eval",
            "1 0 a 1 1\n1 0 b 1\n",
            "1 Q0 a 1 1.0 r\n",
            "sample_eval: {qrels}:2: expected 5 columns (topic iter docno stratum rel), found 4\n",
        ),
        (
            "wb-sample-eval",
            "1 0 a 1 1\n",
            "1 Q0 a 1 1.0 r\n1 Q0 a 2 0.5 r\n",
            "sample_eval: {run}:2: docno 'a' appears twice in topic '1' (first on line 1)\n",
        ),
    ],
)
def test_bad_input_exits_2_naming_file_line_and_reason(program, qrels, run, message, tmp_path):
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    completed = _run([_script(program), "qrels", "run"], tmp_path)
    assert completed.returncode == 2
    assert completed.stdout == b""
    assert completed.stderr.decode() == message.format(qrels="qrels", run="run")


def test_importing_the_console_scripts_loads_no_django_pandas_or_pyarrow(tmp_path):
    """Nor does scoring small plain files: start-up is the job of a command people loop over."""
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.5 r\n1 Q0 b 2 1.5 r\n2 Q0 c 1 1.0 r\n")
    code = (
        "import io, sys\n"
        "import scoring.core.console, scoring.core.trec_eval, scoring.core.sample_eval\n"
        "heavy = ('django', 'pandas', 'pyarrow')\n"
        "loaded = [name for name in heavy if name in sys.modules]\n"
        "assert not loaded, f'importing the scorer loaded {loaded}'\n"
        "out = io.StringIO()\n"
        "assert scoring.core.trec_eval.main(['-m', 'all_trec', 'qrels', 'run'], out, sys.stderr) == 0\n"
        "assert 'map' in out.getvalue()\n"
        "loaded = [name for name in heavy if name in sys.modules]\n"
        "assert not loaded, f'scoring plain files loaded {loaded}'\n"
    )
    completed = _run([sys.executable, "-c", code], tmp_path)
    assert completed.returncode == 0, completed.stderr.decode()
