"""``oraclepriv warm`` (``oraclepriv/cli/warm.py``): it makes both compiled sweeps of ``enumerate`` and the weight
pass of ``sweep`` ready in numba's cache and says what it did per kernel, exits 2 with one line when numba is
missing, and a Ctrl-C during a compilation exits 130 without a traceback and leaves no cache entry of that kernel
behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from oraclepriv.solvers.combinatorial import enumerate_compiled, sweep_compiled
from typer.testing import CliRunner

from oraclepriv.cli import app

runner = CliRunner()
numba_only = pytest.mark.skipif(enumerate_compiled._import() is None, reason="numba is not installed")


@numba_only
def test_warm_readies_every_kernel_and_says_how():
    result = runner.invoke(app, ["warm", "--quiet"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 4
    for dimension, line in zip(enumerate_compiled.DIMENSIONS, lines):
        assert re.fullmatch(rf"enumerate {dimension}-D kernel: (in process|loaded|compiled) in \d+\.\d s", line), line
        assert enumerate_compiled.loaded(dimension) is not None
    assert re.fullmatch(r"sweep weight-pass kernels: (in process|loaded|compiled) in \d+\.\d s", lines[2]), lines[2]
    assert sweep_compiled.loaded() is not None
    assert re.fullmatch(r"direction-bb crossing-pair kernel: (in process|loaded|compiled) in \d+\.\d s", lines[3]), (
        lines[3]
    )
    again = runner.invoke(app, ["warm", "--quiet"])
    assert again.stdout.count(": in process in") == 4  # nothing left to do


def test_warm_without_numba_is_one_line_and_exit_2(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    monkeypatch.delitem(sys.modules, "oraclepriv.solvers.combinatorial.enumerate_kernels", raising=False)
    enumerate_compiled._forget_import()
    try:
        result = runner.invoke(app, ["warm", "--quiet"])
    finally:
        enumerate_compiled._forget_import()
    assert result.exit_code == 2
    assert result.stderr.startswith("error: the compiled sweeps of enumerate are unavailable: numba is not installed")
    assert "Traceback" not in result.output


def interrupted_warm(cache: Path, started: str, wait: float) -> tuple[int, str, str]:
    """``oraclepriv warm`` with a fresh numba cache in ``cache``, sent Ctrl-C ``wait`` seconds after its debug log
    says ``started``: (exit code, stdout, stderr)."""
    env = {
        k: v for k, v in os.environ.items() if k not in (enumerate_compiled.MODE_VARIABLE, sweep_compiled.MODE_VARIABLE)
    }
    env["NUMBA_CACHE_DIR"] = str(cache)  # a fresh cache: warm compiles
    child = subprocess.Popen(
        [sys.executable, "-m", "oraclepriv", "--verbose", "warm", "--quiet"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # Python's handler even under `cmd &`
    )
    seen = []
    try:
        assert child.stderr is not None
        for line in child.stderr:  # the debug log says when the compilation starts
            seen.append(line)
            if started in line:
                break
        time.sleep(wait)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, stdout, "".join(seen) + stderr


@numba_only
def test_ctrl_c_during_a_compilation_exits_130_and_leaves_no_cache_entry(tmp_path):
    code, stdout, stderr = interrupted_warm(tmp_path, "compiling the 2-D kernel", 0.5)
    assert code == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    assert stdout == ""  # the 2-D kernel never finished
    assert not any(tmp_path.rglob("*.nbc")) and not any(tmp_path.rglob("*.nbi"))


@pytest.mark.slow
@numba_only
def test_ctrl_c_during_the_weight_pass_compilation_exits_130(tmp_path):
    """The weight pass compiles last, under the same guard: the enumerate kernels are said and cached, it is not."""
    code, stdout, stderr = interrupted_warm(tmp_path, "compiling the weight-pass kernels", 0.0)
    assert code == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    assert [line.split(":")[0] for line in stdout.splitlines()] == ["enumerate 2-D kernel", "enumerate 3-D kernel"]
    entries = [path.name for path in tmp_path.rglob("*.nb[ci]")]
    assert any(name.startswith("enumerate_kernels") for name in entries)
    assert not any(name.startswith("sweep_kernels.block_parts_one") for name in entries), entries
