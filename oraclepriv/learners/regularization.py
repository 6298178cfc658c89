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
from typing import Any

import numpy as np

from oraclepriv.convex_oracle import ConvexOracle, convex_backend_key, make_convex_oracle
from oraclepriv.hypotheses import LinearPredictor
from oraclepriv.learners._base import PrivateLearner
from oraclepriv.learners._public_size import PublicSizeMixin, balance_point, theorem_public_size, vc_dimension
from oraclepriv.learners.perturb import NOISE_FAMILIES, calibrate_gamma, sample_noise
from oraclepriv.validation import check_positive

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
    """Algorithm 3 (Regularization) on bounded linear predictors; 2 oracle calls.

    Parameters (keywords only): ``epsilon``; ``delta`` (> 0 for ``noise="gaussian"``, 0 for
    ``"laplace"``); ``hypothesis_class="linear"`` (the only convex class); ``backend`` (None or
    ``"highs-qp+kkt"``, the convex oracle's one backend; ``"scipy"`` is its deprecated alias and warns);
    ``eta`` (per-sample);
    ``noise``; ``public_size`` (None: every public point given; an int M: a uniform random subsample of
    M; ``"auto"``: :func:`regularization_public_size`; :mod:`oraclepriv.learners._public_size`);
    ``public_random_state`` (the subsample's own seed, never the noise's; None: seeded from the public points); ``m`` (the
    first m public points, a deterministic choice for audits; not with ``public_size``); ``opt_tol``
    (largest certified gap accepted, and
    folded into the stability radius); ``laplace_factor`` ("standard" or "paper");
    ``on_uncertified``; ``random_state``.

    Fitted: ``hypothesis_`` (a :class:`LinearPredictor`), ``release_``, ``gamma_``,
    ``stability_radius_`` (rho), ``public_targets_`` (u: the DP vector ftilde is computed from,
    covered by the proof); non-private ``diagnostics_`` (the ledger of the 2 calls). The convex
    oracle's certified gap is folded into rho, so there is no numerical delta.
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
        """eta and opt_tol > 0, a known noise family, and delta > 0 for Gaussian noise (at fit time)."""
        check_positive(self.eta, "eta")
        check_positive(self.opt_tol, "opt_tol")
        if self.noise not in NOISE_FAMILIES:
            raise ValueError(f"noise must be one of {list(NOISE_FAMILIES)}; got {self.noise!r}")
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
        """A Regularization with eta and m from :func:`regularization_parameters` (kept in ``theory``)."""
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
        if self.laplace_factor not in ("standard", "paper"):
            raise ValueError(f"laplace_factor must be 'standard' or 'paper'; got {self.laplace_factor!r}")
        if self.m is not None:
            if isinstance(self.m, bool) or int(self.m) != self.m or self.m < 1 or self.m > Z.shape[0]:
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
