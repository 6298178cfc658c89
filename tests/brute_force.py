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
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog

__all__ = [
    "affine_circuits",
    "brute_halfspace",
    "brute_halfspace_rational",
    "brute_stump",
    "brute_threshold",
    "halfspace_realizable",
    "labeling_loss",
]


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


# ---------------------------------------------------------------------------------------------
# halfspaces in exact rational arithmetic, by affine circuits (no LP)


def _null_space_exact(columns: list[list[Fraction]]) -> list[list[Fraction]]:
    """A basis of {c : sum_k c_k columns[k] = 0} (Gauss-Jordan elimination on rationals)."""
    k = len(columns)
    m = len(columns[0])
    A = [[columns[j][i] for j in range(k)] for i in range(m)]  # m x k
    pivots: list[int] = []
    r = 0
    for c in range(k):
        p = next((i for i in range(r, m) if A[i][c] != 0), None)
        if p is None:
            continue
        A[r], A[p] = A[p], A[r]
        inv = 1 / A[r][c]
        A[r] = [v * inv for v in A[r]]
        for i in range(m):
            if i != r and A[i][c] != 0:
                f = A[i][c]
                A[i] = [a - f * b for a, b in zip(A[i], A[r])]
        pivots.append(c)
        r += 1
        if r == m:
            break
    free = [c for c in range(k) if c not in pivots]
    basis = []
    for f in free:
        vec = [Fraction(0)] * k
        vec[f] = Fraction(1)
        for row, c in enumerate(pivots):
            vec[c] = -A[row][f]
        basis.append(vec)
    return basis


def _integer_column(row: np.ndarray) -> list[int]:
    """(x, 1) scaled by a positive power of two into integers (a positive scaling of one point keeps
    the signs and the support of every affine dependency it is part of)."""
    ratios = [float(v).as_integer_ratio() for v in row] + [(1, 1)]
    shift = max(den.bit_length() - 1 for _, den in ratios)
    return [num << (shift - (den.bit_length() - 1)) for num, den in ratios]


def _rank(columns: list[list[int]]) -> int:
    """Rank of an integer matrix given by its columns (fraction-free elimination, exact)."""
    A = [list(c) for c in columns]
    rank, m = 0, len(A[0]) if A else 0
    for r in range(m):
        p = next((i for i in range(rank, len(A)) if A[i][r] != 0), None)
        if p is None:
            continue
        A[rank], A[p] = A[p], A[rank]
        for i in range(rank + 1, len(A)):
            if A[i][r]:
                f, g = A[i][r], A[rank][r]
                A[i] = [a * g - b * f for a, b in zip(A[i], A[rank])]
        rank += 1
    return rank


def affine_circuits(X: np.ndarray) -> list[tuple[int, int]]:
    """Every affine circuit of the rows of X (float64 values read as exact rationals), as bitmasks
    (positive part, negative part) of its unique affine dependency sum_k c_k (x_k, 1) = 0.

    A circuit is a minimal affinely dependent set: a subset of at most d + 2 points whose dependency
    space has dimension 1 with a full-support vector. Two equal points form a circuit of size 2.
    Subsets whose integer rank shows independence are skipped before the rational null space.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    integer = [_integer_column(row) for row in X]
    circuits = []
    for size in range(2, min(n, d + 2) + 1):
        for subset in itertools.combinations(range(n), size):
            cols = [integer[i] for i in subset]
            if _rank(cols) != size - 1 or any(_rank(cols[:k] + cols[k + 1 :]) != size - 1 for k in range(size)):
                continue  # independent, or the dependency misses a point (a smaller circuit inside)
            null = _null_space_exact([[Fraction(v) for v in c] for c in cols])
            pos = sum(1 << i for i, c in zip(subset, null[0]) if c > 0)
            neg = sum(1 << i for i, c in zip(subset, null[0]) if c < 0)
            circuits.append((pos, neg))
    return circuits


def brute_halfspace_rational(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Exact min over closed halfspaces 1[v.x + c >= 0] of the signed weighted loss, in rational
    arithmetic over the float64 inputs, with no LP and no float predicate.

    A labeling is induced by a closed halfspace iff its positive and negative points are strictly
    separable iff their convex hulls are disjoint; the hulls meet iff some affine dependency of the
    points has its positive coefficients on one side and its negative ones on the other, and every
    affine dependency is a conformal sum of circuits (oriented-matroid fact; Bjorner et al., *Oriented
    Matroids*, Prop. 3.7.2), so: iff some circuit has its positive part among the positives and its
    negative part among the negatives, or the reverse. Every labeling of the n <= ~14 points is scored
    (float64 sums, then math.fsum on the best), and the realisable ones are kept.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    w = np.asarray(w, dtype=np.float64)
    n = len(y)
    if n > 16:
        raise ValueError(f"brute_halfspace_rational: n={n} > 16 (2^n labelings)")
    labels = np.arange(1 << n, dtype=np.int64)
    realisable = np.ones(labels.size, dtype=bool)
    full = (1 << n) - 1
    for pos, neg in affine_circuits(X):
        on_pos = labels & (pos | neg)
        realisable &= ~((on_pos == pos) | (on_pos == neg))
    bits = (labels[:, None] >> np.arange(n)) & 1
    losses = (bits != y[None, :]) @ w
    candidates = np.flatnonzero(realisable)
    best = float(losses[candidates].min())
    close = candidates[losses[candidates] <= best + 1e-6 * max(1.0, float(np.abs(w).sum()))]
    assert realisable[0] and realisable[full], "the constant labelings are always realisable"
    return min(labeling_loss(bits[k], y, w) for k in close)
