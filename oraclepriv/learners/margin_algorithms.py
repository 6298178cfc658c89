"""Algorithms 2, 4 and 6 of Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees", as
functions of the validated data (the estimators: :mod:`oraclepriv.learners.margin`; the calibration:
:mod:`oraclepriv.learners.margin_privacy`; docs/theory/margin-learners.md).

* :func:`efficient_private_margin` — Algorithm 2: a data-independent Johnson-Lindenstrauss matrix Phi (k x d, entries
  +-1/sqrt(k); the identity when d <= k or ``jl_dim=None``), the records mapped to Phi x clipped to the ball of
  radius 2r, Algorithm 4 on them (M rounds: resample n records with replacement, run the DP solver on the rho-hinge
  loss; then the exponential mechanism over the M candidates at epsilon/2), and the map back w = Phi^T w~. The solver
  is the stand-in of :func:`~oraclepriv.learners.margin_solver.noisy_projected_descent`, not the phased SGD of
  Bassily, Guzman, Menart. Under ``accounting="direct-gaussian"`` (our derivation) the rounds run on the records
  themselves, without resampling; with one round the selection, a constant map, is skipped and the rounds get all
  of epsilon.
* :func:`select_margin` — Algorithm 6, steps 1-2 with the bound of Corollary F.2: the grid rho_j = 2^-j Lambda r,
  j = 1..ceil(log2(n)/2), and the generalized exponential mechanism on the bound's value at each rho_j.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oraclepriv.learners.margin_privacy import jl_dimension, round_calibration, rounds_for_confidence
from oraclepriv.learners.margin_selection import (
    exponential_mechanism_log_probabilities,
    generalized_exponential_mechanism_log_probabilities,
    sample_index,
)
from oraclepriv.learners.margin_solver import (
    HingeMinimum,
    mean_hinge_loss,
    minimum_hinge_loss,
    noisy_projected_descent,
)

__all__ = [
    "FeatureMap",
    "MarginErrors",
    "MarginFit",
    "MarginSelection",
    "bound_penalty",
    "draw_feature_map",
    "efficient_private_margin",
    "margin_errors",
    "margin_grid",
    "resolve_jl_dim",
    "resolve_rounds",
    "select_margin",
    "selection_sensitivity",
    "solver_schedule",
]

#: what the release says about the solver (never the paper's algorithm)
STAND_IN = (
    "STAND-IN for the phased SGD of Bassily, Guzman, Menart (Algorithm 2, not rebuilt): full-batch noisy projected "
    "subgradient descent on the mean rho-hinge loss, N(0, sigma^2 I) per step, averaged iterate; exact Gaussian "
    "accounting (mu-GDP)"
)


@dataclass(frozen=True)
class FeatureMap:
    """x -> (Phi x clipped to the ball of radius ``clip``, then the constant ``intercept_scale`` appended if set).

    Per record and data-independent: drawn before the data are read (Phi) or fixed by the parameters.
    """

    projection: np.ndarray | None
    clip: float
    intercept_scale: float | None

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The mapped records, shape (n, p)."""
        V = X if self.projection is None else X @ self.projection.T
        if self.projection is not None:
            norms = np.linalg.norm(V, axis=1)
            V = V * np.minimum(1.0, self.clip / np.maximum(norms, np.finfo(float).tiny))[:, None]
        if self.intercept_scale is None:
            return V
        return np.hstack([V, np.full((V.shape[0], 1), self.intercept_scale)])

    @property
    def feature_radius(self) -> float:
        """r~, the mapped records' norm bound."""
        return math.hypot(self.clip, self.intercept_scale or 0.0)

    def back(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        """(coef on the raw features, intercept) with <coef, x> + intercept = <w, mapped x> before clipping."""
        weights, intercept = (w[:-1], float(w[-1]) * float(self.intercept_scale)) if self.intercept_scale else (w, 0.0)
        coef = weights if self.projection is None else self.projection.T @ weights
        return np.asarray(coef, dtype=np.float64), intercept


def draw_feature_map(
    d: int, k: int | None, radius: float, fit_intercept: bool, rng: np.random.Generator
) -> tuple[FeatureMap, bool]:
    """The map of Algorithm 2, steps 1-3 (Phi has entries +-1/sqrt(k); the identity when k is None or d <= k); also
    whether it projects."""
    projected = k is not None and k < d
    Phi = rng.choice(np.array([-1.0, 1.0]), size=(k, d)) / math.sqrt(k) if k is not None and projected else None
    clip = 2.0 * radius if projected else radius
    return FeatureMap(Phi, clip, radius if fit_intercept else None), projected


def resolve_rounds(rounds: Any, confidence: float) -> int:
    """M: ``rounds="auto"`` is Algorithm 4's ceil(log(2/beta)) (its step 1), a positive int is taken as given."""
    return rounds_for_confidence(confidence) if rounds == "auto" else int(rounds)


def resolve_jl_dim(jl_dim: Any, n: int, epsilon: float, delta: float, confidence: float) -> int | None:
    """k: ``"auto"`` is the k of the proof of Theorem 3.2 (:func:`~oraclepriv.learners.margin_privacy.jl_dimension`), an int is taken as given, None is
    no projection (the identity)."""
    if jl_dim is None:
        return None
    return jl_dimension(n, epsilon, delta, confidence) if jl_dim == "auto" else int(jl_dim)


def _projection_words(k: int | None, d: int, projected: bool) -> str:
    if k is None:
        return "identity: jl_dim=None"
    return f"Rademacher +-1/sqrt(k), k={k} < d={d}" if projected else f"identity: d={d} <= k={k}"


def solver_schedule(
    mu: float, n: int, p: int, feature_radius: float, margin: float, ball: float, steps: int
) -> tuple[int, float, float, float]:
    """(T, sigma, eta, gradient sensitivity) of the stand-in for a per-copy mu and T = ``steps``:
    sigma = sqrt(T) (2 r~ / (rho n)) / mu, eta = Lambda / (sqrt(T) sqrt(G^2 + p sigma^2)), G = r~ / rho (the step of
    the projected stochastic subgradient bound). T and eta are utility choices; the privacy is in mu alone."""
    steps = int(steps)
    sensitivity = 2.0 * feature_radius / (margin * n)
    sigma = math.sqrt(steps) * sensitivity / mu
    lipschitz = feature_radius / margin
    eta = ball / (math.sqrt(steps) * math.sqrt(lipschitz**2 + p * sigma**2))
    return steps, sigma, eta, sensitivity


def selection_sensitivity(ball: float, feature_radius: float, margin: float, n: int) -> float:
    """(1 + Lambda r~ / rho) / n: a candidate's mean rho-hinge loss moves by at most this much when one record is
    replaced, since each record's loss lies in [0, 1 + Lambda r~ / rho] (||w|| <= Lambda, ||z|| <= r~)."""
    return (1.0 + ball * feature_radius / margin) / n


@dataclass
class MarginFit:
    """What :func:`efficient_private_margin` returns: the released halfspace, its privacy record and diagnostics."""

    coef: np.ndarray
    intercept: float
    privacy: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)


