"""Regularization — Algorithm 3 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially
Private Learning with Public Data", Theorem 3 / Theorem 7 (App. B). 2 oracle calls. The algorithm as
implemented and the stability derivation: docs/theory/block-et-al.md, section
"Algorithm 3: Regularization".

    fbar   = argmin_{f in F}  sum_{private} l(f(X_i), Y_i) + eta_sum * ||f||_m^2        (eq. (3))
    ftilde = Perturb(fbar, Q, gamma, Z)     Q = N(0,1): (eps, delta)-DP;  Q = Lap(1): pure eps-DP

Privacy needs F and l CONVEX (Lemma 2's strong-convexity argument;
docs/theory/block-et-al.md, pitfall P13), so this module implements one convex class with an exact
(certified) oracle: bounded linear predictors

    F = { x -> <w, x> : ||w||_inf <= 1 }   on inputs with ||x||_1 <= 1   (so f(x) in [-1, 1]),
    l(v, y) = |v - y| / 2  in [0, 1], convex, 1/2-Lipschitz; labels y in {0,1} are used as 2y - 1.

The {0,1}-valued classes of the oracle protocol (threshold, stump, halfspace) are NOT convex: the
paper runs Algorithm 3 on conv(F) with a stronger oracle, which we do not have; they are refused.

The convex oracle is :mod:`oraclepriv.convex_oracle` with its one backend, ``backend="highs-qp+kkt"``
(the default; ``solvers/convex_linear.py``): regularized ERM, a d-variable box QP on the class's domain,
solved by HiGHS' QP solver, polished on its active set and certified by a Lagrangian lower bound
(docs/convex-oracle.md), and Perturb's bounded least squares by BVLS, certified the same way; both
calls are recorded in the ledger. ``backend="scipy"`` (its name while it was SciPy's SLSQP) is a
deprecated alias of ``"highs-qp+kkt"`` for one release: it selects the same backend and warns
(``FutureWarning``).

Stability (Lemma 2, sum form): ||fbar_D - fbar_D'||_m <= 2 / sqrt(eta_sum) (the paper's constant;
1/sqrt(eta_sum) also follows from l in [0,1], we keep the paper's). A certified gap g <= opt_tol
moves the answer by <= sqrt(g / eta_sum) in ||.||_m (strong convexity), so we calibrate with
rho = 2/sqrt(eta_sum) + 2 sqrt(opt_tol/eta_sum) and refuse answers whose gap exceeds opt_tol
(our derivation, docs/theory/block-et-al.md, section "Algorithm 3: Regularization"). eta is
PER-SAMPLE (Theorem 7's eta = Theta(alpha)); eta_sum = n * eta
(docs/theory/block-et-al.md, pitfall P9).
gamma: analytic Gaussian mechanism with l2-sensitivity sqrt(m) rho, or Laplace gamma = m rho / eps
("standard", l1-sensitivity <= m rho) / m^{3/2} rho / eps ("paper", Lemma 11).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from oraclepriv.convex_oracle import ConvexOracle, convex_backend_key, make_convex_oracle
from oraclepriv.hypotheses import LinearPredictor
from oraclepriv.learners._base import FIRST_M, PrivateLearner
from oraclepriv.learners._public_size import (
    PUBLIC_SIZE_CONSTRAINTS,
    PublicSizeMixin,
    balance_point,
    theorem_public_size,
    vc_dimension,
)
from oraclepriv.learners.perturb import NOISE_FAMILIES, calibrate_gamma, sample_noise
from oraclepriv.validation import POSITIVE_REAL, Alternatives, StrOptions, check_positive

__all__ = ["LinearPredictor", "Regularization", "regularization_parameters", "regularization_public_size"]

CLASS_NAME = LinearPredictor.hypothesis_class


def first_outside_l1_ball(X: np.ndarray) -> tuple[int, float] | None:
    """(0-based row, l1 norm) of the first row of ``X`` outside the l1 unit ball (up to 1e-12), or None."""
    norms = np.abs(X).sum(axis=1)
    bad = np.flatnonzero(norms > 1.0 + 1e-12)
    return None if not bad.size else (int(bad[0]), float(norms[bad[0]]))


def check_l1_ball(X: np.ndarray, name: str) -> np.ndarray:
    """Inputs of the bounded linear class must satisfy ||x||_1 <= 1 (so |<w,x>| <= 1)."""
    outside = first_outside_l1_ball(X)
    if outside is not None:  # the row and the count, never the norm: X_private's values are private
        count = int(np.sum(np.abs(X).sum(axis=1) > 1.0 + 1e-12))
        raise ValueError(
            f"{name} row {outside[0]} has l1 norm > 1 ({count} of its {X.shape[0]} rows do); the bounded linear "
            "class needs ||x||_1 <= 1 (rescale the features)"
        )
    return X


def regularization_parameters(
    alpha: float, beta: float, sigma: float, d: int, *, lam: float = 0.5, c_eta: float = 1.0, c_m: float = 1.0
) -> dict[str, Any]:
    """Theorem 7 choices (docs/theory/block-et-al.md, section "Algorithm 3: Regularization"); Theta-tilde
    constants exposed.

    eta = c_eta alpha (per-sample), m = c_m lam^2 max(d, ln(1/beta)) / (sigma^2 alpha^2), and the
    accuracy-driven gamma_accuracy = sigma alpha / (lam sqrt(ln(1/beta))). The learner's gamma is
    always calibrated for privacy; it reaches gamma_accuracy once n is large enough (``n_for``).
    """
    for name, value in (("alpha", alpha), ("beta", beta), ("sigma", sigma)):
        v = check_positive(value, name)
        if v > 1:
            raise ValueError(f"{name} must be in (0, 1]; got {value!r}")
    log_b = math.log(1.0 / beta)
    eta = c_eta * alpha
    m = max(1, math.ceil(c_m * lam**2 * max(d, log_b) / (sigma**2 * alpha**2)))
    gamma_acc = sigma * alpha / (lam * math.sqrt(log_b))
    return {
        "eta": eta,
        "m": m,
        "gamma_accuracy": gamma_acc,
        # Laplace (standard factor): gamma = m * 2/sqrt(eta n) / eps <= gamma_acc  <=>  n >= 4 m^2 / (eta eps^2 gamma_acc^2)
        "n_for_laplace_per_eps2": 4 * m * m / (eta * gamma_acc**2),
        "constants": {"c_eta": c_eta, "c_m": c_m, "lam": lam},
        "source": "Theorem 7 (App. B), reconstructed; constants unspecified in the paper",
    }


def regularization_public_size(
    n: int, n_features: int, gamma: Any, noise: str, *, lam: float = 0.5, beta: float = 0.05
) -> int:
    """The default number of public points for Regularization (docs/theory/block-et-al.md, "Choosing m";
    our derivation): Theorem 7's m = lam^2 max(d, ln(1/beta))/(sigma^2 alpha^2) at sigma = 1 and the
    accuracy alpha = sqrt(d/n) that n private records resolve (Theorem 9, constants 1), d = ``n_features``.

    ``gamma(m)`` is the privacy-calibrated noise per public point. Perturb's least-squares error is about
    gamma(m) sqrt(d/m), against the projection's sqrt(d/m): with Gaussian noise gamma ~ sqrt(m) rho and
    the sum is flat in m once gamma(m) >= 1, so Theorem 7's m stands; with Laplace noise gamma ~ m rho
    grows the error past gamma(m) = 1, so m is also kept to the largest m with gamma(m) <= 1.
    """
    m = theorem_public_size(n, vc_dimension(CLASS_NAME, n_features), lam=lam, beta=beta)
    if noise == "laplace":
        m = min(m, balance_point(lambda _m: 1.0, gamma))
    return m


class Regularization(PublicSizeMixin, PrivateLearner):
    """Regularization (Algorithm 3): private regression with bounded linear predictors, 2 oracle calls.

    Algorithm 3 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning
    with Public Data" (Theorem 3 / Theorem 7): a regularized ERM whose regularizer is the squared norm on the
    public points, then Perturb (Algorithm 1) of its values on the public points. Both calls go to the
    convex oracle (docs/convex-oracle.md); its certified gap is folded into the stability radius, so
    there is no numerical delta.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy parameter, > 0.
    delta : float, default 1e-6
        > 0 and < 1/n for ``noise="gaussian"``; 0 for ``noise="laplace"``.
    hypothesis_class : {"linear"}, default "linear"
        The only convex class: linear predictors.
    backend : str or None, default None
        None or "highs-qp+kkt", the convex oracle's one backend ("scipy" is its deprecated alias and
        warns).
    backend_options : dict or None, default None
        Keyword options of the convex backend.
    eta : float, default 0.1
        The regularization weight, per sample (docs/theory/block-et-al.md, pitfall P9).
    noise : {"gaussian", "laplace"}, default "gaussian"
        The law of the Perturb noise.
    m : int or None, default None
        Use the first m public points, a deterministic choice for audits; not with ``public_size``.
    public_size : int, "auto" or None, default None
        None: every public point given; an int M: a uniform random subsample of M; "auto":
        :func:`regularization_public_size`.
    public_random_state : int, numpy.random.Generator or None, default None
        The seed of the public subsample, never the noise's; None: seeded from the public points.
    opt_tol : float, default 1e-6
        The largest certified optimality gap accepted from the convex oracle; folded into the
        stability radius.
    laplace_factor : {"standard", "paper"}, default "standard"
        The Laplace calibration of gamma: "standard", m rho / eps (the l1-sensitivity bound), or
        "paper", m^(3/2) rho / eps (Lemma 11).
    time_limit : float or None, default None
        Seconds per oracle call.
    on_uncertified : {"raise", "fallback", "flag"}, default "raise"
        What an uncertified oracle answer does (:mod:`oraclepriv.robust`).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default None
        The source of the mechanism's randomness.

    Attributes
    ----------
    release_ : Release
        The released predictor and the data-independent privacy record.
    hypothesis_ : LinearPredictor
        The released predictor.
    gamma_ : float
        The scale of the Perturb noise.
    stability_radius_ : float
        rho, the bound on the change of the regularized minimiser on the public points.
    public_targets_ : numpy.ndarray
        u: the DP vector the output is computed from (covered by the proof).
    diagnostics_ : Diagnostics
        Non-private: the ledger of the 2 calls. Reading it warns.
    """

    algorithm = "Regularization"
    reference = (
        "Block, Bun, Desai, Shetty, Wu, Oracle-Efficient Differentially Private Learning with Public Data: Algorithm 3 (Regularization) + Algorithm 1 (Perturb); "
        "Theorems 3 and 7"
    )
    supported_classes = (CLASS_NAME,)
    public_size_rule = (
        "Regularization: Theorem 7's m = lam^2 max(d, ln(1/beta))/alpha^2 at alpha = sqrt(d/n), lam = 1/2, "
        "beta = 0.05; Laplace noise: at most the largest m with gamma(m) <= 1 (docs/theory/block-et-al.md, Choosing m)"
    )
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PrivateLearner._parameter_constraints,
        **PUBLIC_SIZE_CONSTRAINTS,
        "hypothesis_class": (StrOptions(*supported_classes),),
        "eta": (POSITIVE_REAL,),
        "noise": (StrOptions(*NOISE_FAMILIES),),
        "m": FIRST_M,
        "opt_tol": (POSITIVE_REAL,),
        "laplace_factor": (StrOptions("standard", "paper"),),
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        hypothesis_class: str = CLASS_NAME,
        backend: str | None = None,
        backend_options: dict[str, Any] | None = None,
        eta: float = 0.1,
        noise: str = "gaussian",
        m: int | None = None,
        public_size: int | str | None = None,
        public_random_state: Any = None,
        opt_tol: float = 1e-6,
        laplace_factor: str = "standard",
        time_limit: float | None = None,
        on_uncertified: str = "raise",
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            hypothesis_class=hypothesis_class,
            backend=backend,
            backend_options=backend_options,
            time_limit=time_limit,
            on_uncertified=on_uncertified,
            random_state=random_state,
        )
        self.eta = eta
        self.noise = noise
        self.m = m
        self.public_size = public_size
        self.public_random_state = public_random_state
        self.opt_tol = opt_tol
        self.laplace_factor = laplace_factor

    def _check_noise_params(self) -> None:
        """delta > 0 for Gaussian noise, at fit time, by the fit and by the public_size rule (each parameter's own
        constraint is declared: ``_parameter_constraints``)."""
        if self.noise == "gaussian" and self.delta_ == 0:
            raise ValueError("noise='gaussian' gives (eps, delta)-DP: delta must be > 0; got delta=0.0")

    def theory_public_size(self, n: int, n_features: int) -> int:
        """:func:`regularization_public_size` with this learner's privacy calibration of gamma."""
        self._check_noise_params()
        rho = self.stability_radius(n)
        return regularization_public_size(n, n_features, lambda m: self._gamma(rho, m), self.noise)

    @classmethod
    def from_theory(
        cls,
        alpha: float,
        beta: float,
        sigma: float,
        d: int,
        *,
        epsilon: float = 1.0,
        lam: float = 0.5,
        c_eta: float = 1.0,
        c_m: float = 1.0,
        **params: Any,
    ) -> Regularization:
        """A Regularization with eta and m from Theorem 7 (:func:`regularization_parameters`).

        Parameters
        ----------
        alpha : float
            The target excess error, in (0, 1].
        beta : float
            The failure probability, in (0, 1].
        sigma : float
            The smoothness parameter of the private distribution with respect to the public one, in
            (0, 1].
        d : int
            The dimension, >= 1.
        epsilon : float, default 1.0
            The privacy parameter, > 0.
        lam : float, default 0.5
            The Lipschitz constant of the loss.
        c_eta : float, default 1.0
            The constant of eta, unspecified in the paper.
        c_m : float, default 1.0
            The constant of m, unspecified in the paper.
        **params
            Any other constructor parameter of Regularization.

        Returns
        -------
        Regularization
            The learner, with the derivation in its ``theory`` attribute.
        """
        theory = regularization_parameters(alpha, beta, sigma, d, lam=lam, c_eta=c_eta, c_m=c_m)
        learner = cls(epsilon=epsilon, eta=theory["eta"], m=theory["m"], **params)
        learner.theory = theory
        return learner

    def _oracle(self) -> ConvexOracle:  # type: ignore[override]
        if self.on_uncertified == "fallback":
            raise ValueError(
                "on_uncertified='fallback' needs a second, exact backend for the same class; the convex "
                "class of Algorithm 3 has one backend (highs-qp+kkt): use 'raise' or 'flag'"
            )
        if self.backend_options:
            raise ValueError(f"Regularization's convex oracle takes no backend_options; got {self.backend_options!r}")
        if self.time_limit is not None:  # it would be ignored: refused, like backend_options
            raise ValueError(
                "Regularization's convex oracle solves its QP to a certified tolerance and takes no time_limit; "
                f"got time_limit={self.time_limit!r}"
            )
        # a deprecated name warns here, attributed to this line (so a fit's two oracles show it once)
        return make_convex_oracle(
            convex_backend_key(self.backend, "backend", stacklevel=1), opt_tol=float(self.opt_tol)
        )

    def _check_backend_scope(self) -> None:
        """The convex oracle has one backend, certified by a Lagrangian bound over the whole class; an unknown
        name is refused here, before any work (a deprecated one warns when the oracle is made)."""
        convex_backend_key(self.backend, "backend", warn=False)

    # -- pieces (also used by the audits) --------------------------------------------------------
    def stability_radius(self, n: int) -> float:
        """rho = 2/sqrt(eta_sum) + 2 sqrt(opt_tol/eta_sum), eta_sum = n * eta (module docstring)."""
        eta_sum = n * float(self.eta)
        return 2.0 / math.sqrt(eta_sum) + 2.0 * math.sqrt(float(self.opt_tol) / eta_sum)

    def regularized_erm(self, X: np.ndarray, y: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """fbar(Z) (steps 2-3): the certified regularized ERM's values on Z. NOT private on its own."""
        result = self._oracle().regularized_erm(
            X, 2.0 * y - 1.0, Z, X.shape[0] * float(self.eta), caller=self.algorithm, step="regularized-erm"
        )
        self._require_exact(result, "regularized-erm")
        return Z @ result.w

    def _gamma(self, rho: float, m: int) -> float:
        return calibrate_gamma(self.noise, rho, m, self.epsilon_, self.delta_, laplace_factor=self.laplace_factor)

    def _fit(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        self._check_noise_params()
        if self.noise == "laplace" and self.delta_ != 0:
            raise ValueError(f"noise='laplace' gives pure eps-DP: delta must be 0; got delta={self.delta!r}")
        if self.m is not None:
            if self.m > Z.shape[0]:
                raise ValueError(
                    f"m must be None or an integer in [1, {Z.shape[0]}] (the number of public points); got {self.m!r}"
                )
            Z = Z[: int(self.m)]
        check_l1_ball(X, "X_private")
        check_l1_ball(Z, "X_public")
        m = Z.shape[0]
        rho = self.stability_radius(X.shape[0])
        gamma = self._gamma(rho, m)
        fbar = self.regularized_erm(X, y, Z)
        u = fbar + gamma * sample_noise(rng, self.noise, m)
        w = self._oracle().least_squares(Z, u, caller=self.algorithm, step="perturb").w
        self.gamma_ = gamma
        self.stability_radius_ = rho
        self.public_targets_ = u
        self._privacy.update(
            mechanism=f"Regularization: certified regularized ERM, then Perturb ({self.noise} mechanism on fbar(Z))",
            noise=self.noise,
            gamma=gamma,
            eta_per_sample=float(self.eta),
            eta_sum=X.shape[0] * float(self.eta),
            m=m,
            stability_radius=rho,
            calibration=(
                "analytic Gaussian mechanism, l2-sensitivity sqrt(m)*rho"
                if self.noise == "gaussian"
                else f"Laplace, gamma = {'m' if self.laplace_factor == 'standard' else 'm^1.5'} * rho / eps"
            ),
            oracle_calls_by_design=2,
        )
        return LinearPredictor(tuple(float(v) for v in w))

    def decision_function(self, X: Any) -> np.ndarray:
        """<w, x> of the released linear predictor."""
        X = self._check_predict_input(X)
        return self.hypothesis_.decision_function(X)
