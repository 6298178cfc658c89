"""Exact comparison of objectives where the backend is exact combinatorial: near-ties cost nothing.

The oracle protocol certifies an answer whose float64 objective is within the tolerance
tau = 1e-9 * max(1, sum |w|) of a proved lower bound, so a certified answer may be a near-minimiser
rather than a minimiser; :mod:`oraclepriv.near_ties` prices that as a numerical delta. Where the
backend solves the class by exhaustive evaluation of every labeling -- ``sweep`` for thresholds
and stumps, ``enumerate`` for halfspaces on one feature (the protocol's defaults for these) --
the whole class can instead be compared *exactly*, in integer arithmetic, at the cost of one more
sweep:

* every float64 weight is an integer multiple of 2^e for its exponent e, so with e0 the smallest
  exponent among the non-zero weights, W_i = w_i / 2^e0 is an integer (Python's unbounded ints),
  and every partial sum of the weights is an exact integer multiple of 2^e0;
* the labelings a threshold, a stump or a halfspace on the line induces on the call's points are
  the prefixes and suffixes of each column's sorted order, cut between distinct values (the
  constants included); their costs are exact prefix sums of the W_i, so the minimum over the class
  is computed exactly;
* a certified answer whose exact cost is that minimum is an exact minimiser and is kept; any other
  is replaced by the exact argmin (first in the order feature, sign +1 before -1, smallest cut,
  the order of :mod:`oraclepriv.solvers.combinatorial.sweep`), realised by the sweep's cut values.

A float filter decides most calls without the integer pass (:func:`exact_replacement`): the sweep's
prefix sums in float64 (:func:`~oraclepriv.solvers.combinatorial.sweep.column_extremes`) give every
candidate's gain within e = (2 gamma_n + 3u) sum |w| of the exact one (u = 2^-53, gamma_n = n u / (1 -
n u); Higham, "Accuracy and Stability of Numerical Algorithms", eq. (4.4), which holds for any
summation order; the subtraction adds at most 2u sum |w|). A candidate whose float gain is below the
largest minus 2e is strictly worse, in exact arithmetic, than the candidate attaining the largest, so
the optimum lies in the window of the others. That window (one candidate unless there are exact ties
or near-ties within 2e) is resolved exactly: two labelings' gains differ by a sum over the points they
label differently, whose sign :func:`math.fsum` gives exactly (it rounds the exact sum correctly, and a
non-zero sum of float64 values never rounds to zero). The answer is an exact minimiser if and only if
its gain is at least the window's best. A window of more than :data:`WINDOW_LIMIT` candidates goes to
the integer pass.

The filter needs no pass of its own after a ``sweep`` call: the sweep computes the same window on the
problem it solved, compares it with its answer exactly, and reports ``details["exact_minimiser"]``;
with the weights reaching it unchanged or scaled by an exact power of two (the protocol's
:class:`~oraclepriv.solvers.exponents.PowerOfTwoScaling` with no weight rounded), its gains are the
signed problem's gains (the sign reduction flips the label exactly where it negates the weight) times
that power, so its answer is then an exact minimiser of the call. Otherwise the window is computed here,
on the sorted columns the wrapped oracle keeps for its points (:meth:`oraclepriv.oracle.Oracle.sorted_columns`:
the sweep's own after a sweep call), so the comparison sorts nothing the sweep already sorted.

An oracle wrapped by :func:`exactly_compared` therefore returns an exact minimiser of the instance
it is given, in float64 as given, whenever it returns a certified answer: the near-tie event of
:mod:`oraclepriv.near_ties` is empty, and the learners publish numerical delta 0 for these
(class, backend) pairs (docs/release-boundary.md, "Exact comparison"). Uncertified answers pass
through unchanged (the learner's ``on_uncertified`` mode decides what they do). The check costs
nothing after a sweep answer it proved, one weight pass O(d n) when the window must be computed here,
and one pass of integer additions per feature when it is too large.

Other backends for the same classes (a MIP model for stumps, a heuristic) keep the tolerance and
its numerical delta: their answers are what the user chose to trust, and the privacy audits'
controls (a heuristic that claims optimality) must meet the learner as it would run them.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from oraclepriv.hypotheses import Hypothesis, Stump, Threshold, hypothesis_from_dict
from oraclepriv.oracle import Oracle, OracleResult
from oraclepriv.protocols import ERMOracle
from oraclepriv.solvers.combinatorial import sweep_compiled
from oraclepriv.solvers.combinatorial.sweep import (
    Gains,
    SortedColumns,
    SweepBackend,
    candidate_threshold,
    cut_value,
    gain_error_bound,
    magnitude_bound,
    ranked_candidates,
)
from oraclepriv.validation import as_features, as_labels, as_weights

__all__ = [
    "EXACT_BACKENDS",
    "ExactComparisonOracle",
    "compared_exactly",
    "exact_cost",
    "exact_minimiser",
    "exact_replacement",
    "exactly_compared",
    "scaled_integers",
]

#: the unit roundoff of float64
UNIT_ROUNDOFF = 2.0**-53

#: the exhaustive backend of each class whose answers are compared exactly (halfspaces: on one feature only)
EXACT_BACKENDS = {"threshold": "sweep", "stump": "sweep", "halfspace": "enumerate"}


def _backend_name(backend: Any) -> str | None:
    """A learner's ``backend`` parameter as a registered name (None: the protocol's default, chosen per call)."""
    if backend is None or isinstance(backend, str):
        return backend
    return getattr(backend, "name", None) or "unnamed"


def compared_exactly(hypothesis_class: str | None, n_features: int | None = None, backend: Any = None) -> bool:
    """Whether a learner's certified answers for this class, dimension and ``backend`` are exact minimisers.

    Thresholds and stumps with ``sweep``, halfspaces on one feature with ``enumerate``; ``backend=None``
    (the default) picks these. ``n_features=None`` (not known yet) accepts halfspaces, whose calls are
    then compared when they have one feature."""
    if hypothesis_class not in EXACT_BACKENDS:
        return False
    if hypothesis_class == "halfspace" and n_features is not None and n_features != 1:
        return False
    return _backend_name(backend) in (None, EXACT_BACKENDS[hypothesis_class])


def scaled_integers(values: np.ndarray) -> tuple[np.ndarray, int]:
    """(W, e0) with W an object array of Python ints and values[i] == W[i] * 2**e0 exactly."""
    values = np.asarray(values, dtype=np.float64)
    mantissa, exponent = np.frexp(values)  # values = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    digits = (mantissa * 2.0**53).astype(np.int64)  # exact: a float64 mantissa has 53 bits
    exponents = exponent.astype(np.int64) - 53
    nonzero = digits != 0
    e0 = int(exponents[nonzero].min()) if nonzero.any() else 0
    shifts = np.where(nonzero, exponents - e0, 0)
    return np.left_shift(digits.astype(object), shifts.astype(object)), e0


class ExactMinimum(NamedTuple):
    """The exact optimum of one call: its cost as W * 2**e0 and a hypothesis attaining it."""

    cost: int
    e0: int
    hypothesis: Hypothesis

    def value(self) -> float:
        """The optimum's cost, correctly rounded to float64."""
        return float(Fraction(self.cost) * Fraction(2) ** self.e0)


