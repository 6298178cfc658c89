"""The command line's launcher: Ctrl-C while the command line is still importing exits 130 without a traceback,
and ``import oraclepriv`` stays light (the guard only helps if the package's own import loads nothing heavy)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest


def test_import_oraclepriv_loads_neither_numpy_nor_scikit_learn():
    code = "import sys, oraclepriv; print(sorted(m for m in ('numpy', 'sklearn', 'scipy') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_names_resolve_on_first_use_and_unknown_names_raise():
    import oraclepriv

    assert set(oraclepriv.__all__) == {*oraclepriv._HOMES, "__version__"}
    for name in oraclepriv.__all__:
        assert getattr(oraclepriv, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        oraclepriv.no_such_name  # noqa: B018


def _interrupted_during_imports(delay: float) -> subprocess.CompletedProcess:
    process = subprocess.Popen(
        [sys.executable, "-m", "oraclepriv", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_the_command_line_imports_exits_130_without_a_traceback():
    # the command line's imports (numpy, scipy, scikit-learn, typer) take most of a second; 0.15 s after the
    # start the process is inside them
    done = _interrupted_during_imports(0.15)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "interrupted" in done.stderr
