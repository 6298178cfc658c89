"""The switch between the compiled sweeps of ``enumerate`` (numba kernels,
:mod:`~oraclepriv.solvers.combinatorial.enumerate_kernels`) and its numpy sweeps
(:mod:`~oraclepriv.solvers.combinatorial.enumerate_2d`, :mod:`~oraclepriv.solvers.combinatorial.enumerate_3d`).

Both give the same optimum: the kernels decide every sign they can prove with Shewchuk's float filters and hand
every pivot or pair holding a sign they cannot prove back to the numpy sweep, whose predicates fall back to
rational arithmetic. The kernels are used when numba imports and :data:`enabled` is true, which the environment
variable ``ORACLEPRIV_ENUMERATE_COMPILED=1`` sets for a process (the ``compiled`` extra installs numba). They are
off by default: the first call of an installation compiles them (seconds in d = 2, minutes in d = 3 on a loaded
2-core machine), and a compilation cannot be stopped, so it would overrun the call's time limit (the deadline
contract, docs/deadlines.md). The compiled functions are cached on disk (``cache=True``): after the first
compilation a process pays only for loading the cache.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

__all__ = ["enabled", "kernels"]

#: use the compiled kernels (when numba is installed): opt-in, ORACLEPRIV_ENUMERATE_COMPILED=1 (module docstring)
enabled: bool = os.environ.get("ORACLEPRIV_ENUMERATE_COMPILED", "0") == "1"


@functools.cache
def _import() -> ModuleType | None:
    try:
        import numba  # noqa: F401
    except ImportError:  # numba is not installed: the numpy sweeps
        return None
    return importlib.import_module("oraclepriv.solvers.combinatorial.enumerate_kernels")


def kernels() -> ModuleType | None:
    """The compiled kernel module, or None when numba is not installed or :data:`enabled` is false."""
    return _import() if enabled else None
