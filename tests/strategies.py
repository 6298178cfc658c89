"""Hypothesis strategies for small weighted 0-1 ERM instances (X, y, w).

Points come in several flavours, chosen to hit the cases exact oracles get wrong:

* ``real_points``: generic real coordinates (3 decimals in [-10, 10], or seeded Gaussians);
  3 decimals keep the LP reference (``brute_force.halfspace_realizable``) well conditioned;
* ``decimal_points``: a 0.1-spaced decimal grid (decimal-collinear, float-nearly-collinear);
* ``grid_points``: a tiny integer grid, so duplicates, collinear and coplanar points and
  repeated coordinates are common;
* ``flat_points``: integer points on a random affine subspace of dimension < d (all collinear
  in d = 2, all coplanar in d = 3, all equal when the subspace is a point);
* ``equal_points`` / one point;
* ``wild_floats_column``: any finite float64 (subnormal, huge, adjacent floats) for the 1-D
  sweep, where no LP is involved.

Weights are *signed* (RRSPM's Laplace weights are negative half the time): Laplace reals,
small integers with zeros, mixed per-entry values, all zero, all negative.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = [
    "real_points",
    "grid_points",
    "decimal_points",
    "flat_points",
    "equal_points",
    "points",
    "wild_floats_column",
    "labels",
    "signed_weights",
    "instances",
]


def _as_array(rows: list[list[float]]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float64)


def _sizes(min_n: int, max_n: int) -> st.SearchStrategy[int]:
    """n, drawn explicitly and biased to the large end (hypothesis favours tiny sizes on its own)."""
    return st.one_of(st.integers(min_n, max_n), st.integers(max(min_n, max_n - 2), max_n))


def _rows(element: st.SearchStrategy, d: int, min_n: int, max_n: int) -> st.SearchStrategy[np.ndarray]:
    """An (n, d) float64 array of independently drawn elements, n in [min_n, max_n]."""
    return (
        _sizes(min_n, max_n)
        .flatmap(lambda n: st.lists(st.lists(element, min_size=d, max_size=d), min_size=n, max_size=n))
        .map(_as_array)
    )


def real_points(d: int, min_n: int = 1, max_n: int = 7) -> st.SearchStrategy[np.ndarray]:
    """Generic real points: 3-decimal coordinates in [-10, 10], or a seeded Gaussian sample."""
    coordinate = st.floats(-10, 10, allow_nan=False, allow_infinity=False, allow_subnormal=False).map(
        lambda v: round(v, 3) + 0.0  # + 0.0 turns -0.0 into 0.0
    )
    decimals = _rows(coordinate, d, min_n, max_n)
    gaussian = st.tuples(st.integers(min_n, max_n), st.integers(0, 2**32 - 1)).map(
        lambda ns: np.random.default_rng(ns[1]).normal(size=(ns[0], d))
    )
    return st.one_of(decimals, gaussian)


def decimal_points(d: int, min_n: int = 1, max_n: int = 7) -> st.SearchStrategy[np.ndarray]:
    """Points on the decimal grid {-1.0, -0.9, ..., 1.0}^d, as a CSV of measurements would give.

    0.1 is not a binary float: points collinear/coplanar *in decimal* are usually not so in
    float64 (determinants ~1e-17), the near-degenerate case an exact oracle must still handle.
    """
    return _rows(st.integers(-10, 10).map(lambda v: v / 10.0), d, min_n, max_n)


def grid_points(d: int, min_n: int = 1, max_n: int = 7, lo: int = -2, hi: int = 2) -> st.SearchStrategy[np.ndarray]:
    """Points on the integer grid {lo..hi}^d: duplicates, collinear and coplanar subsets are common."""
    return _rows(st.integers(lo, hi), d, min_n, max_n)


@st.composite
def flat_points(draw, d: int, min_n: int = 1, max_n: int = 7) -> np.ndarray:
    """Integer points p0 + sum_k t_k q_k on an affine subspace of dimension k < d (k = 0: all equal).

    d = 2: collinear points; d = 3: collinear or coplanar points (k >= 1 whenever d >= 2).
    """
    k = draw(st.integers(min(1, d - 1), max(d - 1, 0)))
    vec = st.lists(st.integers(-2, 2), min_size=d, max_size=d)
    p0 = np.array(draw(vec), dtype=np.float64)
    directions = np.array([draw(vec) for _ in range(k)], dtype=np.float64).reshape(k, d)
    n = draw(_sizes(min_n, max_n))
    coefficients = np.array(
        [draw(st.lists(st.integers(-2, 2), min_size=k, max_size=k)) for _ in range(n)], dtype=np.float64
    ).reshape(n, k)
    return p0[None, :] + coefficients @ directions


def equal_points(d: int, min_n: int = 1, max_n: int = 7) -> st.SearchStrategy[np.ndarray]:
    """n copies of one point (all points equal)."""
    row = st.lists(st.integers(-3, 3), min_size=d, max_size=d)
    return st.tuples(row, _sizes(min_n, max_n)).map(lambda rn: np.tile(np.array(rn[0], dtype=np.float64), (rn[1], 1)))


def points(d: int, min_n: int = 1, max_n: int = 7, grid_only: bool = False) -> st.SearchStrategy[np.ndarray]:
    """A mixture of all point flavours (integer-valued ones only if ``grid_only``)."""
    integer_valued = st.one_of(  # one_of picks branches about equally: grids get 3 of 6 shares
        grid_points(d, min_n, max_n),
        grid_points(d, min_n, max_n, lo=-1, hi=1),
        grid_points(d, min_n, max_n, lo=-4, hi=4),
        flat_points(d, min_n, max_n),
        flat_points(d, min_n, max_n),
        equal_points(d, min_n, max_n),
    )
    if grid_only:
        return integer_valued
    return st.one_of(real_points(d, min_n, max_n), integer_valued)


@st.composite
def wild_floats_column(draw, min_n: int = 1, max_n: int = 8) -> np.ndarray:
    """A 1-D column of arbitrary finite float64 values, often with adjacent floats and duplicates."""
    n = draw(_sizes(min_n, max_n))
    anchor = draw(st.floats(allow_nan=False, allow_infinity=False))
    values = []
    for _ in range(n):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            values.append(draw(st.floats(allow_nan=False, allow_infinity=False)))
        elif kind == 1:
            values.append(anchor)
        else:  # a few ulps away from the anchor: adjacent floats, no float strictly between
            steps = draw(st.integers(-2, 2))
            v = anchor
            for _ in range(abs(steps)):  # towards +-max float, never past it (no overflow)
                v = float(np.nextafter(v, np.finfo(np.float64).max * np.sign(steps)))
            values.append(v)
    return np.asarray(values, dtype=np.float64)


def labels(n: int) -> st.SearchStrategy[np.ndarray]:
    """Labels in {0, 1}: arbitrary, or constant (all 0 / all 1)."""
    arbitrary = st.lists(st.integers(0, 1), min_size=n, max_size=n)
    constant = st.integers(0, 1).map(lambda v: [v] * n)
    return st.one_of(arbitrary, constant).map(lambda lab: np.asarray(lab, dtype=np.int8))


def signed_weights(n: int) -> st.SearchStrategy[np.ndarray]:
    """Signed weights: Laplace reals, small integers with zeros, mixed entries, all zero, all negative."""
    laplace = st.tuples(st.integers(0, 2**32 - 1), st.sampled_from([0.01, 1.0, 1000.0])).map(
        lambda seed_scale: np.random.default_rng(seed_scale[0]).laplace(0.0, seed_scale[1], size=n)
    )
    integers = st.lists(st.integers(-3, 3), min_size=n, max_size=n)
    entry = st.one_of(
        st.integers(-3, 3).map(float),
        st.floats(-10, 10, allow_nan=False, allow_infinity=False, allow_subnormal=False),
        st.sampled_from([0.0, -0.0]),
    )
    mixed = st.lists(entry, min_size=n, max_size=n)
    all_zero = st.just([0.0] * n)
    all_negative = st.lists(
        st.one_of(st.integers(-3, -1).map(float), st.floats(-10, -0.001, allow_nan=False)), min_size=n, max_size=n
    )
    return st.one_of(laplace, integers, mixed, all_zero, all_negative).map(lambda w: np.asarray(w, dtype=np.float64))


@st.composite
def instances(draw, point_strategy: st.SearchStrategy[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, w) with X drawn from ``point_strategy`` and matching labels and signed weights."""
    X = draw(point_strategy)
    n = X.shape[0]
    return X, draw(labels(n)), draw(signed_weights(n))
