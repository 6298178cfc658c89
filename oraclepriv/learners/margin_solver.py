"""The convex pieces of the margin learners: the rho-hinge loss, the DP solver that stands in for the phased SGD, and
the exact minimum of the rho-hinge loss over a ball.

Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees", Section 3.2: for labels s in {-1, +1}
the rho-hinge loss of w on (x, s) is max(0, 1 - s <w, x> / rho), convex and 1/rho-Lipschitz in <w, x>.

* :func:`noisy_projected_descent` — STAND-IN for the "Phased SGD algorithm for GLL" of Bassily, Guzman, Menart,
  "Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex Settings" (Algorithm 2),
  whose smoothing and phase constants are not rebuilt here: full-batch noisy projected subgradient descent with
  Gaussian noise, private by the Gaussian mechanism's exact accounting (:mod:`oraclepriv.learners.margin_privacy`);
* :func:`minimum_hinge_loss` — min over ||w|| <= Lambda of the mean rho-hinge loss, bracketed by a primal point and
  a dual point (the gap certified by evaluating both exactly; the points from the smoothed hinge). Algorithm 6 needs
  this minimum g_rho(S), whose sensitivity is what its selection is calibrated to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = [
    "HingeMinimum",
    "hinge_losses",
    "mean_hinge_loss",
    "minimum_hinge_loss",
    "noisy_projected_descent",
    "project_to_ball",
]


def hinge_losses(W: np.ndarray, Z: np.ndarray, s: np.ndarray, margin: float) -> np.ndarray:
    """max(0, 1 - s_i <w, z_i> / rho) for every row w of ``W`` (shape (M, p)) and record i; shape (M, n)."""
    return np.maximum(0.0, 1.0 - (np.atleast_2d(W) @ Z.T) * s[None, :] / float(margin))


def mean_hinge_loss(W: np.ndarray, Z: np.ndarray, s: np.ndarray, margin: float) -> np.ndarray:
    """The empirical rho-hinge loss of every row of ``W``: shape (M,)."""
    return hinge_losses(W, Z, s, margin).mean(axis=1)


def project_to_ball(w: np.ndarray, radius: float) -> np.ndarray:
    """The Euclidean projection of ``w`` onto the ball of radius ``radius``."""
    norm = float(np.linalg.norm(w))
    return w if norm <= radius else w * (radius / norm)


def noisy_projected_descent(
    Z: np.ndarray,
    s: np.ndarray,
    margin: float,
    radius: float,
    sigma: float,
    n_steps: int,
    step_size: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """The average of T iterates of noisy projected subgradient descent on the mean rho-hinge loss.

    w_0 = 0; w_(t+1) = Proj_ball(w_t - eta (g_t + sigma xi_t)), g_t the mean subgradient at w_t (a record with
    s <w, z> < rho contributes -s z / rho, the others 0), xi_t ~ N(0, I). Every per-record subgradient has norm at
    most ||z|| / rho, so replacing one of the n records moves g_t by at most 2 max||z|| / (rho n): each step is a
    Gaussian mechanism, and the release (the average) is post-processing of the transcript.

    Parameters
    ----------
    Z : numpy.ndarray of shape (n, p)
        The records' features.
    s : numpy.ndarray of shape (n,)
        Their labels in {-1, +1}.
    margin : float
        rho > 0.
    radius : float
        The parameter ball's radius.
    sigma : float
        The noise's standard deviation per coordinate and step.
    n_steps : int
        T >= 1.
    step_size : float
        eta > 0.
    rng : numpy.random.Generator
        The noise's source.

    Returns
    -------
    numpy.ndarray of shape (p,)
        The averaged iterate, inside the ball.
    """
    n, p = Z.shape
    w = np.zeros(p)
    total = np.zeros(p)
    for _ in range(int(n_steps)):
        active_labels = np.where(s * (Z @ w) < margin, s, 0.0)  # s_i where the hinge is active, else 0
        gradient = -(Z.T @ active_labels) / (margin * n)
        w = project_to_ball(w - step_size * (gradient + sigma * rng.standard_normal(p)), radius)
        total += w
    return total / int(n_steps)


@dataclass(frozen=True)
class HingeMinimum:
    """min over ||w|| <= Lambda of the mean rho-hinge loss, bracketed: ``lower <= minimum <= upper``.

    Parameters
    ----------
    upper : float
        The loss of ``w``, a point of the ball.
    lower : float
        A dual bound: (1/n) (sum alpha - (Lambda / rho) ||sum alpha_i s_i z_i||) for some alpha in [0, 1]^n.
    w : numpy.ndarray
        The best point found.
    rounds : int
        Smoothing widths used.
    """

    upper: float
    lower: float
    w: np.ndarray
    rounds: int

    @property
    def gap(self) -> float:
        """upper - lower, >= 0."""
        return self.upper - self.lower


def _dual_bound(alpha: np.ndarray, Z: np.ndarray, s: np.ndarray, margin: float, radius: float) -> float:
    """For alpha in [0, 1]^n: max(0, 1 - a) >= alpha (1 - a), then min over the ball of the linear term."""
    alpha = np.clip(alpha, 0.0, 1.0)
    n = Z.shape[0]
    return float((alpha.sum() - radius / margin * np.linalg.norm(Z.T @ (alpha * s))) / n)


#: the smoothing widths of the hinge tried in turn (in units of t = 1 - <a, w>/rho), down to the gap asked for
_WIDTHS = (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


def _smoothed(w: np.ndarray, A: np.ndarray, margin: float, width: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The mean Huber-smoothed hinge (t^2/(2 mu) on [0, mu], t - mu/2 beyond, t = 1 - <a_i, w>/rho), its gradient,
    and alpha_i = clip(t_i/mu, 0, 1), the derivative at each record (a dual point)."""
    t = 1.0 - (A @ w) / margin
    alpha = np.clip(t / width, 0.0, 1.0)
    value = np.where(t >= width, t - width / 2.0, np.where(t > 0, t * t / (2.0 * width), 0.0))
    n = A.shape[0]
    return float(value.mean()), -(A.T @ alpha) / (margin * n), alpha


