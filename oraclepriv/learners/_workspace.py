"""Reusable per-thread buffers for the private + public union a learner hands to the oracle.

RRSPM and Perturbation (Algorithms 4 and 2 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient
Differentially Private Learning with Public Data") call the oracle on the rows of the private
data followed by the public points, with labels and weights to match. Building that union in
fresh arrays every fit costs more than the copy itself: a fresh ~1 MB allocation comes from new
pages (glibc returns the freed pages to the OS between fits), and their page faults were most of
the learner's own time (measured in ``results/README.md``, the learner-overhead row). So the union
is written into buffers that are kept per thread and reused while the shapes stay the same.

Lifetime is explicit: :func:`union` is a context manager and its arrays are valid only inside the
``with`` block, where the oracle calls happen. Nothing the oracle returns refers to them (results
hold hypotheses and numbers; backends keep copies, e.g. scaled data, never the caller's arrays).
A nested ``union`` in the same thread (the buffer is busy) gets fresh arrays, so re-entrancy is
safe; each thread has its own buffers, so threads never share one.

**No private data is left behind:** the buffers hold private records and the secret noise while a
fit runs, so they are zero-filled when the block exits (a write to pages already mapped: it costs
about as much as the copy in, not the page faults the reuse avoids). Memory held between fits:
one zeroed union per thread (the size of the data it last fitted).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

__all__ = ["union"]

_local = threading.local()


def _buffer(name: str, shape: tuple[int, ...], dtype: Any, order: Literal["C", "F"]) -> np.ndarray:
    """This thread's buffer ``name``, reallocated only when shape, dtype or order change."""
    held = getattr(_local, "buffers", None)
    if held is None:
        held = _local.buffers = {}
    key = (shape, np.dtype(dtype).str, order)
    kept = held.get(name)
    if kept is None or kept[0] != key:
        kept = held[name] = (key, np.empty(shape, dtype=dtype, order=order))
    return kept[1]


@contextlib.contextmanager
def union(
    X: np.ndarray, Z: np.ndarray, y: np.ndarray, public_labels: np.ndarray, public_weights: np.ndarray | float = 0.0
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rows of X then Z, labels y then public_labels, weights 1 then public_weights), valid inside the block.

    The caller may overwrite the public part of the weights inside the block (Perturbation's J calls
    on the same points).

    The rows keep the private block's memory layout (Fortran order stays Fortran, so the stump
    sweep's columns need no copy; a C-ordered vstack of Fortran data is a transposing copy).
    """
    n, m = X.shape[0], Z.shape[0]
    order: Literal["C", "F"] = "F" if X.flags.f_contiguous and not X.flags.c_contiguous else "C"
    busy = getattr(_local, "busy", False)
    if busy:  # nested use in this thread: never hand out a buffer that is in use
        rows = np.empty((n + m, X.shape[1]), dtype=np.float64, order=order)
        labels = np.empty(n + m, dtype=np.int8)
        weights = np.empty(n + m, dtype=np.float64)
    else:
        rows = _buffer("rows", (n + m, X.shape[1]), np.float64, order)
        labels = _buffer("labels", (n + m,), np.int8, "C")
        weights = _buffer("weights", (n + m,), np.float64, "C")
    rows[:n] = X
    rows[n:] = Z
    labels[:n] = y
    labels[n:] = public_labels
    weights[:n] = 1.0
    weights[n:] = public_weights
    _local.busy = True
    try:
        yield rows, labels, weights
    finally:
        if not busy:
            rows.fill(0.0)
            labels.fill(0)
            weights.fill(0.0)
            _local.busy = False
