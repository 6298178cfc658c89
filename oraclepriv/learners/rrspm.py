"""RRSPM — Algorithm 4 (Rounded Report Separator Perturbed Minimum) of Block, Bun, Desai, Shetty,
Wu, "Oracle-Efficient Differentially Private Learning with Public Data", Section 5 and App. C.2
(Theorem 4 / Theorem 8 for privacy, Theorem 10 for accuracy). The algorithm as implemented, the
privacy proof and the pitfalls: docs/theory/block-et-al.md.

    1. Ytilde_i ~ Uni{0,1} on the m public points Z (or given: privacy holds for any fixed
       Ytilde: docs/theory/block-et-al.md, pitfall P17);
    2. xi_i ~ Lap(scale 2m/eps)  (density prop. to exp(-|x| eps / (2m)); numpy
       ``rng.laplace(0, 2*m/eps)``; Lemma 19's "|t - t'| <= 2 => ratio <= e^{eps/m}" pins the scale);
    3. fhat = ERM over  sum_{private} 1[f(X_i) != Y_i] + sum_{public} xi_i 1[f(Z_i) != Ytilde_i]
       — ONE oracle call with signed weights ("private-erm"); its exactness is what the privacy
       proof (Lemmas 18-21) needs, so an uncertified answer raises by default;
    4. output ftilde = Perturb(fhat, gamma = 0, Z): a FRESH oracle call ("perturb") that sees only
       {(Z_i, fhat(Z_i))} (Algorithm 1 with gamma = 0, see ``perturb.py``). fhat itself is never
       returned, stored or used to warm-start anything: off Z it depends on the private data in
       ways no lemma controls (docs/theory/block-et-al.md, pitfall P1).

Exactly 2 oracle calls. Privacy: pure eps-DP for every n, m, Z and Ytilde (Theorem 8), with
respect to replacing one private record, public data fixed.

Gaussian variant (Theorem 4, second half): the paper prints xi_i ~ N(0, C sqrt(m log(1/delta))/eps)
with an unspecified constant C and gives no proof (docs/theory/block-et-al.md, pitfall P7). We use
instead a *derived, safe* calibration, labelled as such in ``privacy_`` (derivation:
docs/theory/rrspm-gaussian-calibration.md): with the Lemma 18 coupling xi -> xi + 2 v_h
(v_h in {-1,+1}^m), the privacy loss at xi is 2<xi, v_h>/s^2 + 2m/s^2; a union bound over the
N <= |F|_Z| output labelings gives max_h <xi, v_h> <= s sqrt(m) sqrt(2 ln(N/delta)) except with
probability delta, so the mechanism is (eps, delta)-DP once

    A/s + 2m/s^2 <= eps,   A = 2 sqrt(m) sqrt(2 ln(N/delta)),

i.e. s = 4m / (sqrt(A^2 + 8 m eps) - A). N is bounded by m+1 (thresholds), 2k(m+1) (stumps on k
features) or Sauer's lemma with VC dimension k+1 (halfspaces in R^k), each capped at 2^m. With
ln N <= d ln(em/d) (VC dimension d) this is
s ~ 2 sqrt(m)(sqrt(2 d ln(em/d)) + sqrt(2 ln(1/delta)))/eps: the paper's sqrt(m log(1/delta))/eps
shape plus a union-bound term in d.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from oraclepriv.exact_comparison import compared_exactly
from oraclepriv.learners._base import FIRST_M, PrivateLearner
from oraclepriv.learners._public_size import PUBLIC_SIZE_CONSTRAINTS, PublicSizeMixin, balance_point, vc_dimension
from oraclepriv.learners._workspace import union
from oraclepriv.learners.perturb import perturb
from oraclepriv.near_ties import gaussian_near_tie_probability, laplace_near_tie_probability
from oraclepriv.protocols import ERMOracle
from oraclepriv.validation import (
    BOOLEAN,
    Alternatives,
    StrOptions,
    as_labels,
    check_delta,
    check_epsilon,
    check_positive,
)

__all__ = [
    "RRSPM",
    "gaussian_noise_std",
    "log_projection_bound",
    "noisy_private_erm",
    "rrspm_parameters",
    "rrspm_public_size",
]

NOISES = ("laplace", "gaussian")


def log_projection_bound(hypothesis_class: str, m: int, n_features: int) -> float:
    """ln of an upper bound N on |F|_Z|, the number of labelings the class induces on m points."""
    if m < 1:
        raise ValueError(f"m must be >= 1; got {m!r}")
    if hypothesis_class == "threshold":
        count = m + 1
    elif hypothesis_class == "stump":
        count = 2 * n_features * (m + 1)
    elif hypothesis_class == "halfspace":
        vc = n_features + 1  # affine halfspaces in R^k
        count = sum(math.comb(m, i) for i in range(min(vc, m) + 1))
    else:
        raise ValueError(f"hypothesis must be 'threshold', 'stump' or 'halfspace'; got {hypothesis_class!r}")
    return min(math.log(count), m * math.log(2.0))


def gaussian_noise_std(epsilon: float, delta: float, m: int, log_n_outputs: float) -> float:
    """Safe std s of the Gaussian public weights (derived calibration:
    docs/theory/rrspm-gaussian-calibration.md).

    Smallest s with  A/s + 2m/s^2 <= epsilon,  A = 2 sqrt(m) sqrt(2 (ln N + ln(1/delta))).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 for the Gaussian variant of RRSPM; got 0.0")
    A = 2.0 * math.sqrt(m) * math.sqrt(2.0 * (log_n_outputs + math.log(1.0 / delta)))
    return 4.0 * m / (math.sqrt(A * A + 8.0 * m * epsilon) - A)


