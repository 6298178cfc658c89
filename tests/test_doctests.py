"""The numpydoc ``Examples`` sections run: every module of the package whose docstrings hold
``>>>`` examples is doctested, so an example that stops matching the code fails the suite."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import oraclepriv.solvers
import pytest

import oraclepriv


def _modules_with_examples() -> list[str]:
    names = []
    found = [
        *pkgutil.walk_packages(oraclepriv.__path__, "oraclepriv."),
        *pkgutil.walk_packages(oraclepriv.solvers.__path__, "oraclepriv.solvers."),
    ]  # installed from solvers/
    for info in found:
        if info.name.startswith("oraclepriv.cli"):
            continue  # command modules: their examples are the CLI's help text, tested through typer
        spec = importlib.util.find_spec(info.name)
        origin = getattr(spec, "origin", None)
        if origin and origin.endswith(".py") and ">>> " in open(origin, encoding="utf-8").read():
            names.append(info.name)
    return sorted(set(names))


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert "oraclepriv.public_data" in MODULES and "oraclepriv.solvers.combinatorial.sweep" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, result