def exact_minimiser(
    hypothesis_class: str, X: np.ndarray, y: np.ndarray, weights: np.ndarray, columns: SortedColumns | None = None
) -> ExactMinimum:
    """The exact minimum of sum_i w_i 1[h(x_i) != y_i] over thresholds, stumps or halfspaces on one feature
    (signed weights allowed). ``columns``: X's sorted columns when known (the order among equal values does
    not matter: cuts fall between distinct values, and integer sums are exact in any order)."""
    _check_covered(hypothesis_class, X)
    W, e0 = scaled_integers(weights)
    gain = np.where(np.asarray(y) == 1, W, -W)  # gain of predicting 1 instead of 0 on example i
    loss_all_zero = int(W[np.asarray(y) == 1].sum())
    signs = (1,) if hypothesis_class == "threshold" else (1, -1)
    n = X.shape[0]
    best: tuple[int, int, int, int, float] | None = None  # (gain, feature, sign, cut k, threshold)
    for feature in range(X.shape[1]):
        order = columns.columns[feature].order if columns is not None else np.argsort(X[:, feature])
        xs = X[order, feature]
        prefix = np.concatenate([np.array([0], dtype=object), np.cumsum(gain[order])])  # prefix[k]: first k points
        total = prefix[n]
        allowed = np.concatenate([[0], np.flatnonzero(xs[1:] > xs[:-1]) + 1, [n]])  # cuts between distinct values
        values = prefix[allowed]
        for sign in signs:
            # sign +1: the points after cut k are positive (gain total - prefix_k); sign -1: those before it
            position = int(np.argmin(values)) if sign == 1 else int(np.argmax(values))
            k = int(allowed[position])
            value = total - prefix[k] if sign == 1 else prefix[k]
            if best is None or value > best[0]:
                best = (int(value), feature, sign, k, _cut(xs, k, sign))
    assert best is not None
    value, feature, sign, _, threshold = best
    return ExactMinimum(loss_all_zero - value, e0, _realise(hypothesis_class, feature, threshold, sign))


