"""Exact power-of-two normalisation of extreme data: what lets every backend solve 1e-320 and 1e300.

Multiplying a float64 by a power of two is exact as long as the result neither overflows nor
becomes subnormal, and the weighted 0-1 problem is invariant under two such maps:

* **columns** (halfspaces only): x'_ij = x_ij 2^-e_j. A closed halfspace 1[w.x + b >= 0] induces
  on X exactly the labelings that 1[w'.x' + b >= 0] induces on X', with w'_j = w_j 2^e_j, so the
  two problems have the same optimum; a hypothesis found on X' maps back as w_j = w'_j 2^(E-e_j),
  b = b' 2^E (any E: a positive multiple of (w, b) is the same halfspace), and every product
  x_ij w_j is then exactly 2^E x'_ij w'_j, so it predicts what it predicted on X' (as long as no
  product becomes subnormal; the protocol re-scores it on X in any case);
* **weights** (every class): w'_i = w_i 2^-f multiplies every loss by 2^-f, so the minimisers are
  the same and a bound B' on the scaled problem is the bound 2^f B' on the original one.

Only *extreme* data are normalised (a column whose largest |x| lies outside [2^-128, 2^128], weights
whose largest |w| lies outside [1/2, 2^64]); ordinary data reach the backends unchanged. Solvers
treat numbers beyond about 1e20 as infinite (HiGHS, SCIP) and scale data to [-1, 1] in ways that
overflow or underflow near the ends of the float64 range, so without this step such data crash
inside a backend or a hypothesis constructor. Small weights are brought up to a largest |w| in
[1/2, 1) because the backends' optimality gaps and the solvers' tolerances are absolute at the
scale of 1 (e.g. ``gap_rule``: 1e-10 max(1, sum w)): on weights of 1e-18 a solver's "closed gap"
proves nothing relative to the weights, on the normalised ones it proves a relative gap. A column whose own values are too far apart to be
scaled exactly (its largest |x| near 1e300 and another near 1e-30, more than float64's exponent
range apart) is refused up front: no float64 weight can score both ends of it. Weights that are
too far apart lose only their tiny end, which is accounted for in the bound (``weight_slack``).
Derivation and limits: ``docs/theory/certification.md``, "Extreme magnitudes".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from oraclepriv.hypotheses import Halfspace, Hypothesis

__all__ = ["PowerOfTwoScaling", "X_BAND", "W_BAND"]

#: columns whose largest |x| lies in [2^-X_BAND, 2^X_BAND] are left as they are
X_BAND = 128
#: weights whose largest |w| lies in [1/2, 2^W_BAND] are left as they are
W_BAND = 64
#: a mapped-back halfspace keeps every |w_j| below 2^W_LIMIT and w.x + b below 2^S_LIMIT in magnitude
W_LIMIT = 1020
S_LIMIT = 1000
#: halfspace columns whose largest magnitudes are more than 2^COLUMN_SPAN apart are refused: their
#: weights w_j ~ 2^-e_j cannot all be normal float64 numbers (2^-1022 .. 2^1023, 2046 binades) at once
COLUMN_SPAN = 2040


def _exponent(peak: float, band: int) -> int:
    """e with peak * 2^-e in [0.5, 1), or 0 when peak is 0 or already inside [2^-band, 2^band]."""
    if peak == 0.0 or 2.0**-band <= peak <= 2.0**band:
        return 0
    return int(math.frexp(peak)[1])


@dataclass(frozen=True)
class PowerOfTwoScaling:
    """The exact maps of the module docstring for one problem.

    Attributes
    ----------
    column_exponents : numpy.ndarray of int, shape (d,)
        e_j: the backend sees x_ij 2^-e_j (all zero unless a column is extreme, and for classes
        other than halfspaces).
    weight_exponent : int
        f: the backend sees w_i 2^-f (0 unless the largest weight lies outside [1/2, 2^64]).
    weight_slack : float
        An upper bound on sum_i |w_i - 2^f w'_i| (what the scaling rounded off the tiniest weights;
        0 when exact), subtracted from the bound.
    """

    column_exponents: np.ndarray
    weight_exponent: int = 0
    weight_slack: float = 0.0

    @classmethod
    def fit(cls, X: np.ndarray, w: np.ndarray, hypothesis_class: str, peak: float | None = None) -> PowerOfTwoScaling:
        """The scaling for points ``X`` (finite, (n, d)) and non-negative weights ``w``.

        ``peak``: the largest weight, ``float(w.max())``, when the caller has it already (the oracle protocol's
        compiled pass over the weights finds it), so that no pass over ``w`` is made for it here; the scaling
        is the same either way.

        Raises ValueError (naming ``X``, the column, both magnitudes and the limit) for a halfspace
        column that cannot be scaled exactly."""
        d = X.shape[1]
        exponents = np.zeros(d, dtype=np.int64)
        if hypothesis_class == "halfspace":
            peaks = np.abs(X).max(axis=0)
            live = np.flatnonzero(peaks > 0)
            if live.size > 1:
                orders = np.array([math.frexp(float(peaks[j]))[1] for j in live])
                hi, lo = int(live[np.argmax(orders)]), int(live[np.argmin(orders)])
                if orders.max() - orders.min() > COLUMN_SPAN:
                    raise ValueError(
                        f"X: columns {lo} and {hi} differ in magnitude by more than 2^{COLUMN_SPAN} (largest |x| "
                        f"{float(peaks[lo])!r} and {float(peaks[hi])!r}): a float64 halfspace cannot weigh both "
                        "(their weights would have to be about 2^2000 apart, beyond float64's range). Rescale one of them"
                    )
            exponents = np.array([_exponent(float(p), X_BAND) for p in peaks], dtype=np.int64)
            for j in np.flatnonzero(exponents):
                column = X[:, j]
                back = np.ldexp(np.ldexp(column, -int(exponents[j])), int(exponents[j]))
                lost = np.flatnonzero(back != column)
                if lost.size:
                    i = int(lost[np.argmin(np.abs(column[lost]))])
                    raise ValueError(
                        f"X: column {j} mixes magnitudes too far apart for a float64 halfspace: its largest |x| is "
                        f"{float(peaks[j])!r} and row {i} holds {float(column[i])!r}; no float64 weight can score both "
                        "(w_j * x under- or overflows). The limit: after scaling the column by a power of two to "
                        "largest |x| ~ 1, every value must still be an exact float64 (within about 2^1022 ~ 4.5e307 "
                        "of the largest, with its low bits). Rescale or clip this column"
                    )
        if peak is None:
            peak = float(w.max()) if w.size else 0.0
        f = int(math.frexp(peak)[1]) if (0.0 < peak < 0.5 or peak > 2.0**W_BAND) else 0
        slack = 0.0
        if f:
            w_back = np.ldexp(np.ldexp(w, -f), f)
            if np.any(w_back != w):
                lost_weight = math.fsum(float(v) for v in np.abs(w - w_back))
                slack = math.nextafter(lost_weight * (1.0 + 1e-12), math.inf)
        return cls(column_exponents=exponents, weight_exponent=f, weight_slack=slack)

    @property
    def identity(self) -> bool:
        """True when the backend sees the data unchanged."""
        return self.weight_exponent == 0 and not self.column_exponents.any()

    def scale_X(self, X: np.ndarray) -> np.ndarray:
        """X as the backend sees it (exact)."""
        if not self.column_exponents.any():
            return X
        return np.ldexp(X, -self.column_exponents[None, :])

    def scale_w(self, w: np.ndarray) -> np.ndarray:
        """The non-negative weights as the backend sees them."""
        return w if self.weight_exponent == 0 else np.ldexp(w, -self.weight_exponent)

    def bound_back(self, bound: float) -> float:
        """A proved lower bound on the backend's (scaled) optimum, as a bound on the original one."""
        if not math.isfinite(bound) or (self.weight_exponent == 0 and self.weight_slack == 0.0):
            return bound
        return math.ldexp(bound, self.weight_exponent) - self.weight_slack

    def value_back(self, value: float) -> float:
        """A loss the backend reports on its scaled weights (e.g. an incumbent's), on the original ones."""
        return value if self.weight_exponent == 0 else math.ldexp(value, self.weight_exponent)

    def hypothesis_back(self, h: Hypothesis) -> Hypothesis:
        """A hypothesis found on the scaled points, on the original points (module docstring)."""
        if not isinstance(h, Halfspace) or not self.column_exponents.any():
            return h
        if h.exact is not None:  # exact coefficients: w_j = w'_j 2^-e_j exactly
            exact = h.coefficients()
            e = self.column_exponents
            return Halfspace.from_exact([c * Fraction(2) ** -int(e[j]) for j, c in enumerate(exact[:-1])], exact[-1])
        w = np.asarray(h.w, dtype=np.float64)
        e = self.column_exponents
        # the largest E with every |w_j| = |w'_j| 2^(E - e_j) below 2^W_LIMIT and every |w.x + b| =
        # 2^E |w'.x' + b'| <= 2^E (sum |w'_j| + |b'|) below 2^S_LIMIT (|x'| <= 1): the smallest
        # weights then keep as many bits as the float64 range allows
        scale = float(np.abs(w).sum()) + abs(float(h.b))
        if scale == 0.0:
            return Halfspace(tuple(w), float(h.b))
        limits = [S_LIMIT - math.frexp(scale)[1]]
        limits += [W_LIMIT + int(e[j]) - math.frexp(float(w[j]))[1] for j in np.flatnonzero(w)]
        E = min(limits)
        return Halfspace(tuple(np.ldexp(w, E - e)), math.ldexp(float(h.b), E))

    def to_dict(self) -> dict[str, object]:
        return {
            "column_exponents": self.column_exponents.tolist(),
            "weight_exponent": self.weight_exponent,
            "weight_slack": self.weight_slack,
        }
