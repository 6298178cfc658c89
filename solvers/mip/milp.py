"""Solver-independent MILP formulations of exact weighted 0-1 ERM (thresholds, stumps, halfspaces).

Every formulation here is plain arrays (:class:`MilpArrays`: costs, column bounds, integrality,
sparse rows), so the HiGHS, SCIP, Pyomo and CP-SAT backends share one model and one decoder.
They solve the *reduced* problem of the oracle protocol (Block et al., "Oracle-Efficient
Differentially Private Learning with Public Data", Def. 4; labels already flipped so every
weight is >= 0):  min_h  sum_i w_i 1[h(x_i) != y_i].

A formulation is built once from the *points* (X and reduced labels y); weights only enter the
objective (:meth:`costs`), so a persistent backend re-solves after changing costs only.

Halfspaces (h(x) = 1 iff w.x + b >= 0, closed) come in two models:

* :class:`HalfspaceMarginMilp` — the big-M model with a margin gamma, on data scaled per column
  to [-1, 1] (an affine map; halfspaces are affine-invariant, so (w, b) maps back exactly):
  ``w in [-1,1]^d``, ``b in [-B, B]`` with ``B = max_i ||x_i||_1 + gamma`` (larger |b| only gives
  a constant labeling, already reachable at |b| = B), one binary z_g per group of identical
  (x, y) points, and rows ``y=1: w.x + b >= gamma - M_g z_g``, ``y=0: w.x + b <= -gamma + M_g z_g``
  with ``M_g = gamma + ||x_g||_1 + B`` (the tightest constant valid for the boxes).
  It is exact for the class of halfspaces whose *correctly classified* points have margin
  >= gamma at ||w||_inf <= 1 on the scaled data. Its optimum is an upper bound on the true
  optimum, and its dual bound is a lower bound on *that restricted* optimum only.
* :class:`HalfspaceRelaxedMilp` — a margin-free *relaxation*, used to prove lower bounds over
  all halfspaces: ``||w||_1 = 1`` (sign binaries s_j; this excludes w = 0), ``b in [-R, R]``
  with ``R = max_i ||x_i||_inf`` (with ||w||_1 = 1, |b| > R gives a constant labeling) and
  non-strict rows ``y=1: w.x + b >= -M_g z_g``, ``y=0: w.x + b <= M_g z_g``, ``M_g = ||x_g||_inf + R``.
  Every halfspace with w != 0 that is not constant on the data is feasible (rescaled) at its
  own cost, so  OPT >= min(relaxed optimum, cost(all ones), cost(all zeros)).  Points *on* the
  hyperplane count as correct for either label, so the relaxation can be strictly below OPT
  only if the data are degenerate (a relaxed optimum whose boundary points cannot be perturbed
  to their own sides, e.g. three collinear points labelled 1, 0, 1). For data in general
  position the two coincide; see ``margin_lp`` for how a relaxed solution is turned into a
  real halfspace of the same cost.

Both models merge exact duplicates: identical (x, y) points become one group with summed weight;
identical x with opposite labels give two groups, the row ``z_a + z_b >= 1`` and the constant
lower bound ``sum min(W_a, W_b)`` (:meth:`~oraclepriv.solvers.mip.points.PointGroups.conflict_bound`).

The halfspace models, the cover model of :class:`HalfspaceHittingSet`, and what the dual bound of
each proves (over all halfspaces, or over a restricted class only) are derived in
``docs/theory/cover-cut-model.md``.

Stumps and thresholds (:class:`StumpMilp`): per (feature j, sign s) a block with a selector
binary a_js (sum a_js = 1) and a monotone 0/1 staircase t_js,r over the sorted distinct values
of column j (nondecreasing for s = +1, nonincreasing for s = -1, t <= a). The prediction at
value r of the chosen block is t_js,r, so the loss is  sum_i w_i y_i + sum_{j,s,r} g_jr t_js,r
with g_jr = sum_{i: x_ij = v_jr} w_i (1 - 2 y_i). Every stump labeling is a feasible staircase and
vice versa, so the model is exact; thresholds are the single block (j = 0, s = +1). Decoded
thresholds sit strictly between distinct training values (or at +-inf), as ``sweep`` does.

This module builds models only. Solving them is the backends' (:mod:`oraclepriv.solvers.mip.mipbackend`), with
the gap rule of :mod:`oraclepriv.solvers.mip.gaps` and the start candidates of
:mod:`oraclepriv.solvers.mip.heuristics`; the merged points and the column scaling are
:mod:`oraclepriv.solvers.mip.points`. Their public names stay importable from here, where the backends import
them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from oraclepriv.solvers.combinatorial.sweep import cut_value
from oraclepriv.solvers.mip.gaps import gap_rule, lattice_round_up, weight_granularity
from oraclepriv.solvers.mip.heuristics import constant_costs, heuristic_halfspaces, reduced_loss
from oraclepriv.solvers.mip.points import AffineScaling, PointGroups
from scipy import sparse

from oraclepriv.hypotheses import Halfspace, Hypothesis, Stump, Threshold

__all__ = [
    "DEFAULT_GAMMA",
    "MilpArrays",
    "PointGroups",
    "AffineScaling",
    "HalfspaceMarginMilp",
    "HalfspaceRelaxedMilp",
    "HalfspaceHittingSet",
    "StumpMilp",
    "margin_lp",
    "heuristic_halfspaces",
    "constant_costs",
    "weight_granularity",
    "lattice_round_up",
    "gap_rule",
    "reduced_loss",
]

#: default margin on [-1, 1]-scaled data with ||w||_inf <= 1. It must dominate the solver's
#: feasibility slack on the big-M rows, (1 + max M) * 1e-6 <= (2d + 2) * 1e-6; 1e-3 leaves a
#: factor >= 40 for d <= 10 (backends tighten the solver tolerance for larger d, see
#: ``HalfspaceMarginMilp.feasibility_tolerance``).
DEFAULT_GAMMA = 1e-3
#: the margins a backend accepts (option ``gamma``), and why not smaller
GAMMA_RANGE = (1e-6, 0.5)
GAMMA_WHY = "margin on [-1,1]-scaled data; below 1e-6 it drowns in the solver's feasibility tolerance"


@dataclass
class MilpArrays:
    """min cost.x + offset  s.t.  row_lower <= A x <= row_upper, col_lower <= x <= col_upper,
    x_j integer where ``integer[j]``. ``A`` is CSR. ``offset`` is weight-dependent and kept out
    of the solver (backends add it to the bounds they report)."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    A: sparse.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    offset: float = 0.0

    @property
    def num_cols(self) -> int:
        return int(self.cost.shape[0])

    @property
    def num_rows(self) -> int:
        return int(self.A.shape[0])

    def row_activity(self, x: np.ndarray) -> np.ndarray:
        return self.A @ np.asarray(x, dtype=np.float64)

    def max_violation(self, x: np.ndarray) -> float:
        """Largest bound, row or integrality violation of a column vector (for warm-start checks)."""
        x = np.asarray(x, dtype=np.float64)
        act = self.row_activity(x)
        parts = [
            np.maximum(self.col_lower - x, 0.0),
            np.maximum(x - self.col_upper, 0.0),
            np.maximum(self.row_lower - act, 0.0),
            np.maximum(act - self.row_upper, 0.0),
            np.abs(x[self.integer] - np.round(x[self.integer])),
        ]
        return float(max((p.max() if p.size else 0.0) for p in parts))


