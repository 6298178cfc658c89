"""The choice between the compiled sweeps of ``enumerate`` (numba kernels,
:mod:`~oraclepriv.solvers.combinatorial.enumerate_kernels`) and its numpy sweeps
(:mod:`~oraclepriv.solvers.combinatorial.enumerate_2d`, :mod:`~oraclepriv.solvers.combinatorial.enumerate_3d`).

Both give the same optimum: the kernels decide every sign they can prove with Shewchuk's float filters and hand
every pivot or pair holding a sign they cannot prove back to the numpy sweep, whose predicates fall back to
rational arithmetic. Only speed differs, and one cost that only the kernels have: a kernel runs only after numba
has compiled it (seconds, once per installation, numba source and CPU: numba keeps the machine code in its on-disk
cache) or loaded it from that cache (a fraction of a second, once per process). A compilation cannot be stopped,
so it must never happen inside a call with a time limit (the deadline contract, docs/deadlines.md).

The environment variable ``ORACLEPRIV_ENUMERATE_COMPILED`` (read at every choice; :data:`mode` overrides it):

* ``1``: always the kernels, compiled in the call if need be;
* ``0``: never;
* unset or ``auto``, the default: the kernels wherever they cannot make a call overrun its limit, and where they
  repay their cost. A kernel already in this process is used at every size. Otherwise it is loaded when numba's
  cache holds it for this numba version, this source file and this CPU (numba checks all three), the call has no
  limit or at least :data:`LOAD_MIN_SECONDS` left, and the load pays: the call is large
  (:data:`LOAD_MIN_POINTS` distinct points, where the numpy sweep takes about as long as loading), or this
  process's numpy sweeps of that dimension have already taken :data:`LOAD_AFTER_NUMPY_SECONDS` (many small calls:
  the rent-or-buy rule of ski rental, which never pays more than twice the better of the two choices made in
  hindsight; A. R. Karlin, M. S. Manasse, L. Rudolph, D. D. Sleator, "Competitive snoopy caching"). A kernel that is not in the cache is compiled in the call only when the call
  has no time limit and, by the same rule, :data:`COMPILE_MIN_POINTS` or :data:`COMPILE_AFTER_NUMPY_SECONDS`;
  otherwise the numpy sweep answers. ``oraclepriv warm`` (:func:`warm`) compiles both kernels into the cache ahead
  of time; CI runs it before the tests.

numba is a dependency of the package; without it (or if its cache has no writable place) the numpy sweeps answer.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any, NamedTuple

from oraclepriv.solvers.runtime.deadline import Deadline

__all__ = [
    "COMPILE_AFTER_NUMPY_SECONDS",
    "COMPILE_MIN_POINTS",
    "DIMENSIONS",
    "LOAD_AFTER_NUMPY_SECONDS",
    "LOAD_MIN_POINTS",
    "LOAD_MIN_SECONDS",
    "MODE_VARIABLE",
    "Choice",
    "choose",
    "ctrl_c_survives_llvm_callbacks",
    "current_mode",
    "import_kernels",
    "kernels",
    "load_from_cache",
    "loaded",
    "mode",
    "read_switch",
    "record_numpy_sweep",
    "warm",
]

log = logging.getLogger(__name__)

#: the environment variable that switches the kernels: "1" on, "0" off, unset or "auto" the default
MODE_VARIABLE = "ORACLEPRIV_ENUMERATE_COMPILED"
_MODES = {"1": "on", "0": "off", "": "auto", "auto": "auto"}

#: the switch for this process ("on", "off" or "auto"); None: read :data:`MODE_VARIABLE` at every choice
mode: str | None = None

#: the dimensions with a kernel: the pivot sweep (2) and the axis sweep (3)
DIMENSIONS = (2, 3)

#: distinct points from which a kernel is loaded from numba's cache: loading (numba's import included) costs about a
#: second once per process, about what the numpy sweep takes at these sizes (the kernel, a few hundredths of that)
LOAD_MIN_POINTS = {2: 1000, 3: 200}

#: seconds of this process's numpy sweeps (of one dimension) after which its kernel is loaded at any size
LOAD_AFTER_NUMPY_SECONDS = 1.0

#: time left (seconds) that a call with a limit needs for a kernel to be loaded in it
LOAD_MIN_SECONDS = 2.0

#: distinct points from which a call with no time limit compiles a kernel that is not in the cache: there the numpy
#: sweep takes about as long as the compilation
COMPILE_MIN_POINTS = {2: 5000, 3: 400}

#: seconds of this process's numpy sweeps (of one dimension) after which a call with no time limit compiles its kernel
COMPILE_AFTER_NUMPY_SECONDS = 10.0

_ENTRY_POINTS = {2: "pivot_values_2d", 3: "axis_values_3d"}
_lock = threading.Lock()
_module: ModuleType | None = None
_import_failure: str | None = None
_numpy_seconds = dict.fromkeys(DIMENSIONS, 0.0)


class Choice(NamedTuple):
    """The sweep a call uses: ``kernels`` (the kernel module, or None for the numpy sweep) and why (``reason``,
    recorded in the answer's details as ``sweep``)."""

    kernels: ModuleType | None
    reason: str


def current_mode() -> str:
    """ "on", "off" or "auto": :data:`mode` if set, else from :data:`MODE_VARIABLE`.

    Raises
    ------
    ValueError
        For a value of the variable other than 0, 1 or auto."""
    return read_switch(mode, MODE_VARIABLE, "enumerate_compiled.mode")


def read_switch(override: str | None, variable: str, override_name: str) -> str:
    """ "on", "off" or "auto": ``override`` (a module's ``mode``, named ``override_name`` in errors) if set, else
    from the environment variable ``variable`` (1 on, 0 off, unset or auto the default); the switch of every
    family of kernels.

    Raises
    ------
    ValueError
        For an override other than on, off, auto or None, or a value of the variable other than 0, 1 or auto."""
    if override is not None:
        if override not in ("on", "off", "auto"):
            raise ValueError(f"{override_name} must be 'on', 'off', 'auto' or None; got {override!r}")
        return override
    value = os.environ.get(variable, "").strip().lower()
    if value not in _MODES:
        raise ValueError(f"{variable} must be 0, 1 or auto; got {os.environ[variable]!r}")
    return _MODES[value]


def import_kernels(module_name: str, what: str) -> tuple[ModuleType | None, str | None]:
    """Import the kernel module ``module_name`` (and numba with it): (the module, None), or (None, why not) when
    numba is not installed or finds no writable place for its cache (then logged as a warning: ``what`` is off)."""
    try:
        return importlib.import_module(module_name), None
    except ImportError as error:  # numba is not installed
        return None, f"numba is not installed ({error})"
    except RuntimeError as error:  # numba finds no writable place for its cache
        failure = f"numba cannot cache the kernels ({error})"
        log.warning("%s is off: %s", what, failure)
        return None, failure


def _import() -> ModuleType | None:
    """The kernel module (importing numba on the first call), or None when numba is missing or unusable."""
    global _module, _import_failure
    with _lock:
        if _module is None and _import_failure is None:
            _module, _import_failure = import_kernels(
                "oraclepriv.solvers.combinatorial.enumerate_kernels", "enumerate's compiled sweep"
            )
        return _module


def _forget_import() -> None:
    """Forget the import (and its failure) so that the next choice imports again (for tests)."""
    global _module, _import_failure
    with _lock:
        _module, _import_failure = None, None


def kernels() -> ModuleType | None:
    """The kernel module, or None when numba is not installed or the kernels are switched off. It neither loads
    nor compiles a kernel: :func:`choose` decides that per call."""
    return None if current_mode() == "off" else _import()


def _signature(dimension: int) -> tuple[Any, ...]:
    """The one signature each entry point is compiled for (the argument types its callers pass)."""
    from numba import types

    points, values, indices = types.float64[:, ::1], types.float64[::1], types.int64[::1]
    if dimension == 2:  # pivot_values_2d(P, G, pivots, exact_floats, values, unsure)
        return (points, values, indices, types.boolean, values, types.boolean[::1])
    if dimension == 3:  # axis_values_3d(P, G, I, J, exact_floats, values, status)
        return (points, values, indices, indices, types.boolean, values, types.int8[::1])
    raise ValueError(f"dimension must be one of {DIMENSIONS}; got {dimension!r}")


def _dispatcher(module: ModuleType, dimension: int) -> Any:
    return getattr(module, _ENTRY_POINTS[dimension])


def loaded(dimension: int) -> ModuleType | None:
    """The kernel module if the kernel of ``dimension`` is compiled or loaded in this process (using it costs
    nothing more) and the kernels are not switched off, else None; never imports numba."""
    module = _module
    if module is None or current_mode() == "off":
        return None
    return module if _signature(dimension) in _dispatcher(module, dimension).overloads else None


def _load_from_cache(module: ModuleType, dimension: int) -> bool:
    """Load the kernel from numba's on-disk cache if it holds it (True), without ever compiling it
    (:func:`load_from_cache`)."""
    return load_from_cache(_dispatcher(module, dimension), _signature(dimension))


def load_from_cache(dispatcher: Any, signature: tuple[Any, ...]) -> bool:
    """Make ``dispatcher`` (a numba ``@njit(cache=True)`` function) hold its machine code for ``signature``: True
    when it already does or numba's on-disk cache holds it (then loaded), False otherwise; never compiles.

    numba's cache keys each entry on the numba version, the defining file's modification time and size, the
    signature and the CPU; ``Dispatcher.compile`` looks there before it compiles, and this is its look-up and
    registration alone (numba's internals, hence the pinned numba version). An unreadable entry counts as absent."""
    if signature in dispatcher.overloads:
        return True
    try:
        result = dispatcher._cache.load_overload(signature, dispatcher.targetctx)
        if result is None:
            return False
        dispatcher.targetctx.insert_user_function(result.entry_point, result.fndesc, [result.library])
        dispatcher.add_overload(result)
    except Exception as error:  # an unreadable cache entry is a cold cache
        log.debug("numba's cache entry of %s for %s could not be loaded: %r", dispatcher, signature, error)
        return False
    return True


#: llvmlite's bindings: its ctypes callbacks (an exception raised in one is printed, "Exception ignored ...", and
#: dropped) and the constructors of its LLVM objects (one interrupted half-way fails again in its finalizer)
_BINDING_FILES = os.path.join("llvmlite", "binding") + os.sep


@contextlib.contextmanager
def ctrl_c_survives_llvm_callbacks() -> Iterator[None]:
    """Ctrl-C during a compilation always ends it with KeyboardInterrupt.

    llvmlite calls back into Python (ctypes) while it emits the object code, and frees its LLVM objects in
    finalizers (``__del__``); a KeyboardInterrupt raised inside either is printed with a traceback and dropped: the
    compilation went on and the interrupt was lost. One raised inside the constructor of an LLVM object leaves it
    half-built, and its finalizer prints a traceback at exit. Here a Ctrl-C that lands in llvmlite's bindings or in a
    finalizer is asked for again 20 ms later (out of them by then, as a rule), and raised when the compilation
    returns if it is still pending; anywhere else it is raised at once, as Python's own handler does. Only where Python's default handler is installed, in the main thread (a signal
    handler can be set there only)."""
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    deferred: list[threading.Timer] = []

    def handler(signum: int, frame: Any) -> None:
        while frame is not None:  # inside a callback or a finalizer (or what they call): ask again 20 ms later
            if _BINDING_FILES in frame.f_code.co_filename or frame.f_code.co_name == "__del__":
                again = threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT))
                again.daemon = True
                deferred.append(again)
                again.start()
                return
            frame = frame.f_back
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        for again in deferred:
            again.cancel()
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if deferred:  # the compilation ended before a deferred Ctrl-C was raised: raise it now
        raise KeyboardInterrupt


