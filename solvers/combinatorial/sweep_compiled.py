"""The choice between the compiled weight pass of ``sweep`` (numba kernels,
:mod:`~oraclepriv.solvers.combinatorial.sweep_kernels`) and its numpy pass (one ``bincount`` per column,
:meth:`~oraclepriv.solvers.combinatorial.sweep.Gains.block_parts`).

Both give the same numbers bit for bit (the kernels' module docstring), so the same answer; only speed differs, and
one cost only the kernels have: they run after numba has compiled them (seconds, once per installation,
numba version and CPU: numba keeps the machine code in its on-disk cache) or loaded them from that cache (about a
second in a process that has not used numba yet, numba's import included). The choice follows the rule of
``enumerate``'s kernels (:mod:`~oraclepriv.solvers.combinatorial.enumerate_compiled`, whose constants it shares):

* only a column cut into blocks needs the pass (more than :data:`~oraclepriv.solvers.combinatorial.sweep.SCAN_MAX`
  points); a smaller call never involves the kernels;
* kernels already in this process are used at every size;
* otherwise they are loaded from numba's cache when it holds them, the call has no time limit or at least
  ``LOAD_MIN_SECONDS`` left, and the load pays: the call is large (:data:`LOAD_MIN_POINT_COLUMNS` points times
  columns cut into blocks, where one numpy pass takes about as long as the load), or this process's numpy passes
  have already taken ``LOAD_AFTER_NUMPY_SECONDS`` (many calls: the rent-or-buy rule of ski rental, which never pays
  more than twice the better choice made in hindsight; A. R. Karlin, M. S. Manasse, L. Rudolph, D. D. Sleator,
  "Competitive snoopy caching");
* kernels not in the cache are compiled in the call only when it has no time limit and this process's numpy passes
  have taken ``COMPILE_AFTER_NUMPY_SECONDS`` (no single call of the pass costs as much as the compilation); else the
  numpy pass answers. ``oraclepriv warm`` (:func:`warm`) compiles them into the cache ahead of time.

The protocol's pass over a call's labels and weights (:func:`~oraclepriv.solvers.combinatorial.sweep_kernels.
signed_reduction`, every class and backend) and its re-scoring of a stump or threshold
(:func:`~oraclepriv.solvers.combinatorial.sweep_kernels.mistaken_weights`) use the kernels only when they are
already in this process
(:func:`loaded`): it never loads or compiles them itself.

A compilation cannot be stopped, so it never happens inside a call with a time limit (docs/deadlines.md); Ctrl-C
during one is handled as for ``enumerate``'s kernels (never lost in llvmlite's callbacks).

The environment variable ``ORACLEPRIV_SWEEP_COMPILED`` (read at every choice; :data:`mode` overrides it): ``1``
always the kernels (compiled in the call if need be), ``0`` never, unset or ``auto`` the rule above. numba is a
dependency of the package; without it (or if its cache has no writable place) the numpy pass answers.
"""

from __future__ import annotations

import logging
import threading
from types import ModuleType
from typing import Any

from oraclepriv.solvers.combinatorial.enumerate_compiled import (
    COMPILE_AFTER_NUMPY_SECONDS,
    LOAD_AFTER_NUMPY_SECONDS,
    LOAD_MIN_SECONDS,
    Choice,
    ctrl_c_survives_llvm_callbacks,
    import_kernels,
    load_from_cache,
    read_switch,
)
from oraclepriv.solvers.runtime.deadline import Deadline

__all__ = [
    "ENTRY_POINTS",
    "LOAD_MIN_POINT_COLUMNS",
    "MODE_VARIABLE",
    "Choice",
    "choose",
    "current_mode",
    "loaded",
    "mode",
    "record_numpy_pass",
    "warm",
]

log = logging.getLogger(__name__)

#: the environment variable that switches the kernels: "1" on, "0" off, unset or "auto" the default
MODE_VARIABLE = "ORACLEPRIV_SWEEP_COMPILED"

#: the switch for this process ("on", "off" or "auto"); None: read :data:`MODE_VARIABLE` at every choice
mode: str | None = None

