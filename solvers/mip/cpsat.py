"""``cpsat``: exact weighted 0-1 ERM with OR-Tools CP-SAT (integer models only).

CP-SAT accepts integer coefficients only, so this backend states exactly what it scales and what
``certified`` then means. Throughout, ``bound`` is a proved lower bound on the optimum of the
ORIGINAL reduced problem (the protocol re-scores the hypothesis on the original data for
``objective``), never just a bound of the scaled problem.

**Weights (objective).** The objective coefficients ``c`` (per group of identical points for
halfspaces, per staircase column for stumps; both sums of reduced weights) are made integer by
:func:`integer_costs`:

* weights on a dyadic lattice qZ (integers, multiples of 2^-k; :func:`oraclepriv.solvers.mip.gaps.weight_granularity`):
  ``c / q`` is an exact integer, the scaled problem *is* the problem (times 1/q), error E = 0;
* otherwise (e.g. Laplace weights): ``c_int = round(c * S)`` with S = 2^s chosen so that the
  worst-case rounding error over 0/1 solutions, E = sum_j |c_j - c_int_j / S| (plus a float safety
  term), is at most a tenth of the protocol's certification tolerance. For every 0/1 vector x,
  ``c.x >= c_int.x / S - E``, so ``bound = LB_int / S - E`` is a proved bound of the original
  objective, where LB_int is CP-SAT's proved bound on the integer objective (rounded up: the
  integer objective only takes integer values).

CP-SAT runs with ``relative_gap_limit = 0`` and ``absolute_gap_limit = 0.5``: on an integer
objective an absolute gap < 1 proves optimality of the scaled problem.

**Thresholds and stumps** use :class:`oraclepriv.solvers.mip.milp.StumpMilp` unchanged: it is already an integer
program (binary columns, +-1 coefficients) whose feasible points are exactly the stump (threshold)
labelings, because the data enter only through the sorted order of each column. ``certified``
therefore means optimal over all stumps (thresholds), up to E (at most a tenth of the tolerance).

**Halfspaces**, h(x) = 1 iff w.x + b >= 0, two integer models (option ``halfspace_model``):

* ``"exact"`` — lossless, used automatically when the data lie on a *dyadic grid*: every column
  becomes integer after multiplying by a power of two (<= 2^24) and shifting by an integer (exact
  float operations; halfspace labelings are invariant under these per-column affine maps). Rows
  ``w.x' + b >= 0`` (label 1) and ``w.x' + b <= -1`` (label 0), each enforced only if the point's
  mistake literal is false (``OnlyEnforceIf``), with integer w, b in [-K, K],
  ``K = (d'+1) * rho^d'`` (d' non-constant columns, rho = max_i sqrt(||x'_i||^2 + 1)). Why that is
  exact: a labeling L is realized by a closed halfspace iff {v = (w, b): A v >= c} is non-empty,
  A's rows +-(x'_i, 1), c_i in {0, 1}; a minimal face of that polyhedron contains a basic solution
  v = B^-1 c_B, and |det B| v = +-adj(B) c_B is an integer solution with every entry at most
  r * rho^(r-1) <= K in absolute value (Hadamard's bound on the (r-1)-minors, r <= d'+1, and
  A (|det B| v) >= |det B| c >= c). So the model's feasible labelings are exactly the halfspace
  labelings (w = 0 gives the two constants, which are halfspaces), its optimum is the true
  optimum, and ``certified`` means optimal over all halfspaces (up to E). The returned (w, b + 1/2),
  mapped back, evaluates exactly in float64 (integer arithmetic below 2^53), with every training
  point at distance >= 1/2 from the boundary in the integer coordinates.
* ``"discretized"`` — used automatically otherwise (real-valued data): columns scaled to [-1, 1]
  and rounded to integers in [-2^p, 2^p] (p = ``resolution_bits``, default 8), w in [-2^p, 2^p],
  the same rows. This is a *heuristic*: the rounded points can have other labelings than the real
  ones, so CP-SAT's bound says nothing about the original problem. The backend reports the only
  bound it can prove, ``max(0, conflict bound)`` (the weight every hypothesis pays on identical
  points with opposite labels); ``certified`` is then True only when the re-scored hypothesis meets
  that trivial bound (e.g. separable data). Status "optimal" in this mode means CP-SAT solved the
  *discretized* problem to optimality (``details["halfspace_model"]`` says which model ran).

Status: ``"optimal"`` only when the answer meets its proved bound: a discretized model solved to
optimality proves nothing about the real points, so such an answer reports ``"feasible"`` unless
it meets the conflict bound (``details["cpsat_status"]`` keeps CP-SAT's own word).

Deadlines and interrupts (``docs/deadlines.md``): building a model (a Python loop over the groups)
checks the call's deadline every :data:`BUILD_CHECK_ROWS` groups; CP-SAT's own SIGINT handler is
off (``catch_sigint_signal``: it turned Ctrl-C into a time limit) and a solve runs in a helper
thread, stopped by ``StopSearch`` when Ctrl-C arrives, which then propagates as KeyboardInterrupt.

``halfspace_model="exact"`` on data that are not on a dyadic grid (or whose K makes the integers
involved reach 2^52, beyond exact float64 re-scoring) raises :class:`~oraclepriv.solvers.base.UnsupportedProblemError`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from oraclepriv.solvers.base import (
    MAX_RANDOM_SEED,
    Backend,
    BackendAnswer,
    ReducedProblem,
    UnsupportedProblemError,
    fingerprint,
    import_solver,
)
from oraclepriv.solvers.mip.milp import AffineScaling, PointGroups, StumpMilp, constant_costs, weight_granularity
from oraclepriv.solvers.runtime.deadline import Deadline, DeadlineExceeded
from oraclepriv.solvers.runtime.interrupts import call_interruptibly

from oraclepriv.hypotheses import Halfspace, Stump, Threshold

__all__ = [
    "CpSatBackend",
    "IntegerCosts",
    "integer_costs",
    "dyadic_grid",
    "exact_coefficient_bound",
    "import_cp_model",
    "HALFSPACE_MODELS",
]

TESTED_ORTOOLS = "9.15.6755"
HALFSPACE_MODELS = ("auto", "exact", "discretized")
#: the largest |w.x + b| (and objective coefficient sum) the integer models may reach
_INT_LIMIT = 2**60
#: the exact halfspace model is used only while every integer it (and the float64 re-scoring of
#: its decoded halfspace) touches stays below 2^52: then both are exact
_EXACT_LIMIT = 2**52
_MAX_GRID_BITS = 24
#: model builds check the deadline every this many groups (or rows)
BUILD_CHECK_ROWS = 1000


def import_cp_model():
    """Import OR-Tools' CP-SAT wrapper or raise SolverNotInstalledError saying what to install."""
    return import_solver("ortools.sat.python.cp_model", backend="cpsat", package="ortools", tested=TESTED_ORTOOLS)