def _realise(hypothesis_class: str, feature: int, threshold: float, sign: int) -> Hypothesis:
    """The hypothesis of the class that labels as 1[sign * (x[feature] - threshold) >= 0]."""
    if hypothesis_class == "threshold":
        return Threshold(threshold)
    if hypothesis_class == "stump":
        return Stump(feature, threshold, sign)
    if math.isinf(threshold):  # a constant: all ones when every point is on the positive side
        ones = (threshold < 0) == (sign == 1)
        return hypothesis_from_dict({"hypothesis_class": "halfspace", "w": [0.0], "b": 0.0 if ones else -1.0})
    # sign * x - sign * threshold >= 0, decided exactly by the halfspace (negation is exact in float64)
    return hypothesis_from_dict({"hypothesis_class": "halfspace", "w": [float(sign)], "b": -sign * threshold})


def _cut(xs: np.ndarray, k: int, sign: int) -> float:
    """The sweep's threshold for cut k of the sorted column xs: -inf before every point, +inf after
    every point, else strictly between the two distinct values the cut separates."""
    if k == 0:
        return -math.inf
    if k == xs.shape[0]:
        return math.inf
    return cut_value(float(xs[k - 1]), float(xs[k]), sign)


def _check_covered(hypothesis_class: str, X: np.ndarray) -> None:
    if hypothesis_class not in EXACT_BACKENDS or (hypothesis_class == "halfspace" and X.shape[1] != 1):
        raise ValueError(
            f"exact comparison covers thresholds, stumps and halfspaces on one feature; got {hypothesis_class!r} "
            f"on {X.shape[1]} features"
        )


#: the most candidates the float filter's window resolves by exact pairwise comparisons (more: the integer pass)
WINDOW_LIMIT = 16  # the sweep's own (oraclepriv.solvers.combinatorial.sweep.WINDOW_LIMIT)


class _Candidate(NamedTuple):
    gain: float  # float64 gain of labelling its positive set 1, within the filter's err of the exact gain
    feature: int
    sign: int
    threshold: float


