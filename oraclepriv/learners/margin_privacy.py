"""The privacy calibration of the margin learners (derivations: docs/theory/margin-learners.md).

Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees", Algorithm 4 (the DP-ERM step of
Algorithm 2) runs M rounds, each a DP convex solver on m points resampled with replacement, then an exponential
mechanism over the M candidates. Its Lemma 3.1 sets the solver's budget (epsilon', delta') so that group privacy over
the copies of one record in a resample gives each round (epsilon/(2M), delta/M). This module computes those
constants, checks the two inequalities of the lemma's proof numerically (the binomial tail of the number of copies and
the group-privacy sum), and calibrates the Gaussian noise of the solver that stands in for the phased SGD of
Bassily, Guzman, Menart, "Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings" (Algorithm 2), which is not rebuilt here.

The stand-in is full-batch noisy projected subgradient descent: T steps, each adding N(0, sigma^2 I) to the mean
subgradient, whose replace-one sensitivity is 2 r~ / (rho m). Its transcript is a T-fold adaptive composition of
Gaussian mechanisms, exactly mu-GDP with mu = sqrt(T) (2 r~ / (rho m)) / sigma (Dong, Roth, Su, "Gaussian
Differential Privacy", Corollary 2), and mu-GDP is (epsilon, delta(epsilon))-DP for every epsilon with the exact
profile of :func:`gaussian_delta` (Balle, Wang, "Improving the Gaussian Mechanism for Differential Privacy",
Theorem 8). Three accountings are offered (:func:`round_calibration`):

* ``"paper"``: Lemma 3.1 as written: the solver at (epsilon', delta'), group privacy for the copies, basic composition
  over the rounds, epsilon/2 for the final selection;
* ``"resampling-gaussian"`` (our derivation, not the paper's): conditionally on the resampled indices, the M rounds
  are one Gaussian mechanism with mu sqrt(J_1^2 + ... + J_M^2), J_t the copies of the replaced record in round t
  (J_t ~ Binomial(m, 1/m), independent); averaging the conditional profiles over the J_t bounds the rounds' delta
  (:func:`resampling_gaussian_delta`); the final selection keeps epsilon/2;
* ``"direct-gaussian"`` (our derivation, not the paper's): no resampling. The paper resamples because the phased SGD
  is a one-pass stochastic solver; the stand-in is a full-batch DP-ERM solver, so each round runs on the records
  themselves. The M rounds are M T adaptive Gaussian mechanisms on the same data, mu_r sqrt(M)-GDP in all for a
  per-round mu_r (:func:`direct_gaussian_mu`), calibrated on the exact profile.

With one round (M = 1) the final selection has a single candidate: its output does not depend on the data, so it
costs nothing and all of epsilon goes to the rounds, under every accounting.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import log_ndtr
from scipy.stats import binom

__all__ = [
    "ACCOUNTINGS",
    "PaperBudget",
    "RoundCalibration",
    "direct_gaussian_delta",
    "direct_gaussian_mu",
    "gaussian_delta",
    "gaussian_mu",
    "jl_dimension",
    "paper_budget",
    "resampling_gaussian_delta",
    "resampling_gaussian_mu",
    "round_calibration",
    "rounds_for_confidence",
    "squared_copies_law",
]

#: the accountings of the M rounds (module docstring): the paper's and two of our derivations
ACCOUNTINGS = ("paper", "resampling-gaussian", "direct-gaussian")

#: copies of one record beyond this many in a round are charged delta 1 (their probability is added to delta)
_MAX_COPIES = 40


def gaussian_delta(mu: float, epsilon: float) -> float:
    """delta(epsilon) of a mu-GDP mechanism: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    The exact privacy profile of the Gaussian mechanism whose sensitivity is mu standard deviations (Balle, Wang,
    Theorem 8), hence of any T-fold adaptive composition of Gaussian mechanisms with sqrt(sum of squared
    sensitivity-to-noise ratios) = mu. Computed as -Phi(a) expm1(eps + log Phi(b) - log Phi(a)) from log Phi, so that
    the tiny deltas of the paper's accounting keep their digits and a large mu gives Phi(a), not inf - inf.

    Parameters
    ----------
    mu : float
        Sensitivity over noise standard deviation, >= 0.
    epsilon : float
        The epsilon at which the profile is read, >= 0.

    Returns
    -------
    float
        The smallest delta with which the mechanism is (epsilon, delta)-DP, in [0, 1].
    """
    if mu <= 0:
        return 0.0
    upper, lower = log_ndtr(-epsilon / mu + mu / 2), log_ndtr(-epsilon / mu - mu / 2)
    return float(max(0.0, -math.exp(upper) * math.expm1(min(0.0, epsilon + lower - upper))))


def _gaussian_deltas(mus: np.ndarray, epsilon: float) -> np.ndarray:
    """:func:`gaussian_delta` of every entry of ``mus`` (all > 0)."""
    upper, lower = log_ndtr(-epsilon / mus + mus / 2), log_ndtr(-epsilon / mus - mus / 2)
    return np.maximum(0.0, -np.exp(upper) * np.expm1(np.minimum(0.0, epsilon + lower - upper)))


def _largest_mu(profile: Any, delta: float) -> float:
    """The largest mu with ``profile(mu) <= delta`` (to 1e-12 relative), profile increasing in mu."""
    low, high = 0.0, 1.0
    while profile(high) <= delta:
        low, high = high, 2.0 * high
        if high > 1e6:
            return low
    for _ in range(200):
        middle = 0.5 * (low + high)
        if profile(middle) <= delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return low


def gaussian_mu(epsilon: float, delta: float) -> float:
    """The largest mu whose Gaussian profile has delta(epsilon) <= delta (bisection; the returned mu meets it).

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    float
        mu: the noise of a mechanism with sensitivity D is then D / mu standard deviations.
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"gaussian_mu needs epsilon > 0 and delta in (0, 1); got epsilon={epsilon!r}, delta={delta!r}")
    return _largest_mu(lambda mu: gaussian_delta(mu, epsilon), delta)