#: points times columns cut into blocks from which one call loads the kernels from numba's cache: a numpy pass of
#: that size takes about as long as the load
LOAD_MIN_POINT_COLUMNS = 300_000_000

#: the kernels: the weight pass (block parts of two columns, of one column; the blocks to scan), the protocol's pass
#: over labels and weights, and its re-scoring of a stump
ENTRY_POINTS = ("block_parts_pair", "block_parts_one", "blocks_to_scan", "signed_reduction", "mistaken_weights")

_lock = threading.Lock()
_module: ModuleType | None = None
_import_failure: str | None = None
_numpy_seconds = 0.0
_ready = False  # every kernel is compiled or loaded in this process
_compile_failure: str | None = None  # how compiling the kernels failed in this process (then never tried again)


def current_mode() -> str:
    """ "on", "off" or "auto": :data:`mode` if set, else from :data:`MODE_VARIABLE`.

    Raises
    ------
    ValueError
        For a value of the variable other than 0, 1 or auto."""
    return read_switch(mode, MODE_VARIABLE, "sweep_compiled.mode")


def _import() -> ModuleType | None:
    """The kernel module (importing numba on the first call), or None when numba is missing or unusable."""
    global _module, _import_failure
    with _lock:
        if _module is None and _import_failure is None:
            _module, _import_failure = import_kernels(
                "oraclepriv.solvers.combinatorial.sweep_kernels", "sweep's compiled weight pass"
            )
        return _module


def _forget_import() -> None:
    """Forget the import (and its failure) so that the next choice imports again (for tests)."""
    global _module, _import_failure, _ready
    with _lock:
        _module, _import_failure, _ready = None, None, False


_SIGNATURES: dict[str, tuple[tuple[Any, ...], ...]] = {}


def _signatures(entry_point: str) -> tuple[tuple[Any, ...], ...]:
    """The signatures each kernel is compiled for (the argument types its callers pass: int32 bins, float64
    magnitudes and parts, int8 labels, all contiguous; :func:`signed_reduction`'s labels as int8 or int64)."""
    if entry_point not in _SIGNATURES:
        from numba import types

        bins, values, small = types.int32[::1], types.float64[::1], types.int8[::1]
        if entry_point == "block_parts_pair":
            _SIGNATURES[entry_point] = ((bins, bins, values, small, values, values),)
        elif entry_point == "block_parts_one":
            _SIGNATURES[entry_point] = ((bins, values, small, values),)
        elif entry_point == "blocks_to_scan":
            indices, flag = types.intp[::1], types.boolean
            _SIGNATURES[entry_point] = (
                (values, indices, indices, flag, flag, types.float64, types.float64, values, indices),
            )
        elif entry_point == "mistaken_weights":
            _SIGNATURES[entry_point] = ((values, types.float64, types.int64, small, values, values),)
        elif entry_point == "signed_reduction":
            _SIGNATURES[entry_point] = tuple(
                (labels, values, small, small, values) for labels in (types.int8[::1], types.int64[::1])
            )
        else:
            raise ValueError(f"entry_point must be one of {ENTRY_POINTS}; got {entry_point!r}")
    return _SIGNATURES[entry_point]


def _in_process(module: ModuleType) -> bool:
    return all(signature in getattr(module, name).overloads for name in ENTRY_POINTS for signature in _signatures(name))


def loaded() -> ModuleType | None:
    """The kernel module if both kernels are compiled or loaded in this process (using them costs nothing more)
    and the kernels are not switched off, else None; never imports numba."""
    global _ready
    module = _module
    if module is None or current_mode() == "off":
        return None
    if not _ready:  # once in this process, the kernels stay (numba never drops a compiled signature)
        _ready = _in_process(module)
    return module if _ready else None


def _load_from_cache(module: ModuleType) -> bool:
    """Load every kernel from numba's on-disk cache if it holds them all (True), without ever compiling one
    (:func:`~oraclepriv.solvers.combinatorial.enumerate_compiled.load_from_cache`)."""
    return all(
        load_from_cache(getattr(module, name), signature) for name in ENTRY_POINTS for signature in _signatures(name)
    )


