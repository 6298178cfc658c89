"""The numerical delta: what the certification tolerance costs a learner whose release is a noisy argmin.

The oracle protocol certifies an answer when its objective is within ``tau = 1e-9 * max(1, sum |w|)``
of a proved lower bound (float64 summation error). The privacy proofs of RRSPM (Block, Bun, Desai,
Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data", Algorithm 4,
Theorem 8) and of Perturbation (Algorithm 2) assume an *exact* minimiser. A certified answer is an
exact minimiser except when two hypotheses that label the public points differently have costs
within tau of each other: a near-tie. This module bounds the probability of a near-tie, uniformly
over datasets, so that the learner can publish it as a numerical delta (docs/release-boundary.md
gives the derivation in full):

* One call minimises F(h) = A(h) + sum_j omega_j 1[h(Z_j) != t_j] over the class, where A does not
  depend on the noise omega (i.i.d., density at most rho) and the release depends on the answer only
  through its labeling of Z. If a certified answer labels Z differently from the exact minimiser,
  they differ at some j, and splitting the class by h(Z_j) shows |omega_j - c_j| <= tau for a c_j
  that does not depend on omega_j. So P[near-tie, tau <= tau_bar] <= m * 2 * rho * tau_bar.
* tau itself grows with sum |omega|: with tau_bar the tolerance at the (1 - eta) quantile T of
  sum_j |omega_j|, P[near-tie] <= eta + 2 m rho tau_bar =: gamma.
* The learner with an exact oracle is (eps, delta)-DP; the real one differs from it only on the
  near-tie event, so it is (eps, delta + (1 + e^eps) gamma)-DP (the same argument as
  :func:`oraclepriv.robust.conditional_privacy`). ``numerical_delta = (1 + e^eps) gamma``.

Learners whose privacy does not rest on an exact argmin (SubsampleAggregate: any oracle;
PublicCoverEM and the PPM learner: no oracle; the last, public-only call of every learner:
post-processing) have numerical delta 0, and so do thresholds and stumps, whose answers the
learners compare exactly (:mod:`oraclepriv.exact_comparison`: every certified answer is an exact
minimiser, so the near-tie event is empty).

The bound grows with m: tau is relative to sum |w|, which the m noisy weights dominate once their
scale (2m/eps for RRSPM) times m exceeds n, so gamma ~ 1e-9 m^2 (times e^eps in delta). A fit whose
total delta (design + numerical) reaches 1/n certifies nothing (a mechanism that publishes one
random record verbatim is (0, 1/n)-DP): :func:`check_total_delta` refuses it with
:class:`VacuousGuaranteeError`, naming the levers, unless the user asks for such a release
explicitly (``allow_weak_guarantee=True``), which then warns and says the guarantee is vacuous.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from scipy import stats

from oraclepriv.oracle import CERTIFICATION_RTOL

__all__ = [
    "NEAR_TIE_TAIL",
    "VacuousGuaranteeError",
    "check_total_delta",
    "gaussian_near_tie_probability",
    "laplace_near_tie_probability",
    "numerical_delta",
]

#: eta: the probability left for sum |omega| exceeding the quantile the tolerance is evaluated at
NEAR_TIE_TAIL = 1e-12
#: the largest eps whose e^eps is a finite float64
_LOG_FLOAT_MAX = math.log(sys.float_info.max)


def _near_tie(m: int, density_bound: float, fixed_weight: float, noise_abs_sum: float) -> float:
    tolerance = CERTIFICATION_RTOL * max(1.0, fixed_weight + noise_abs_sum)
    return NEAR_TIE_TAIL + 2.0 * m * density_bound * tolerance


def laplace_near_tie_probability(m: int, scale: float, fixed_weight: float) -> float:
    """gamma for one call with m noisy weights omega_j ~ Lap(scale) and |fixed weights| summing to ``fixed_weight``.

    Density bound 1/(2 scale); sum |omega_j| ~ Gamma(m, scale), whose (1 - eta) quantile sets tau_bar.
    """
    _check(m, scale, fixed_weight)
    total = float(stats.gamma.isf(NEAR_TIE_TAIL, a=m, scale=scale))
    return _near_tie(m, 1.0 / (2.0 * scale), fixed_weight, total)


def gaussian_near_tie_probability(m: int, std: float, fixed_weight: float) -> float:
    """gamma for one call with m noisy weights omega_j ~ N(0, std^2) and fixed weights as above.

    Density bound 1/(std sqrt(2 pi)); sum |omega_j| <= sqrt(m) ||omega||_2 and ||omega||^2 / std^2 ~ chi^2_m.
    """
    _check(m, std, fixed_weight)
    total = math.sqrt(m) * std * math.sqrt(float(stats.chi2.isf(NEAR_TIE_TAIL, df=m)))
    return _near_tie(m, 1.0 / (std * math.sqrt(2.0 * math.pi)), fixed_weight, total)


def numerical_delta(epsilon: float, near_tie_probability: float) -> float:
    """(1 + e^eps) * gamma, capped at 1: the delta a near-tie probability gamma adds to an (eps, delta) proof.

    Where e^eps overflows float64 (eps > 709.78) the product is compared with 1 in log space; when it is
    below 1 there, it is rounded up, so the result stays an upper bound.
    """
    if not near_tie_probability >= 0:
        raise ValueError(f"near_tie_probability must be >= 0; got {near_tie_probability!r}")
    if not epsilon >= 0:  # NaN too: no bound can be stated
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}")
    if near_tie_probability == 0:
        return 0.0
    if epsilon <= _LOG_FLOAT_MAX:
        return float(min(1.0, (1.0 + math.exp(epsilon)) * near_tie_probability))
    # e^eps overflows; log(1 + e^eps) = eps + log1p(e^-eps), with e^-eps < 1e-308 negligible beside eps
    log_delta = epsilon + math.log(near_tie_probability)
    if log_delta >= 0:
        return 1.0
    return min(1.0, math.nextafter(math.exp(log_delta) * (1.0 + 1e-12), math.inf))


def _check(m: int, scale: float, fixed_weight: float) -> None:
    if not (isinstance(m, int) and m >= 1):
        raise ValueError(f"m (noisy weights per call) must be a positive integer; got {m!r}")
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"the noise scale must be a finite number > 0; got {scale!r}")
    if not (fixed_weight >= 0 and math.isfinite(fixed_weight)):
        raise ValueError(f"fixed_weight must be a finite number >= 0; got {fixed_weight!r}")


class VacuousGuaranteeError(ValueError):
    """A fit's total delta (design + numerical) is >= 1/n: its guarantee would certify nothing.

    Raised before the release is published (and, where the learner can tell, before any oracle
    call); the attributes let a caller say it in its own terms (the command line names its flags).
    ``allow_weak_guarantee=True`` publishes such a fit with a warning instead.

    Parameters
    ----------
    message : str
        The error message.
    n : int
        The number of private records.
    m : int or None
        The number of public points, where the learner has them.
    delta : float
        The design delta.
    numerical_delta : float
        The numerical delta of near-ties.
    levers : sequence of str
        The parameters that would lower the total delta.
    """

    def __init__(
        self, message: str, *, n: int, m: int | None, delta: float, numerical_delta: float, levers: Sequence[str]
    ) -> None:
        super().__init__(message)
        self.n = n
        self.m = m
        self.delta = delta
        self.numerical_delta = numerical_delta
        self.levers = tuple(levers)


def check_total_delta(
    owner: str,
    delta: float,
    numeric_delta: float,
    n: int,
    *,
    m: int | None = None,
    allow_weak: bool = False,
    levers: Sequence[str] = (),
) -> bool:
    """False when delta + numeric_delta < 1/n; otherwise True if ``allow_weak``, else :class:`VacuousGuaranteeError`.

    ``owner`` names the learner in the message, ``m`` the public points the numerical delta grows with,
    ``levers`` what lowers the total (the learner's parameters)."""
    total = delta + numeric_delta
    if not (n >= 1 and total >= 1.0 / n):
        return False
    if allow_weak:
        return True
    public = "" if m is None else f" with m={m} public points"
    raise VacuousGuaranteeError(
        f"{owner}: the guarantee would be vacuous: total delta {total:.3g} (delta {delta:.3g} by design + numerical "
        f"delta {numeric_delta:.3g} from near-ties within the certification tolerance, which grows with m^2 and "
        f"e^eps{public}) is >= 1/n = {1.0 / n:.3g} for n={n} private records, and such a delta allows publishing a "
        f"private record verbatim. To lower it: {'; '.join(levers)}",
        n=n,
        m=m,
        delta=delta,
        numerical_delta=numeric_delta,
        levers=levers,
    )
