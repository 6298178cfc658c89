"""The ``oraclepriv`` command line (typer): :mod:`~oraclepriv.cli.app` assembles one module per command group.

    oraclepriv erm DATA.csv --hypothesis-class halfspace [--backend B] [--time-limit S] [--json]
    oraclepriv learn PRIVATE.csv --public PUBLIC.csv --algorithm rrspm --epsilon 1 [--json] [--out MODEL.json]
    oraclepriv predict MODEL.json DATA.csv [--out PRED.csv]
    oraclepriv score MODEL.json DATA.csv [--json]
    oraclepriv demo
    oraclepriv audit rrspm|subsample|public-cover [--runs N]
    oraclepriv bench oracles|mip|learners|ppm [--quick] [--out FILE]
    oraclepriv instances build|check|list|export-mps
    oraclepriv experiment ppm-curves|rrspm-tradeoff|robust-tradeoff|cover-baseline|oracle-cost --out DIR [--quick]
    oraclepriv verify instance|suite

Errors in the input (bad CSV, NaN, labels outside {0,1}, unknown class/backend, unusable output paths,
usage errors, ...) are printed to stderr as one line naming the argument and the value, with exit code 2,
before any work starts. Ctrl-C exits 130, SIGTERM 143; a long command's output folder is then marked PARTIAL.
"""

from oraclepriv.cli.app import app, main

__all__ = ["app", "main"]
