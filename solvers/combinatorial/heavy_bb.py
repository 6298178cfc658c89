"""``heavy-bb``: branch-and-bound over the labels of the heaviest points, with the points those labels force.

The private call of RRSPM (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private
Learning with Public Data", Algorithm 4) weighs n private records 1 and m public points |Lap(2m/eps)|:
a few heavy points H among many light ones. Once the labels a halfspace gives to some heavy points are
fixed, many other points have no choice left: a point x is *forced* to label l when the fixed points
together with (x, 1 - l) are not separable by any halfspace. Forced points cost what they cost
whatever the rest of the search does, and they leave the search; in low dimension the public points'
labels force most private records (all but a few tenths of them).

The search. A node fixes the label of some heavy points (each either its own reduced label, cost 0, or
the other one, cost its weight). Its bound is

    (weight of the fixed heavy points labelled against their label)
  + (weight of the free points, heavy or light, forced against their label).

This is a lower bound on the loss of every halfspace that gives the fixed points their node labels,
because such a halfspace misclassifies every point forced against its label. The node branches on its
heaviest free heavy point not yet forced (a forced one takes its forced label without branching); a node
with every heavy point fixed or forced is a *leaf*: its free light points, with the fixed points as hard
constraints (each weighted above the free points' total, so that an optimum meets all of them whenever
any halfspace does), go to an inner exact backend (``direction-bb`` in d <= ``DIRECTION_MAX_D``, else
``portfolio``). Nodes are searched best first; a node whose bound reaches the incumbent is closed.

Why the bound holds over all closed halfspaces: every halfspace h gives the heavy points some labels, so
it lies below exactly one leaf or closed node of the tree (the children of a node split its halfspaces by
the label of one point). Below a closed node its loss is at least the node's bound; below a leaf, at least
the leaf's constant (the fixed and forced costs) plus the inner backend's proved bound over all
halfspaces of the leaf problem, which is at most the free light points' loss of h (h meets every hard
constraint, so the leaf problem's loss of h is its free light loss). An inner bound at or above the hard
weight proves that no halfspace gives the fixed points their labels: the leaf holds none. The bound
reported is the least over the open nodes, the leaves and the incumbent.

Exactness of the forcing: a forcing is found in floating point (non-negative least squares: the point
(x, 1) signed by the impossible label is a non-negative combination of the fixed points' signed
(x_i, 1), a Farkas certificate that the set is not separable) and used only after
:func:`~oraclepriv.solvers.branch_and_cut.cores.verify_core` has proved the certificate's support a
non-separable set in exact rational arithmetic. A forcing that fails the exact check is dropped (the point
stays free), which costs bound strength, never correctness. Every hypothesis is re-scored on the whole
problem; the answer's bound is proved, never estimated.

References
----------
.. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
   Learning with Public Data" (Algorithm 4, RRSPM; the weighted ERM oracle, Def. 4).
.. [2] G. Codato, M. Fischetti, "Combinatorial Benders' cuts for mixed-integer linear programming",
   Oper. Res. 54(4), 2006 (infeasible subsystems as certificates).
.. [3] A. H. Land, A. G. Doig, "An automatic method of solving discrete programming problems",
   Econometrica 28(3), 1960 (best-first branch-and-bound).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem, Status
from oraclepriv.solvers.branch_and_cut.cores import verify_core
from oraclepriv.solvers.combinatorial.direction_bb import DirectionBbBackend
from oraclepriv.solvers.mip.milp import gap_rule, heuristic_halfspaces, reduced_loss
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace
from scipy.optimize import nnls

from oraclepriv.hypotheses import Halfspace

__all__ = ["HeavyBbBackend", "heavy_points", "HEAVY_RATIO", "MAX_HEAVY", "DIRECTION_MAX_D"]

#: a point is heavy when its weight is at least this many times the median weight
HEAVY_RATIO = 20.0
#: at most this many of the heaviest points are branched on (the tree has up to 2^MAX_HEAVY leaves)
MAX_HEAVY = 24
#: leaves go to direction-bb up to this dimension, to portfolio above it
DIRECTION_MAX_D = 6
#: halfspaces kept per node to rule out forcings (hit-and-run samples), and walk steps per sample
SAMPLES = 48
WALK_STEPS = 2
#: the forcing pass checks the deadline every this many points
DEADLINE_EVERY = 64
#: a failed forcing's witness is moved this far (relative) toward the samples' centre, inside the cone
WITNESS_SHIFT = 1e-3
#: seconds of the inner backend's first search of the whole problem (an early incumbent), and its most share
#: of the time left
PROBE_SECONDS = 1.0
PROBE_SHARE = 0.1
#: a non-negative least-squares residual below this share of the target's norm proposes a forcing
NNLS_RESIDUAL = 1e-9


def heavy_points(w: np.ndarray) -> np.ndarray:
    """Indices of the heavy points, heaviest first: weight at least :data:`HEAVY_RATIO` times the median weight
    (and positive), at most :data:`MAX_HEAVY` of them."""
    w = np.asarray(w, dtype=np.float64)
    if w.size == 0:
        return np.zeros(0, dtype=np.int64)
    threshold = HEAVY_RATIO * float(np.median(w))
    order = np.argsort(-w, kind="stable")
    chosen = order[(w[order] >= threshold) & (w[order] > 0)]
    return chosen[:MAX_HEAVY].astype(np.int64)


@dataclass(order=True)
class _Node:
    """A node: ``fixed`` maps a heavy point to the label halfspaces below the node give it."""

    bound: float
    depth_key: int  # minus the depth: among equal bounds, the deeper node first
    tie: int
    fixed: dict[int, int] = field(compare=False)
    cost: float = field(compare=False)  # weight of the fixed points labelled against their label
    forced: dict[int, int] = field(compare=False)  # free points (heavy or light) forced to a label
    samples: np.ndarray = field(compare=False)  # (w, b) rows giving the fixed points their labels (a filter)


class _Forcing:
    """Finds and proves the points a set of fixed labels forces (module docstring, "Exactness")."""

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.lifted = np.hstack([X, np.ones((X.shape[0], 1))])
        self.proved: dict[tuple[tuple[int, ...], tuple[int, ...]], bool] = {}
        self.witness: np.ndarray | None = None  # the last failed forcing's witness row (w, b), if any

    def forced_label(self, fixed: dict[int, int], point: int, candidates: tuple[int, ...] = (0, 1)) -> int | None:
        """The label every halfspace giving ``fixed`` its labels gives ``point`` (proved exactly), or None;
        only the labels in ``candidates`` are tried."""
        if not fixed:
            return None
        idx = np.fromiter(fixed, dtype=np.int64, count=len(fixed))
        signs = np.array([1.0 if fixed[i] == 1 else -1.0 for i in idx])
        A = (self.lifted[idx] * signs[:, None]).T
        g = self.lifted[point]
        scale = max(1.0, float(np.abs(A).max()), float(np.abs(g).max()))
        for label in candidates:
            impossible = 1 - label
            # (x, 1) signed by the impossible label, negated, in the cone of the fixed points' signed rows
            target = -g if impossible == 1 else g
            coef, residual = nnls(A, target)
            if residual > NNLS_RESIDUAL * scale * math.sqrt(g.size):
                # the residual r = target - A coef has A^T r <= 0 and target . r > 0 (the least-squares
                # optimality conditions): -r gives the fixed points their labels and the point the other one
                self.witness = A @ coef - target
                continue
            support = tuple(int(i) for i in idx[coef > 0])
            labels = tuple(fixed[i] for i in support) + (impossible,)
            if self._verified(support + (point,), labels):
                return label
        return None

    def samples(self, fixed: dict[int, int], inherited: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Up to :data:`SAMPLES` rows (w, b) giving every fixed point its label strictly (in floating point):
        the inherited rows that still do, completed by a hit-and-run walk from one of them (or from a max-margin
        LP's solution when none does). A filter only: a point two rows label differently is not forced."""
        if not fixed:
            return rng.uniform(-1.0, 1.0, size=(SAMPLES, self.lifted.shape[1]))
        idx = np.fromiter(fixed, dtype=np.int64, count=len(fixed))
        G = self.lifted[idx] * np.array([1.0 if fixed[i] == 1 else -1.0 for i in idx])[:, None]
        kept = inherited[(inherited @ G.T > 0).all(axis=1)] if inherited.size else inherited
        if kept.shape[0] == 0:
            start = _interior_point(G)
            if start is None:
                return np.empty((0, self.lifted.shape[1]))
            kept = start[None, :]
        out = [kept]
        u = kept[-1].copy()
        need = SAMPLES - kept.shape[0]
        for _ in range(max(0, need) * WALK_STEPS):
            r = rng.standard_normal(u.size)
            Gu, Gr = G @ u, G @ r
            with np.errstate(divide="ignore", invalid="ignore"):
                t_cone = -Gu / Gr
            upper = min(
                np.min(t_cone[Gr < 0], initial=math.inf),
                np.min(((1.0 - u) / r)[r > 0], initial=math.inf),
                np.min(((-1.0 - u) / r)[r < 0], initial=math.inf),
            )
            lower = max(
                np.max(t_cone[Gr > 0], initial=-math.inf),
                np.max(((-1.0 - u) / r)[r > 0], initial=-math.inf),
                np.max(((1.0 - u) / r)[r < 0], initial=-math.inf),
            )
            if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
                break
            u = u + rng.uniform(0.999 * lower + 0.001 * upper, 0.001 * lower + 0.999 * upper) * r
            if (G @ u > 0).all():
                out.append(u[None, :].copy())
        rows = np.vstack(out)
        return rows[:: max(1, rows.shape[0] // SAMPLES)][:SAMPLES] if rows.shape[0] > SAMPLES else rows

    def _verified(self, support: tuple[int, ...], labels: tuple[int, ...]) -> bool:
        key = (support, labels)
        if key not in self.proved:
            self.proved[key] = len(set(support)) == len(support) and verify_core(
                self.X[list(support)], np.array(labels), range(len(support))
            )
        return self.proved[key]


def _interior_point(G: np.ndarray) -> np.ndarray | None:
    """A row u in [-1, 1]^(d+1) with G u > 0 (max-margin LP, floating point), or None when none is found."""
    from scipy.optimize import linprog

    k, dim = G.shape
    cost = np.zeros(dim + 1)
    cost[-1] = -1.0  # maximise the margin t: G u >= t
    result = linprog(
        cost,
        A_ub=np.hstack([-G, np.ones((k, 1))]),
        b_ub=np.zeros(k),
        bounds=[(-1.0, 1.0)] * dim + [(None, 1.0)],
        method="highs",
    )
    if result.status != 0 or -result.fun <= 0:
        return None
    u = np.asarray(result.x[:dim])
    return u if (G @ u > 0).all() else None


class HeavyBbBackend(Backend):
    """Branch-and-bound over the heavy points' labels with forced points (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for one call.
    **options
        probe : float, default 1.0
            Seconds of the inner backend's first search of the whole problem (at most a tenth of the time
            left; 0: none). It ends the call when it proves the optimum, and otherwise gives the tree its
            first incumbent.
        random_seed : int or None, default None
            The seed of the inner backend that solves the leaves.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (Algorithm 4, RRSPM).

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv import make_oracle
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> w = np.ones(60); w[:5] = 40.0
    >>> res = make_oracle("halfspace", backend="heavy-bb").solve(X, y, w)
    >>> res.certified, res.objective
    (True, 0.0)
    """

    name = "heavy-bb"
    classes = frozenset({"halfspace"})
    options = frozenset({"probe", "random_seed"})
    certificate = (
        "the least bound over the open nodes and leaves of a branch-and-bound over the heavy points' labels, each "
        "proved over all closed halfspaces below it (forcings verified exactly, leaves by an exact inner backend)"
    )

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self.probe = self.seconds_option("probe", PROBE_SECONDS)

    def _inner(self, d: int) -> Backend:
        if d <= DIRECTION_MAX_D:
            return DirectionBbBackend(random_seed=self.random_seed)
        from oraclepriv.solvers.portfolio import PortfolioBackend

        return PortfolioBackend(random_seed=self.random_seed)

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        heavy = heavy_points(problem.w)
        inner = self._inner(problem.d)
        if heavy.size == 0 or heavy.size == problem.n:  # nothing to branch on: the inner backend alone
            answer = inner.solve(problem.with_deadline(deadline))
            answer.details = {**answer.details, "heavy_points": int(heavy.size)}
            return answer
        search = _Search(problem, heavy, inner, deadline, self.probe)
        return search.run()


class _Search:
    """One call's best-first search (module docstring)."""

    def __init__(
        self, problem: ReducedProblem, heavy: np.ndarray, inner: Backend, deadline: Deadline, probe: float
    ) -> None:
        self.problem = problem
        self.probe_seconds = probe
        self.X, self.y, self.w = problem.X, problem.y, problem.w
        self.heavy = [int(i) for i in heavy]
        heavy_set = set(self.heavy)
        self.light = [i for i in range(problem.n) if i not in heavy_set]
        self.inner = inner
        self.deadline = deadline
        self.forcing = _Forcing(self.X)
        self.rng = np.random.default_rng(0)
        self.abs_gap, _ = gap_rule(self.w)
        self.trace = IncumbentTrace.for_deadline(deadline)
        starts = heuristic_halfspaces(self.X, self.y, self.w)
        losses = [reduced_loss(h, self.X, self.y, self.w) for h in starts]
        k = int(np.argmin(losses))
        self.best: Halfspace = starts[k]
        self.best_loss = float(losses[k])
        self.trace.note(self.best_loss)
        self.leaf_bounds: list[float] = []  # leaves cut short by the deadline
        self.nodes = 0
        self.leaves = 0
        self.forced_total = 0

    def _offer(self, h: Any) -> None:
        if isinstance(h, Halfspace):
            loss = reduced_loss(h, self.X, self.y, self.w)
            if loss < self.best_loss:
                self.best, self.best_loss = h, float(loss)
                self.trace.note(loss)

    def _evaluate(
        self, fixed: dict[int, int], cost: float, inherited: dict[int, int], samples: np.ndarray
    ) -> tuple[float, dict[int, int], np.ndarray]:
        """The node's bound, forced points and samples: the parent's forcings hold here too (more points are
        fixed); a point the samples label both ways is not forced, one they label alike is tried with that label."""
        forced = dict(inherited)
        samples = self.forcing.samples(fixed, samples, self.rng)
        if fixed:
            idx = np.fromiter(fixed, dtype=np.int64, count=len(fixed))
            G = self.forcing.lifted[idx] * np.array([1.0 if fixed[i] == 1 else -1.0 for i in idx])[:, None]
            centre = samples.mean(axis=0) if samples.size else None
            open_points = np.ones(self.problem.n, dtype=bool)
            open_points[list(fixed)] = False
            open_points[list(forced)] = False
            if samples.size:  # a point the samples label both ways is not forced
                votes = self.forcing.lifted @ samples.T >= 0
                ones = votes.sum(axis=1)
                open_points &= (ones == 0) | (ones == samples.shape[0])
            first_new = samples.shape[0]
            for count, i in enumerate(np.flatnonzero(open_points).tolist()):
                if count % DEADLINE_EVERY == DEADLINE_EVERY - 1 and self.deadline.expired():
                    break  # the forcings found so far hold; the rest are left out of the bound
                if samples.size:
                    label_one = bool(self.forcing.lifted[i] @ samples[0] >= 0)
                    if samples.shape[0] > first_new:  # witnesses added in this pass
                        extra = self.forcing.lifted[i] @ samples[first_new:].T >= 0
                        if (extra != label_one).any():
                            continue
                    candidates: tuple[int, ...] = (1,) if label_one else (0,)
                else:
                    candidates = (0, 1)
                self.forcing.witness = None
                label = self.forcing.forced_label(fixed, i, candidates)
                if label is not None:
                    forced[i] = label
                elif self.forcing.witness is not None and centre is not None:
                    # a witness on the boundary of the fixed points' cone, moved a little inside it
                    u = self.forcing.witness / max(float(np.abs(self.forcing.witness).max()), 1e-300)
                    u = u + WITNESS_SHIFT * centre / max(float(np.abs(centre).max()), 1e-300)
                    if (G @ u > 0).all():
                        samples = np.vstack([samples, u])
        against = sum(float(self.w[i]) for i, label in forced.items() if label != int(self.y[i]))
        return cost + against, forced, samples

    def _probe(self) -> BackendAnswer:
        """A short search of the whole problem by the inner backend (``probe`` seconds, at most
        :data:`PROBE_SHARE` of the time left): an early incumbent closes nodes and limits the leaves'
        searches; its bound holds over all halfspaces and is kept."""
        left = self.deadline.remaining()
        seconds = self.probe_seconds if left is None else min(self.probe_seconds, PROBE_SHARE * left)
        answer = self.inner.solve(self.problem.with_deadline(Deadline(seconds, parent=self.deadline)))
        self._offer(answer.hypothesis)
        return answer

    def run(self) -> BackendAnswer:
        counter = itertools.count()
        probe_bound = -math.inf
        if self.probe_seconds > 0:
            probe = self._probe()
            if probe.status == "optimal":  # the inner backend alone proved the whole problem within the probe
                probe.details = {**probe.details, "heavy_points": len(self.heavy), "heavy_bb": "probe"}
                return probe
            probe_bound = float(probe.bound)
        root_bound, root_forced, root_samples = self._evaluate({}, 0.0, {}, np.empty((0, self.problem.d + 1)))
        heap: list[_Node] = [_Node(root_bound, 0, next(counter), {}, 0.0, root_forced, root_samples)]
        while heap:
            if heap[0].bound >= self.best_loss - self.abs_gap:
                heap = []
                break
            if self.deadline.expired():
                break
            node = heapq.heappop(heap)
            self.nodes += 1
            free = [i for i in self.heavy if i not in node.fixed and i not in node.forced]
            if not free:
                self._leaf(node)
                continue
            branch = free[0]  # the heaviest free heavy point
            for label in (int(self.y[branch]), 1 - int(self.y[branch])):
                fixed = {**node.fixed, branch: label}
                cost = node.cost + (float(self.w[branch]) if label != int(self.y[branch]) else 0.0)
                bound, forced, samples = self._evaluate(fixed, cost, node.forced, node.samples)
                if bound < self.best_loss - self.abs_gap:
                    heapq.heappush(heap, _Node(bound, node.depth_key - 1, next(counter), fixed, cost, forced, samples))
        open_bound = min((n.bound for n in heap), default=math.inf)
        bound = max(min(self.best_loss, open_bound, *self.leaf_bounds), probe_bound)
        status: Status = "optimal" if self.best_loss <= bound + self.abs_gap else "time_limit"
        return BackendAnswer(
            self.best,
            bound=bound,
            status=status,
            nodes=self.nodes,
            details={
                "heavy_points": len(self.heavy),
                "leaves": self.leaves,
                "open_nodes": len(heap),
                "cores_proved": sum(self.forcing.proved.values()),
                "incumbents": self.trace.to_list(),
            },
        )

    def _leaf(self, node: _Node) -> None:
        """Solve the free light points with the fixed (and forced heavy) points as hard constraints."""
        self.leaves += 1
        hard = {**node.fixed, **{i: label for i, label in node.forced.items() if i in set(self.heavy)}}
        free = [i for i in self.light if i not in node.forced]
        constant = node.bound  # fixed against their label + forced against their label
        if not free:  # the labels of the hard points alone: any realising halfspace is optimal here
            hard_weight = 1.0
        else:
            hard_weight = float(self.w[free].sum()) + 1.0
        rows = free + list(hard)
        X = self.X[rows]
        y = np.array([int(self.y[i]) for i in free] + [hard[i] for i in hard], dtype=np.int8)
        w = np.concatenate([self.w[free], np.full(len(hard), hard_weight)])
        leaf = ReducedProblem("halfspace", X, y, w, deadline=self.deadline)
        needed = self.best_loss - self.abs_gap - constant  # the free points' loss that would beat the incumbent
        if isinstance(self.inner, DirectionBbBackend):
            answer = self.inner.solve(leaf, objective_limit=needed + gap_rule(w)[0])
        else:
            answer = self.inner.solve(leaf)
        self._offer(answer.hypothesis)
        if answer.bound >= hard_weight:  # no halfspace gives the hard points their labels: an empty leaf
            return
        if answer.bound >= needed:  # closed: nothing below the leaf beats the incumbent it was searched with
            return
        self.leaf_bounds.append(constant + max(answer.bound, 0.0))