def _window(hypothesis_class: str, X: np.ndarray, g: np.ndarray, columns: SortedColumns) -> list[_Candidate] | None:
    """Every candidate whose float gain is within 2 err of the largest (module docstring), or None when there
    are more than :data:`WINDOW_LIMIT` of them (or n is too large for the bound)."""
    n = g.shape[0]
    if n * UNIT_ROUNDOFF >= 0.25:  # the bound needs gamma_n <= 1/2
        return None
    magnitude = magnitude_bound(g)
    err = gain_error_bound(n, magnitude)  # twice e: room for the rounding of the window's edge
    signs = (1,) if hypothesis_class == "threshold" else (1, -1)
    gains = Gains.of_values(g, sweep_compiled.loaded())  # the compiled weight pass when in process: the same sums
    best, others = ranked_candidates(columns, gains, signs, 2.0 * err, magnitude)
    if len(others) + 1 > WINDOW_LIMIT:
        return None
    return [_Candidate(c.gain, c.feature, c.sign, candidate_threshold(X, columns, c)) for c in [best, *others]]


def _exact_sign(g: np.ndarray, plus: np.ndarray, minus: np.ndarray) -> int:
    """The sign of sum g[plus] - sum g[minus], exactly: math.fsum rounds the exact sum correctly, and a non-zero
    sum of float64 values is at least the smallest subnormal in magnitude, so it never rounds to zero."""
    total = math.fsum(np.concatenate([g[plus], -g[minus]]).tolist())
    return (total > 0) - (total < 0)


def exact_replacement(
    hypothesis_class: str,
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    answer: Hypothesis,
    columns: SortedColumns | None = None,
) -> tuple[Hypothesis | None, str]:
    """(None, how) when ``answer`` is an exact minimiser of the call, else (an exact minimiser, how).

    The float filter's window (module docstring) holds every candidate that may be optimal; its best is
    found by exact comparisons of the gains' differences (over the points two labelings label differently,
    by :func:`math.fsum`), and the answer is an exact minimiser if its gain is at least that. A window
    too large for that goes to the integer pass (:func:`exact_minimiser`). ``how`` names the path taken.
    ``columns``: X's sorted columns when known (else sorted here).
    """
    _check_covered(hypothesis_class, X)
    columns = columns if columns is not None else SortedColumns(X)
    g = np.where(np.asarray(y) == 1, weights, -weights)  # exact: negation
    window = _window(hypothesis_class, X, g, columns)
    if window is None:
        optimum = exact_minimiser(hypothesis_class, X, y, weights, columns)
        cost, _ = exact_cost(answer, X, y, weights)
        return (None if cost == optimum.cost else optimum.hypothesis), "integer arithmetic"
    how = "float filter with a proved error bound, exact comparison of its window"
    positive = np.asarray(answer.predict(X)) == 1
    best, best_positive = None, positive  # the answer is the first contender
    for c in window:
        h = _realise(hypothesis_class, c.feature, c.threshold, c.sign)
        c_positive = np.asarray(h.predict(X)) == 1
        if _exact_sign(g, c_positive & ~best_positive, best_positive & ~c_positive) > 0:
            best, best_positive = h, c_positive
    return best, how