def efficient_private_margin(
    X: np.ndarray,
    s: np.ndarray,
    *,
    epsilon: float,
    delta: float,
    margin: float,
    radius: float,
    norm_bound: float,
    jl_dim: Any,
    confidence: float,
    accounting: str,
    fit_intercept: bool,
    n_steps: int,
    rng: np.random.Generator,
    rounds: Any = "auto",
) -> MarginFit:
    """Algorithm 2 with Algorithm 4 as its step 4 (module docstring); labels ``s`` in {-1, +1}, rows in the ball.

    ``rounds`` is M ("auto": ceil(log(2/beta))); ``jl_dim`` is k ("auto", an int, or None: no projection); the
    rounds' noise follows ``accounting`` (:func:`~oraclepriv.learners.margin_privacy.round_calibration`).
    """
    n, d = X.shape
    M = resolve_rounds(rounds, confidence)
    selection = M > 1  # one candidate: the exponential mechanism is a constant map and is skipped
    k = resolve_jl_dim(jl_dim, n, epsilon, delta, confidence)
    fmap, projected = draw_feature_map(d, k, radius, fit_intercept, rng)
    Z = fmap.apply(X)
    r_tilde, p = fmap.feature_radius, Z.shape[1]
    ball = 2.0 * norm_bound if projected else norm_bound
    calibration = round_calibration(accounting, epsilon, delta, M, n, selection)
    steps, sigma, eta, sensitivity = solver_schedule(calibration.mu, n, p, r_tilde, margin, ball, n_steps)
    candidates = []
    for _ in range(M):
        if calibration.resample:
            drawn = rng.integers(n, size=n)
            candidates.append(noisy_projected_descent(Z[drawn], s[drawn], margin, ball, sigma, steps, eta, rng))
        else:
            candidates.append(noisy_projected_descent(Z, s, margin, ball, sigma, steps, eta, rng))
    W = np.array(candidates)
    losses = mean_hinge_loss(W, Z, s, margin)
    score_sensitivity = selection_sensitivity(ball, r_tilde, margin, n)
    if selection:
        log_p = exponential_mechanism_log_probabilities(losses, epsilon / 2.0, score_sensitivity)
        chosen = sample_index(log_p, rng)
        selection_record: dict[str, Any] = {
            "selection_epsilon": epsilon / 2.0,
            "selection_sensitivity": score_sensitivity,
            "selection": "exponential mechanism, P(t) proportional to exp(-(eps/2) L_S(w_t) / (2 Delta)), "
            "Delta = (1 + Lambda r~ / rho) / n",
        }
    else:
        log_p, chosen = np.zeros(1), 0
        selection_record = {
            "selection_epsilon": 0.0,
            "selection_sensitivity": None,
            "selection": "none: one round, one candidate; a map whose output does not depend on the data costs no "
            "privacy, so the rounds get all of epsilon",
        }
    coef, intercept = fmap.back(W[chosen])
    resampled = "on records resampled with replacement" if calibration.resample else "on the records themselves"
    chooser = "exponential-mechanism selection at epsilon/2" if selection else "no selection (one round)"
    privacy = {
        "mechanism": "Bassily-Mohri-Suresh Algorithm 2: a data-independent JL projection, Algorithm 4 (rounds of a DP "
        f"convex solver {resampled}, {chooser}), the map back",
        "solver": STAND_IN,
        "accounting": accounting,
        "rounds_rule": "auto: M = ceil(log(2/beta))" if rounds == "auto" else f"given: rounds={M}",
        **calibration.record,
        "resampling": "with replacement, n records a round" if calibration.resample else "none",
        "projection": _projection_words(k, d, projected),
        "jl_dim": k,
        "projected": projected,
        "margin": float(margin),
        "radius": float(radius),
        "norm_bound": float(norm_bound),
        "clip_radius": fmap.clip,
        "intercept_feature": fmap.intercept_scale,
        "feature_radius": r_tilde,
        "parameter_radius": ball,
        "confidence": float(confidence),
        "solver_mu": calibration.mu,
        "solver_gradient_sensitivity": sensitivity,
        "solver_sigma": sigma,
        "solver_steps": steps,
        "solver_step_size": eta,
        **selection_record,
        "oracle_calls_by_design": 0,
    }
    diagnostics = {
        "candidate_losses": losses.tolist(),
        "selection_probabilities": np.exp(log_p).tolist(),
        "chosen_round": chosen,
        "released_margin_loss": float(losses[chosen]),
    }
    return MarginFit(coef, intercept, privacy, diagnostics)


