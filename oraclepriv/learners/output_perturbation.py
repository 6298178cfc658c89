"""Output perturbation for L2-regularised logistic regression: a DP learner that calls no 0-1 oracle.

Chaudhuri, Monteleoni and Sarwate, "Differentially Private Empirical Risk Minimization" (JMLR 12, 2011),
Algorithm 1 (output perturbation), privacy by Theorem 6, logistic regression by Corollary 8. The
calibration in our words: docs/theory/output-perturbation.md.

    1. every row is mapped to the unit ball: x -> x / R, rescaled to norm 1 if longer (R = ``data_norm``,
       a public bound; the map reads one record only), then, with ``fit_intercept``, phi(x) = (x', 1) / sqrt(2);
    2. theta* = argmin_theta (1/n) sum_i log(1 + exp(-y_i theta . phi(x_i))) + (lambda / 2) ||theta||^2,
       labels y_i in {-1, +1} (scikit-learn's LogisticRegression with C = 1 / (n lambda), then Newton
       steps until the gradient certifies ||theta_hat - theta*|| <= tau, see below);
    3. release theta_hat + b, where b has density proportional to exp(-||b|| / s), s = Delta / epsilon:
       ||b|| ~ Gamma(p, s) (p = the dimension of theta), direction uniform on the sphere.

Sensitivity: with ||phi(x)|| <= 1 and |d/dz log(1 + e^-z)| <= 1, the exact minimisers on two datasets
that differ in one record are at most 2 / (n lambda) apart (Theorem 6's proof); the optimiser's own error
is bounded from the gradient by strong convexity, ||theta_hat - theta*|| <= ||grad J(theta_hat)|| / lambda,
and required to be at most tau = ``opt_tol`` * 2 / (n lambda), so Delta = (2 / (n lambda)) (1 + 2 opt_tol)
bounds the distance between the two *computed* vectors. Pure epsilon-DP under replacement of one record.

It needs no public data and makes no oracle call: the project's experiments use it as the outside
yardstick of the oracle-efficient learners (``oraclepriv.experiments.oracle_cost``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from oraclepriv.hypotheses import Halfspace
from oraclepriv.learners._base import PrivateEstimator, make_rng
from oraclepriv.ledger import Ledger
from oraclepriv.validation import BOOLEAN, POSITIVE_REAL, Alternatives, Interval

__all__ = ["OutputPerturbationLogistic", "clip_rows", "logistic_minimiser", "sample_output_noise"]

REFERENCE = (
    "Chaudhuri, Monteleoni, Sarwate, Differentially Private Empirical Risk Minimization (JMLR 2011): "
    "Algorithm 1 (output perturbation), Theorem 6 and Corollary 8; docs/theory/output-perturbation.md"
)


def clip_rows(X: np.ndarray, data_norm: float) -> np.ndarray:
    """Each row divided by ``data_norm``, then scaled down to norm 1 if it is longer (one record at a time)."""
    V = np.asarray(X, dtype=np.float64) / float(data_norm)
    norms = np.linalg.norm(V, axis=1)
    return V / np.maximum(1.0, norms)[:, None]


def _objective_parts(theta: np.ndarray, Phi: np.ndarray, s: np.ndarray, lam: float):
    """Gradient and Hessian of J(theta) = mean log(1 + exp(-s Phi theta)) + lam/2 ||theta||^2, s in {-1, +1}."""
    margins = s * (Phi @ theta)
    p = 0.5 * (1.0 + np.tanh(0.5 * margins))  # sigma(margin), stable for any magnitude
    n = Phi.shape[0]
    grad = -(Phi.T @ (s * (1.0 - p))) / n + lam * theta
    hess = (Phi.T * (p * (1.0 - p))) @ Phi / n + lam * np.eye(Phi.shape[1])
    return grad, hess


def _objective(theta: np.ndarray, Phi: np.ndarray, s: np.ndarray, lam: float) -> float:
    return float(np.mean(np.logaddexp(0.0, -s * (Phi @ theta))) + 0.5 * lam * theta @ theta)


def logistic_minimiser(Phi: np.ndarray, y01: np.ndarray, lam: float, grad_tol: float) -> tuple[np.ndarray, float]:
    """theta minimising (1/n) sum log(1 + exp(-y_i theta . phi_i)) + lam/2 ||theta||^2, with ||grad|| <= grad_tol.

    scikit-learn's LogisticRegression (lbfgs, C = 1/(n lam), no intercept: the map phi carries it) gives
    the start when both labels occur; damped Newton steps then drive the gradient norm below ``grad_tol``
    (the objective is lam-strongly convex, so ||theta - theta*|| <= ||grad|| / lam). Returns (theta,
    final gradient norm); raises RuntimeError if the tolerance is not reached (it is far above float64
    rounding for the tolerances used here)."""
    n, p = Phi.shape
    s = 2.0 * np.asarray(y01, dtype=np.float64) - 1.0
    theta = np.zeros(p)
    if 0 < int(np.sum(y01)) < n:
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=1.0 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=10_000)
        theta = np.asarray(model.fit(Phi, y01).coef_[0], dtype=np.float64)
    for _ in range(100):
        grad, hess = _objective_parts(theta, Phi, s, lam)
        norm = float(np.linalg.norm(grad))
        if norm <= grad_tol:
            return theta, norm
        step = np.linalg.solve(hess, grad)
        full = theta - step
        if float(np.linalg.norm(_objective_parts(full, Phi, s, lam)[0])) < norm:  # the Newton step helps: take it
            theta = full
            continue
        value, t = _objective(theta, Phi, s, lam), 0.5  # far from the optimum: backtrack (Armijo)
        while t > 1e-12 and _objective(theta - t * step, Phi, s, lam) > value - 0.25 * t * float(grad @ step):
            t *= 0.5
        theta = theta - t * step
    raise RuntimeError(f"logistic_minimiser: gradient norm {norm:.3g} did not reach {grad_tol:.3g} in 100 Newton steps")


def sample_output_noise(rng: np.random.Generator, dim: int, scale: float) -> np.ndarray:
    """b with density proportional to exp(-||b|| / scale) in R^dim: norm ~ Gamma(dim, scale), direction uniform."""
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return rng.gamma(shape=dim, scale=scale) * direction


class OutputPerturbationLogistic(PrivateEstimator):
    """Pure epsilon-DP L2-regularised logistic regression by output perturbation (module docstring).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter, > 0.
    regularization : float, default=0.01
        lambda in (1/n) sum loss + (lambda/2) ||theta||^2, > 0. Larger means less noise (the sensitivity
        is 2/(n lambda)) and more shrinkage.
    data_norm : float, default=1.0
        Public bound R on the feature norm: rows are divided by R and rows still longer than 1 are scaled
        down to norm 1 before fitting (never at prediction). Choose it without looking at the data.
    fit_intercept : bool, default=True
        Append a constant feature (the intercept is regularised like the weights: phi(x) = (x', 1)/sqrt(2)).
    opt_tol : float, default=1e-6
        Largest optimiser error allowed, as a fraction of the sensitivity 2/(n lambda); certified by the
        gradient norm and added to the sensitivity.
    random_state : int, SeedSequence, Generator or None
        Source of the noise.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Weights of the released linear score on the raw features.
    intercept_ : ndarray of shape (1,)
        Its intercept (0 without ``fit_intercept``).
    hypothesis_ : Halfspace
        The released classifier, 1 iff ``coef_ . x + intercept_ >= 0``.
    release_ : Release
        The hypothesis and its data-independent privacy record (sensitivity, noise law).
    classes_ : ndarray of shape (2,)
        The class labels.

    Notes
    -----
    Non-private diagnostics (``diagnostics_``, warned): ``gradient_norm`` at the optimiser's answer and
    ``clipped_rows``, the number of rows longer than ``data_norm``. The ledger is empty: no oracle call.

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially Private Empirical Risk
       Minimization", JMLR 12 (2011), Algorithm 1, Theorem 6, Corollary 8.
    """

    algorithm = "output-perturbation-logistic"
    reference = REFERENCE
    diagnostic_names = ("gradient_norm", "clipped_rows")

    #: pure epsilon-DP: no delta
    delta = 0.0
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PrivateEstimator._parameter_constraints,
        "regularization": (POSITIVE_REAL,),
        "data_norm": (POSITIVE_REAL,),
        "fit_intercept": (BOOLEAN,),
        # a fraction of the sensitivity: the minimiser's certified gradient norm is below opt_tol times it
        "opt_tol": (Interval("real", 0.0, 1.0, "neither"),),
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        regularization: float = 0.01,
        data_norm: float = 1.0,
        fit_intercept: bool = True,
        opt_tol: float = 1e-6,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.regularization = regularization
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.opt_tol = opt_tol
        self.random_state = random_state

    def features(self, X: np.ndarray) -> np.ndarray:
        """phi(x): the rows mapped into the unit ball (module docstring, step 1)."""
        V = clip_rows(X, float(self.data_norm))
        if not self.fit_intercept:
            return V
        return np.hstack([V, np.ones((V.shape[0], 1))]) / math.sqrt(2.0)

    def sensitivity(self, n: int) -> float:
        """Delta = (2 / (n lambda)) (1 + 2 opt_tol): the l2 distance between the computed minimisers of neighbours."""
        return 2.0 / (n * float(self.regularization)) * (1.0 + 2.0 * float(self.opt_tol))

    def fit(self, X: Any, y: Any) -> OutputPerturbationLogistic:
        """Fit on the private records (X, y); returns self.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The private features.
        y : array-like of shape (n,)
            The private labels, two classes.

        Returns
        -------
        OutputPerturbationLogistic
            The fitted learner.
        """
        self._check_constructor_params()
        X = self._validate_features(X, "X", reset=True)
        y01 = self._encode_labels(y, X.shape[0], "y")
        self.delta_ = 0.0
        n = X.shape[0]
        lam = float(self.regularization)
        rng = make_rng(self.random_state)
        with Ledger() as ledger:  # no oracle call: the empty ledger shows it
            Phi = self.features(X)
            grad_tol = float(self.opt_tol) * 2.0 / n  # ||grad|| / lam <= opt_tol * 2 / (n lam)
            theta, grad_norm = logistic_minimiser(Phi, y01, lam, grad_tol)
            delta_l2 = self.sensitivity(n)
            noisy = theta + sample_output_noise(rng, Phi.shape[1], delta_l2 / self.epsilon_)
        R = float(self.data_norm)
        if self.fit_intercept:
            coef, intercept = noisy[:-1] / (R * math.sqrt(2.0)), noisy[-1] / math.sqrt(2.0)
        else:
            coef, intercept = noisy / R, 0.0
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([intercept])
        self.hypothesis_ = Halfspace(tuple(coef), float(intercept))
        self.n_private_ = n
        self._privacy = {
            "mechanism": "output perturbation of the L2-regularised logistic-regression minimiser",
            "noise": "density proportional to exp(-||b|| / s) in R^p: ||b|| ~ Gamma(p, s), uniform direction",
            "noise_scale": delta_l2 / self.epsilon_,
            "sensitivity": delta_l2,
            "calibration": "s = Delta / eps, Delta = (2 / (n lambda)) (1 + 2 opt_tol)",
            "calibration_source": "Chaudhuri, Monteleoni, Sarwate (JMLR 2011), Theorem 6; optimiser error by strong "
            "convexity (docs/theory/output-perturbation.md)",
            "regularization": lam,
            "data_norm": R,
            "fit_intercept": bool(self.fit_intercept),
            "oracle_calls_by_design": 0,
        }
        clipped = int(np.sum(np.linalg.norm(X, axis=1) > R))
        self._publish(
            self.hypothesis_, self._release_record(), ledger, {"gradient_norm": grad_norm, "clipped_rows": clipped}
        )
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """coef_ . x + intercept_ of the released score (no clipping at prediction)."""
        X = self._check_predict_input(X)
        return self.hypothesis_.decision_function(X)