# ---------------------------------------------------------------------------------------------
# integer objective


@dataclass(frozen=True)
class IntegerCosts:
    """c_int ~ c * scale, with c.x >= c_int.x / scale - error for every 0/1 vector x."""

    values: list[int]
    scale: float
    error: float
    lattice: float | None  # the weight lattice q when the scaling is exact (error 0)


def integer_costs(cost: np.ndarray, w: np.ndarray) -> IntegerCosts:
    """Integer objective coefficients for CP-SAT (module docstring, "Weights").

    ``cost`` are the model's objective coefficients (sums of entries of the reduced weights ``w``).
    """
    cost = np.asarray(cost, dtype=np.float64)
    total = float(np.abs(cost).sum())
    q = weight_granularity(w)
    if q is not None:
        scaled = cost / q  # exact: q is a power of two and every cost is a sum of lattice points
        if np.all(scaled == np.round(scaled)) and float(np.abs(scaled).sum()) < 2.0**53:
            return IntegerCosts([int(v) for v in scaled], 1.0 / q, 0.0, q)
    nonzero = int(np.count_nonzero(cost))
    if nonzero == 0:
        return IntegerCosts([0] * cost.size, 1.0, 0.0, None)
    target = 1e-10 * max(1.0, float(np.abs(w).sum()))  # a tenth of the certification tolerance
    s = math.ceil(math.log2(max(0.5 * nonzero / target, 1.0)))
    s_max = math.floor(53.0 - math.log2(max(total, 1e-300)))  # keep sum |c_int| < 2^53
    s = min(s, s_max, 900)  # 2^900 keeps the scale finite even for subnormal total weight
    scale = 2.0**s
    values = np.round(cost * scale)
    error = float(np.abs(cost - values / scale).sum())
    error += 1e-15 * total + 1e-300  # float rounding of the error sum itself
    return IntegerCosts([int(v) for v in values], scale, error, None)


# ---------------------------------------------------------------------------------------------
# halfspace data: dyadic grids and the coefficient bound