def rounds_for_confidence(confidence: float) -> int:
    """M = ceil(log(2 / beta)), the rounds of Algorithm 4 (its step 1, rounded up to an integer)."""
    return max(1, math.ceil(math.log(2.0 / confidence)))


def jl_dimension(n: int, epsilon: float, delta: float, confidence: float) -> int:
    """k = ceil(eps m log(m/beta) / (log(1/beta) log^(3/2)(1/delta))), at least 1.

    The projection dimension that the proof of Theorem 3.2 uses, gamma = sqrt(log(m/beta)/k) =
    sqrt(log(1/beta)/(eps m)) log^(3/4)(1/delta), solved for k with the unknown constants set to 1. The projection
    is data-independent, so k changes the utility, never the privacy.
    """
    beta = float(confidence)
    value = epsilon * n * math.log(n / beta) / (math.log(1.0 / beta) * math.log(1.0 / delta) ** 1.5)
    return max(1, math.ceil(value))


@dataclass(frozen=True)
class PaperBudget:
    """The constants of Lemma 3.1 for one fit (docs/theory/margin-learners.md, "The paper's accounting").

    Parameters
    ----------
    rounds : int
        M.
    round_epsilon, round_delta : float
        (epsilon_R/M, delta/M), what each round must be; epsilon_R = epsilon/2 beside the final selection (the
        paper's (epsilon/(2M), delta/M)), epsilon_R = epsilon with one round and no selection.
    solver_epsilon, solver_delta : float
        (epsilon', delta') = (epsilon_R/(2M log(2M/delta)), delta^2/(4M log(2M/delta))), the solver's budget; with
        epsilon_R = epsilon/2 the paper's eps/(4M log(2M/delta)).
    group_threshold : float
        2 log(2M/delta): the proof's bound on the copies of one record in a resample.
    group_size : int
        floor(group_threshold), the copies group privacy is applied to.
    copies_tail : float
        P(Binomial(m, 1/m) > group_size), computed exactly (the proof bounds it by delta/(2M) by Chernoff).
    group_delta : float
        delta' (e^(G eps') - 1) / (e^eps' - 1), group privacy's delta for G = group_size copies (the proof bounds it
        by delta/(2M)).
    spent_delta : float
        M (copies_tail + group_delta), the delta the rounds spend; at most delta.
    """

    rounds: int
    round_epsilon: float
    round_delta: float
    solver_epsilon: float
    solver_delta: float
    group_threshold: float
    group_size: int
    copies_tail: float
    group_delta: float
    spent_delta: float

    def record(self) -> dict[str, Any]:
        """The constants as a dict for the privacy record."""
        return asdict(self)


