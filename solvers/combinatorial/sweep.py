"""``sweep``: exact weighted-0-1 ERM for thresholds and decision stumps.

Sort + prefix sums, one vectorised pass per feature, O(d * n log n). Exact on the reduced problem
(w >= 0): every labeling a stump can produce on the training points is "prefix or suffix of
a column's sorted order, cut between distinct values"; the sweep evaluates all of them.

Tie-breaking is deterministic and data-order independent: among optimal stumps, the smallest
feature, then sign +1 before -1, then the smallest cut position wins. Thresholds sit strictly
between the two distinct training values they separate (the float midpoint; if the values are
adjacent floats, the endpoint that keeps the labeling exact), or at +-inf.
"""

from __future__ import annotations

import numpy as np
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem

from oraclepriv.hypotheses import Stump, Threshold

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


def best_stump(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, signs: tuple[int, ...] = (1, -1)
) -> tuple[int, int, float, float]:
    """Exact minimiser of sum_i w_i 1[stump(x_i) != y_i] (w >= 0) over all features and ``signs``.

    Returns (feature, sign, threshold, loss) with loss computed from the prefix sums (the
    protocol layer re-scores the hypothesis independently). One feature at a time: a column
    is sorted once and swept with prefix sums (cache-friendly; the sort dominates).
    """
    n, d = X.shape
    gain = np.where(y == 1, w, -w)  # gain of predicting 1 instead of 0 on example i
    loss_all_zero = float(w[y == 1].sum())
    best = (-np.inf, 0, 1, 0, 0.0)  # (gain, feature, sign, cut k, threshold)
    for feature in range(d):
        column = np.ascontiguousarray(X[:, feature])
        order = np.argsort(column)
        xs = column[order]
        prefix = np.cumsum(gain[order])  # prefix[k-1] = gain of the first k sorted points
        total = float(prefix[-1])
        distinct = xs[1:] > xs[:-1]  # cut k (1..n-1) between sorted k-1 and k is allowed
        candidates = []  # (gain, sign, k) in tie-break order: sign +1 first, then smallest k
        if 1 in signs:  # positives = points after cut k:  gain = total - prefix_k
            interior = np.where(distinct, prefix[:-1], np.inf)
            k = int(np.argmin(interior)) + 1 if n > 1 else 0
            candidates += [(total, 1, 0)]
            if n > 1 and np.isfinite(interior[k - 1]):
                candidates += [(total - float(interior[k - 1]), 1, k)]
            candidates += [(0.0, 1, n)]
        if -1 in signs:  # positives = points before cut k:  gain = prefix_k
            interior = np.where(distinct, prefix[:-1], -np.inf)
            k = int(np.argmax(interior)) + 1 if n > 1 else 0
            candidates += [(0.0, -1, 0)]
            if n > 1 and np.isfinite(interior[k - 1]):
                candidates += [(float(interior[k - 1]), -1, k)]
            candidates += [(total, -1, n)]
        for value, sign, k in candidates:
            if value > best[0]:
                if k == 0:
                    threshold = -np.inf
                elif k == n:
                    threshold = np.inf
                else:
                    threshold = cut_value(float(xs[k - 1]), float(xs[k]), sign)
                best = (value, feature, sign, k, threshold)
    value, feature, sign, _, threshold = best
    return feature, sign, float(threshold), loss_all_zero - value


class SweepBackend(Backend):
    """Exact sort-and-sweep oracle for thresholds and stumps.

    Evaluates every labeling the class induces on the training points with prefix sums (module
    docstring), so the bound is the optimum itself.

    Parameters
    ----------
    time_limit : float or None, default None
        Accepted for the common interface and ignored: the sweep takes O(d n log n) time.
    **options
        None: the backend takes no options, and refuses any keyword by name.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).

    Examples
    --------
    >>> from oraclepriv import make_oracle
    >>> X = [[0.0, 5.0], [1.0, 3.0], [2.0, 1.0], [3.0, 0.0]]
    >>> res = make_oracle("stump", backend="sweep").solve(X, [0, 0, 1, 1])
    >>> res.hypothesis, res.objective, res.certified
    (Stump(feature=0, threshold=1.5, sign=1), 0.0, True)
    """

    name = "sweep"
    classes = frozenset({"threshold", "stump"})
    certificate = (
        "exact: every labeling the class induces on the training points is evaluated by prefix sums, "
        "so the bound is the optimum (up to float64 summation error, covered by the tolerance)"
    )

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        signs = (1,) if problem.hypothesis_class == "threshold" else (1, -1)
        feature, sign, threshold, loss = best_stump(problem.X, problem.y, problem.w, signs)
        hypothesis: Threshold | Stump = (
            Threshold(threshold) if problem.hypothesis_class == "threshold" else Stump(feature, threshold, sign)
        )
        return BackendAnswer(hypothesis, bound=loss, status="optimal", nodes=0, details={"method": "sort+prefix-sum"})