def margin_grid(n: int, largest: float) -> np.ndarray:
    """rho_j = 2^-j h_max, j = 1..J, J = max(1, ceil(log2(n) / 2)): the grid of Algorithm 6, step 1, down to about
    h_max / sqrt(n)."""
    J = max(1, math.ceil(0.5 * math.log2(max(n, 2))))
    return largest * 2.0 ** -np.arange(1, J + 1)


def bound_penalty(margins: np.ndarray, n: int, h_max: float, epsilon: float, delta: float, confidence: float):
    """F(rho, t) - t of Corollary F.2 with its O(.) constants set to 1: sqrt(log(1/beta)/n) +
    (h_max/rho) (1/sqrt(n) + sqrt(log(n/beta) log(1/beta)) log^(3/4)(1/delta) / sqrt(eps n)). Data-independent."""
    beta = float(confidence)
    private = math.sqrt(math.log(n / beta) * math.log(1.0 / beta)) * math.log(1.0 / delta) ** 0.75
    per_margin = 1.0 / math.sqrt(n) + private / math.sqrt(epsilon * n)
    return math.sqrt(math.log(1.0 / beta) / n) + (h_max / np.asarray(margins)) * per_margin


@dataclass
class MarginSelection:
    """The outcome of :func:`select_margin`: the chosen margin and what the record and diagnostics show."""

    margin: float
    privacy: dict[str, Any]
    diagnostics: dict[str, Any]


