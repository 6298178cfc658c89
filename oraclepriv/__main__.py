"""``python -m oraclepriv`` runs the command line."""

from oraclepriv.cli import app

app(prog_name="oraclepriv")
