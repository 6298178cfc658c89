"""The synthetic populations of the learner experiments: public points from mu, private records from
nu_x with a target labelled under random label noise, and the exact disagreement of a hypothesis with the
target (interval arithmetic or polygon clipping; no test set). The smoothness sigma of nu_x with respect to
mu is the quantity of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with
Public Data" (Lemma 22)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oraclepriv.hypotheses import Halfspace, Stump, Threshold

__all__ = [
    "ThresholdScenario",
    "StumpScenario",
    "HalfspaceScenario",
    "TARGET_FRACTION",
    "RRSPM_M_GRID",
    "scenario",
    "excess",
]

TARGET_FRACTION = 0.3  # target threshold at lo + 0.3 (hi - lo) of the private support


@dataclass(frozen=True)
class ThresholdScenario:
    """Public mu = U[0,1]; private nu_x = U[lo, hi]; target 1(x >= lo + 0.3 (hi - lo)); d_VC = 1."""

    lo: float = 0.0
    hi: float = 1.0
    hypothesis_class: str = "threshold"
    vc_dim: int = 1

    @property
    def target(self) -> float:
        return self.lo + TARGET_FRACTION * (self.hi - self.lo)

    @property
    def sigma(self) -> float:
        """Smoothness of nu_x w.r.t. U[0,1]: (hi - lo) if [lo, hi] lies in [0, 1], else 0 (not smooth)."""
        return self.hi - self.lo if (0.0 <= self.lo and self.hi <= 1.0) else 0.0

    def sample_private(self, n: int, label_noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.uniform(self.lo, self.hi, size=(n, 1))
        return X, _noisy(X[:, 0] >= self.target, label_noise, rng)

    def sample_public(self, m: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(0.0, 1.0, size=(m, 1))

    def disagreement(self, h: Threshold) -> float:
        """Exact P_{x ~ U[lo,hi]}(h(x) != 1(x >= target))."""
        theta = min(max(float(h.threshold), self.lo), self.hi)
        return abs(theta - self.target) / (self.hi - self.lo)


@dataclass(frozen=True)
class StumpScenario:
    """mu = nu_x = U[0,1]^k; target 1(x_0 >= 0.3); stumps on k features (d_VC = 4 for k = 3)."""

    k: int = 3
    hypothesis_class: str = "stump"
    vc_dim: int = 4
    sigma: float = 1.0

    def sample_private(self, n: int, label_noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.uniform(0.0, 1.0, size=(n, self.k))
        return X, _noisy(X[:, 0] >= TARGET_FRACTION, label_noise, rng)

    def sample_public(self, m: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(0.0, 1.0, size=(m, self.k))

    def disagreement(self, h: Stump) -> float:
        """Exact P_{x ~ U[0,1]^k}(h(x) != 1(x_0 >= 0.3))."""
        theta = min(max(float(h.threshold), 0.0), 1.0)
        t = TARGET_FRACTION
        if h.feature == 0:
            if h.sign == 1:  # h = 1(x_0 >= theta)
                return abs(theta - t)
            # h = 1(x_0 <= theta): wrong on [0, min(theta, t)) and (max(theta, t), 1]
            return min(theta, t) + 1.0 - max(theta, t)
        q = (1.0 - theta) if h.sign == 1 else theta  # P(h = 1), independent of x_0
        return q * t + (1.0 - q) * (1.0 - t)


def _clip(polygon: list[tuple[float, float]], w: tuple[float, float], b: float) -> list[tuple[float, float]]:
    """Sutherland-Hodgman: the part of a convex polygon where w.x + b >= 0."""
    out: list[tuple[float, float]] = []
    for i, p in enumerate(polygon):
        q = polygon[(i + 1) % len(polygon)]
        fp, fq = w[0] * p[0] + w[1] * p[1] + b, w[0] * q[0] + w[1] * q[1] + b
        if fp >= 0:
            out.append(p)
        if (fp >= 0) != (fq >= 0):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _area(polygon: list[tuple[float, float]]) -> float:
    return (
        0.5 * abs(sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(polygon, polygon[1:] + polygon[:1])))
        if len(polygon) > 2
        else 0.0
    )


_SQUARE = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


@dataclass(frozen=True)
class HalfspaceScenario:
    """mu = nu_x = U[0,1]^2; target 1(x_0 + x_1 >= 0.8) (a diagonal line, so no stump is exact); halfspaces
    in the plane (d_VC = 3). Disagreement is the exact area of the symmetric difference inside the square."""

    hypothesis_class: str = "halfspace"
    vc_dim: int = 3
    sigma: float = 1.0
    target_w: tuple[float, float] = (1.0, 1.0)
    target_b: float = -0.8

    def sample_private(self, n: int, label_noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.uniform(0.0, 1.0, size=(n, 2))
        return X, _noisy(X @ np.asarray(self.target_w) + self.target_b >= 0, label_noise, rng)

    def sample_public(self, m: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(0.0, 1.0, size=(m, 2))

    def disagreement(self, h: Halfspace) -> float:
        """Exact P_{x ~ U[0,1]^2}(h(x) != target(x)) = |A| + |T| - 2 |A and T| (polygon clipping)."""
        w, b = (float(h.w[0]), float(h.w[1])), float(h.b)
        if w == (0.0, 0.0):
            a = _SQUARE if b >= 0 else []
        else:
            a = _clip(_SQUARE, w, b)
        t = _clip(_SQUARE, self.target_w, self.target_b)
        both = _clip(t, w, b) if w != (0.0, 0.0) else (t if b >= 0 else [])
        return max(0.0, _area(a) + _area(t) - 2.0 * _area(both))


def _noisy(clean: np.ndarray, label_noise: float, rng: np.random.Generator) -> np.ndarray:
    y = clean.astype(np.int8)
    if label_noise:
        y[rng.random(y.shape[0]) < label_noise] ^= 1
    return y


#: the grid of public sample sizes m on which RRSPM is tuned in the learner comparisons
RRSPM_M_GRID = (2, 3, 4, 6, 10, 16, 25, 40, 63, 100, 158, 251, 398)


def scenario(name: str) -> ThresholdScenario | StumpScenario | HalfspaceScenario:
    """The default scenario of a class: "threshold", "stump" or "halfspace"."""
    return {"threshold": ThresholdScenario, "stump": StumpScenario, "halfspace": HalfspaceScenario}[name]()


def excess(scen, h, p: float) -> float:
    """Exact population excess error of ``h`` under label noise ``p``: (1 - 2p) * disagreement with the target."""
    return (1 - 2 * p) * scen.disagreement(h)
