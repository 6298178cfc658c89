"""The gaps a MIP backend sets so that a closed gap proves optimality, and the rounding of a proved bound
(the weight-lattice rule): weights that are all multiples of q = 2^-k put every objective value on the
lattice qZ, so an absolute gap below q proves optimality and a proved lower bound may be rounded up to the
lattice; other weights get an absolute gap of a tenth of the oracle protocol's certification tolerance."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["weight_granularity", "gap_rule", "lattice_round_up"]


def weight_granularity(w: np.ndarray, max_power: int = 30) -> float | None:
    """The coarsest q = 2^-k (k = 0..max_power) with every weight an integer multiple of q.

    Then every objective value (a sum of weights) lies on the lattice qZ, so a proved lower
    bound LB can be rounded up to the next lattice point and an absolute gap < q proves
    optimality. Returns None when no such q exists (e.g. Laplace-noised weights) or when the
    total would exceed 2^52 q (float64 no longer represents the lattice exactly).
    """
    pos = np.asarray(w, dtype=np.float64)
    pos = pos[pos > 0]
    if pos.size == 0:
        return None
    for k in range(max_power + 1):
        scaled = pos * (2.0**k)  # multiplying by a power of two is exact
        if np.all(scaled == np.floor(scaled)):
            return 2.0**-k if float(scaled.sum()) < 2.0**52 else None
    return None


def gap_rule(w: np.ndarray) -> tuple[float, float | None]:
    """(mip_abs_gap, lattice q). Relative gap is always 0.

    * weights on a lattice qZ (integers, dyadic fractions): abs gap 0.5 q; the reported bound is
      rounded up to the lattice (``lattice_round_up``), which then equals the optimum.
    * otherwise: abs gap 1e-10 * max(1, sum w), a tenth of the protocol's certification
      tolerance 1e-9 * max(1, sum |w|), so a closed gap always certifies.
    """
    q = weight_granularity(w)
    if q is not None:
        return 0.5 * q, q
    return 1e-10 * max(1.0, float(np.sum(w))), None


def lattice_round_up(bound: float, q: float | None, total: float) -> float:
    """Round a proved lower bound up to the weight lattice qZ (no-op when q is None).

    The solver's bound carries float noise; a value within max(1e-6, 1e-9 * total / q) lattice
    units above a lattice point is treated as that point, so noise never rounds past the optimum.
    """
    if q is None or not math.isfinite(bound):
        return bound
    slack = max(1e-6, 1e-9 * total / q)
    if slack >= 0.25:
        return bound
    return math.ceil(bound / q - slack) * q