def _compile(module: ModuleType) -> None:
    """Compile both kernels for their signatures (numba saves them in its cache); Ctrl-C is never lost in
    llvmlite's callbacks (``enumerate_compiled``'s guard)."""
    with ctrl_c_survives_llvm_callbacks():
        for name in ENTRY_POINTS:
            for signature in _signatures(name):
                getattr(module, name).compile(signature)


def warm() -> str:
    """Make the kernels ready in this process and in numba's cache: "in process", "loaded" (from the cache) or
    "compiled" (and saved to the cache).

    Raises
    ------
    ImportError
        When numba is not installed or cannot cache the kernels."""
    module = _import()
    if module is None:
        raise ImportError(f"the compiled weight pass of sweep is unavailable: {_import_failure}")
    if _in_process(module):
        return "in process"
    if _load_from_cache(module):
        return "loaded"
    log.debug("sweep: compiling the weight-pass kernels")
    _compile(module)
    return "compiled"


def choose(point_columns: int, deadline: Deadline | None) -> Choice:
    """The weight pass for one call whose columns cut into blocks hold ``point_columns`` points in all (module
    docstring): loads or compiles the kernels when that is the choice. ``deadline`` None: no time limit."""
    switch = current_mode()
    if switch == "off":
        return Choice(None, f"numpy ({MODE_VARIABLE}=0)")
    if point_columns == 0:
        return Choice(None, "numpy (no column is cut into blocks: each is scanned whole)")
    module = loaded()
    if module is not None:
        return Choice(module, "compiled")
    if _compile_failure is not None:
        return Choice(None, f"numpy (compiling the kernels failed in this process: {_compile_failure})")
    if switch == "on":
        module = _import()
        if module is None:
            return Choice(None, f"numpy ({_import_failure})")
        try:
            return Choice(module, f"compiled ({warm()}: {MODE_VARIABLE}=1)")
        except Exception as error:  # a compiler error: the numpy pass answers (the same numbers)
            return Choice(None, f"numpy (compiling the kernels failed in this process: {_failed(error)})")
    spent = _numpy_seconds
    if point_columns < LOAD_MIN_POINT_COLUMNS and spent < LOAD_AFTER_NUMPY_SECONDS:
        return Choice(None, "numpy (loading the kernels would cost more than this process's passes so far)")
    left = None if deadline is None else deadline.remaining()
    if left is not None and left < LOAD_MIN_SECONDS:
        return Choice(None, f"numpy (less than {LOAD_MIN_SECONDS:g} s left to load the kernels)")
    module = _import()
    if module is None:
        return Choice(None, f"numpy ({_import_failure})")
    if _load_from_cache(module):
        return Choice(module, "compiled (loaded from numba's cache)")
    if left is not None:
        return Choice(
            None,
            "numpy (the kernels are not compiled, and a call with a time limit never compiles them: oraclepriv warm does)",
        )
    if spent < COMPILE_AFTER_NUMPY_SECONDS:
        return Choice(
            None,
            "numpy (the kernels are not compiled, and compiling them would cost more than this process's passes so "
            "far: oraclepriv warm does)",
        )
    log.info("sweep: compiling the weight-pass kernels (once per installation; oraclepriv warm does it ahead)")
    try:
        _compile(module)
    except Exception as error:  # a compiler error: the numpy pass answers (the same numbers)
        return Choice(None, f"numpy (compiling the kernels failed in this process: {_failed(error)})")
    return Choice(module, "compiled (compiled in this call: no time limit)")


def _failed(error: Exception) -> str:
    """Remember that compiling the kernels failed (no call tries again in this process) and say how, once."""
    global _compile_failure
    _compile_failure = repr(error)
    log.warning("sweep: compiling the weight-pass kernels failed, the numpy pass answers: %s", _compile_failure)
    return _compile_failure


def record_numpy_pass(seconds: float) -> None:
    """Count ``seconds`` of a numpy weight pass towards loading or compiling the kernels (:func:`choose`)."""
    global _numpy_seconds
    _numpy_seconds += seconds
