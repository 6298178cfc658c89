"""Privacy accounting across fits: a budget, a ledger of spends, and the composition theorems.

One job: add up what several private releases on the **same** private records cost together, and refuse
a release that would take the total past a budget before it is published. A spend is an
(epsilon, delta) pair under the neighbouring notion of every learner here (replace one private record;
public data fixed); the total of k spends is bounded by the composition theorems below, each valid for
adaptively chosen mechanisms, and the accountant reports the smallest bound that holds.

* **Basic composition** (Dwork and Roth, *The Algorithmic Foundations of Differential Privacy*,
  Theorem 3.16): (sum eps_i, sum delta_i). Sums are exact in the decimal values the floats print as
  (``Fraction(repr(x))``), so ten spends of 0.1 fit a budget of 1 exactly.
* With a **slack** delta' > 0 chosen at construction, three tighter bounds, each at total delta
  sum delta_i + delta':

  - advanced composition of Dwork, Rothblum, Vadhan, *Boosting and Differential Privacy*, Theorem III.3,
    in its heterogeneous form (the same martingale proof with the per-step bounds eps_i):
    eps' = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1);
  - Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy*, Theorem 3.5
    (heterogeneous): with t = sum eps_i (e^eps_i - 1)/(e^eps_i + 1) and s = sum eps_i^2,
    eps' = min(sum eps_i, t + sqrt(2 s ln(e + sqrt(s)/d)), t + sqrt(2 s ln(1/d))), at total delta
    1 - (1 - d) prod (1 - delta_i); d is chosen as large as keeps that <= sum delta_i + delta';
  - the optimal composition of k identical (eps, delta) mechanisms, Kairouz, Oh, Viswanath, Theorem 3.3,
    applied to (max eps_i, max delta_i) (every spend is also a spend of those). Their proof shows that the
    composition is dominated by the k-fold product of a four-outcome randomized response; this module
    computes that product's hockey-stick divergence at every eps_g exactly (a binomial law), which at
    eps_g = (k - 2i) eps is their closed form delta_i (docs/theory/composition.md, section 3).

  The tighter bounds are computed in floating point and rounded up (one part in 1e10 of the largest
  term, plus 1e-12), so float error never shrinks a bound.

Parameters chosen as you go. The tighter theorems are stated for spends whose (eps_i, delta_i) are fixed in
advance (the mechanisms themselves may be chosen adaptively), as a grid search's candidates are. When each
next epsilon is picked after seeing earlier releases and the budget decides when to stop, the accountant is a
privacy filter (Rogers, Roth, Ullman, Vadhan, *Privacy Odometers and Filters: Pay-as-you-Go Composition*):
basic composition, the default (slack 0), is valid there; the tighter bounds are not claimed to be.

Which total counts: the smallest epsilon among the bounds that fit the budget (a pure budget, delta = 0,
is met by basic composition only; a tighter bound is reported when its sum delta_i + delta' fits). A
spend is accepted iff one bound of the new total fits; a refused spend raises
:class:`BudgetExceededError`, naming the budget and the spend, and leaves the ledger unchanged.

How fits are charged: every private learner's fit charges the **active** accountant right before it
publishes (``PrivateEstimator._publish`` calls :func:`charge_fit`): the innermost accountant entered with
``with accountant:`` in this thread / task (a :mod:`contextvars` stack), else the process-wide default
(:meth:`PrivacyAccountant.default`, unlimited, as diffprivlib's ``BudgetAccountant`` does). A refused
charge raises before ``release_`` is set and strips the estimator's fitted attributes, so nothing of that
fit is published. Fits in other processes (joblib workers) charge their own process's accountants, and a
thread started inside a ``with`` block starts with an empty context, so it charges the default unless it
runs in a copy of the context (``contextvars.copy_context().run``) or the accountant is made the default.

A release without a record-level (eps, delta) guarantee (``on_uncertified="flag"``, eps = inf, label-DP)
is charged as eps = inf: it fits only an unlimited budget.

The ledger saves to and loads from JSON (:meth:`PrivacyAccountant.save`, :meth:`PrivacyAccountant.load`):
budget, slack and the spends (epsilon, delta, label), data-independent facts only. ``oraclepriv learn
--budget FILE`` charges one such file across runs. Derivations: docs/theory/composition.md.
"""

from __future__ import annotations

import contextvars
import json
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.validation import DELTA_AMOUNT, EPSILON_AMOUNT, check_param