@dataclass(frozen=True)
class GridData:
    """x'_ij = x_ij * 2^bits_j - center_j, all integers (exact float operations)."""

    bits: np.ndarray  # (d,) int
    center: np.ndarray  # (d,) int (Python ints in an object array)
    Xint: list[list[int]]  # (G, d) integer coordinates of the group points
    constant: np.ndarray  # (d,) bool


def dyadic_grid(X: np.ndarray, max_bits: int = _MAX_GRID_BITS) -> GridData | None:
    """Per-column exact integer coordinates, or None when some column is not on a dyadic grid."""
    n, d = X.shape
    bits = np.zeros(d, dtype=np.int64)
    center = np.zeros(d, dtype=object)
    cols = []
    for j in range(d):
        col = X[:, j]
        for k in range(max_bits + 1):
            scaled = col * (2.0**k)  # exact unless it overflows (then it is not integral below 2^53)
            if np.all(scaled == np.floor(scaled)) and np.all(np.abs(scaled) < 2.0**53):
                break
        else:
            return None
        bits[j] = k
        ints = [int(v) for v in scaled]
        lo, hi = min(ints), max(ints)
        center[j] = (lo + hi) // 2
        cols.append([v - center[j] for v in ints])
    Xint = [list(row) for row in zip(*cols)] if d else [[] for _ in range(n)]
    constant = np.array([X[:, j].min() == X[:, j].max() for j in range(d)], dtype=bool)
    return GridData(bits=bits, center=center, Xint=Xint, constant=constant)


def exact_coefficient_bound(Xint: list[list[int]], active: np.ndarray) -> int:
    """K = (d'+1) * rho^d' with rho = max_i sqrt(||x'_i||^2 + 1) over the active (non-constant)
    columns: every realizable labeling has an integer (w, b) with |w_j|, |b| <= K (module docstring)."""
    dp = int(active.sum())
    if dp == 0:
        return 1
    rho2 = max(sum(v * v for v, a in zip(row, active) if a) + 1 for row in Xint)
    value = (dp + 1) * math.sqrt(rho2) ** dp
    return int(math.ceil(value * (1.0 + 1e-9))) + 1  # safety against float rounding of the power


# ---------------------------------------------------------------------------------------------
# the backend


class _StumpModel:
    """StumpMilp as a CP-SAT model (all columns Boolean, +-1 rows)."""

    def __init__(self, cp_model, X: np.ndarray, cls: str, deadline: Deadline | None = None):
        self.form = StumpMilp(X, cls)
        milp = self.form.milp
        if not (np.all(milp.integer) and np.all(milp.A.data == np.round(milp.A.data))):
            raise AssertionError("StumpMilp is expected to be a pure integer program")
        self.model = cp_model.CpModel()
        self.vars = [self.model.NewBoolVar(f"x{j}") for j in range(milp.num_cols)]
        A = milp.A
        for r in range(A.shape[0]):
            if deadline is not None and r % BUILD_CHECK_ROWS == 0:
                deadline.check("model build (cpsat)")
            lo, hi = A.indptr[r], A.indptr[r + 1]
            expr = sum(int(v) * self.vars[int(j)] for j, v in zip(A.indices[lo:hi], A.data[lo:hi]))
            lb = int(milp.row_lower[r]) if math.isfinite(milp.row_lower[r]) else -_INT_LIMIT
            ub = int(milp.row_upper[r]) if math.isfinite(milp.row_upper[r]) else _INT_LIMIT
            self.model.AddLinearConstraint(expr, lb, ub)