def rrspm_parameters(
    alpha: float,
    beta: float,
    sigma: float,
    d: int,
    epsilon: float,
    *,
    rate: str = "paper",
    c_m: float = 1.0,
    c_n: float = 1.0,
) -> dict[str, Any]:
    """Public/private sample sizes for RRSPM from the theorems; constants exposed
    (docs/theory/block-et-al.md, section "Parameter rates").

    rate="paper": m = c_m (d + ln(1/beta)) / (alpha^2 sigma^2)          (Theorem 10 / Lemma 22).
    rate="epsilon-net": m = c_m (d ln(1/(alpha sigma)) + ln(1/beta)) / (alpha sigma)
                        (our derivation, NOT in the paper: the projection step is realizable,
                        so an epsilon-net bound replaces Lemma 22's agnostic one).
    n_required = c_n m^2 ln(m/beta) / (alpha epsilon)   (Lemma 23: the noise term m^2 log(m/beta)/(eps n) <= alpha).
    The paper leaves c_m and c_n unspecified (O(.)); 1.0 is our default, not the paper's.
    """
    for name, value in (("alpha", alpha), ("beta", beta), ("sigma", sigma)):
        v = check_positive(value, name)
        if v > 1:
            raise ValueError(f"{name} must be in (0, 1]; got {value!r}")
    epsilon = check_epsilon(epsilon)
    if int(d) != d or d < 1:
        raise ValueError(f"d (VC dimension) must be a positive integer; got {d!r}")
    if rate == "paper":
        m_real = c_m * (d + math.log(1 / beta)) / (alpha**2 * sigma**2)
    elif rate == "epsilon-net":
        m_real = c_m * (d * math.log(max(1 / (alpha * sigma), math.e)) + math.log(1 / beta)) / (alpha * sigma)
    else:
        raise ValueError(f"rate must be 'paper' or 'epsilon-net'; got {rate!r}")
    m = max(1, math.ceil(m_real))
    n_required = math.ceil(c_n * m * m * math.log(max(m / beta, math.e)) / (alpha * epsilon))
    return {
        "m": m,
        "n_required": n_required,
        "laplace_scale": 2 * m / epsilon,
        "rate": rate,
        "constants": {"c_m": c_m, "c_n": c_n},
        "source": "Theorem 10 / Lemmas 22-23 (m), Lemma 23 (n); constants unspecified in the paper",
    }


def rrspm_public_size(n: int, vc: int, noise_scale: Any) -> int:
    """The default number of public points for RRSPM: where Theorem 10's two m-dependent terms meet
    (docs/theory/block-et-al.md, "Choosing m"; our derivation, constants 1, sigma = 1).

    Lemma 22's projection term sqrt(d/m) falls with m; Lemma 23's noise term, m times the scale
    b(m) = ``noise_scale(m)`` of a public weight over 2n, grows. For Laplace weights b = 2m/eps,
    the noise term is m^2/(eps n) and the meeting point is m = floor((eps n sqrt(d))^(2/5)), the
    ``m_star_paper`` that results/figures/rrspm measured against the optimum on synthetic data.
    """
    return balance_point(lambda m: math.sqrt(vc / m), lambda m: m * noise_scale(m) / (2.0 * n))


