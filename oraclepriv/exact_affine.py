"""Exact signs of an affine function w . x + b at float64 points.

A halfspace's prediction 1[w . x + b >= 0] is the sign of a sum of products. Evaluated in float64
it can be wrong for points within rounding error of the hyperplane, and on data typed by hand
(decimal coordinates, points on a common decimal line, which float64 makes *almost* collinear) the
optimal labeling can have a margin far below float64 resolution: then no float64 evaluation realises
it, while an exact one does. The oracles' lower bounds are proved for real arithmetic, so the
prediction a certificate talks about is the exact one.

:func:`affine_nonnegative` decides ``w . x + b >= 0`` exactly for every row, with a static float
filter: the float64 value v = fl(x . w~ + b~) (w~, b~ the float64 approximations of the exact
coefficients) is within

    E = 2 (d + 3) u S + (d + 2) 2^-1073 (1 + T),   S = fl(|x| . |w~| + |b~|),  T = fl(sum_j |x_j|)

of the exact value, u = 2^-53 (a first pass bounds S by the largest |x_ij| times sum_j |w~_j|, one bound
for every row; only the rows it leaves unsure get their own S and T): the dot product's rounding is at most gamma_(d+1) (|x| . |w~| + |b~|)
in any summation order, with or without fused multiply-adds (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., section 3.1); rounding the exact coefficients to w~, b~ adds at most
u (|x| . |w~| + |b~|) plus 2^-1074 per coefficient that underflows; the factor 2 covers the rounding
of S itself and the gamma denominators; the last term covers products that underflow. Rows with
|v| <= E, or with a non-finite v or S (overflow), are decided exactly with rational arithmetic
(every float64 is a dyadic rational, so ``fractions.Fraction`` of it is exact). On data in general
position almost no row reaches the exact path.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

__all__ = ["affine_nonnegative", "exact_affine_value", "filter_error_bounds"]

_U = 2.0**-53
_TINY = 2.0**-1073
#: below this, |x| . |w| + |b| (and so every partial sum of x . w + b) stays far from overflow
_SAFE = 2.0**1000


def exact_affine_value(x: Sequence[float], coefficients: Sequence[Fraction]) -> Fraction:
    """The exact value of sum_j c_j x_j + c_d (``coefficients`` = (c_0, ..., c_(d-1), c_d))."""
    value = Fraction(coefficients[-1])
    for c, v in zip(coefficients[:-1], x):
        if c:
            value += c * Fraction(float(v))
    return value


def filter_error_bounds(X: np.ndarray, w: np.ndarray, b: float, rounded: bool) -> tuple[np.ndarray, np.ndarray]:
    """(v, E): the float64 values x . w + b and a bound on their distance to the exact values
    (module docstring). ``rounded``: w, b are roundings of exact coefficients (adds their error)."""
    d = X.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        v = X @ w + b
        S = np.abs(X) @ np.abs(w) + abs(b)
        E = (2.0 * (d + 3) * _U) * S
        if rounded:
            E = E + (d + 2) * _TINY * (1.0 + np.abs(X).sum(axis=1))
        else:
            E = E + (d + 2) * _TINY
    return v, E


def affine_nonnegative(
    X: np.ndarray, w: np.ndarray, b: float, coefficients: Sequence[Fraction] | None = None
) -> np.ndarray:
    """Exactly 1[c . x + c_d >= 0] for every row x of ``X`` (bool array).

    ``coefficients``: the exact (c_0, ..., c_(d-1), c_d); None when the float64 ``w``, ``b`` are themselves
    the exact coefficients. ``w``, ``b`` are the float64 values (approximations of ``coefficients``)
    the filter evaluates.
    """
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, d = X.shape
    if n == 0:
        return np.zeros(0, dtype=bool)
    # stage 1: one bound for every row, from the largest |x_ij| (flat reductions: no n x d temporary)
    largest = max(float(X.max()), -float(X.min()))
    S = largest * float(np.abs(w).sum()) + abs(float(b))
    if S < _SAFE:  # no product or sum can overflow: every v is finite
        v = X @ w
        v += float(b)
        out = v >= 0
        E = (2.0 * (d + 3) * _U) * S + (d + 2) * _TINY * (1.0 + (d * largest if coefficients is not None else 0.0))
        unsure = np.abs(v) <= E
    else:
        out = np.zeros(n, dtype=bool)
        unsure = np.ones(n, dtype=bool)
    rows = np.flatnonzero(unsure)
    if rows.size:  # stage 2: the per-row bound of the module docstring
        v_rows, E_rows = filter_error_bounds(X[rows], w, float(b), rounded=coefficients is not None)
        with np.errstate(invalid="ignore"):
            sure = np.abs(v_rows) > E_rows
        out[rows[sure]] = v_rows[sure] >= 0
        rows = rows[~sure]
    if rows.size:  # stage 3: exact rational arithmetic
        exact = coefficients
        if exact is None:
            exact = [Fraction(float(c)) for c in w] + [Fraction(float(b))]
        for i in rows:
            out[i] = exact_affine_value(X[i], exact) >= 0
    return out