def _compile(module: ModuleType, dimension: int) -> None:
    """Compile the kernel for its signature (numba saves it in its cache); Ctrl-C is never lost in llvmlite's
    callbacks (:func:`ctrl_c_survives_llvm_callbacks`)."""
    with ctrl_c_survives_llvm_callbacks():
        _dispatcher(module, dimension).compile(_signature(dimension))


def warm(dimension: int) -> str:
    """Make the kernel of ``dimension`` ready in this process and in numba's cache: "in process", "loaded" (from
    the cache) or "compiled" (and saved to the cache).

    Raises
    ------
    ImportError
        When numba is not installed or cannot cache the kernels."""
    module = _import()
    if module is None:
        raise ImportError(f"the compiled sweeps of enumerate are unavailable: {_import_failure}")
    if loaded(dimension) is not None:
        return "in process"
    if _load_from_cache(module, dimension):
        return "loaded"
    log.debug("enumerate: compiling the %d-D kernel", dimension)
    _compile(module, dimension)
    return "compiled"


def choose(dimension: int, n: int, deadline: Deadline | None) -> Choice:
    """The sweep for one call on ``n`` distinct points of affine dimension ``dimension`` (module docstring):
    loads or compiles the kernel when that is the choice. ``deadline`` None: no time limit."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {DIMENSIONS}; got {dimension!r}")
    switch = current_mode()
    if switch == "off":
        return Choice(None, f"numpy ({MODE_VARIABLE}=0)")
    module = loaded(dimension)
    if module is not None:
        return Choice(module, "compiled")
    if switch == "on":
        module = _import()
        if module is None:
            return Choice(None, f"numpy ({_import_failure})")
        return Choice(module, f"compiled ({warm(dimension)}: {MODE_VARIABLE}=1)")
    spent = _numpy_seconds[dimension]
    if n < LOAD_MIN_POINTS[dimension] and spent < LOAD_AFTER_NUMPY_SECONDS:
        return Choice(None, "numpy (a small problem: loading the kernel would cost more than this sweep)")
    left = None if deadline is None else deadline.remaining()
    if left is not None and left < LOAD_MIN_SECONDS:
        return Choice(None, f"numpy (less than {LOAD_MIN_SECONDS:g} s left to load the kernel)")
    module = _import()
    if module is None:
        return Choice(None, f"numpy ({_import_failure})")
    if _load_from_cache(module, dimension):
        return Choice(module, "compiled (loaded from numba's cache)")
    if left is not None:
        return Choice(
            None,
            "numpy (the kernel is not compiled, and a call with a time limit never compiles it: oraclepriv warm does)",
        )
    if n < COMPILE_MIN_POINTS[dimension] and spent < COMPILE_AFTER_NUMPY_SECONDS:
        return Choice(
            None,
            "numpy (the kernel is not compiled, and compiling it would cost more than this sweep: oraclepriv warm does)",
        )
    log.info("enumerate: compiling the %d-D kernel (once per installation; oraclepriv warm does it ahead)", dimension)
    _compile(module, dimension)
    return Choice(module, "compiled (compiled in this call: no time limit)")


def record_numpy_sweep(dimension: int, seconds: float) -> None:
    """Count ``seconds`` of a numpy sweep of ``dimension`` towards loading or compiling its kernel (:func:`choose`)."""
    _numpy_seconds[dimension] += seconds
