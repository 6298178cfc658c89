"""The command line's launcher: Ctrl-C while the command line is still importing exits 130 without a traceback,
and ``import oraclepriv`` stays light (the guard only helps if the package's own import loads nothing heavy)."""

from __future__ import annotations

import subprocess
import sys

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


#: the launcher, entered as the console script enters it, with a Ctrl-C that arrives while the command line is
#: importing numpy (an import hook sends the process SIGINT the moment numpy is looked up)
LAUNCH = """
import os, signal, sys

class InterruptOnNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptOnNumpy())
from oraclepriv.__main__ import main
sys.argv = ["oraclepriv", "--help"]
main()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_the_command_line_imports_exits_130_without_a_traceback():
    done = subprocess.run([sys.executable, "-c", LAUNCH], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip() == "oraclepriv: interrupted"
    assert "Usage" not in done.stdout  # interrupted before the help was printed
