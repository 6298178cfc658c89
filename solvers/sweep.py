"""``sweep``: exact weighted-0-1 ERM for thresholds and decision stumps.

Sort + prefix sums, vectorised over features, O(d * n log n). Exact on the reduced problem
(w >= 0): every labeling a stump can produce on the training points is "prefix or suffix of
a column's sorted order, cut between distinct values"; the sweep evaluates all of them.

Tie-breaking is deterministic and data-order independent: among optimal stumps, the smallest
feature, then sign +1 before -1, then the smallest cut position wins. Thresholds sit strictly
between the two distinct training values they separate (the float midpoint; if the values are
adjacent floats, the endpoint that keeps the labeling exact), or at +-inf.
"""

from __future__ import annotations

import numpy as np

from oraclepriv.hypotheses import Stump, Threshold
from solvers.base import Backend, BackendAnswer, ReducedProblem

__all__ = ["SweepBackend", "best_stump", "cut_value"]


def cut_value(lower: float, upper: float, sign: int) -> float:
    """A threshold separating sorted distinct values lower < upper.

    sign=+1 (h = 1 iff x >= t) needs lower < t <= upper; sign=-1 (h = 1 iff x <= t) needs
    lower <= t < upper. The midpoint is used when it lies strictly between them.
    """
    mid = lower / 2.0 + upper / 2.0
    if lower < mid < upper:
        return float(mid)
    return float(upper) if sign == 1 else float(lower)


def best_stump(X: np.ndarray, y: np.ndarray, w: np.ndarray, signs: tuple[int, ...] = (1, -1)) -> tuple[int, int, float, float]:
    """Exact minimiser of sum_i w_i 1[stump(x_i) != y_i] (w >= 0) over all features and ``signs``.

    Returns (feature, sign, threshold, loss) with loss computed from the prefix sums (the
    protocol layer re-scores the hypothesis independently).
    """
    n, d = X.shape
    gain = np.where(y == 1, w, -w)  # gain of predicting 1 instead of 0 on example i
    loss_all_zero = float(w[y == 1].sum())
    order = np.argsort(X, axis=0)
    xs = np.take_along_axis(X, order, axis=0)
    prefix = np.empty((n + 1, d), dtype=np.float64)
    prefix[0] = 0.0
    np.cumsum(np.take_along_axis(np.broadcast_to(gain[:, None], (n, d)), order, axis=0), axis=0, out=prefix[1:])
    total = prefix[n]
    # cut k (0..n) is valid if it falls between distinct values (or at either end)
    valid = np.ones((n + 1, d), dtype=bool)
    valid[1:n] = xs[1:] > xs[:-1]

    best = None  # (gain, feature, sign, k)
    for sign in signs:
        # sign=+1: positives are the suffix after cut k (gain total - prefix[k]);
        # sign=-1: positives are the prefix before cut k (gain prefix[k]).
        candidate = (total[None, :] - prefix) if sign == 1 else prefix
        candidate = np.where(valid, candidate, -np.inf)
        k_per_feature = np.argmax(candidate, axis=0)
        gains = candidate[k_per_feature, np.arange(d)]
        feature = int(np.argmax(gains))
        value = float(gains[feature])
        if best is None or value > best[0]:
            best = (value, feature, sign, int(k_per_feature[feature]))
    assert best is not None
    value, feature, sign, k = best
    if k == 0:
        threshold = -np.inf
    elif k == n:
        threshold = np.inf
    else:
        threshold = cut_value(float(xs[k - 1, feature]), float(xs[k, feature]), sign)
    return feature, sign, float(threshold), loss_all_zero - value


class SweepBackend(Backend):
    """Exact sort-and-sweep oracle for thresholds and stumps."""

    name = "sweep"
    classes = frozenset({"threshold", "stump"})
    certificate = (
        "exact: every labeling the class induces on the training points is evaluated by prefix sums, "
        "so the bound is the optimum (up to float64 summation error, covered by the tolerance)"
    )

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        signs = (1,) if problem.hypothesis_class == "threshold" else (1, -1)
        feature, sign, threshold, loss = best_stump(problem.X, problem.y, problem.w, signs)
        if problem.hypothesis_class == "threshold":
            hypothesis = Threshold(threshold)
        else:
            hypothesis = Stump(feature, threshold, sign)
        return BackendAnswer(hypothesis, bound=loss, status="optimal", nodes=0, details={"method": "sort+prefix-sum"})