def paper_budget(epsilon: float, delta: float, rounds: int, n: int, selection: bool = True) -> PaperBudget:
    """The solver budget of Lemma 3.1 and the numerical check of its proof's two inequalities.

    ``epsilon`` is Algorithm 4's; the rounds get epsilon_R = epsilon/2 beside the final selection (``selection``,
    the paper's split), all of it without (one round: the selection is a constant map, docs/theory/margin-learners.md).

    Raises
    ------
    ValueError
        When the checks fail: the binomial tail or the group-privacy delta exceeds delta/(2M). The lemma assumes
        epsilon <= log(1/delta) and delta < 1/m, and the message names the one that is violated.
    """
    M = int(rounds)
    rounds_epsilon = epsilon / 2.0 if selection else float(epsilon)
    log_term = math.log(2.0 * M / delta)
    solver_epsilon = rounds_epsilon / (2.0 * M * log_term)
    solver_delta = delta**2 / (4.0 * M * log_term)
    threshold = 2.0 * log_term
    size = int(math.floor(threshold))
    tail = float(binom.sf(size, n, 1.0 / n))
    group_delta = solver_delta * math.expm1(size * solver_epsilon) / math.expm1(solver_epsilon)
    half = delta / (2.0 * M)
    if tail > half or group_delta > half:
        assumption = (
            f"epsilon <= log(1/delta) = {math.log(1.0 / delta):.4g}"
            if group_delta > half
            else f"a small enough delta (the copies' tail {tail:.3g} exceeds delta/(2M) = {half:.3g})"
        )
        raise ValueError(
            f"epsilon={epsilon!r}, delta={delta!r}: Lemma 3.1's group-privacy step does not hold here (it needs "
            f"{assumption}); use accounting='resampling-gaussian' or 'direct-gaussian', or change epsilon/delta"
        )
    return PaperBudget(
        rounds=M,
        round_epsilon=rounds_epsilon / M,
        round_delta=delta / M,
        solver_epsilon=solver_epsilon,
        solver_delta=solver_delta,
        group_threshold=threshold,
        group_size=size,
        copies_tail=tail,
        group_delta=group_delta,
        spent_delta=M * (tail + group_delta),
    )


def squared_copies_law(n: int, rounds: int) -> tuple[np.ndarray, float]:
    """The law of Q = J_1^2 + ... + J_M^2, J_t ~ Binomial(m, 1/m) independent, truncated at J_t <= 40.

    Returns
    -------
    law : numpy.ndarray
        ``law[q]`` = P(Q = q and every J_t <= 40).
    beyond : float
        P(some J_t > 40), an upper bound (union bound) charged as delta 1 by the caller.
    """
    top = min(_MAX_COPIES, n)
    pmf = binom.pmf(np.arange(top + 1), n, 1.0 / n)
    one = np.zeros(top * top + 1)
    one[np.arange(top + 1) ** 2] = pmf
    law = np.array([1.0])
    for _ in range(int(rounds)):
        law = np.convolve(law, one)
    beyond = float(rounds * binom.sf(top, n, 1.0 / n))
    return law, beyond


def resampling_gaussian_delta(mu: float, epsilon: float, n: int, rounds: int) -> float:
    """delta(epsilon) of the M resampled rounds of Gaussian noisy descent, each mu-GDP per copy of a record.

    sum_q P(Q = q) gaussian_delta(mu sqrt(q), epsilon) + P(some J_t > 40), Q of :func:`squared_copies_law`
    (docs/theory/margin-learners.md, "The resampling-Gaussian accounting").
    """
    law, beyond = squared_copies_law(n, rounds)
    support = np.flatnonzero(law[1:] > 0) + 1  # q = 0: the record was never drawn, no loss
    total = float(np.dot(law[support], _gaussian_deltas(mu * np.sqrt(support), epsilon)))
    return min(1.0, total + beyond)


