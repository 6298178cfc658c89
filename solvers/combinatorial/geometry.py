"""Exact geometric predicates (the one module of them): the signs the exact halfspace oracles decide
orderings and degeneracies by.

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

__all__ = ["orient2d", "orient3d", "float_is_exact", "cross_signs", "cross_component_signs", "orient3d_sign"]

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


#: the float filter of :func:`orient3d_sign` trusts a sign when |det| exceeds this times the permanent: 2^-40,
#: far looser than Shewchuk's stage-A bound (about 7 * 2^-53), hence valid ...
SCALAR_RTOL = 2.0**-40
#: ... and the permanent exceeds this (below it, products of coordinate differences may have lost bits to
#: underflow)
SCALAR_NORM_MIN = 2.0**-400


def cross_signs(p: np.ndarray, q: np.ndarray, R: np.ndarray, exact_floats: bool = False) -> np.ndarray:
    """Exact signs of the components of (q - p) x (r - p) for every row r of R (3-D), shape (len(R), 3).

    Component l is the 2x2 minor (q-p)_c0 (r-p)_c1 - (q-p)_c1 (r-p)_c0 on the coordinates
    (c0, c1) = (l + 1, l + 2) mod 3: an :func:`orient2d` of the projections onto them."""

    def minor(coords: list[int]) -> np.ndarray:
        return orient2d(p[coords], q[coords], R[:, coords], exact_floats)

    return np.stack([minor([(l + 1) % 3, (l + 2) % 3]) for l in range(3)], axis=1)


def cross_component_signs(
    P: np.ndarray, I: np.ndarray, J: np.ndarray, K: np.ndarray, l: np.ndarray, exact_floats: bool = False
) -> np.ndarray:
    """Exact signs of ((P_J - P_I) x (P_K - P_I))_l, entry by entry (index arrays I, J, K and one component l
    per entry): :func:`cross_signs` for scattered triples and components."""
    l1, l2 = (l + 1) % 3, (l + 2) % 3

    def proj(idx: np.ndarray) -> np.ndarray:
        return np.stack((P[idx, l1], P[idx, l2]), axis=1)

    return orient2d(proj(I), proj(J), proj(K), exact_floats)


def orient3d_sign(
    a: tuple[float, ...], b: tuple[float, ...], c: tuple[float, ...], d: tuple[float, ...], exact_floats: bool = False
) -> int:
    """Exact sign of det[b - a, c - a, d - a] for one quadruple of 3-D points given as Python floats: the sign
    :func:`orient3d` gives, without numpy's per-call overhead (for comparison sorts, one pair at a time).

    Float filter: the float sign is kept when |det| > :data:`SCALAR_RTOL` times the permanent and the
    permanent exceeds :data:`SCALAR_NORM_MIN`; otherwise :func:`orient3d` decides (Shewchuk's filter, then
    rational arithmetic). ``exact_floats``: every product is exact in float64 (:func:`float_is_exact`).
    """
    u0, u1, u2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    v0, v1, v2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    w0, w1, w2 = d[0] - a[0], d[1] - a[1], d[2] - a[2]
    p12, p21, p20, p02, p01, p10 = v1 * w2, v2 * w1, v2 * w0, v0 * w2, v0 * w1, v1 * w0
    det = u0 * (p12 - p21) + u1 * (p20 - p02) + u2 * (p01 - p10)
    permanent = abs(u0) * (abs(p12) + abs(p21)) + abs(u1) * (abs(p20) + abs(p02)) + abs(u2) * (abs(p01) + abs(p10))
    if exact_floats or (abs(det) > SCALAR_RTOL * permanent and permanent > SCALAR_NORM_MIN):
        return (det > 0) - (det < 0)
    return int(orient3d(np.array(a), np.array(b), np.array(c), np.array(d))[0])
