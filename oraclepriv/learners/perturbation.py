"""Perturbation — Algorithm 2 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially
Private Learning with Public Data", Theorem 2 / Theorem 6 (App. B.6). (eps, delta)-DP only
(docs/theory/block-et-al.md, pitfall P12); J + 1 oracle calls. The algorithm as implemented:
docs/theory/block-et-al.md, section "Algorithm 2: Perturbation".

For j = 1..J (fresh xi^(j) ~ N(0, I_m) each time):
    f_j = argmin_f  sum_{private} l(f(X_i), Y_i) + eta_sum * omega^(j)(f),
    omega^(j)(f) = m^{-1/2} sum_i xi^(j)_i f(Z_i)                              (eq. (2) of the paper)
then fbar = (1/J) sum_j f_j on Z and ftilde = Perturb(fbar, N(0,1), gamma, Z) (Algorithm 1).

Implementation for the {0,1}-valued classes of the oracle protocol, in the +-1 encoding
f_pm = 2 f - 1 (so ||f||_m = 1 for every f and the anti-concentration constant kappa = 1;
docs/theory/block-et-al.md, pitfall P11), with l(v, y) = |v - y| / 2, i.e. the 0-1 loss
(lambda = 1/2):
* private points: label Y_i, weight 1;
* public points: c_i f_pm(Z_i) with c_i = eta_sum xi_i / sqrt(m) equals, up to a constant,
  2 c_i 1[f(Z_i) != 0]: label 0, signed weight 2 c_i (the protocol reduces signs exactly).
Each of the J calls must be an exact argmin (the GP-argmin stability argument of Lemma 1;
docs/theory/block-et-al.md, pitfall P4): uncertified answers raise by default. (With the default
rho = 2 the sensitivity bound holds for any answers, so there the gate is conservative.)

Scale of eta (docs/theory/block-et-al.md, pitfall P9): the box sums the loss, the theorems choose
eta on the per-sample (average) scale. ``eta`` here is PER-SAMPLE; the oracle objective uses
eta_sum = n * eta, which is the same mechanism as (1/n) sum l + eta * omega.

Calibration of gamma (docs/theory/block-et-al.md, section "Calibrating gamma"): Perturb releases
u = fbar(Z) + gamma zeta, so gamma is the analytic-Gaussian-mechanism std for l2-sensitivity
sqrt(m) * rho, where rho bounds
||fbar_D - fbar_D'||_m (+-1 scale). Lemma 1 gives such a bound only w.p. 1 - delta_stab, with
constants the paper does not give in usable form; so:
* ``rho=None`` (default): rho = 2, the trivial bound for +-1 functions. Unconditional
  (eps, delta)-DP — rigorous, but the noise then swamps fbar (honest, not useful for accuracy);
* ``rho`` given, with ``rho_delta`` its failure probability (e.g. from :func:`lemma1_rho`): the
  guarantee is (eps, delta) with the mechanism run at delta - rho_delta, and ``privacy_`` states
  that it is conditional on the supplied stability bound.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from oraclepriv.exact_comparison import compared_exactly
from oraclepriv.learners._base import FIRST_M, PrivateLearner
from oraclepriv.learners._public_size import (
    PUBLIC_SIZE_CONSTRAINTS,
    PublicSizeMixin,
    theorem_public_size,
    vc_dimension,
)
from oraclepriv.learners._workspace import union
from oraclepriv.learners.perturb import calibrate_gamma, perturb
from oraclepriv.near_ties import gaussian_near_tie_probability
from oraclepriv.validation import BOOLEAN, DELTA, POSITIVE_INTEGER, POSITIVE_REAL, Alternatives, check_positive

__all__ = ["Perturbation", "lemma1_rho", "perturbation_parameters", "perturbation_public_size"]


def lemma1_rho(n: int, eta: float, J: int, d: int, rho_delta: float, *, c_rho: float = 1.0) -> float:
    """Stability radius from our reading of Lemma 1 (docs/theory/block-et-al.md, section "Algorithm 2:
    Perturbation"; the constant c_rho is ours, NOT the paper's).

    ||fbar - fbar'||_m^2 <= c_rho (E sup omega / (eta_sum kappa^2 / tau))^{1/3} + sqrt(log(1/rho_delta)/J)
    with tau = 2 (one replaced record changes the summed 0-1 loss by <= 1 per hypothesis, twice),
    eta_sum = n eta, kappa = 1 (+-1 encoding) and E sup omega <= sqrt(d) (G_m = O(sqrt(vc)), constant 1).
    """
    for name, value in (("eta", eta), ("rho_delta", rho_delta), ("c_rho", c_rho)):
        check_positive(value, name)
    rho_sq = c_rho * (2.0 * math.sqrt(d) / (n * eta)) ** (1.0 / 3.0) + math.sqrt(math.log(1.0 / rho_delta) / J)
    return min(2.0, math.sqrt(rho_sq))


def perturbation_parameters(
    alpha: float,
    beta: float,
    sigma: float,
    d: int,
    *,
    lam: float = 0.5,
    c_eta: float = 1.0,
    c_m: float = 1.0,
    c_J: float = 1.0,
) -> dict[str, Any]:
    """Theorem 6 choices (docs/theory/block-et-al.md, section "Algorithm 2: Perturbation"); Theta-tilde
    constants exposed.

    eta = c_eta alpha / sqrt(d) (per-sample scale), m = c_m lam^2 max(d, ln(1/beta)) / (sigma^2 alpha^2),
    J = c_J d ln(1/beta) / alpha^2 (only the first, legible term of Theorem 6's max), and the
    accuracy-driven noise level gamma_accuracy = sigma alpha / (lam sqrt(ln(1/beta))). The paper's
    n is illegible; the learner's gamma is always calibrated for privacy (never taken from here).
    """
    for name, value in (("alpha", alpha), ("beta", beta), ("sigma", sigma)):
        v = check_positive(value, name)
        if v > 1:
            raise ValueError(f"{name} must be in (0, 1]; got {value!r}")
    log_b = math.log(1.0 / beta)
    return {
        "eta": c_eta * alpha / math.sqrt(d),
        "m": max(1, math.ceil(c_m * lam**2 * max(d, log_b) / (sigma**2 * alpha**2))),
        "J": max(1, math.ceil(c_J * d * log_b / alpha**2)),
        "gamma_accuracy": sigma * alpha / (lam * math.sqrt(log_b)),
        "constants": {"c_eta": c_eta, "c_m": c_m, "c_J": c_J, "lam": lam},
        "source": "Theorem 6 (App. B.6), reconstructed; constants unspecified in the paper",
    }


def perturbation_public_size(n: int, vc: int, *, lam: float = 0.5, beta: float = 0.05) -> int:
    """The default number of public points for Perturbation (docs/theory/block-et-al.md, "Choosing m";
    our derivation): Theorem 6's m = lam^2 max(d, ln(1/beta))/(sigma^2 alpha^2) at sigma = 1 and the
    accuracy alpha = sqrt(d/n) that n private records resolve (Theorem 9, constants 1).

    Past that m the public points only cost time and numerical delta: the privacy calibration does not
    depend on m, and Perturb's error, a least-squares fit to targets with noise gamma ~ sqrt(m) rho per
    point, is about rho sqrt(d log m)/eps for every m.
    """
    return theorem_public_size(n, vc, lam=lam, beta=beta)


class Perturbation(PublicSizeMixin, PrivateLearner):
    """Perturbation (Algorithm 2): (epsilon, delta)-DP classification with J + 1 oracle calls.

    Algorithm 2 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning
    with Public Data" (Theorem 2 / Theorem 6), for thresholds, stumps and halfspaces: J exact ERM
    calls with Gaussian perturbations on the public points, their average fbar on the public points,
    and Perturb (Algorithm 1) of fbar with the analytic Gaussian mechanism.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy parameter, > 0.
    delta : float, default 1e-6
        The privacy parameter, > 0 and < 1/n.
    hypothesis_class : {"threshold", "stump", "halfspace"}, default "halfspace"
        The class the oracle minimises over.
    backend : str, backend class or instance, or None, default None
        The exact ERM backend; None: the oracle's default installed exact backend.
    backend_options : dict or None, default None
        Keyword options of the backend.
    eta : float, default 0.1
        The perturbation's scale, per sample (the oracle objective uses ``n * eta``;
        docs/theory/block-et-al.md, pitfall P9).
    J : int, default 10
        The number of perturbed ERM calls averaged.
    rho : float or None, default None
        A bound on the change of fbar (+-1 scale) between neighbouring datasets; None: 2, the trivial
        bound, unconditional but noisy. A supplied bound (e.g. :func:`lemma1_rho`) makes the guarantee
        conditional on it.
    rho_delta : float, default 0.0
        The failure probability of ``rho``; the mechanism then runs at ``delta - rho_delta``.
    m : int or None, default None
        Use the first m public points, a deterministic choice for audits; not with ``public_size``.
    public_size : int, "auto" or None, default None
        None: every public point given; an int M: a uniform random subsample of M; "auto": :func:`perturbation_public_size`, kept below a vacuous delta.
    public_random_state : int, numpy.random.Generator or None, default None
        The seed of the public subsample, never the noise's; None: seeded from the public points.
    time_limit : float or None, default None
        Seconds per oracle call.
    on_uncertified : {"raise", "fallback", "flag"}, default "raise"
        What an uncertified private-data oracle answer does (:mod:`oraclepriv.robust`).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default None
        The source of the mechanism's randomness.
    allow_weak_guarantee : bool, default False
        False: a fit whose total delta (design plus numerical) is >= 1/n is refused before its oracle
        calls; True: it is released with a :class:`~oraclepriv.PrivacyLeakWarning` and a guarantee
        marked vacuous (docs/release-boundary.md).

    Attributes
    ----------
    release_ : Release
        The released hypothesis and the data-independent privacy record.
    hypothesis_ : Hypothesis
        The released hypothesis.
    gamma_ : float
        The standard deviation of the Perturb noise, on the +-1 scale.
    public_targets_ : numpy.ndarray
        u = fbar(Z) + gamma zeta on the +-1 scale: the DP vector the output is computed from (covered
        by the proof).
    diagnostics_ : Diagnostics
        Non-private: the ledger of the J + 1 calls. Reading it warns.

    See Also
    --------
    RRSPM, Regularization
    """

    algorithm = "Perturbation"
    reference = (
        "Block, Bun, Desai, Shetty, Wu, Oracle-Efficient Differentially Private Learning with Public Data: Algorithm 2 (Perturbation) + Algorithm 1 (Perturb); "
        "Theorems 2 and 6"
    )
    public_size_rule = (
        "Perturbation: Theorem 6's m = lam^2 max(d, ln(1/beta))/alpha^2 at alpha = sqrt(d/n), lam = 1/2, beta = 0.05, "
        "d the VC dimension (docs/theory/block-et-al.md, Choosing m)"
    )
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PrivateLearner._parameter_constraints,
        **PUBLIC_SIZE_CONSTRAINTS,
        "eta": (POSITIVE_REAL,),
        "J": (POSITIVE_INTEGER,),
        "rho": (None, POSITIVE_REAL),
        "rho_delta": (DELTA,),
        "m": FIRST_M,
        "allow_weak_guarantee": (BOOLEAN,),
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        hypothesis_class: str = "halfspace",
        backend: str | None = None,
        backend_options: dict[str, Any] | None = None,
        eta: float = 0.1,
        J: int = 10,
        rho: float | None = None,
        rho_delta: float = 0.0,
        m: int | None = None,
        public_size: int | str | None = None,
        public_random_state: Any = None,
        time_limit: float | None = None,
        on_uncertified: str = "raise",
        random_state: Any = None,
        allow_weak_guarantee: bool = False,
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
        self.J = J
        self.rho = rho
        self.rho_delta = rho_delta
        self.m = m
        self.public_size = public_size
        self.public_random_state = public_random_state
        self.allow_weak_guarantee = allow_weak_guarantee

    def theory_public_size(self, n: int, n_features: int) -> int:
        """:func:`perturbation_public_size` for this learner's class."""
        return perturbation_public_size(n, vc_dimension(self.hypothesis_class, n_features))

    def _near_tie_probability_at(self, m: int, n: int, n_features: int) -> float:
        """J private calls, each a noisy argmin with N(0, s^2) public weights, s = 2 eta_sum / sqrt(m); 0 where the
        backend is exhaustive and the answers are compared exactly (:mod:`oraclepriv.exact_comparison`)."""
        if compared_exactly(self.hypothesis_class, n_features, self.backend):
            return 0.0
        eta_sum = n * float(self.eta)
        return int(self.J) * gaussian_near_tie_probability(m, 2.0 * eta_sum / math.sqrt(m), float(n))

    @classmethod
    def from_theory(
        cls,
        alpha: float,
        beta: float,
        sigma: float,
        d: int,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        lam: float = 0.5,
        c_eta: float = 1.0,
        c_m: float = 1.0,
        c_J: float = 1.0,
        **params: Any,
    ) -> Perturbation:
        """A Perturbation with eta, J and m from Theorem 6 (:func:`perturbation_parameters`).

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
            The VC dimension of the class, >= 1.
        epsilon : float, default 1.0
            The privacy parameter, > 0.
        delta : float, default 1e-6
            The privacy parameter, > 0 and < 1/n.
        lam : float, default 0.5
            The Lipschitz constant of the loss (1/2 for the 0-1 loss on the +-1 scale).
        c_eta : float, default 1.0
            The constant of eta, unspecified in the paper.
        c_m : float, default 1.0
            The constant of m, unspecified in the paper.
        c_J : float, default 1.0
            The constant of J, unspecified in the paper.
        **params
            Any other constructor parameter of Perturbation.

        Returns
        -------
        Perturbation
            The learner, with the derivation in its ``theory`` attribute.
        """
        theory = perturbation_parameters(alpha, beta, sigma, d, lam=lam, c_eta=c_eta, c_m=c_m, c_J=c_J)
        learner = cls(epsilon=epsilon, delta=delta, eta=theory["eta"], J=theory["J"], m=theory["m"], **params)
        learner.theory = theory
        return learner

    # -- pieces (also used by the audits) --------------------------------------------------------
    def _check_params(self, n: int) -> tuple[float, int, float, float]:
        """The checks across parameters (each one's own constraint is declared: ``_parameter_constraints``)."""
        if self.delta_ == 0:
            raise ValueError(
                "Algorithm 2 is (eps, delta)-DP only (docs/theory/block-et-al.md, pitfall P12): delta must be > 0; got 0.0"
            )
        rho_delta = float(self.rho_delta)
        if self.rho is None:
            if rho_delta != 0:
                raise ValueError(f"rho_delta={self.rho_delta!r} given without rho; the default rho = 2 holds always")
            rho = 2.0
        else:
            rho = float(self.rho)
        if rho_delta >= self.delta_:
            raise ValueError(
                f"rho_delta={self.rho_delta!r} must be < delta={self.delta!r} (delta = mechanism + stability)"
            )
        return float(self.eta), int(self.J), rho, rho_delta

    def perturbed_erm_average(self, oracle, X: np.ndarray, y: np.ndarray, Z: np.ndarray, xis: np.ndarray) -> np.ndarray:
        """fbar(Z) on the +-1 scale: the average of the J perturbed ERMs (steps 1-6), given xi (J x m).

        NOT private on its own (it is the pre-noise intermediate); exposed for the audits, which
        run it on neighbouring datasets with shared xi (the coupling of Lemma 1).
        """
        n, m = X.shape[0], Z.shape[0]
        eta_sum = n * float(self.eta)
        total = np.zeros(m)
        with union(X, Z, y, np.zeros(m, dtype=np.int8)) as (Xall, labels, weights):
            for j, xi in enumerate(xis):
                weights[n:] = 2.0 * eta_sum * xi / math.sqrt(m)  # the GP's linear term on Z
                result = oracle.solve(Xall, labels, weights, caller=self.algorithm, step=f"perturbed-erm-{j + 1}")
                self._require_exact(result, f"perturbed-erm-{j + 1}")
                total += 2.0 * result.hypothesis.predict(Z) - 1.0
        return total / len(xis)

    def _gamma(self, rho: float, m: int, mech_delta: float) -> float:
        return calibrate_gamma("gaussian", rho, m, self.epsilon_, mech_delta)

    def _fit(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        eta, J, rho, rho_delta = self._check_params(X.shape[0])
        if self.m is not None:
            if self.m > Z.shape[0]:
                raise ValueError(
                    f"m must be None or an integer in [1, {Z.shape[0]}] (the number of public points); got {self.m!r}"
                )
            Z = Z[: int(self.m)]
        m = Z.shape[0]
        mech_delta = self.delta_ - rho_delta
        gamma = self._gamma(rho, m, mech_delta)
        # a total delta >= 1/n is refused before any oracle call (or released as vacuous when allowed)
        self._refuse_vacuous_guarantee(self._near_tie_probability_at(m, X.shape[0], X.shape[1]), X.shape[0], m)
        oracle = self._oracle()
        xis = rng.standard_normal((J, m))
        fbar = self.perturbed_erm_average(oracle, X, y, Z, xis)
        # Perturb on the {0,1} scale: t01 = (u + 1)/2 with u = fbar + gamma zeta.
        out = perturb(
            oracle, Z, (fbar + 1.0) / 2.0, gamma / 2.0, "gaussian", rng, caller=self.algorithm, step="perturb"
        )
        self.gamma_ = gamma
        self.public_targets_ = 2.0 * out.targets - 1.0
        self._privacy.update(
            mechanism="Perturbation: average of J GP-perturbed exact ERMs, then Perturb (Gaussian mechanism on fbar(Z))",
            noise="gaussian",
            gamma=gamma,
            eta_per_sample=eta,
            eta_sum=X.shape[0] * eta,
            J=J,
            m=m,
            stability_radius=rho,
            stability_delta=rho_delta,
            calibration=(
                "analytic Gaussian mechanism (Balle-Wang 2018) on u = fbar(Z) + gamma*zeta, "
                f"l2-sensitivity sqrt(m)*rho, delta_mech = {mech_delta:.3g}"
            ),
            conditional_on=(
                None
                if self.rho is None
                else "the supplied stability bound ||fbar_D - fbar_D'||_m <= rho holding w.p. >= 1 - rho_delta "
                "(Lemma 1; its constants are not legible in the paper)"
            ),
            oracle_calls_by_design=J + 1,
            near_tie_probability=self._near_tie_probability_at(m, X.shape[0], X.shape[1]),
        )
        return out.hypothesis