def resampling_gaussian_mu(epsilon: float, delta: float, n: int, rounds: int) -> float:
    """The largest per-copy mu with :func:`resampling_gaussian_delta` <= delta (bisection)."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(
            f"resampling_gaussian_mu needs epsilon > 0 and delta in (0, 1); got epsilon={epsilon!r}, delta={delta!r}"
        )
    _, beyond = squared_copies_law(n, rounds)
    if beyond >= delta:
        raise ValueError(f"delta={delta!r} is below the chance {beyond:.3g} that one record is drawn over 40 times")
    return _largest_mu(lambda mu: resampling_gaussian_delta(mu, epsilon, n, rounds), delta)


def direct_gaussian_delta(mu: float, epsilon: float, rounds: int) -> float:
    """delta(epsilon) of M rounds of Gaussian noisy descent on the same records, each mu-GDP.

    The rounds are M T adaptive Gaussian mechanisms on one dataset, so together exactly (mu sqrt(M))-GDP (Dong, Roth,
    Su, "Gaussian Differential Privacy", Corollary 2): the exact profile :func:`gaussian_delta` at mu sqrt(M).
    Our derivation for the ``"direct-gaussian"`` accounting, not the paper's.
    """
    return gaussian_delta(mu * math.sqrt(int(rounds)), epsilon)


def direct_gaussian_mu(epsilon: float, delta: float, rounds: int) -> float:
    """The largest per-round mu with :func:`direct_gaussian_delta` <= delta: gaussian_mu(epsilon, delta) / sqrt(M).

    Parameters
    ----------
    epsilon : float
        The rounds' epsilon, > 0.
    delta : float
        The rounds' delta, in (0, 1).
    rounds : int
        M >= 1.

    Returns
    -------
    float
        mu_r, each round's GDP parameter.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"direct_gaussian_mu needs rounds a positive integer; got rounds={rounds!r}")
    return gaussian_mu(epsilon, delta) / math.sqrt(int(rounds))


@dataclass(frozen=True)
class RoundCalibration:
    """The M rounds' noise under one accounting: the per-round (per-copy when resampling) GDP parameter ``mu``,
    whether the rounds resample, and the constants for the privacy record."""

    mu: float
    resample: bool
    record: dict[str, Any]


def round_calibration(
    accounting: str, epsilon: float, delta: float, rounds: int, n: int, selection: bool
) -> RoundCalibration:
    """The solver's mu for the M rounds of Algorithm 4 under ``accounting`` (module docstring).

    Parameters
    ----------
    accounting : {"paper", "resampling-gaussian", "direct-gaussian"}
        The accounting.
    epsilon : float
        Algorithm 4's epsilon: the rounds get epsilon/2 when ``selection`` (the other half is the final
        exponential mechanism's), all of it otherwise.
    delta : float
        Algorithm 4's delta, all of it the rounds'.
    rounds : int
        M.
    n : int
        The number of records m.
    selection : bool
        Whether the final exponential mechanism runs (M > 1).

    Returns
    -------
    RoundCalibration
        mu, whether to resample, and the record (``rounds_epsilon``, ``rounds_delta``: the delta the rounds spend at
        ``rounds_epsilon``, at most ``delta``; the composition in words).
    """
    rounds_epsilon = epsilon / 2.0 if selection else float(epsilon)
    base: dict[str, Any] = {"rounds": int(rounds), "rounds_epsilon": rounds_epsilon}
    if accounting == "paper":
        budget = paper_budget(epsilon, delta, rounds, n, selection)
        return RoundCalibration(
            gaussian_mu(budget.solver_epsilon, budget.solver_delta),
            True,
            {
                **base,
                **budget.record(),
                "rounds_delta": budget.spent_delta,
                "composition": "group privacy over <= group_size copies (the rest in copies_tail), basic "
                "composition over the rounds",
            },
        )
    if accounting == "resampling-gaussian":
        mu = resampling_gaussian_mu(rounds_epsilon, delta, n, rounds)
        return RoundCalibration(
            mu,
            True,
            {
                **base,
                "rounds_delta": resampling_gaussian_delta(mu, rounds_epsilon, n, rounds),
                "composition": "our derivation, not the paper's: given the resampled indices the rounds are one "
                "Gaussian mechanism with mu sqrt(sum_t J_t^2), averaged over J_t ~ Binomial(n, 1/n)",
            },
        )
    if accounting == "direct-gaussian":
        mu = direct_gaussian_mu(rounds_epsilon, delta, rounds)
        return RoundCalibration(
            mu,
            False,
            {
                **base,
                "rounds_delta": direct_gaussian_delta(mu, rounds_epsilon, rounds),
                "rounds_mu": mu * math.sqrt(int(rounds)),
                "composition": "our derivation, not the paper's: no resampling, every round on the records "
                "themselves; M rounds of T Gaussian steps on the same data, mu sqrt(M)-GDP in all (Dong, Roth, Su, "
                "Corollary 2), calibrated on the exact profile",
            },
        )
    raise ValueError(f"accounting must be one of {list(ACCOUNTINGS)}; got {accounting!r}")