class _RowBuilder:
    """Accumulates sparse rows as (lower, upper, {col: coef})."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add(self, cols, vals, lower: float, upper: float) -> None:
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        keep = vals != 0.0
        r = len(self.lower)
        self.rows.append(np.full(int(keep.sum()), r, dtype=np.int64))
        self.cols.append(cols[keep])
        self.vals.append(vals[keep])
        self.lower.append(float(lower))
        self.upper.append(float(upper))

    def add_block(self, cols, vals, lower, upper) -> None:
        """Add m rows at once: row k has coefficients ``vals[k]`` on columns ``cols[k]`` (both (m, k)
        arrays, or ``cols`` one row shared by all), bounds ``lower[k]``, ``upper[k]``; the same rows
        as m calls of :meth:`add`, in one vectorised step (models with 10^4 points build in
        milliseconds, inside an oracle call's deadline)."""
        vals = np.asarray(vals, dtype=np.float64)
        cols = np.broadcast_to(np.asarray(cols, dtype=np.int64), vals.shape)
        m = vals.shape[0]
        r0 = len(self.lower)
        keep = vals != 0.0
        rows = np.broadcast_to(np.arange(r0, r0 + m, dtype=np.int64)[:, None], vals.shape)
        self.rows.append(rows[keep])
        self.cols.append(cols[keep])
        self.vals.append(vals[keep])
        self.lower.extend(np.broadcast_to(np.asarray(lower, dtype=np.float64), (m,)).tolist())
        self.upper.extend(np.broadcast_to(np.asarray(upper, dtype=np.float64), (m,)).tolist())

    def matrix(self, num_cols: int) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray]:
        m = len(self.lower)
        if m == 0:
            return sparse.csr_matrix((0, num_cols)), np.zeros(0), np.zeros(0)
        A = sparse.coo_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(m, num_cols),
        ).tocsr()
        A.sort_indices()
        return A, np.asarray(self.lower), np.asarray(self.upper)


