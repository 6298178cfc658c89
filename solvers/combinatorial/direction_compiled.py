"""When ``direction-bb`` uses its crossing pairs: the choice of the compiled kernel that computes the boxes' bounds
with them (:mod:`~oraclepriv.solvers.combinatorial.direction_kernels`).

The pairs only lift bounds (every bound stays proved either way), so a search without them gives the same answer,
with more boxes. Their matching is chosen per box in a compiled loop; it exists only after numba has compiled it
(seconds, once per installation, numba version and CPU: ``oraclepriv warm`` does it) or loaded it from numba's
cache. The rule follows the other compiled kernels (:mod:`~oraclepriv.solvers.combinatorial.enumerate_compiled`,
whose helpers and constants it shares):

* a kernel already in this process is used in every search from d = :data:`MIN_DIMENSION` on (below it the
  pairs are about even and loading the kernel costs more: docs/solvers/direction-bb.md, section 2);
* otherwise it is loaded from numba's cache when the cache holds it and the call has no time limit or at least
  ``LOAD_MIN_SECONDS`` left, and either d >= :data:`LOAD_DIMENSION` (those searches take seconds) or this
  process's searches without it have taken ``LOAD_AFTER_NUMPY_SECONDS`` (rent or buy, as for the other kernels);
* it is never compiled inside a call: a compilation cannot be stopped (docs/deadlines.md) and costs more than most
  searches. ``oraclepriv warm`` compiles it; Ctrl-C during that is handled as for the other kernels.

The environment variable ``ORACLEPRIV_DIRECTION_COMPILED`` (read at every choice; :data:`mode` overrides it): ``1``
always the pairs (the kernel compiled in the call if need be), ``0`` never, unset or ``auto`` the rule above.
"""

from __future__ import annotations

import logging
import threading
from types import ModuleType
from typing import Any, NamedTuple

from oraclepriv.solvers.combinatorial.enumerate_compiled import (
    LOAD_AFTER_NUMPY_SECONDS,
    LOAD_MIN_SECONDS,
    ctrl_c_survives_llvm_callbacks,
    import_kernels,
    load_from_cache,
    read_switch,
)
from oraclepriv.solvers.runtime.deadline import Deadline

__all__ = ["LOAD_DIMENSION", "MIN_DIMENSION", "MODE_VARIABLE", "Choice", "choose", "mode", "record_search", "warm"]

log = logging.getLogger(__name__)

MODE_VARIABLE = "ORACLEPRIV_DIRECTION_COMPILED"
#: set by a caller (e.g. a benchmark) to "on" / "off" / "auto" to override the environment variable
mode: str | None = None
#: from this dimension on a search uses the pairs when the kernel is in this process
MIN_DIMENSION = 6
#: from this dimension on a call loads the kernel from numba's cache without waiting for earlier searches
LOAD_DIMENSION = 6

_lock = threading.Lock()
_module: ModuleType | None = None
_import_failure: str | None = None
_compile_failure: str | None = None
_search_seconds = 0.0


class Choice(NamedTuple):
    """The kernel module for one search (None: no pairs) and why."""

    kernels: ModuleType | None
    reason: str


def _import() -> ModuleType | None:
    global _module, _import_failure
    with _lock:
        if _module is None and _import_failure is None:
            _module, _import_failure = import_kernels(
                "oraclepriv.solvers.combinatorial.direction_kernels", "direction-bb's crossing pairs"
            )
        return _module


def _signature() -> tuple[Any, ...]:
    from numba import types

    matrix, vector, index, real = types.float64[:, ::1], types.float64[::1], types.int64[::1], types.float64
    ends = (matrix, matrix, vector, vector, real, matrix, vector)  # boxes, the events, the other ends
    pairs = (matrix, vector, vector, index, index, real, types.int64)
    return (*ends, *pairs, vector, vector, vector, real)


def _in_process(module: ModuleType) -> bool:
    return _signature() in module.paired_bounds.overloads


def warm() -> str:
    """Make the kernel ready in this process and in numba's cache: "in process", "loaded" or "compiled".

    Raises
    ------
    ImportError
        When numba is not installed or cannot cache the kernel."""
    module = _import()
    if module is None:
        raise ImportError(f"direction-bb's crossing-pair kernel is unavailable: {_import_failure}")
    if _in_process(module):
        return "in process"
    if load_from_cache(module.paired_bounds, _signature()):
        return "loaded"
    log.debug("direction-bb: compiling the crossing-pair kernel")
    with ctrl_c_survives_llvm_callbacks():
        module.paired_bounds.compile(_signature())
    return "compiled"


def choose(d: int, deadline: Deadline | None) -> Choice:
    """Whether one search of dimension ``d`` uses the crossing pairs (module docstring); loads the kernel when that
    is the choice. ``deadline`` None: no time limit."""
    global _compile_failure
    switch = read_switch(mode, MODE_VARIABLE, "direction_compiled.mode")
    if switch == "off":
        return Choice(None, f"no crossing pairs ({MODE_VARIABLE}=0)")
    if switch == "on":
        module = _import()
        if module is None:
            return Choice(None, f"no crossing pairs ({_import_failure})")
        if _compile_failure is None:
            try:
                return Choice(module, f"crossing pairs ({warm()}: {MODE_VARIABLE}=1)")
            except Exception as error:  # a compiler error: the search runs without the pairs (same answer)
                _compile_failure = repr(error)
        return Choice(None, f"no crossing pairs (compiling the kernel failed in this process: {_compile_failure})")
    if d < MIN_DIMENSION:
        return Choice(None, f"no crossing pairs (d < {MIN_DIMENSION}: the search is quick without them)")
    module = _module
    if module is not None and _in_process(module):
        return Choice(module, "crossing pairs")
    if d < LOAD_DIMENSION and _search_seconds < LOAD_AFTER_NUMPY_SECONDS:
        return Choice(None, "no crossing pairs (loading the kernel would cost more than this process's searches)")
    left = None if deadline is None else deadline.remaining()
    if left is not None and left < LOAD_MIN_SECONDS:
        return Choice(None, f"no crossing pairs (less than {LOAD_MIN_SECONDS:g} s left to load the kernel)")
    module = _import()
    if module is None:
        return Choice(None, f"no crossing pairs ({_import_failure})")
    if load_from_cache(module.paired_bounds, _signature()):
        return Choice(module, "crossing pairs (kernel loaded from numba's cache)")
    return Choice(None, "no crossing pairs (the kernel is not compiled; oraclepriv warm compiles it)")


def record_search(seconds: float) -> None:
    """Count a search made without the pairs toward the load rule."""
    global _search_seconds
    _search_seconds += seconds