class _HalfspaceModel:
    """The exact (dyadic grid) or discretized integer halfspace model (module docstring)."""

    def __init__(
        self, cp_model, X: np.ndarray, y: np.ndarray, mode: str, resolution_bits: int, deadline: Deadline | None = None
    ):
        self.groups = PointGroups.from_points(X, y)
        Xg, yg = self.groups.X, self.groups.y
        d = X.shape[1]
        self.d = d
        grid = dyadic_grid(Xg) if mode in ("auto", "exact") else None
        if grid is not None:
            K = exact_coefficient_bound(grid.Xint, ~grid.constant)
            # |w.x + b| in the integer model and in the float64 re-scoring of the decoded halfspace
            # on the *uncentred* data must stay below 2^52, so both are exact integer arithmetic
            # (model: |w.x'| + |b| <= K l1 + B = K (2 l1 + 1); decoded: |w.(x' + c)| + |b - w.c| + 1/2
            # <= K (l1 + s) + B + K s + 1/2, with l1 = max ||x'||_1, s = ||c||_1, B = K (l1 + 1))
            shift = sum(abs(int(c)) for c in grid.center)
            l1 = max(sum(abs(v) for v in row) for row in grid.Xint)
            reach = 2 * K * (l1 + shift + 1) + 1
            if reach >= _EXACT_LIMIT:
                grid = None
        if grid is None and mode == "exact":
            raise UnsupportedProblemError(
                "backend 'cpsat': halfspace_model='exact' needs data on a dyadic grid (every column an integer "
                f"after scaling by 2^k, k <= {_MAX_GRID_BITS}) with all integers involved below 2^52; "
                "these data are not (use halfspace_model='auto' or 'discretized', or backend 'highs')"
            )
        #: the exact model's dyadic grid, or the discretized model's affine map onto [-1, 1]^d
        self.encoding: GridData | AffineScaling
        if grid is not None:
            self.mode = "exact"
            self.encoding = grid
            Xint = grid.Xint
            active = ~grid.constant
        else:
            self.mode = "discretized"
            self.encoding = scaling = AffineScaling.fit(Xg)
            K = 2**resolution_bits  # the grid's unit: coefficients in [-K, K]
            Xint = [[int(v) for v in row] for row in np.round(scaling.transform(Xg) * K)]
            active = ~scaling.constant
        self.K = int(K)
        self.Xint = Xint
        self.active = active
        max_l1 = max(sum(abs(v) for v in row) for row in Xint) if Xint else 0
        self.B = self.K * (max_l1 + 1)  # |b| beyond this only gives a constant labeling
        m = cp_model.CpModel()
        self.w = [m.NewIntVar(-self.K, self.K, f"w{j}") if active[j] else m.NewConstant(0) for j in range(d)]
        self.b = m.NewIntVar(-self.B, self.B, "b")
        self.z = [m.NewBoolVar(f"z{g}") for g in range(len(Xint))]
        for g, row in enumerate(Xint):
            if deadline is not None and g % BUILD_CHECK_ROWS == 0:
                deadline.check("model build (cpsat)")
            score = sum(int(v) * self.w[j] for j, v in enumerate(row) if v != 0 and active[j]) + self.b
            if yg[g] == 1:
                m.Add(score >= 0).OnlyEnforceIf(self.z[g].Not())
            else:
                m.Add(score <= -1).OnlyEnforceIf(self.z[g].Not())
        for a, c in self.groups.conflicts:
            m.AddBoolOr([self.z[a], self.z[c]])
        self.model = m

    def decode(self, w_int: list[int], b_int: int) -> Halfspace:
        """The real halfspace of the integer solution, with the offset moved by +1/2."""
        g = self.encoding
        if isinstance(g, GridData):
            w = [float(wj * 2 ** int(k)) if a else 0.0 for wj, k, a in zip(w_int, g.bits, self.active)]
            b = float(b_int - sum(wj * int(c) for wj, c, a in zip(w_int, g.center, self.active) if a)) + 0.5
            return Halfspace(tuple(w), b)
        unit = float(self.K)
        ws = np.array([wj * unit if a else 0.0 for wj, a in zip(w_int, self.active)], dtype=np.float64)
        w_real, b_real = g.to_original(ws, float(b_int) + 0.5)
        return Halfspace(tuple(float(v) for v in w_real), b_real)

    def details(self) -> dict[str, Any]:
        out = {
            "halfspace_model": self.mode,
            "n_groups": len(self.Xint),
            "n_conflict_pairs": int(len(self.groups.conflicts)),
            "coefficient_bound_K": self.K,
            "offset_bound_B": self.B,
        }
        if isinstance(self.encoding, GridData):
            out["grid_bits"] = [int(k) for k in self.encoding.bits]
        else:
            out["scaling"] = self.encoding.to_dict()
        return out