@dataclass(frozen=True)
class MarginErrors:
    """The scores of Algorithm 6's selection: the grid, F at each margin, and the sensitivities Delta_j."""

    grid: np.ndarray
    errors: np.ndarray
    sensitivities: np.ndarray
    minima: list[HingeMinimum]


def margin_errors(
    Z: np.ndarray,
    s: np.ndarray,
    *,
    inner_epsilon: float,
    delta: float,
    norm_bound: float,
    feature_radius: float,
    confidence: float,
    opt_tol: float,
) -> MarginErrors:
    """F_j = g_j + penalty(rho_j) on the grid, with Delta_j = (1 + h_max/rho_j)/n + tau_j (h_max = Lambda r~).

    g_j = min over ||w|| <= Lambda of the mean rho_j-hinge loss on ``Z``, computed within tau_j =
    opt_tol (1 + h_max/rho_j)/n and taken at its upper bound; the penalty of :func:`bound_penalty` at the inner run's
    (``inner_epsilon``, ``delta``, ``confidence``), the same on neighbouring datasets. A record's loss lies in
    [0, 1 + h_max/rho_j], so the exact minimum moves by at most (1 + h_max/rho_j)/n, the computed one by tau_j more.
    """
    n = Z.shape[0]
    h_max = norm_bound * feature_radius
    grid = margin_grid(n, h_max)
    exact = (1.0 + h_max / grid) / n
    tolerance = opt_tol * exact
    minima = [minimum_hinge_loss(Z, s, float(rho), norm_bound, float(tau)) for rho, tau in zip(grid, tolerance)]
    errors = np.array([m.upper for m in minima]) + bound_penalty(grid, n, h_max, inner_epsilon, delta, confidence)
    return MarginErrors(grid, errors, exact + tolerance, minima)


def select_margin(
    Z: np.ndarray,
    s: np.ndarray,
    *,
    epsilon: float,
    inner_epsilon: float,
    delta: float,
    norm_bound: float,
    feature_radius: float,
    confidence: float,
    opt_tol: float,
    rng: np.random.Generator,
) -> MarginSelection:
    """Algorithm 6, steps 1-2: the margin drawn by the generalized exponential mechanism at ``epsilon`` from the
    scores of :func:`margin_errors`."""
    scores = margin_errors(
        Z,
        s,
        inner_epsilon=inner_epsilon,
        delta=delta,
        norm_bound=norm_bound,
        feature_radius=feature_radius,
        confidence=confidence,
        opt_tol=opt_tol,
    )
    log_p = generalized_exponential_mechanism_log_probabilities(
        scores.errors, scores.sensitivities, epsilon, confidence
    )
    chosen = sample_index(log_p, rng)
    privacy = {
        "margin_grid": scores.grid.tolist(),
        "margin_sensitivities": scores.sensitivities.tolist(),
        "margin_selection_epsilon": float(epsilon),
        "margin_selection": "generalized exponential mechanism (after Raskhodnikova-Smith, Alg. 1) on F(rho_j) = "
        "min hinge loss + Corollary F.2's bound with constants 1; P(j) proportional to exp(-eps s_j / 2)",
        "margin_bound_penalty": "sqrt(log(1/beta)/n) + (h_max/rho)(1/sqrt(n) + sqrt(log(n/beta) log(1/beta)) "
        "log^(3/4)(1/delta) / sqrt(eps n))",
        "selected_margin": float(scores.grid[chosen]),
    }
    diagnostics = {
        "margin_errors": scores.errors.tolist(),
        "minimum_hinge_losses": [m.upper for m in scores.minima],
        "minimum_gaps": [m.gap for m in scores.minima],
        "margin_probabilities": np.exp(log_p).tolist(),
    }
    return MarginSelection(float(scores.grid[chosen]), privacy, diagnostics)