def _conflict_rows(rb: _RowBuilder, z: np.ndarray, conflicts: np.ndarray) -> None:
    """z_a + z_b >= 1 for every pair of groups with the same x and opposite labels."""
    if len(conflicts):
        rb.add_block(z[conflicts], np.ones(conflicts.shape), 1.0, math.inf)


# ---------------------------------------------------------------------------------------------
# halfspaces


class _HalfspaceBase:
    """What the halfspace models share: the merged points, their scaling, and one binary z_g per group
    (1: group g misclassified). A model sets ``milp`` and the columns ``z``."""

    milp: MilpArrays
    z: np.ndarray

    def __init__(self, X: np.ndarray, y: np.ndarray):
        self.n, self.d = X.shape
        self.scaling = AffineScaling.fit(X)
        self.groups = PointGroups.from_points(X, y)
        self.Xs = self.scaling.transform(self.groups.X)  # scaled group points
        self.yg = self.groups.y

    def costs(self, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
        """(cost vector, offset) for weights w; the labels y are those the model was built on."""
        cost = np.zeros(self.milp.num_cols)
        cost[self.z] = self.groups.group_weights(w)
        return cost, 0.0

    def correct_mask(self, x: np.ndarray) -> np.ndarray:
        """Groups the solution marks as correctly classified (z_g rounded to 0)."""
        return np.asarray(x)[self.z] < 0.5

    def base_details(self) -> dict[str, Any]:
        return {
            "n_points": int(self.n),
            "n_groups": int(self.groups.size),
            "n_merged": int(self.n - self.groups.size),
            "n_conflict_pairs": int(len(self.groups.conflicts)),
            "scaling": self.scaling.to_dict(),
            "num_cols": self.milp.num_cols,
            "num_rows": self.milp.num_rows,
            "num_integer": int(self.milp.integer.sum()),
        }


class HalfspaceMarginMilp(_HalfspaceBase):
    """Big-M model with margin gamma (module docstring). Columns: w' (d), b', z (G)."""

    kind = "halfspace-margin"

    def __init__(self, X: np.ndarray, y: np.ndarray, gamma: float = DEFAULT_GAMMA):
        super().__init__(X, y)
        if not (gamma > 0 and math.isfinite(gamma)):
            raise ValueError(f"gamma must be a finite number > 0; got {gamma!r}")
        self.gamma = float(gamma)
        d, G = self.d, self.groups.size
        l1 = np.abs(self.Xs).sum(axis=1)
        self.B = float(l1.max()) + self.gamma
        self.M = self.gamma + l1 + self.B
        self.w = np.arange(d)
        self.b = d
        self.z = np.arange(d + 1, d + 1 + G)
        ncols = d + 1 + G
        lower = np.concatenate([np.where(self.scaling.constant, 0.0, -1.0), [-self.B], np.zeros(G)])
        upper = np.concatenate([np.where(self.scaling.constant, 0.0, 1.0), [self.B], np.ones(G)])
        integer = np.zeros(ncols, dtype=bool)
        integer[self.z] = True
        rb = _RowBuilder()
        one = self.yg == 1  # y=1: w.x + b + M z >= gamma;  y=0: w.x + b - M z <= -gamma
        rb.add_block(
            np.column_stack([np.broadcast_to(np.arange(d + 1), (G, d + 1)), self.z]),
            np.column_stack([self.Xs, np.ones(G), np.where(one, self.M, -self.M)]),
            np.where(one, self.gamma, -math.inf),
            np.where(one, math.inf, -self.gamma),
        )
        _conflict_rows(rb, self.z, self.groups.conflicts)
        A, rl, ru = rb.matrix(ncols)
        self.milp = MilpArrays(np.zeros(ncols), lower, upper, integer, A, rl, ru)

    def feasibility_tolerance(self, default: float = 1e-6) -> float:
        """A solver feasibility tolerance small enough that z_g = 0 rows keep a positive margin:
        gamma > 10 * tol * (1 + max M) (HiGHS applies it to rows and to integrality)."""
        return min(default, self.gamma / (10.0 * (1.0 + float(self.M.max()))))

    def decode(self, x: np.ndarray) -> Halfspace:
        x = np.asarray(x, dtype=np.float64)
        w, b = self.scaling.to_original(x[self.w], float(x[self.b]))
        return Halfspace(tuple(w), b)

    def encode(self, h: Halfspace) -> np.ndarray | None:
        """A feasible column vector realising h at the largest scale the box allows."""
        ws, bs = self.scaling.to_scaled(np.asarray(h.w), h.b)
        norm = float(np.abs(ws).max()) if ws.size else 0.0
        if norm > 0:
            ws, bs = ws / norm, bs / norm
        if norm == 0 or abs(bs) > self.B:  # constant on the data: same labeling at w = 0, b = +-B
            ws, bs = np.zeros(self.d), math.copysign(self.B, bs if bs != 0 else 1.0)
        v = self.Xs @ ws + bs
        ok = np.where(self.yg == 1, v >= self.gamma, v <= -self.gamma)
        x = np.concatenate([ws, [bs], np.where(ok, 0.0, 1.0)])
        return x

    def details(self) -> dict[str, Any]:
        out = self.base_details()
        out.update(
            {
                "formulation": self.kind,
                "gamma": self.gamma,
                "B": self.B,
                "M_min": float(self.M.min()),
                "M_max": float(self.M.max()),
            }
        )
        return out


class HalfspaceRelaxedMilp(_HalfspaceBase):
    """Margin-free relaxation (module docstring). Columns: w+ (d), w- (d), s (d), b', z (G)."""

    kind = "halfspace-relaxed"

    def __init__(self, X: np.ndarray, y: np.ndarray):
        super().__init__(X, y)
        d, G = self.d, self.groups.size
        linf = np.abs(self.Xs).max(axis=1)
        self.R = float(linf.max())
        self.M = linf + self.R
        self.wp = np.arange(d)
        self.wn = np.arange(d, 2 * d)
        self.s = np.arange(2 * d, 3 * d)
        self.b = 3 * d
        self.z = np.arange(3 * d + 1, 3 * d + 1 + G)
        ncols = 3 * d + 1 + G
        wub = np.where(self.scaling.constant, 0.0, 1.0)  # constant columns could absorb ||w||_1 = 1
        lower = np.concatenate([np.zeros(3 * d), [-self.R], np.zeros(G)])
        upper = np.concatenate([wub, wub, np.ones(d), [self.R], np.ones(G)])
        integer = np.zeros(ncols, dtype=bool)
        integer[self.s] = True
        integer[self.z] = True
        rb = _RowBuilder()
        cols_wb = np.concatenate([self.wp, self.wn, [self.b]])
        one = self.yg == 1  # y=1: w.x + b + M z >= 0;  y=0: w.x + b - M z <= 0
        rb.add_block(
            np.column_stack([np.broadcast_to(cols_wb, (G, cols_wb.size)), self.z]),
            np.column_stack([self.Xs, -self.Xs, np.ones(G), np.where(one, self.M, -self.M)]),
            np.where(one, 0.0, -math.inf),
            np.where(one, math.inf, 0.0),
        )
        _conflict_rows(rb, self.z, self.groups.conflicts)
        rb.add(np.concatenate([self.wp, self.wn]), np.ones(2 * d), 1.0, 1.0)  # ||w||_1 = 1
        for j in range(d):
            rb.add([self.wp[j], self.s[j]], [1.0, -1.0], -math.inf, 0.0)  # w+_j <= s_j
            rb.add([self.wn[j], self.s[j]], [1.0, 1.0], -math.inf, 1.0)  # w-_j <= 1 - s_j
        A, rl, ru = rb.matrix(ncols)
        self.milp = MilpArrays(np.zeros(ncols), lower, upper, integer, A, rl, ru)

    def decode(self, x: np.ndarray) -> Halfspace:
        x = np.asarray(x, dtype=np.float64)
        w, b = self.scaling.to_original(x[self.wp] - x[self.wn], float(x[self.b]))
        return Halfspace(tuple(w), b)

    def encode(self, h: Halfspace) -> np.ndarray | None:
        """A feasible column vector for h (None for a constant hypothesis: w = 0 is excluded)."""
        ws, bs = self.scaling.to_scaled(np.asarray(h.w), h.b)
        norm = float(np.abs(ws).sum())
        if norm == 0:
            return None
        ws, bs = ws / norm, float(np.clip(bs / norm, -self.R, self.R))
        v = self.Xs @ ws + bs
        ok = np.where(self.yg == 1, v >= 0, v <= 0)
        x = np.concatenate(
            [np.maximum(ws, 0.0), np.maximum(-ws, 0.0), (ws >= 0).astype(float), [bs], np.where(ok, 0.0, 1.0)]
        )
        return x

    def details(self) -> dict[str, Any]:
        out = self.base_details()
        out.update({"formulation": self.kind, "R": self.R, "M_min": float(self.M.min()), "M_max": float(self.M.max())})
        return out


class HalfspaceHittingSet(_HalfspaceBase):
    """Hitting-set master of the combinatorial-Benders halfspace oracle. Columns: z (G).

    ``min sum_g W_g z_g  s.t.  sum_{g in S} z_g >= 1  for every core S, z binary``, where a core
    is a set of groups no halfspace classifies all correctly (verified exactly,
    :func:`oraclepriv.solvers.branch_and_cut.cores.verify_core`). For any halfspace h, z = 1[h wrong on g] satisfies every
    core row (the groups h gets right are strictly separable, so they contain no core), so the
    master's optimum -- and its dual bound -- is a lower bound on the cost of *every* halfspace:
    a margin-free certificate. When the master's optimal z keeps a separable set, that set's
    max-margin halfspace attains the bound and is optimal (Codato & Fischetti 2006).
    The rows do not depend on the weights, so a core pool is re-used across re-weightings.
    """

    kind = "halfspace-hitting-set"

    def __init__(self, X: np.ndarray, y: np.ndarray, cores: list[tuple[int, ...]] | None = None):
        super().__init__(X, y)
        self.z = np.arange(self.groups.size)
        self.cores: list[tuple[int, ...]] = []
        self._seen: set[tuple[int, ...]] = set()
        self.add_cores(cores or [])

    def add_cores(self, cores) -> int:
        """Add cores (iterables of group indices); returns how many were new."""
        added = 0
        for core in cores:
            key = tuple(sorted(int(g) for g in core))
            if key and key not in self._seen:
                self._seen.add(key)
                self.cores.append(key)
                added += 1
        return added

    @property
    def milp(self) -> MilpArrays:  # type: ignore[override]
        G = self.groups.size
        rows = np.repeat(np.arange(len(self.cores)), [len(c) for c in self.cores])
        cols = np.fromiter((g for c in self.cores for g in c), dtype=np.int64, count=int(rows.size))
        A = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(self.cores), G))
        m = len(self.cores)
        return MilpArrays(
            np.zeros(G), np.zeros(G), np.ones(G), np.ones(G, dtype=bool), A, np.ones(m), np.full(m, math.inf)
        )

    def costs(self, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
        return self.groups.group_weights(w), 0.0

    def encode_correct(self, correct: np.ndarray) -> np.ndarray:
        """Master start vector for a set of groups classified correctly."""
        return np.where(np.asarray(correct, dtype=bool), 0.0, 1.0)

    def details(self) -> dict[str, Any]:
        out = self.base_details()
        out.update({"formulation": self.kind, "cores": len(self.cores)})
        return out


def margin_lp(Xs: np.ndarray, y: np.ndarray, correct: np.ndarray, B: float) -> MilpArrays:
    """LP: maximise t s.t. the points in ``correct`` sit on their side with margin t.

    Columns (w' in [-1,1]^d, b' in [-B, B], t in [0, 1]); cost is -t (minimisation). A
    solution with t > 0 is a real halfspace that classifies every ``correct`` point correctly
    with every one of them off the boundary: it turns a relaxed labeling into a hypothesis.
    """
    d = Xs.shape[1]
    ncols = d + 2
    rb = _RowBuilder()
    kept = np.flatnonzero(correct)
    if kept.size:
        one = y[kept] == 1  # y=1: w.x + b - t >= 0;  y=0: w.x + b + t <= 0
        rb.add_block(
            np.arange(ncols),
            np.column_stack([Xs[kept], np.ones(kept.size), np.where(one, -1.0, 1.0)]),
            np.where(one, 0.0, -math.inf),
            np.where(one, math.inf, 0.0),
        )
    A, rl, ru = rb.matrix(ncols)
    cost = np.zeros(ncols)
    cost[-1] = -1.0
    lower = np.concatenate([-np.ones(d), [-B, 0.0]])
    upper = np.concatenate([np.ones(d), [B, 1.0]])
    return MilpArrays(cost, lower, upper, np.zeros(ncols, dtype=bool), A, rl, ru)


# ---------------------------------------------------------------------------------------------
# stumps and thresholds


class StumpMilp:
    """Exact staircase model for stumps (signs +-1) and thresholds (feature 0, sign +1 only)."""

    kind = "stump-staircase"

    def __init__(self, X: np.ndarray, hypothesis_class: str = "stump"):
        if hypothesis_class not in ("stump", "threshold"):
            raise ValueError(f"StumpMilp: hypothesis_class must be 'stump' or 'threshold', got {hypothesis_class!r}")
        self.hypothesis_class = hypothesis_class
        self.n, self.d = X.shape
        features = range(self.d) if hypothesis_class == "stump" else [0]
        signs = (1, -1) if hypothesis_class == "stump" else (1,)
        self.values: dict[int, np.ndarray] = {}
        self.rank: dict[int, np.ndarray] = {}
        for j in features:
            self.values[j], self.rank[j] = np.unique(X[:, j], return_inverse=True)
        # blocks: (feature, sign, selector column, staircase columns)
        self.blocks: list[tuple[int, int, int, np.ndarray]] = []
        col = 0
        for j in features:
            for s in signs:
                m = len(self.values[j])
                self.blocks.append((j, s, col, np.arange(col + 1, col + 1 + m)))
                col += 1 + m
        ncols = col
        rb = _RowBuilder()
        selectors = [blk[2] for blk in self.blocks]
        rb.add(selectors, np.ones(len(selectors)), 1.0, 1.0)  # exactly one block
        for _j, s, a, t in self.blocks:
            top = t[-1] if s == 1 else t[0]  # the largest staircase entry
            rb.add([top, a], [1.0, -1.0], -math.inf, 0.0)  # t <= a
            for r in range(len(t) - 1):
                lo, hi = (t[r], t[r + 1]) if s == 1 else (t[r + 1], t[r])
                rb.add([lo, hi], [1.0, -1.0], -math.inf, 0.0)  # monotone staircase
        A, rl, ru = rb.matrix(ncols)
        self.milp = MilpArrays(np.zeros(ncols), np.zeros(ncols), np.ones(ncols), np.ones(ncols, dtype=bool), A, rl, ru)

    def costs(self, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
        """(cost vector, offset): loss = sum_i w_i y_i + sum g_jr t_js,r."""
        gain = w * (1.0 - 2.0 * y)
        cost = np.zeros(self.milp.num_cols)
        for j, _, _, t in self.blocks:
            cost[t] = np.bincount(self.rank[j], weights=gain, minlength=len(t))
        return cost, float(w[y == 1].sum())

    def decode(self, x: np.ndarray) -> Hypothesis:
        x = np.asarray(x, dtype=np.float64)
        j, s, _, t = max(self.blocks, key=lambda blk: x[blk[2]])
        on = np.flatnonzero(x[t] > 0.5)
        v = self.values[j]
        m = len(v)
        if s == 1:  # predict 1 on values >= v[first on]
            if on.size == 0:
                theta = math.inf
            elif on[0] == 0:
                theta = -math.inf
            else:
                theta = cut_value(float(v[on[0] - 1]), float(v[on[0]]), 1)
        else:  # predict 1 on values <= v[last on]
            if on.size == 0:
                theta = -math.inf
            elif on[-1] == m - 1:
                theta = math.inf
            else:
                theta = cut_value(float(v[on[-1]]), float(v[on[-1] + 1]), -1)
        if self.hypothesis_class == "threshold":
            return Threshold(theta)
        return Stump(int(j), float(theta), int(s))

    def details(self) -> dict[str, Any]:
        return {
            "formulation": self.kind,
            "n_points": int(self.n),
            "blocks": len(self.blocks),
            "num_cols": self.milp.num_cols,
            "num_rows": self.milp.num_rows,
            "num_integer": int(self.milp.integer.sum()),
        }
