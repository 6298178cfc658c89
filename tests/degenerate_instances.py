"""Small halfspace instances of the kind people type by hand: decimal coordinates with one or two digits,
several points on a common decimal line or plane (collinear or coplanar in decimal, *almost* so in
float64), integer grids, duplicated points with conflicting labels, weights of very different sizes and
of either sign. Seeded numpy generators, so a failing case is named by its (kind, d, seed)."""

from __future__ import annotations

import numpy as np

__all__ = ["KINDS", "degenerate_instance"]

KINDS = ("decimal-line", "decimal-plane", "decimal", "grid", "duplicates", "scales")


def _decimal_line(rng: np.random.Generator, d: int, k: int, digits: int) -> np.ndarray:
    """k points p + j * step (j = 0..k-1) with decimal p and step, rounded to ``digits`` decimals."""
    p = np.round(rng.uniform(-1, 1, d), 1)
    step = np.round(rng.uniform(-0.5, 0.5, d), 1)
    return np.round(p + np.arange(k)[:, None] * step, digits)


def _decimal_plane(rng: np.random.Generator, k: int) -> np.ndarray:
    """k points p + a u + b v in R^3, with decimal p, u, v and small integer a, b (coplanar in decimal)."""
    p, u, v = (np.round(rng.uniform(-1, 1, 3), 1) for _ in range(3))
    a, b = rng.integers(-2, 3, size=(2, k))
    return np.round(p + a[:, None] * u * 0.5 + b[:, None] * v * 0.5, 2)


def _weights(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "scales":
        magnitude = 10.0 ** rng.integers(-3, 7, n)
    else:
        magnitude = rng.choice([1.0, 9.0, 100.0], n)
    sign = rng.choice([1.0, -1.0], n, p=[0.75, 0.25])
    return magnitude * sign


def degenerate_instance(kind: str, d: int, seed: int, max_n: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, w) of the given kind in d = 2 or 3, with 6 <= n <= ``max_n``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rng = np.random.default_rng([seed, d, KINDS.index(kind)])
    n = int(rng.integers(6, max_n + 1))
    digits = int(rng.choice([1, 2]))
    X = np.round(rng.uniform(-1, 1, (n, d)), digits)
    if kind == "decimal-line":
        k = int(rng.integers(3, min(5, n) + 1))
        X[:k] = _decimal_line(rng, d, k, 2)
        if n >= k + 3:  # a second line
            X[k : k + 3] = _decimal_line(rng, d, 3, 2)
    elif kind == "decimal-plane":
        if d == 3:
            k = int(rng.integers(4, min(7, n) + 1))
            X[:k] = _decimal_plane(rng, k)
        else:
            k = min(4, n)
            X[:k] = _decimal_line(rng, d, k, 2)
    elif kind == "grid":
        X = rng.integers(-2, 3, (n, d)).astype(np.float64)
    elif kind == "scales":
        k = min(3, n)
        X[:k] = _decimal_line(rng, d, k, 2)
    y = rng.integers(0, 2, n).astype(np.int8)
    if kind in ("duplicates", "grid", "decimal-line"):
        copies = int(rng.integers(1, 3))
        for _ in range(copies):  # a repeated point, with the other label
            i, j = rng.choice(n, 2, replace=False)
            X[j] = X[i]
            y[j] = 1 - y[i]
    return X + 0.0, y, _weights(rng, n, kind)