def noisy_private_erm(
    learner: PrivateLearner,
    oracle: Any,
    X: np.ndarray,
    y: np.ndarray,
    Z: np.ndarray,
    labels: np.ndarray,
    xi: np.ndarray,
) -> Any:
    """The one private-data call of RRSPM (Algorithm 4) and RSPM (Algorithm 5): ERM over the private
    records (weight 1) and the points Z with labels ``labels`` and noisy weights ``xi``; its exactness
    is what the privacy proof needs (the learner's gate)."""
    with union(X, Z, y, labels, xi) as (rows, all_labels, weights):  # private records weight 1, then Z
        result = oracle.solve(rows, all_labels, weights, caller=learner.algorithm, step="private-erm")
    learner._require_exact(result, "private-erm")
    return result


class RRSPM(PublicSizeMixin, PrivateLearner):
    """RRSPM (Algorithm 4): epsilon-DP binary classification with public unlabelled points.

    Rounded Report Separator Perturbed Minimum of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient
    Differentially Private Learning with Public Data" (privacy: Theorem 8; accuracy: Theorem 10).
    Two oracle calls: one exact ERM over the private records plus the public points with random
    labels and noisy weights, then Perturb with gamma = 0 on the public points only.

    Too many public points cost accuracy (Lap(2m/eps) weights drown the private records: the m-n
    trade-off of docs/theory/block-et-al.md, "Choosing m") and, through the numerical delta, privacy;
    ``public_size="auto"`` is the documented choice when the public set is large.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy parameter, > 0.
    delta : float, default 0.0
        0 for ``noise="laplace"`` (pure epsilon-DP); > 0 and < 1/n for ``noise="gaussian"``.
    hypothesis_class : {"threshold", "stump", "halfspace"}, default "halfspace"
        The class the oracle minimises over.
    backend : str, backend class or instance, or None, default None
        The exact ERM backend; None: the oracle's default installed exact backend.
    backend_options : dict or None, default None
        Keyword options of the backend.
    m : int or None, default None
        Use the first m public points, a deterministic choice for audits; not with ``public_size``.
    noise : {"laplace", "gaussian"}, default "laplace"
        The law of the public weights: Lap(2m/eps) (Theorem 8), or Gaussian with our derived (eps,
        delta) calibration (docs/theory/rrspm-gaussian-calibration.md).
    public_size : int, "auto" or None, default None
        None: every public point given; an int M: a uniform random subsample of M; "auto": the
        default of :meth:`theory_public_size`, ``(eps n sqrt(d))^(2/5)`` for Laplace weights, kept
        below a vacuous delta.
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
        The released hypothesis ftilde and the data-independent privacy record, with the numerical
        delta of :mod:`oraclepriv.near_ties`.
    hypothesis_ : Hypothesis
        The released hypothesis ftilde.
    public_labels_ : numpy.ndarray
        The random labels Ytilde of the public points, independent of the data (the proof holds for
        any fixed Ytilde).
    public_projection_ : numpy.ndarray
        fhat(Z), the epsilon-DP intermediate the output is computed from (covered by the proof).
    diagnostics_ : Diagnostics
        Non-private: the ledger of the 2 oracle calls and ``projection_agreement`` (the fraction of Z
        where ftilde = fhat; 1.0 when the second call is exact). Reading it warns.

    See Also
    --------
    Perturbation, RSPM, SubsampleAggregate

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv import PublicData
    >>> from oraclepriv.learners import RRSPM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 1))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> learner = RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=0)
    >>> learner.fit(X, y, X_public=PublicData(rng.normal(size=(5, 1)))).predict([[-2.0], [2.0]]).shape
    (2,)
    """

    algorithm = "RRSPM"
    #: fit(..., public_labels=Ytilde) fixes the random public labels (audits;
    #: docs/theory/block-et-al.md, pitfall P17)
    accepts_public_labels: ClassVar[bool] = True
    diagnostic_names = PrivateLearner.diagnostic_names + ("projection_agreement",)
    reference = "Block, Bun, Desai, Shetty, Wu, Oracle-Efficient Differentially Private Learning with Public Data: Algorithm 4 (RRSPM); privacy: Theorem 8 (Lemmas 18-21)"
    public_size_rule = (
        "RRSPM: the largest m with m b(m)/(2n) <= sqrt(d/m), b(m) the public weights' noise scale, d the VC "
        "dimension (Lemmas 22-23; docs/theory/block-et-al.md, Choosing m)"
    )
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PrivateLearner._parameter_constraints,
        **PUBLIC_SIZE_CONSTRAINTS,
        "m": FIRST_M,
        "noise": (StrOptions(*NOISES),),
        "allow_weak_guarantee": (BOOLEAN,),
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.0,
        hypothesis_class: str = "halfspace",
        backend: str | None = None,
        backend_options: dict[str, Any] | None = None,
        m: int | None = None,
        noise: str = "laplace",
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
        self.m = m
        self.noise = noise
        self.public_size = public_size
        self.public_random_state = public_random_state
        self.allow_weak_guarantee = allow_weak_guarantee

    def theory_public_size(self, n: int, n_features: int) -> int:
        """:func:`rrspm_public_size` for this learner's class, noise law and epsilon (validated by ``fit``)."""
        return rrspm_public_size(
            n, vc_dimension(self.hypothesis_class, n_features), lambda m: self.noise_law(m, n_features)[1]
        )

    def _near_tie_probability_at(self, m: int, n: int, n_features: int) -> float:
        """The near-tie probability of the one private call with m public weights (:mod:`oraclepriv.near_ties`);
        0 where the backend is exhaustive and the answers are compared exactly (:mod:`oraclepriv.exact_comparison`)."""
        if compared_exactly(self.hypothesis_class, n_features, self.backend):
            return 0.0
        if self.noise == "laplace":
            return laplace_near_tie_probability(m, 2.0 * m / self.epsilon_, float(n))
        log_n = log_projection_bound(self.hypothesis_class, m, n_features)
        return gaussian_near_tie_probability(m, gaussian_noise_std(self.epsilon_, self.delta_, m, log_n), float(n))

    @classmethod
    def from_theory(
        cls,
        alpha: float,
        beta: float,
        sigma: float,
        d: int,
        *,
        epsilon: float = 1.0,
        rate: str = "paper",
        c_m: float = 1.0,
        c_n: float = 1.0,
        **params: Any,
    ) -> RRSPM:
        """An RRSPM whose number of public points m comes from the theorems (:func:`rrspm_parameters`).

        Parameters
        ----------
        alpha : float
            The target excess error, in (0, 1].
        beta : float
            The failure probability, in (0, 1].
        sigma : float
            The smoothness parameter of the private distribution with respect to the public one
            (Theorem 10), in (0, 1].
        d : int
            The VC dimension of the class, >= 1.
        epsilon : float, default 1.0
            The privacy parameter, > 0.
        rate : {"paper", "epsilon-net"}, default "paper"
            Lemma 22's agnostic rate, or our epsilon-net derivation (not in the paper).
        c_m : float, default 1.0
            The constant of m, unspecified in the paper.
        c_n : float, default 1.0
            The constant of the required n, unspecified in the paper.
        **params
            Any other constructor parameter of RRSPM.

        Returns
        -------
        RRSPM
            The learner, with the derivation in its ``theory`` attribute.
        """
        theory = rrspm_parameters(alpha, beta, sigma, d, epsilon, rate=rate, c_m=c_m, c_n=c_n)
        learner = cls(epsilon=epsilon, m=theory["m"], **params)
        learner.theory = theory
        return learner

    # -- hooks (overridden only by the audits' and the verifier's deliberately broken variants) -
    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        """The law of each public weight xi_i: ("laplace", scale 2m/eps) or ("gaussian", the safe std)."""
        if self.noise == "laplace":
            return "laplace", 2.0 * m / self.epsilon_
        return "gaussian", gaussian_noise_std(
            self.epsilon_, self.delta_, m, log_projection_bound(self.hypothesis_class, m, n_features)
        )

    def _public_weights(self, rng: np.random.Generator, m: int, n_features: int) -> np.ndarray:
        """xi i.i.d. from :meth:`noise_law`."""
        family, scale = self.noise_law(m, n_features)
        return rng.laplace(0.0, scale, m) if family == "laplace" else rng.normal(0.0, scale, m)

    def _release(
        self,
        oracle: ERMOracle,
        Z: np.ndarray,
        projection: np.ndarray,
        rng: np.random.Generator,
        *,
        fhat: Any,
        X: np.ndarray,
        y: np.ndarray,
    ) -> Any:
        """Algorithm 1 with gamma = 0: a fresh call on {(Z_i, fhat(Z_i))} only.

        ``fhat`` and the private data are passed so that a broken variant can misuse them (the audits
        and ``oraclepriv verify`` must catch that); this correct step never reads them, never returns
        fhat and never warm-starts from it. The verifier calls it with ``fhat=None``.
        """
        del fhat, X, y
        out = perturb(
            oracle, Z, projection.astype(np.float64), 0.0, "laplace", rng, caller=self.algorithm, step="perturb"
        )
        return out.hypothesis

    # -- the algorithm ------------------------------------------------------------------------
    def _fit(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        if self.noise == "laplace" and self.delta_ != 0:
            raise ValueError(f"noise='laplace' gives pure eps-DP: delta must be 0; got delta={self.delta!r}")
        if self.noise == "gaussian" and self.delta_ == 0:
            raise ValueError("noise='gaussian' gives (eps, delta)-DP: delta must be > 0; got delta=0.0")
        if self.m is not None:
            if self.m > Z.shape[0]:
                raise ValueError(f"m={self.m} but X_public has only {Z.shape[0]} points")
            Z = Z[: int(self.m)]
        m = Z.shape[0]
        if public_labels is None:
            ytilde = np.asarray(rng.integers(0, 2, size=m), dtype=np.int8)
        else:
            ytilde = as_labels(public_labels, m, "public_labels")
        xi = self._public_weights(rng, m, X.shape[1])
        # a total delta >= 1/n is refused before any oracle call (or released as vacuous when allowed)
        self._refuse_vacuous_guarantee(self._near_tie_probability_at(m, X.shape[0], X.shape[1]), X.shape[0], m)

        oracle = self._oracle()
        first = noisy_private_erm(self, oracle, X, y, Z, ytilde, xi)
        projection = np.asarray(first.hypothesis.predict(Z), dtype=np.int8)
        released = self._release(oracle, Z, projection, rng, fhat=first.hypothesis, X=X, y=y)

        self.public_labels_ = ytilde
        self.public_projection_ = projection
        self.noisy_points_ = Z
        self._diagnostic_values["projection_agreement"] = float(np.mean(np.asarray(released.predict(Z)) == projection))
        n = X.shape[0]  # private records have weight 1 in the private call
        if self.noise == "laplace":
            scale = 2.0 * m / self.epsilon_
            self._privacy.update(
                mechanism="RRSPM: Laplace-weighted ERM (report-noisy-min over F|Z) + public-only projection",
                noise="laplace",
                noise_scale=scale,
                calibration="Lap(2m/eps) on the public weights",
                calibration_source="the paper: Algorithm 4 and Theorem 8 (pure eps-DP)",
                near_tie_probability=self._near_tie_probability_at(m, n, X.shape[1]),
            )
        else:
            log_n = log_projection_bound(self.hypothesis_class, m, X.shape[1])
            std = gaussian_noise_std(self.epsilon_, self.delta_, m, log_n)
            self._privacy.update(
                mechanism="RRSPM: Gaussian-weighted ERM + public-only projection",
                noise="gaussian",
                noise_std=std,
                calibration=f"N(0, s^2) on the public weights, s from A/s + 2m/s^2 <= eps with |F|Z| <= exp({log_n:.3g})",
                calibration_source=(
                    "derived here (docs/release-boundary.md: coupling + union bound over the labelings of Z); the "
                    "paper's C*sqrt(m log(1/delta))/eps has an unspecified C and no proof"
                ),
                near_tie_probability=self._near_tie_probability_at(m, n, X.shape[1]),
            )
        self._privacy.update(m=m, oracle_calls_by_design=2)
        return released