def minimum_hinge_loss(Z: np.ndarray, s: np.ndarray, margin: float, radius: float, gap: float) -> HingeMinimum:
    """min over ||w|| <= ``radius`` of (1/n) sum max(0, 1 - s_i <w, z_i> / rho), bracketed within ``gap``.

    Lower bound: for any alpha in [0, 1]^n, D(alpha) = (1/n) (sum alpha - (Lambda / rho) ||sum alpha_i s_i z_i||) is
    below the minimum (max(0, t) >= alpha t, and the ball's minimum of a linear term). Upper bound: the loss of a
    point of the ball. The points come from minimising the Huber-smoothed hinge of width mu over the ball (SLSQP, in
    the p dimensions of w, warm-started over mu = 1, 0.1, ... down to ``gap``, the last width restarted twice): at its
    minimiser, alpha_i = clip(t_i / mu, 0, 1) gives a gap of at most mu/4, so the last width closes it up to the
    solver's accuracy. Both ends are evaluated exactly; the sequence stops once they are within ``gap``.

    Raises
    ------
    RuntimeError
        When the last width leaves the gap above ``gap``.
    """
    n, p = Z.shape
    A = s[:, None] * Z
    w = np.zeros(p)
    best = HingeMinimum(math.inf, -math.inf, w, 0)
    ball = {"type": "ineq", "fun": lambda v: radius * radius - v @ v, "jac": lambda v: -2.0 * v}
    widths = [width for width in _WIDTHS if width > gap] + [gap, gap, gap]  # the last width, restarted twice
    for rounds, width in enumerate(widths, start=1):
        result = minimize(
            lambda v, width=width: _smoothed(v, A, margin, width)[:2],
            w,
            jac=True,
            method="SLSQP",
            constraints=[ball],
            options={"maxiter": 1000, "ftol": 1e-15},
        )
        w = project_to_ball(np.asarray(result.x, dtype=np.float64), radius)
        alpha = _smoothed(w, A, margin, width)[2]
        upper = float(mean_hinge_loss(w, Z, s, margin)[0])
        lower = _dual_bound(alpha, Z, s, margin, radius)
        best = HingeMinimum(min(best.upper, upper), max(best.lower, lower), w if upper < best.upper else best.w, rounds)
        if best.gap <= gap:
            return best
    raise RuntimeError(f"minimum_hinge_loss: gap {best.gap:.3g} above {gap:.3g} after the smoothing sequence")
