"""The command line's launcher: ``python -m oraclepriv`` and the ``oraclepriv`` script both start here.

The command line imports numpy, scipy, scikit-learn and typer before it can handle anything; a Ctrl-C
during those imports exits 130 with one line on stderr, like a Ctrl-C during a command, instead of a
traceback. ``import oraclepriv`` itself loads nothing heavy, so the guard covers all but the interpreter's
own start.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the ``oraclepriv`` command line (exit code 130 on Ctrl-C, also during its imports)."""
    try:
        from oraclepriv.cli.app import app
    except KeyboardInterrupt:
        sys.stderr.write("oraclepriv: interrupted\n")
        raise SystemExit(130) from None
    app(prog_name="oraclepriv")


if __name__ == "__main__":
    main()