__all__ = [
    "ADVANCED",
    "BASIC",
    "KOV_HETEROGENEOUS",
    "KOV_OPTIMAL",
    "Budget",
    "BudgetExceededError",
    "Composition",
    "PrivacyAccountant",
    "Spend",
    "advanced_composition",
    "basic_composition",
    "charge_fit",
    "compose",
    "kov_composition",
    "optimal_homogeneous_composition",
    "release_cost",
]

BASIC = "basic composition (Dwork and Roth, The Algorithmic Foundations of Differential Privacy, Theorem 3.16)"
ADVANCED = (
    "advanced composition (Dwork, Rothblum, Vadhan, Boosting and Differential Privacy, Theorem III.3, "
    "heterogeneous form)"
)
KOV_HETEROGENEOUS = "Kairouz, Oh, Viswanath, The Composition Theorem for Differential Privacy, Theorem 3.5"
KOV_OPTIMAL = (
    "Kairouz, Oh, Viswanath, The Composition Theorem for Differential Privacy, Theorem 3.3 (optimal for identical "
    "spends; applied to the largest epsilon and delta)"
)

#: the JSON ledger's format tag and version
LEDGER_FORMAT = "oraclepriv-privacy-ledger"
LEDGER_VERSION = 1
#: the exact homogeneous bound sums a binomial law over k + 1 outcomes; beyond this many spends it is skipped
MAX_OPTIMAL_SPENDS = 100_000
#: relative and absolute round-up of the floating-point bounds
_ROUND_REL = 1e-10
_ROUND_ABS = 1e-12


class BudgetExceededError(ValueError):
    """A spend would take the accountant's total past its budget; nothing was charged.

    Raised by :meth:`PrivacyAccountant.spend` and :meth:`PrivacyAccountant.check`, and by a learner's
    ``fit`` inside a ``with accountant:`` block; the message names the budget and the spend.
    """


@dataclass(frozen=True)
class Budget:
    """An (epsilon, delta) pair: a budget, or what remains of one.

    Parameters
    ----------
    epsilon : float
        The epsilon, >= 0 (inf: no limit).
    delta : float
        The delta, in [0, 1].
    """

    epsilon: float
    delta: float