class CpSatBackend(Backend):
    """CP-SAT oracle for thresholds, stumps and halfspaces, on integer models only.

    Thresholds and stumps: the exact staircase model. Halfspaces: the exact integer model on data
    on a dyadic grid, else a discretized heuristic whose only proved bound is the conflict bound.
    Non-lattice weights are rounded to integers with the rounding error subtracted from the bound
    (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        threads : int or None, default None
            CP-SAT workers (``num_workers``; None: CP-SAT's default).
        random_seed : int or None, default None
            CP-SAT's ``random_seed``, in [0, 2^31 - 1].
        output_flag : bool, default False
            Print CP-SAT's search log.
        halfspace_model : {"auto", "exact", "discretized"}, default "auto"
            ``"exact"`` needs dyadic-grid data (else UnsupportedProblemError); ``"auto"`` uses it when
            the data allow and ``"discretized"`` otherwise.
        resolution_bits : int, default 8
            Discretized model: coordinates rounded to integers in [-2^p, 2^p], p in [1, 20].

    Attributes
    ----------
    threads, random_seed, output_flag, halfspace_model, resolution_bits
        The validated options.

    References
    ----------
    .. [1] L. Perron, F. Didier, "CP-SAT", OR-Tools, Google, https://developers.google.com/optimization
    .. [2] J. Hadamard's determinant bound, for the coefficient bound K of the exact model.
    """

    name = "cpsat"
    requires = ("ortools",)
    classes = frozenset({"threshold", "stump", "halfspace"})
    options = frozenset({"threads", "random_seed", "output_flag", "halfspace_model", "resolution_bits"})

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.threads = self.int_option("threads", None, 1)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self.resolution_bits = self.int_option("resolution_bits", 8, 1, 20)
        self.output_flag = self.flag_option("output_flag", False)
        self.halfspace_model = self.choice_option("halfspace_model", "auto", HALFSPACE_MODELS)
        self.certificate = (
            "thresholds/stumps: exact integer staircase model; halfspaces on dyadic-grid data: exact integer model "
            "(|w|,|b| <= Hadamard bound K), a proved bound over all halfspaces; real-valued halfspace data: "
            "discretized heuristic, bound = conflict bound only. Non-lattice weights are rounded to 2^-s with the "
            "rounding error subtracted from the bound"
        )
        self._cp = import_cp_model()
        self._cache: dict[str, tuple[str, Any]] = {}

    def _cached(self, kind: str, X: np.ndarray, y: np.ndarray, build) -> tuple[Any, bool]:
        fp = fingerprint(kind, X, y, (self.halfspace_model, self.resolution_bits))
        hit = self._cache.get(kind)
        if hit is not None and hit[0] == fp:
            return hit[1], True
        built = build()
        self._cache[kind] = (fp, built)
        return built, False

    def _solver(self, deadline: Deadline):
        solver = self._cp.CpSolver()
        p = solver.parameters
        seconds = deadline.solver_seconds()
        if seconds is not None:
            p.max_time_in_seconds = seconds
        p.catch_sigint_signal = False  # Ctrl-C is ours (call_interruptibly), not a time limit
        p.relative_gap_limit = 0.0
        p.absolute_gap_limit = 0.5  # integer objective: a gap < 1 proves optimality
        if self.threads is not None:
            p.num_workers = self.threads
        if self.random_seed is not None:
            p.random_seed = self.random_seed
        p.log_search_progress = self.output_flag
        return solver

    def _run(self, model, variables: list, ic: IntegerCosts, deadline: Deadline):
        """Set the objective, solve; (status, values or None, proved integer bound or None, details)."""
        cp = self._cp
        model.ClearObjective()
        model.ClearHints()
        model.Minimize(sum(c * v for c, v in zip(ic.values, variables) if c != 0))
        solver = self._solver(deadline)
        t0 = time.perf_counter()
        code = call_interruptibly(lambda: solver.Solve(model), solver.StopSearch)
        seconds = time.perf_counter() - t0
        raw = solver.StatusName(code)
        has_solution = code in (cp.OPTIMAL, cp.FEASIBLE)
        if code == cp.OPTIMAL:
            status = "optimal"
        elif code in (cp.FEASIBLE, cp.UNKNOWN) and deadline.limited:
            status = "time_limit"  # the only limit set is the time limit
        elif code == cp.INFEASIBLE:
            status = "infeasible"
        else:
            status = "error"
        bound_int = None
        if has_solution:
            bound_int = math.ceil(float(solver.BestObjectiveBound()) - 1e-6)  # objective values are integers
        details = {
            "cpsat_status": raw,
            "cpsat_seconds": seconds,
            "cpsat_branches": int(solver.NumBranches()),
            "cpsat_conflicts": int(solver.NumConflicts()),
            "cpsat_objective": float(solver.ObjectiveValue()) if has_solution else None,
            "cpsat_bound": bound_int,
            "objective_scale": ic.scale,
            "rounding_error_bound": ic.error,
            "weight_lattice": ic.lattice,
        }
        if code == cp.MODEL_INVALID:
            details["validation"] = model.Validate()
        return status, solver, has_solution, bound_int, details

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        try:
            if problem.hypothesis_class in ("threshold", "stump"):
                return self._solve_stump(problem, deadline)
            return self._solve_halfspace(problem, deadline)
        except DeadlineExceeded:  # no model in time: an honest constant and the trivial bound (w >= 0)
            return self._constant_answer(problem)
        except BaseException:
            self._cache.clear()
            raise

    @staticmethod
    def _constant_answer(problem: ReducedProblem) -> BackendAnswer:
        """The better constant hypothesis, bound 0 (reduced weights are >= 0), status "time_limit"."""
        y, w = problem.y, problem.w
        if problem.hypothesis_class == "halfspace":
            c_ones, c_zeros = constant_costs(y, w)
            h: Halfspace | Threshold | Stump = Halfspace(tuple([0.0] * problem.d), 1.0 if c_ones <= c_zeros else -1.0)
        elif problem.hypothesis_class == "threshold":
            h = Threshold(math.inf)
        else:
            h = Stump(0, math.inf, 1)
        return BackendAnswer(h, bound=0.0, status="time_limit", nodes=0, details={"model_built": False})

    def _solve_stump(self, problem: ReducedProblem, deadline: Deadline) -> BackendAnswer:
        X, y, w = problem.X, problem.y, problem.w
        cls = problem.hypothesis_class
        sm, reused = self._cached(f"staircase-{cls}", X, y, lambda: _StumpModel(self._cp, X, cls, deadline))
        cost, offset = sm.form.costs(y, w)
        ic = integer_costs(cost, w)
        status, solver, has_solution, bound_int, details = self._run(sm.model, sm.vars, ic, deadline)
        bound = -math.inf
        if bound_int is not None:
            bound = max(offset + bound_int / ic.scale - ic.error, 0.0)
        if has_solution:
            hypothesis = sm.form.decode(np.array([solver.Value(v) for v in sm.vars], dtype=np.float64))
        else:
            hypothesis = Threshold(math.inf) if cls == "threshold" else Stump(0, math.inf, 1)
        details.update(sm.form.details())
        details["model_reused"] = reused
        return BackendAnswer(
            hypothesis, bound=float(bound), status=status, nodes=details["cpsat_branches"], details=details
        )

    def _solve_halfspace(self, problem: ReducedProblem, deadline: Deadline) -> BackendAnswer:
        X, y, w = problem.X, problem.y, problem.w
        d = problem.d
        c_ones, c_zeros = constant_costs(y, w)
        constants = [(c_ones, Halfspace(tuple([0.0] * d), 1.0)), (c_zeros, Halfspace(tuple([0.0] * d), -1.0))]
        if np.all(X == X[0]):  # one distinct point: only the two constant labelings exist
            cost, h = min(constants, key=lambda item: item[0])
            return BackendAnswer(
                h, bound=cost, status="optimal", nodes=0, details={"halfspace_model": "constant (all points identical)"}
            )
        hm, reused = self._cached(
            "halfspace",
            X,
            y,
            lambda: _HalfspaceModel(self._cp, X, y, self.halfspace_model, self.resolution_bits, deadline),
        )
        W = hm.groups.group_weights(w)
        ic = integer_costs(W, w)
        status, solver, has_solution, bound_int, details = self._run(hm.model, hm.z, ic, deadline)
        conflict = hm.groups.conflict_bound(w)
        if hm.mode == "exact" and bound_int is not None:
            bound = max(bound_int / ic.scale - ic.error, conflict, 0.0)
        else:  # the discretized model proves nothing about the real points beyond the conflict bound
            bound = max(conflict, 0.0)
        candidates = list(constants)
        if has_solution:
            h = hm.decode([int(solver.Value(v)) for v in hm.w], int(solver.Value(hm.b)))
            candidates.append((h.loss(X, y, w), h))
        loss, hypothesis = min(candidates, key=lambda item: item[0])
        if status == "optimal" and hm.mode != "exact" and loss > bound + 1e-9 * max(1.0, float(w.sum())):
            status = "feasible"  # optimal for the discretized points only: nothing proved about these
        details.update(hm.details())
        details.update({"model_reused": reused, "conflict_bound": conflict, "hypothesis_reduced_loss": loss})
        return BackendAnswer(
            hypothesis, bound=float(bound), status=status, nodes=details["cpsat_branches"], details=details
        )
