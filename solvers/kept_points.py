"""The point set an oracle keeps between calls: a private read-only copy, matched by value.

A call with new weights on the points of the previous call (Perturbation's J + 1 calls, an audit's
thousands) needs none of the work that depends on the points alone (validation, sorted orders). An
owner (the protocol's :class:`~oraclepriv.oracle.Oracle`, the ``sweep`` backend) keeps that work for
the point set it saw last, keyed safely on the data: a call on equal points (any array object) may
reuse it, and any change of a value -- in place in the caller's array, or in a new one -- misses.

The key is a private copy compared bit for bit (C's ``memcmp`` of the two buffers when they have the same
memory layout, else numpy's comparison of the arrays' 64-bit integer views; O(nd) either way, and ``memcmp``
reads each buffer once with no temporary); a digest of the data would cost more than the work it saves. Bitwise equality is stricter than
float equality: -0.0 does not match 0.0, and a NaN matches nothing.

The copy is read-only and owned here, so a consumer handed the copy itself (the protocol hands it to
its backend) recognises it (:meth:`KeptPoints.holding`) and keeps a reference, not a second copy.
Work that reads the points one column at a time (the sweep's sort, a stump's predictions) asks for
:attr:`KeptPoints.columns`, the same points in column-major order, made once on first use: a column
of the row-major copy is strided, and reading it costs a pass over every column.

Kept points are private data held for speed inside one owner: they are never pickled or copied
(:meth:`KeptPoints.__reduce__` refuses), their owners drop them when pickled, and the learners build
their oracles inside ``fit``, so kept points cross no fit and no process.
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

__all__ = ["KeptPoints"]

#: every live kept copy, by the id of its array (an entry lives exactly as long as its array)
_HOLDERS: weakref.WeakValueDictionary[int, KeptPoints] = weakref.WeakValueDictionary()


_MEMCMP: list[Callable[[int, int, int], int] | None] = []  # C's memcmp, found on first use (None: not found)


def _memcmp() -> Callable[[int, int, int], int] | None:
    """C's ``memcmp`` through ctypes (the C library the interpreter runs on), or None where it cannot be found."""
    if not _MEMCMP:
        try:
            library = ctypes.cdll.msvcrt if sys.platform == "win32" else ctypes.CDLL(None)
            function = library.memcmp
            function.restype = ctypes.c_int
            function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        except (OSError, AttributeError):
            function = None
        _MEMCMP.append(function)
    return _MEMCMP[0]


def _same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the two arrays of one shape hold their elements in the same order in one contiguous buffer each."""
    return (a.flags.c_contiguous and b.flags.c_contiguous) or (a.flags.f_contiguous and b.flags.f_contiguous)


class KeptPoints:
    """A private, read-only float64 copy of a point set, and the bitwise test of a later call's points.

    Parameters
    ----------
    X : numpy.ndarray of shape (n, d), float64
        The validated points; copied (the memory layout kept).
    """

    __slots__ = ("array", "_columns", "__weakref__")

    def __init__(self, X: np.ndarray) -> None:
        array = np.array(X, dtype=np.float64, order="K", copy=True)
        array.flags.writeable = False
        #: the private copy (read-only)
        self.array: np.ndarray = array
        self._columns: np.ndarray | None = None
        _HOLDERS[id(array)] = self

    @property
    def columns(self) -> np.ndarray:
        """The kept points in column-major order (read-only; the copy itself when its columns are contiguous),
        made on first use and kept as long as the copy: every column a contiguous array."""
        if self._columns is None:
            if self.array.flags.f_contiguous:
                self._columns = self.array
            else:
                columns = np.asfortranarray(self.array)
                columns.flags.writeable = False
                self._columns = columns
        return self._columns

    @staticmethod
    def holding(X: Any) -> KeptPoints | None:
        """The kept points whose private copy is the array ``X`` itself, or None."""
        kept = _HOLDERS.get(id(X))
        return kept if kept is not None and kept.array is X else None

    @classmethod
    def of(cls, X: np.ndarray) -> KeptPoints:
        """``X``'s own kept points when ``X`` is a kept copy, else a new private copy of ``X``."""
        return cls.holding(X) or cls(X)

    def matches(self, X: Any) -> bool:
        """Whether ``X`` is a float64 array equal to the kept points bit for bit (the copy itself included)."""
        if X is self.array:
            return True
        if not isinstance(X, np.ndarray) or X.dtype != np.float64 or X.shape != self.array.shape:
            return False
        memcmp = _memcmp() if _same_layout(X, self.array) else None
        if memcmp is not None:
            return memcmp(X.ctypes.data, self.array.ctypes.data, X.nbytes) == 0
        return bool(np.array_equal(X.view(np.uint64), self.array.view(np.uint64)))

    def __reduce__(self) -> NoReturn:
        raise TypeError(
            "KeptPoints holds a private copy of an oracle's points for its repeat calls; it is never pickled or "
            "copied (its owner drops it when pickled)"
        )