@dataclass(frozen=True)
class Spend:
    """One charge: the (epsilon, delta) of a release and a label saying what it was.

    Parameters
    ----------
    epsilon : float
        The epsilon, >= 0 (inf: a release without a record-level guarantee).
    delta : float
        The delta, in [0, 1].
    label : str, default ""
        What was released (a learner charges its class name).
    """

    epsilon: float
    delta: float
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_epsilon(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", _check_delta(self.delta, "delta"))
        if not isinstance(self.label, str):
            raise ValueError(f"label must be a string; got {self.label!r}")


@dataclass(frozen=True)
class Composition:
    """A bound on the total of a list of spends: (epsilon, delta), the theorem that gives it, and the count.

    Parameters
    ----------
    epsilon : float
        The composed epsilon.
    delta : float
        The composed delta.
    theorem : str
        The theorem that gives the bound (authors, title, theorem number).
    spends : int
        The number of spends composed.
    """

    epsilon: float
    delta: float
    theorem: str
    spends: int

    def describe(self) -> str:
        """The bound in words.

        Returns
        -------
        str
            E.g. "(1.2, 1e-06)-DP over 3 spends by <theorem>".
        """
        return f"({self.epsilon:.6g}, {self.delta:.3g})-DP over {self.spends} spends by {self.theorem}"


# ---------------------------------------------------------------------- argument checks
def _check_epsilon(value: Any, name: str) -> float:
    """An amount of epsilon: a real number >= 0 (inf allowed: no guarantee)."""
    check_param(value, name, (EPSILON_AMOUNT,))
    return float(value)


def _check_delta(value: Any, name: str) -> float:
    """An amount of delta: a real number in [0, 1]."""
    check_param(value, name, (DELTA_AMOUNT,))
    return float(value)


def _exact(x: float) -> Fraction:
    """The decimal value a finite float prints as (its shortest round-tripping repr), exactly."""
    return Fraction(repr(float(x)))


def _round_up(value: float, scale: float) -> float:
    return value + _ROUND_REL * abs(scale) + _ROUND_ABS


# ---------------------------------------------------------------------- the theorems
def basic_composition(epsilons: Sequence[float], deltas: Sequence[float]) -> Composition:
    """Basic composition: (sum eps_i, sum delta_i).

    Dwork and Roth, "The Algorithmic Foundations of Differential Privacy", Theorem 3.16. The sums are
    exact in the decimals the floats print as (ten spends of 0.1 total exactly 1); delta is capped at 1.

    Parameters
    ----------
    epsilons : sequence of float
        The spends' epsilons, each >= 0.
    deltas : sequence of float
        The spends' deltas, each in [0, 1], one per epsilon.

    Returns
    -------
    Composition
        The bound and the theorem.

    Examples
    --------
    >>> basic_composition([0.1] * 10, [0.0] * 10).epsilon
    1.0
    """
    if any(math.isinf(e) for e in epsilons):
        eps = math.inf
    else:
        eps = float(sum((_exact(e) for e in epsilons), Fraction(0)))
    delta = float(min(Fraction(1), sum((_exact(d) for d in deltas), Fraction(0))))
    return Composition(eps, delta, BASIC, len(epsilons))


def _target_delta(deltas: Sequence[float], slack: float) -> float | None:
    """sum delta_i + slack, the total delta of the tighter bounds; None when it reaches 1 (vacuous)."""
    total = sum((_exact(d) for d in deltas), _exact(slack))
    return None if total >= 1 else float(total)


def advanced_composition(epsilons: Sequence[float], deltas: Sequence[float], slack: float) -> Composition:
    """Advanced composition, heterogeneous form, at total delta ``sum delta_i + slack``.

    Dwork, Rothblum, Vadhan, "Boosting and Differential Privacy", Theorem III.3:
    ``eps' = sqrt(2 ln(1/slack) sum eps_i^2) + sum eps_i (e^eps_i - 1)``.

    Parameters
    ----------
    epsilons : sequence of float
        The spends' epsilons, each >= 0.
    deltas : sequence of float
        The spends' deltas, each in [0, 1], one per epsilon.
    slack : float
        delta', in (0, 1): the total delta is ``sum delta_i + slack``.

    Returns
    -------
    Composition
        The bound and the theorem.

    Raises
    ------
    ValueError
        When ``slack`` is not in (0, 1).
    """
    if not 0 < slack < 1:
        raise ValueError(f"slack must be in (0, 1) for advanced composition; got {slack!r}")
    e = np.asarray(epsilons, dtype=np.float64)
    target = _target_delta(deltas, slack)
    if target is None or not np.all(np.isfinite(e)):
        return Composition(math.inf, 1.0, ADVANCED, len(e))
    squares = math.fsum((e * e).tolist())
    drift = math.fsum((e * np.expm1(e)).tolist())
    value = math.sqrt(2.0 * math.log(1.0 / slack) * squares) + drift
    return Composition(_round_up(value, value), target, ADVANCED, len(e))


def kov_composition(epsilons: Sequence[float], deltas: Sequence[float], slack: float) -> Composition:
    """Kairouz, Oh, Viswanath's heterogeneous bound at total delta ``sum delta_i + slack``.

    Kairouz, Oh, Viswanath, "The Composition Theorem for Differential Privacy", Theorem 3.5; the
    theorem's d-tilde is chosen as large as keeps ``1 - (1 - d) prod(1 - delta_i)`` within the total.

    Parameters
    ----------
    epsilons : sequence of float
        The spends' epsilons, each >= 0.
    deltas : sequence of float
        The spends' deltas, each in [0, 1], one per epsilon.
    slack : float
        delta', in (0, 1): the total delta is ``sum delta_i + slack``.

    Returns
    -------
    Composition
        The bound and the theorem.

    Raises
    ------
    ValueError
        When ``slack`` is not in (0, 1).
    """
    if not 0 < slack < 1:
        raise ValueError(f"slack must be in (0, 1) for the Kairouz-Oh-Viswanath bound; got {slack!r}")
    e = np.asarray(epsilons, dtype=np.float64)
    target = _target_delta(deltas, slack)
    if target is None or not np.all(np.isfinite(e)):
        return Composition(math.inf, 1.0, KOV_HETEROGENEOUS, len(e))
    # 1 - (1 - d) prod(1 - delta_i) <= target  <=>  d <= 1 - (1 - target) / prod(1 - delta_i)
    log_keep = math.fsum(np.log1p(-np.asarray(deltas, dtype=np.float64)).tolist())
    d = -math.expm1(math.log1p(-target) - log_keep)
    d = max(slack, d * (1.0 - 1e-13))  # slack itself always fits: 1 - (1 - slack) prod(1 - delta_i) <= target
    squares = math.fsum((e * e).tolist())
    drift = math.fsum((e * np.tanh(e / 2.0)).tolist())  # (e^x - 1)/(e^x + 1) = tanh(x/2)
    root = math.sqrt(squares)
    bounds = [  # the theorem's third term, sum eps_i, is basic composition (computed exactly there)
        _round_up(drift + math.sqrt(2.0 * squares * math.log(math.e + root / d)), drift + root),
        _round_up(drift + math.sqrt(2.0 * squares * math.log(1.0 / d)), drift + root),
    ]
    return Composition(min(bounds), target, KOV_HETEROGENEOUS, len(e))


def optimal_homogeneous_composition(k: int, epsilon: float, delta: float, target_delta: float) -> float:
    """The smallest eps_g with which k adaptively composed (epsilon, delta)-DP mechanisms are
    (eps_g, target_delta)-DP, by Kairouz, Oh, Viswanath's Theorem 3.3; inf when no eps_g reaches target_delta.

    Their proof: the composition is dominated by k independent draws of the four-outcome mechanism whose
    hockey-stick divergence at e^eps_g is 1 - (1 - delta)^k (1 - h(eps_g)), where h is that of k-fold
    randomized response, P = Binomial(k, q) against Q = Binomial(k, 1 - q), q = 1/(1 + e^eps), with
    likelihood ratio e^((k - 2j) eps) at j. The ratio falls with j, so h(eps_g) = max over J of
    A_J - e^eps_g B_J with A_J = P(j < J), B_J = Q(j < J), and h(eps_g) <= t exactly when
    eps_g >= log((A_J - t) / B_J) for every J with A_J > t (docs/theory/composition.md, section 3).

    Parameters
    ----------
    k : int
        The number of mechanisms.
    epsilon : float
        Each mechanism's epsilon.
    delta : float
        Each mechanism's delta, in [0, 1).
    target_delta : float
        The composition's delta, in [0, 1).

    Returns
    -------
    float
        The smallest eps_g, rounded up; inf when none reaches ``target_delta``.
    """
    if k <= 0:
        return 0.0
    if not (math.isfinite(epsilon) and 0 <= delta < 1 and 0 <= target_delta < 1):
        return math.inf
    # the randomized-response part may take t = 1 - (1 - target) / (1 - delta)^k
    t = -math.expm1(math.log1p(-target_delta) - k * math.log1p(-delta))
    t *= 1.0 - 1e-13  # float rounding (a few ulps) must not enlarge it
    if t < 0:
        return math.inf
    if epsilon == 0:
        return 0.0
    from scipy import stats  # here: scipy takes a while to import, and most accountants never need it

    j = np.arange(k + 1)
    q = 1.0 / (1.0 + math.exp(epsilon))
    log_p = stats.binom.logpmf(j, k, q)
    log_q = stats.binom.logpmf(j, k, 1.0 - q)
    log_a = np.logaddexp.accumulate(log_p)[:-1]  # log P(j <= J - 1), J = 1..k
    log_b = np.logaddexp.accumulate(log_q)[:-1]
    log_tail = np.logaddexp.accumulate(log_p[::-1])[::-1][1:]  # log P(j >= J), J = 1..k
    a = np.exp(log_a)
    # A_J - t, from A_J itself where it is small and from 1 - P(j >= J) where it is close to 1
    excess = np.where(a <= 0.5, a - t, (1.0 - t) - np.exp(log_tail))
    positive = excess > 0
    if not np.any(positive):
        return 0.0
    value = float(np.max(np.log(excess[positive]) - log_b[positive]))
    return max(0.0, _round_up(value, k * epsilon))


def _optimal_bound(epsilons: Sequence[float], deltas: Sequence[float], slack: float) -> Composition:
    """Theorem 3.3 of Kairouz, Oh, Viswanath on (max eps_i, max delta_i), at total delta sum delta_i + slack."""
    k = len(epsilons)
    target = _target_delta(deltas, slack)
    if target is None or k > MAX_OPTIMAL_SPENDS or k == 0:
        return Composition(math.inf, 1.0, KOV_OPTIMAL, k)
    value = optimal_homogeneous_composition(k, max(epsilons), max(deltas), target)
    return Composition(value, target, KOV_OPTIMAL, k)


def compose(epsilons: Sequence[float], deltas: Sequence[float], slack: float = 0.0) -> list[Composition]:
    """Every bound that holds for these spends, each a valid (epsilon, delta) guarantee of the composition.

    Parameters
    ----------
    epsilons : sequence of float
        The spends' epsilons, each >= 0.
    deltas : sequence of float
        The spends' deltas, each in [0, 1], one per epsilon.
    slack : float, default 0.0
        delta', in [0, 1): 0 gives basic composition only; > 0 adds the three tighter bounds (advanced
        composition, Kairouz-Oh-Viswanath heterogeneous and optimal homogeneous), each at total delta
        ``sum delta_i + slack``.

    Returns
    -------
    list of Composition
        Basic composition first, then the tighter bounds.

    Raises
    ------
    ValueError
        When the lists differ in length or ``slack`` is not in [0, 1].
    """
    if len(epsilons) != len(deltas):
        raise ValueError(f"got {len(epsilons)} epsilons but {len(deltas)} deltas")
    slack = _check_delta(slack, "slack")
    bounds = [basic_composition(epsilons, deltas)]
    if slack > 0 and slack < 1 and epsilons and all(math.isfinite(e) for e in epsilons):
        bounds += [
            advanced_composition(epsilons, deltas, slack),
            kov_composition(epsilons, deltas, slack),
            _optimal_bound(epsilons, deltas, slack),
        ]
    return bounds


# ---------------------------------------------------------------------- the accountant
_ACTIVE: contextvars.ContextVar[tuple[PrivacyAccountant, ...]] = contextvars.ContextVar(
    "oraclepriv_active_accountants", default=()
)
_DEFAULT_LOCK = threading.Lock()
_DEFAULT: list[PrivacyAccountant] = []


class PrivacyAccountant:
    """A privacy budget and the ledger of what was spent from it (module docstring).

    Parameters
    ----------
    epsilon : float, default=inf
        The budget's epsilon (>= 0; inf: no limit).
    delta : float, default=1.0
        The budget's delta in [0, 1] (1: no limit; a total delta is capped at 1, where it says nothing).
    slack : float, default=0.0
        delta' in [0, 1): 0 composes by basic composition only; > 0 also tries the tighter theorems, each at
        total delta sum delta_i + slack, and reports the smallest epsilon that fits the budget. Use it only for
        spends whose (epsilon, delta) are fixed in advance (module docstring).
    spends : iterable of Spend or (epsilon, delta[, label])
        Spends already made (a loaded ledger); refused if their total does not fit the budget.


    Notes
    -----
    ``with accountant:`` makes it the accountant every private fit in the block charges;
    ``PrivacyAccountant.default()`` is charged otherwise.

    Examples
    --------
    >>> accountant = PrivacyAccountant(epsilon=1.0)
    >>> accountant.spend(0.4, label="first fit").epsilon
    0.4
    >>> accountant.remaining().epsilon
    0.6
    >>> accountant.spend(0.7)
    Traceback (most recent call last):
    ...
    oraclepriv.accountant.BudgetExceededError: privacy budget exceeded: ...
    """

    def __init__(
        self, epsilon: float = math.inf, delta: float = 1.0, *, slack: float = 0.0, spends: Iterable[Any] = ()
    ) -> None:
        self._budget = Budget(_check_epsilon(epsilon, "epsilon"), _check_delta(delta, "delta"))
        self._slack = _check_delta(slack, "slack")
        if self._slack >= 1:
            raise ValueError(f"slack must be in [0, 1); got {slack!r}")
        self._lock = threading.RLock()
        self._spends: list[Spend] = []
        self._eps_sum = Fraction(0)  # exact running sums (basic composition)
        self._eps_infinite = False
        self._delta_sum = Fraction(0)
        for item in spends:
            spend = item if isinstance(item, Spend) else Spend(*item)
            self._append(spend)
        if self._spends and self._within(self._spends, self._eps_sum, self._eps_infinite, self._delta_sum) is None:
            raise ValueError(
                f"the spends total {self._basic().describe()}, past the budget {_show(self._budget)}: a ledger "
                "never holds more than its budget"
            )

    # ------------------------------------------------------------------ state
    @property
    def budget(self) -> Budget:
        """The (epsilon, delta) budget given at construction."""
        return self._budget

    @property
    def slack(self) -> float:
        """delta' of the tighter composition theorems (0: basic composition only)."""
        return self._slack

    @property
    def spends(self) -> tuple[Spend, ...]:
        """The ledger: every accepted spend, in order."""
        with self._lock:
            return tuple(self._spends)

    def __len__(self) -> int:
        return len(self._spends)

    def __repr__(self) -> str:
        return (
            f"PrivacyAccountant(budget={_show(self._budget)}, slack={self._slack:g}, total={self.total().describe()})"
        )

    def _append(self, spend: Spend) -> None:
        self._spends.append(spend)
        if math.isinf(spend.epsilon):
            self._eps_infinite = True
        else:
            self._eps_sum += _exact(spend.epsilon)
        self._delta_sum += _exact(spend.delta)

    def _basic(self) -> Composition:
        eps = math.inf if self._eps_infinite else float(self._eps_sum)
        return Composition(eps, float(min(Fraction(1), self._delta_sum)), BASIC, len(self._spends))

    # ------------------------------------------------------------------ composition and the budget
    def _fits_basic(self, eps_sum: Fraction, eps_infinite: bool, delta_sum: Fraction) -> bool:
        budget = self._budget
        eps_ok = math.isinf(budget.epsilon) or (not eps_infinite and eps_sum <= _exact(budget.epsilon))
        delta_ok = budget.delta >= 1 or delta_sum <= _exact(budget.delta)
        return eps_ok and delta_ok

    def _within(
        self, spends: Sequence[Spend], eps_sum: Fraction, eps_infinite: bool, delta_sum: Fraction
    ) -> Composition | None:
        """The smallest-epsilon bound on these spends that fits the budget, or None."""
        budget = self._budget
        fitting: list[Composition] = []
        if self._fits_basic(eps_sum, eps_infinite, delta_sum):
            eps = math.inf if eps_infinite else float(eps_sum)
            fitting.append(Composition(eps, float(min(Fraction(1), delta_sum)), BASIC, len(spends)))
        target = delta_sum + _exact(self._slack)
        if self._slack > 0 and not eps_infinite and (budget.delta >= 1 or target <= _exact(budget.delta)):
            epsilons = [s.epsilon for s in spends]
            deltas = [s.delta for s in spends]
            for bound in compose(epsilons, deltas, self._slack)[1:]:
                if bound.epsilon <= budget.epsilon:
                    fitting.append(bound)
        if not fitting:
            return None
        return min(fitting, key=lambda b: (b.epsilon, b.delta))

    def total(self) -> Composition:
        """The composed (epsilon, delta) of every spend so far: the smallest epsilon among the valid bounds that
        fit the budget (basic composition when none does, which a ledger past its budget would need)."""
        with self._lock:
            found = self._within(self._spends, self._eps_sum, self._eps_infinite, self._delta_sum)
            return found if found is not None else self._basic()

    def _prospective(self, spend: Spend) -> Composition | None:
        eps_infinite = self._eps_infinite or math.isinf(spend.epsilon)
        eps_sum = self._eps_sum if math.isinf(spend.epsilon) else self._eps_sum + _exact(spend.epsilon)
        return self._within([*self._spends, spend], eps_sum, eps_infinite, self._delta_sum + _exact(spend.delta))

    def check(self, epsilon: float, delta: float = 0.0, label: str = "") -> Composition:
        """The total one more spend would make; charges nothing.

        Parameters
        ----------
        epsilon : float
            The spend's epsilon, >= 0.
        delta : float, default 0.0
            The spend's delta, in [0, 1].
        label : str, default ""
            What it would be for (in the error message).

        Returns
        -------
        Composition
            The total with the spend.

        Raises
        ------
        BudgetExceededError
            When the spend would not fit the budget.
        """
        spend = Spend(epsilon, delta, label)
        with self._lock:
            found = self._prospective(spend)
            if found is None:
                raise BudgetExceededError(self._refusal(spend))
            return found

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> Composition:
        """Charge (epsilon, delta) for ``label``.

        Parameters
        ----------
        epsilon : float
            The spend's epsilon, >= 0.
        delta : float, default 0.0
            The spend's delta, in [0, 1].
        label : str, default ""
            What it is for.

        Returns
        -------
        Composition
            The new total.

        Raises
        ------
        BudgetExceededError
            When the spend would take the total past the budget (the message names the budget and the
            spend); nothing is charged.
        """
        spend = Spend(epsilon, delta, label)
        with self._lock:
            found = self._prospective(spend)
            if found is None:
                raise BudgetExceededError(self._refusal(spend))
            self._append(spend)
            return found

    def _refusal(self, spend: Spend) -> str:
        what = f" for {spend.label!r}" if spend.label else ""
        unbounded = (
            " (a release without a record-level (epsilon, delta) guarantee is charged as epsilon = inf)"
            if math.isinf(spend.epsilon)
            else ""
        )
        slack = f" with slack delta' = {self._slack:g}" if self._slack > 0 else ""
        return (
            f"privacy budget exceeded: spending {_show(Budget(spend.epsilon, spend.delta))}{what} would "
            f"take the total past the budget {_show(self._budget)}{unbounded}; spent so far "
            f"{self.total().describe()}{slack}. Nothing was charged and nothing released"
        )

    def remaining(self, delta: float = 0.0) -> Budget:
        """What one more spend can still take.

        With slack 0 that is the budget minus the sums, in both coordinates.

        Parameters
        ----------
        delta : float, default 0.0
            The delta of the spend whose largest epsilon is asked for, in [0, 1].

        Returns
        -------
        Budget
            ``epsilon``: the largest epsilon a spend with this ``delta`` would be accepted with (0.0 if
            none; inf for an unlimited epsilon budget); ``delta``: the largest delta a spend with
            epsilon = 0 would be accepted with.
        """
        delta = _check_delta(delta, "delta")
        with self._lock:
            return Budget(self._largest_epsilon(delta), self._largest_delta())

    def _accepts(self, epsilon: float, delta: float) -> bool:
        return self._prospective(Spend(epsilon, delta)) is not None

    def _largest_epsilon(self, delta: float) -> float:
        if not self._accepts(0.0, delta):
            return 0.0
        if math.isinf(self._budget.epsilon):
            return math.inf if self._accepts(math.inf, delta) else self._budget.epsilon
        # basic composition's answer (exact up to the float it is rounded to), then, with a slack, the tighter
        # bounds' up to the budget itself: a single spend's total is never below its own epsilon
        basic = 0.0 if self._eps_infinite else max(0.0, float(_exact(self._budget.epsilon) - self._eps_sum))
        lo = _largest_accepted(lambda e: self._accepts(e, delta), 0.0, basic)
        if self._slack == 0:
            return lo
        return _largest_accepted(lambda e: self._accepts(e, delta), lo, self._budget.epsilon)

    def _largest_delta(self) -> float:
        if self._budget.delta >= 1:
            return 1.0
        if not self._accepts(0.0, 0.0):
            return 0.0
        return _largest_accepted(lambda d: self._accepts(0.0, d), 0.0, self._budget.delta)

    # ------------------------------------------------------------------ the active accountant
    def __enter__(self) -> PrivacyAccountant:
        _ACTIVE.set((*_ACTIVE.get(), self))
        return self

    def __exit__(self, *exc: object) -> None:
        stack = _ACTIVE.get()
        if stack and stack[-1] is self:
            _ACTIVE.set(stack[:-1])

    @classmethod
    def active(cls) -> PrivacyAccountant:
        """The accountant a private fit charges now: the innermost ``with`` block's, else the default.

        Returns
        -------
        PrivacyAccountant
            The active accountant.
        """
        stack = _ACTIVE.get()
        return stack[-1] if stack else cls.default()

    @classmethod
    def default(cls) -> PrivacyAccountant:
        """The process-wide default accountant, unlimited unless :meth:`set_default` replaced it.

        Returns
        -------
        PrivacyAccountant
            The default accountant.
        """
        with _DEFAULT_LOCK:
            if not _DEFAULT:
                _DEFAULT.append(cls())
            return _DEFAULT[0]

    @classmethod
    def set_default(cls, accountant: PrivacyAccountant | None) -> PrivacyAccountant | None:
        """Make an accountant the process-wide default.

        Parameters
        ----------
        accountant : PrivacyAccountant or None
            The new default; None: a fresh unlimited one on next use.

        Returns
        -------
        PrivacyAccountant or None
            The previous default (None if there was none yet).

        Raises
        ------
        ValueError
            When ``accountant`` is neither a PrivacyAccountant nor None.
        """
        if accountant is not None and not isinstance(accountant, PrivacyAccountant):
            raise ValueError(f"set_default takes a PrivacyAccountant or None; got {accountant!r}")
        with _DEFAULT_LOCK:
            previous = _DEFAULT[0] if _DEFAULT else None
            _DEFAULT.clear()
            if accountant is not None:
                _DEFAULT.append(accountant)
            return previous

    # ------------------------------------------------------------------ JSON ledger
    def to_dict(self) -> dict[str, Any]:
        """The ledger as a JSON-friendly dict.

        Returns
        -------
        dict
            The format tag and version, the budget (epsilon null: no limit), the slack, the spends and,
            for reading, the total.
        """
        total = self.total()
        return {
            "format": LEDGER_FORMAT,
            "version": LEDGER_VERSION,
            "budget": {"epsilon": _finite_or_none(self._budget.epsilon), "delta": self._budget.delta},
            "slack": self._slack,
            "spends": [
                {"epsilon": _finite_or_none(s.epsilon), "delta": s.delta, "label": s.label} for s in self.spends
            ],
            "total": {"epsilon": _finite_or_none(total.epsilon), "delta": total.delta, "theorem": total.theorem},
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The ledger as JSON (:meth:`to_dict`).

        Parameters
        ----------
        indent : int or None, default 2
            As for :func:`json.dumps`.

        Returns
        -------
        str
            The JSON text.
        """
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "ledger") -> PrivacyAccountant:
        """The accountant a :meth:`to_dict` dict describes; the stored total is recomputed, not read.

        Parameters
        ----------
        data : mapping
            The dict.
        source : str, default "ledger"
            What the dict was read from, for the error messages.

        Returns
        -------
        PrivacyAccountant
            The accountant, with its spends.

        Raises
        ------
        ValueError
            For a dict that is not a ledger of this version, is malformed, or whose spends exceed its
            budget.
        """
        if not isinstance(data, Mapping) or data.get("format") != LEDGER_FORMAT:
            raise ValueError(f'{source} is not an oraclepriv privacy ledger (no "format": {LEDGER_FORMAT!r})')
        if data.get("version") != LEDGER_VERSION:
            raise ValueError(f"{source}: ledger version {data.get('version')!r} is not {LEDGER_VERSION}")
        try:
            budget = data["budget"]
            spends = [Spend(_none_as_inf(s["epsilon"]), s["delta"], s.get("label", "")) for s in data.get("spends", [])]
            return cls(_none_as_inf(budget["epsilon"]), budget["delta"], slack=data.get("slack", 0.0), spends=spends)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{source}: malformed ledger ({type(exc).__name__}: {exc})") from None
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None

    def save(self, path: str | Path) -> None:
        """Write the ledger as JSON, through a temporary file and a rename (never half-written).

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write.
        """
        import os
        import tempfile

        path = Path(path)
        handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(self.to_json() + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: str | Path) -> PrivacyAccountant:
        """Read a ledger written by :meth:`save`.

        Parameters
        ----------
        path : str or pathlib.Path
            The file to read.

        Returns
        -------
        PrivacyAccountant
            The accountant, with its spends.

        Raises
        ------
        ValueError
            When the file is not valid JSON or not a ledger; the message names the file.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"privacy ledger {str(path)!r} is not valid JSON ({exc})") from None
        return cls.from_dict(data, source=f"privacy ledger {str(path)!r}")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()


def _largest_accepted(accepts: Any, lo: float, hi: float) -> float:
    """The largest x in [lo, hi] with accepts(x), for a monotone accepted set containing lo: hi itself, or
    bisection to float resolution."""
    if accepts(hi):
        return hi
    for _ in range(2100):  # enough halvings to reach adjacent floats anywhere in [0, 1.8e308]
        mid = lo + (hi - lo) / 2
        if mid <= lo or mid >= hi:
            break
        lo, hi = (mid, hi) if accepts(mid) else (lo, mid)
    return lo


def _show(budget: Budget) -> str:
    eps = "inf" if math.isinf(budget.epsilon) else f"{budget.epsilon:.6g}"
    return f"(epsilon={eps}, delta={budget.delta:.3g})"


def _finite_or_none(x: float) -> float | None:
    return None if math.isinf(x) else x


def _none_as_inf(x: Any) -> Any:
    return math.inf if x is None else x


# ---------------------------------------------------------------------- the learners' hook
def release_cost(privacy: Mapping[str, Any], *, record_level: bool = True) -> tuple[float, float]:
    """The (epsilon, delta) a release charges.

    Parameters
    ----------
    privacy : mapping
        The release's privacy record (:attr:`oraclepriv.release.Release.privacy`).
    record_level : bool, default True
        Whether the guarantee is for replacing one private record (False for label-DP).

    Returns
    -------
    epsilon : float
        The release's epsilon; inf when it has no record-level guarantee (not ``record_level``,
        ``private`` false, or a guarantee that reads "none").
    delta : float
        Its total delta, by design plus numerical (0 with an infinite epsilon), at most 1.
    """
    unbounded = (
        not record_level or privacy.get("private") is False or str(privacy.get("guarantee", "")).startswith("none")
    )
    if unbounded:
        return math.inf, 0.0
    delta = float(privacy.get("delta", 0.0)) + float(privacy.get("numerical_delta", 0.0))
    return float(privacy["epsilon"]), min(1.0, delta)


def charge_fit(estimator: object, privacy: Mapping[str, Any], *, record_level: bool = True) -> None:
    """Charge a release about to be published to the active accountant.

    Parameters
    ----------
    estimator : object
        The learner whose fit publishes the release; its class name labels the spend.
    privacy : mapping
        The release's privacy record.
    record_level : bool, default True
        Whether the guarantee is for replacing one private record (:func:`release_cost`).

    Raises
    ------
    BudgetExceededError
        When the charge does not fit; the estimator's fitted attributes (scikit-learn's
        trailing-underscore names) are stripped first, so no part of the refused fit stays readable.
    """
    epsilon, delta = release_cost(privacy, record_level=record_level)
    try:
        PrivacyAccountant.active().spend(epsilon, delta, label=type(estimator).__name__)
    except BudgetExceededError:
        for name in [n for n in vars(estimator) if n.endswith("_") and not n.startswith("_")]:
            delattr(estimator, name)
        raise