def exact_cost(hypothesis: Hypothesis, X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> tuple[int, int]:
    """The exact cost of ``hypothesis`` on the call, as (W, e0) with cost = W * 2**e0 (e0 as in
    :func:`scaled_integers`, so it compares with :attr:`ExactMinimum.cost` directly)."""
    W, e0 = scaled_integers(weights)
    mistakes = np.asarray(hypothesis.predict(X)) != np.asarray(y)
    return int(W[mistakes].sum()), e0


class ExactComparisonOracle:
    """An :class:`~oraclepriv.protocols.ERMOracle` whose certified answers are exact minimisers.

    Wraps ``inner`` (an :class:`~oraclepriv.oracle.Oracle` or a
    :class:`~oraclepriv.robust.FallbackOracle` on an exhaustive backend, :func:`compared_exactly`).
    A certified answer is compared exactly with the class's optimum (module docstring) and kept when
    it attains it, or replaced by the exact argmin; ``details["exact_comparison"]`` says which (a
    non-private diagnostic, as every oracle detail). Uncertified answers, and halfspace calls on
    more than one feature, are returned unchanged.
    """

    def __init__(self, inner: ERMOracle):
        if inner.hypothesis_class not in EXACT_BACKENDS:
            raise ValueError(
                f"exact comparison covers {sorted(EXACT_BACKENDS)}; got an oracle for {inner.hypothesis_class!r}"
            )
        self.inner = inner
        self.hypothesis_class = inner.hypothesis_class

    @property
    def backend(self) -> str | None:
        """The wrapped oracle's backend name (a fallback oracle's: its primary's)."""
        inner = getattr(self.inner, "primary", self.inner)
        return getattr(inner, "backend", None)

    def __repr__(self) -> str:
        return f"ExactComparisonOracle({self.inner!r})"

    def solve(
        self, X: Any, y: Any, weights: Any = None, *, caller: str | None = None, step: str | None = None
    ) -> OracleResult:
        """Same contract as :meth:`oraclepriv.oracle.Oracle.solve`; a certified answer is an exact minimiser."""
        result = self.inner.solve(X, y, weights, caller=caller, step=step)
        if not result.certified:
            return result
        if self._proved_by_the_sweep(result):
            result.details["exact_comparison"] = (
                "the answer is an exact minimiser (the sweep's float filter with a proved error bound, its window "
                "compared exactly)"
            )
            return result
        X = as_features(X, "X")
        if self.hypothesis_class == "halfspace" and X.shape[1] != 1:
            return result
        y = as_labels(y, X.shape[0], "y")
        w = as_weights(weights, X.shape[0], "weights")
        answered_by = self._answering_oracle(result)
        columns = answered_by.sorted_columns(X) if answered_by is not None else None
        replacement, how = exact_replacement(self.hypothesis_class, X, y, w, result.hypothesis, columns)
        if replacement is None:
            result.details["exact_comparison"] = f"the answer is an exact minimiser ({how})"
            return result
        objective = replacement.loss(X, y, w)
        scale = max(abs(objective), abs(result.bound))  # the backend's bound still bounds the optimum
        return dataclasses.replace(
            result,
            hypothesis=replacement,
            objective=objective,
            gap=0.0 if scale == 0 else max(0.0, objective - result.bound) / scale,
            details={
                **result.details,
                "exact_comparison": f"replaced: the certified answer was a near-minimiser within the tolerance ({how})",
                "replaced_hypothesis": result.hypothesis.to_dict(),
            },
        )

    def _answering_oracle(self, result: OracleResult) -> Oracle | None:
        """The protocol oracle that produced ``result``: the wrapped one, or a fallback oracle's primary or
        fallback (``details["fallback_from"]`` marks the fallback's answers); None for other oracles."""
        inner: Any = self.inner
        if not isinstance(inner, Oracle):
            inner = getattr(inner, "fallback" if "fallback_from" in result.details else "primary", None)
        return inner if isinstance(inner, Oracle) else None

    def _proved_by_the_sweep(self, result: OracleResult) -> bool:
        """Whether ``result`` is the sweep's own answer, proved an exact minimiser (module docstring) on weights that
        reached it unchanged or scaled by an exact power of two: then it is an exact minimiser of the call."""
        if result.details.get("exact_minimiser") is not True:
            return False
        scaling = result.details.get("power_of_two_scaling")
        if scaling is not None and scaling.get("weight_slack", 0.0) != 0.0:
            return False
        answered_by = self._answering_oracle(result)
        backend = answered_by.backend_used(result.backend) if answered_by is not None else None
        return backend is not None and type(backend).solve is SweepBackend.solve


def exactly_compared(oracle: ERMOracle, backend: Any = None) -> ERMOracle:
    """``oracle`` wrapped by :class:`ExactComparisonOracle` when :func:`compared_exactly` holds for its class
    and ``backend`` (the learner's parameter: the primary backend of a fallback oracle); else unchanged."""
    if compared_exactly(oracle.hypothesis_class, None, backend) and not isinstance(oracle, ExactComparisonOracle):
        return ExactComparisonOracle(oracle)
    return oracle
