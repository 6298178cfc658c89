"""Exact geometric predicates for the enumeration oracle.

``orient2d`` and ``orient3d`` return the exact sign of a determinant of coordinate
*differences* of float64 inputs. They use Shewchuk's static error filter ("Adaptive precision
floating-point arithmetic and fast robust geometric predicates", DCG 1997, orient2d/orient3d
stage A bounds): when |det| exceeds the bound the float sign is provably right; otherwise the
determinant is recomputed exactly with rational arithmetic (``fractions.Fraction`` of the floats,
which is exact). ``float_is_exact`` detects data (integers, or a common power-of-two grid, of
bounded size) on which every product the predicates form is exact in float64, so the filter
is skipped.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["orient2d", "orient3d", "float_is_exact"]

_EPS = 2.0**-53
_CCW_ERRBOUND_A = (3.0 + 16.0 * _EPS) * _EPS
_O3D_ERRBOUND_A = (7.0 + 56.0 * _EPS) * _EPS


def float_is_exact(X: np.ndarray) -> bool:
    """True if X lies on a grid 2^-k * Z (k <= 40) with |X| * 2^k <= 2^15.

    Then differences, 2x2 and 3x3 determinants of differences are exact in float64
    (3 * 16 + 3 = 51 < 53 bits), so predicate signs computed in float64 are exact.
    """
    X = np.asarray(X, dtype=np.float64)
    for k in range(0, 41):
        scaled = X * (2.0**k)  # exact: power-of-two scaling
        if np.all(scaled == np.round(scaled)):
            return bool(np.max(np.abs(scaled), initial=0.0) <= 2.0**15)
    return False


def _sign(value: Fraction) -> int:
    return (value > 0) - (value < 0)


def orient2d(a: np.ndarray, b: np.ndarray, c: np.ndarray, exact_floats: bool = False) -> np.ndarray:
    """Exact sign of det[b - a, c - a] for broadcastable (..., 2) float64 arrays (result at least 1-D).

    +1: a, b, c counter-clockwise; 0: collinear; -1: clockwise.
    """
    a, b, c = np.broadcast_arrays(*(np.atleast_2d(np.asarray(v, float)) for v in (a, b, c)))
    bax, bay = b[..., 0] - a[..., 0], b[..., 1] - a[..., 1]
    cax, cay = c[..., 0] - a[..., 0], c[..., 1] - a[..., 1]
    left = bax * cay
    right = bay * cax
    det = left - right
    sign = np.sign(det).astype(np.int8)
    if exact_floats:
        return sign
    unsure = ~(np.abs(det) > _CCW_ERRBOUND_A * (np.abs(left) + np.abs(right)))
    for idx in zip(*np.nonzero(unsure)):
        A, B, C = a[idx], b[idx], c[idx]
        exact = (Fraction(B[0]) - Fraction(A[0])) * (Fraction(C[1]) - Fraction(A[1])) - (
            Fraction(B[1]) - Fraction(A[1])
        ) * (Fraction(C[0]) - Fraction(A[0]))
        sign[idx] = _sign(exact)
    return sign


def orient3d(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, exact_floats: bool = False) -> np.ndarray:
    """Exact sign of det[b - a, c - a, d - a] for broadcastable (..., 3) float64 arrays (result at least 1-D)."""
    a, b, c, d = np.broadcast_arrays(*(np.atleast_2d(np.asarray(v, float)) for v in (a, b, c, d)))
    u = b - a
    v = c - a
    w = d - a
    t0 = u[..., 0] * (v[..., 1] * w[..., 2] - v[..., 2] * w[..., 1])
    t1 = u[..., 1] * (v[..., 2] * w[..., 0] - v[..., 0] * w[..., 2])
    t2 = u[..., 2] * (v[..., 0] * w[..., 1] - v[..., 1] * w[..., 0])
    det = t0 + t1 + t2
    sign = np.sign(det).astype(np.int8)
    if exact_floats:
        return sign
    permanent = (
        np.abs(u[..., 0]) * (np.abs(v[..., 1] * w[..., 2]) + np.abs(v[..., 2] * w[..., 1]))
        + np.abs(u[..., 1]) * (np.abs(v[..., 2] * w[..., 0]) + np.abs(v[..., 0] * w[..., 2]))
        + np.abs(u[..., 2]) * (np.abs(v[..., 0] * w[..., 1]) + np.abs(v[..., 1] * w[..., 0]))
    )
    unsure = ~(np.abs(det) > _O3D_ERRBOUND_A * permanent)
    for idx in zip(*np.nonzero(unsure)):
        A = [Fraction(x) for x in a[idx]]
        rows = [[Fraction(P[k]) - A[k] for k in range(3)] for P in (b[idx], c[idx], d[idx])]
        exact = (
            rows[0][0] * (rows[1][1] * rows[2][2] - rows[1][2] * rows[2][1])
            - rows[0][1] * (rows[1][0] * rows[2][2] - rows[1][2] * rows[2][0])
            + rows[0][2] * (rows[1][0] * rows[2][1] - rows[1][1] * rows[2][0])
        )
        sign[idx] = _sign(exact)
    return sign
