"""Keep freed heap memory in the process, so that the vectorised kernels do not page-fault.

``direction-bb`` evaluates hundreds of boxes per step with numpy, allocating and freeing arrays of
a few hundred kilobytes to tens of megabytes thousands of times per second. With glibc's defaults
such arrays are either mapped afresh for each allocation (above the mmap threshold) or handed back
to the kernel when the top of the heap is trimmed, and every page is then faulted in again on its
next use, which costs a large share of a search's time (measured in ``docs/solvers/direction-bb.md``,
section 5).

:func:`keep_freed_memory` raises three of glibc's ``mallopt`` parameters once per process: arrays up to
32 MiB come from the heap, and freed memory at the top of the heap is kept up to 128 MiB (with 16 MiB
of padding per growth). The cost is resident memory that is not returned to the system until the
process ends; nothing else changes (the numbers computed are the same). It is a no-op on other C
libraries, when the user already set glibc's ``MALLOC_*_`` environment variables for these
parameters, and when ``ORACLEPRIV_KEEP_HEAP=0``.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform

__all__ = ["keep_freed_memory", "ENVIRONMENT_SWITCH"]

log = logging.getLogger(__name__)

#: 0 leaves the C library's allocator alone, 1 (or unset) lets direction-bb set it; anything else is refused
ENVIRONMENT_SWITCH = "ORACLEPRIV_KEEP_HEAP"
#: glibc's mallopt parameter numbers (malloc.h) and the values set
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
SETTINGS = ((M_MMAP_THRESHOLD, 32 << 20), (M_TRIM_THRESHOLD, 128 << 20), (M_TOP_PAD, 16 << 20))
#: the environment variables by which a user sets the same parameters for glibc
USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

_done: bool | None = None


def keep_freed_memory() -> bool:
    """Set glibc's allocator to keep freed memory (module docstring), once per process.

    Returns True when the settings are in force (set now or by an earlier call), False when they
    were left alone (not glibc, switched off, or set by the user). Raises ValueError, naming the
    variable and its value, when ``ORACLEPRIV_KEEP_HEAP`` is neither 0 nor 1."""
    global _done
    if _done is None:
        _done = _apply()
    return _done


def _apply() -> bool:
    switch = os.environ.get(ENVIRONMENT_SWITCH, "1").strip()
    if switch not in ("0", "1"):
        raise ValueError(f"environment variable {ENVIRONMENT_SWITCH} must be 0 or 1; got {switch!r}")
    if switch == "0":
        return False
    if any(name in os.environ for name in USER_SETTINGS):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    applied = all(mallopt(parameter, value) == 1 for parameter, value in SETTINGS)
    log.debug("glibc allocator set to keep freed memory: %s", applied)
    return applied
