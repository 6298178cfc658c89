"""Independent exact reference solvers for the weighted 0-1 ERM problem (test oracles).

    min_h  sum_i w_i * 1[h(x_i) != y_i]      (w_i of any sign)

These deliberately share no code with ``solvers/`` or ``oraclepriv/``: predictions are written
out again from the class definitions in docs/theory/conventions.md, losses are summed with ``math.fsum``
(correctly rounded), and the search is the dumbest one that is obviously exhaustive. They are
slow (polynomial with a high degree, or exponential for halfspaces) and meant for tiny inputs.

Why these are exact: the loss of h depends on h only through the labeling it induces on the
training points, so min over h equals min over the *labelings the class can realise* of the
labeling's loss. Each solver enumerates a set of candidate hypotheses/labelings that provably
contains every realisable labeling, and nothing unrealisable.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import linprog

__all__ = ["brute_threshold", "brute_stump", "brute_halfspace", "labeling_loss", "halfspace_realizable"]


def labeling_loss(labels: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """sum_i w_i 1[labels_i != y_i], correctly rounded (math.fsum), any sign of w."""
    labels = np.asarray(labels)
    y = np.asarray(y)
    w = np.asarray(w, dtype=np.float64)
    return math.fsum(float(wi) for wi, miss in zip(w, labels != y) if miss)


def _candidate_thresholds(column: np.ndarray) -> list[float]:
    """{-inf, +inf} U {distinct values} U {midpoints of consecutive distinct values}.

    For h(x) = 1 iff x >= t, the threshold t = v (a distinct value) realises the cut "just
    below v"; t = -inf / +inf give all ones / all zeros. For h(x) = 1 iff x <= t, t = v
    realises the cut "just above v". Together these cover every cut between distinct values,
    i.e. every labeling a one-dimensional threshold of either orientation can produce; the
    midpoints are redundant and only add candidates (a superset cannot hurt exactness).
    """
    values = sorted(set(float(v) for v in column))
    mids = [a / 2.0 + b / 2.0 for a, b in zip(values[:-1], values[1:])]  # a/2 + b/2: no overflow
    return [-math.inf, math.inf] + values + mids


def brute_threshold(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Exact min over thresholds h(x) = 1 iff x >= t (t may be +-inf) of the signed weighted loss.

    O(n^2): every candidate threshold is scored directly.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    return min(labeling_loss((x >= t).astype(np.int8), y, w) for t in _candidate_thresholds(x))


def brute_stump(X: np.ndarray, y: np.ndarray, w: np.ndarray, signs: tuple[int, ...] = (1, -1)) -> float:
    """Exact min over stumps h(x) = 1 iff s * (x_j - t) >= 0 of the signed weighted loss.

    Every feature j, every sign s in ``signs`` and every candidate threshold (see
    ``_candidate_thresholds``) is scored directly: O(n^2 d).
    """
    X = np.asarray(X, dtype=np.float64)
    best = math.inf
    for j in range(X.shape[1]):
        column = X[:, j]
        for t in _candidate_thresholds(column):
            for s in signs:
                # s * (x - t) >= 0 written without the product, so that +-inf thresholds
                # never produce inf - inf = nan.
                labels = (column >= t) if s == 1 else (column <= t)
                best = min(best, labeling_loss(labels.astype(np.int8), y, w))
    return best


def halfspace_realizable(X: np.ndarray, labels: np.ndarray) -> bool:
    """Is there a closed halfspace {x : v.x + c >= 0} inducing ``labels`` on the rows of X?

    LP feasibility (HiGHS):  v.x_i + c >= 0 for labels_i = 1,  v.x_i + c <= -1 for labels_i = 0,
    v and c free. Exactness of the reformulation: if some (v, c) realises the labeling, the
    label-0 points satisfy v.x_i + c < 0 strictly, and there are finitely many of them, so
    m = min_i -(v.x_i + c) > 0 and (v/m, c/m) is LP-feasible; conversely an LP-feasible (v, c)
    realises the labeling. v = 0 is allowed (constant labelings: c = 0 or c = -1). Duplicated
    points with conflicting labels would need 0 <= v.x + c <= -1, which is infeasible.

    A feasible LP answer is re-verified in float64 after centring the margin (c + 1/2), so a
    solver tolerance can never turn an unrealisable labeling into a "realisable" one unnoticed.
    """
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    n, d = X.shape
    if labels.all() or not labels.any():
        return True  # constants: v = 0
    # quick exact infeasibility: the same point with both labels
    seen: dict[tuple[float, ...], int] = {}
    for row, lab in zip(map(tuple, X), labels):
        if seen.setdefault(row, int(lab)) != int(lab):
            return False
    sign = np.where(labels == 1, -1.0, 1.0)  # rows: -(v.x + c) <= 0  and  (v.x + c) <= -1
    A = sign[:, None] * np.hstack([X, np.ones((n, 1))])
    rhs = np.where(labels == 1, 0.0, -1.0)
    res = linprog(np.zeros(d + 1), A_ub=A, b_ub=rhs, bounds=[(None, None)] * (d + 1), method="highs")
    if res.status == 2:
        return False
    if res.status != 0:
        raise RuntimeError(f"halfspace_realizable: LP status {res.status} ({res.message}) for labels {labels}")
    v, c = res.x[:d], res.x[d] + 0.5
    margins = X @ v + c
    ok = bool(np.all(margins[labels == 1] >= 0) and np.all(margins[labels == 0] < 0))
    if not ok:
        raise RuntimeError(
            f"halfspace_realizable: LP claims feasibility but its solution fails in float64 "
            f"(ill-conditioned instance?) X={X.tolist()} labels={labels.tolist()}"
        )
    return True


def brute_halfspace(X: np.ndarray, y: np.ndarray, w: np.ndarray, max_n: int = 8) -> float:
    """Exact min over closed halfspaces h(x) = 1 iff v.x + c >= 0 of the signed weighted loss.

    Any d, tiny n: the 2^n labelings are sorted by their loss and the first one that
    ``halfspace_realizable`` accepts is optimal (every labeling before it is unrealisable, every
    one after it costs at least as much). Terminates: the constant labelings are realisable.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n > max_n:
        raise ValueError(f"brute_halfspace: n={n} > max_n={max_n} (2^n labelings)")
    labelings = [np.array(bits, dtype=np.int8) for bits in itertools.product((0, 1), repeat=n)]
    scored = sorted((labeling_loss(lab, y, w), i) for i, lab in enumerate(labelings))
    for loss, i in scored:
        if halfspace_realizable(X, labelings[i]):
            return loss
    raise AssertionError("unreachable: constant labelings are always realisable")


def optimal_labelings(X: np.ndarray, y: np.ndarray, w: np.ndarray, tol: float) -> tuple[float | None, list[np.ndarray]]:
    """(optimal signed loss, every halfspace-realisable labeling within ``tol`` of it), by enumerating all
    2^n labelings in loss order with the LP realisability check above (tiny n only)."""
    labelings = np.array(list(itertools.product((0, 1), repeat=len(y))), dtype=np.int8)
    losses = ((labelings != np.asarray(y)) * np.asarray(w, dtype=np.float64)).sum(axis=1)
    best, found = None, []
    for k in np.argsort(losses, kind="stable"):
        if best is not None and losses[k] > best + tol:
            break
        if halfspace_realizable(X, labelings[k]):
            best = float(losses[k]) if best is None else best
            found.append(labelings[k])
    return best, found
