"""The halfspace instances of the MIP benchmark's ``noisy-halfspaces`` and ``small-d`` suites
(:mod:`oraclepriv.bench.mip`).

One family, "separable + label noise", on a grid of sizes n x dimensions d:

* points: x_i ~ N(0, I_d), i = 1..n (float64);
* a random halfspace: direction u ~ N(0, I_d) normalised to ||u||_2 = 1, offset c ~ N(0, 0.25^2);
  clean labels y_i = 1[u.x_i + c >= 0];
* label noise: exactly round(0.1 n) points, chosen uniformly without replacement, get their label
  flipped (so the optimum makes at most round(0.1 n) mistakes, usually a few fewer);
* unit weights (w_i = 1), so every objective value is an integer.

Every instance draws from its own ``numpy.random.Generator`` seeded by ``SeedSequence([seed, n, d])``,
so an instance does not depend on which other sizes are in the suite, and the suite is fully
deterministic for a given ``seed``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["halfspace_suite", "halfspace_instance", "NOISE_RATE"]

#: fraction of labels flipped in every instance
NOISE_RATE = 0.1


def halfspace_instance(n: int, d: int, seed: int = 0) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """One "separable + label noise" instance: (name, X (n, d), y (n,) int8 in {0,1}, w (n,) ones)."""
    for value, name, minimum in ((n, "n", 1), (d, "d", 1), (seed, "seed", 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(n), int(d)]))
    X = rng.normal(size=(n, d))
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    c = 0.25 * rng.normal()
    y = (X @ u + c >= 0).astype(np.int8)
    flips = rng.choice(n, size=int(round(NOISE_RATE * n)), replace=False)
    y[flips] = 1 - y[flips]
    return f"sepnoise-n{n}-d{d}-s{seed}", X, y, np.ones(n)


def halfspace_suite(
    ns: Iterable[int] = (100, 200, 400), ds: Iterable[int] = (2, 5, 10), seed: int = 0
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`halfspace_instance` for every (n, d) in ns x ds, n-major order; the defaults are the
    ``noisy-halfspaces`` suite."""
    return [halfspace_instance(int(n), int(d), seed) for n in ns for d in ds]
