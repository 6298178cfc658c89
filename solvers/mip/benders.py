"""Combinatorial Benders for halfspaces (``method="cuts"`` of :class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`):
the implicit hitting-set loop of Codato & Fischetti ("Combinatorial Benders' cuts for mixed-integer linear
programming", Oper. Res. 2006) and Pfetsch ("Branch-and-cut for the maximum feasible subsystem problem",
SIAM J. Optim. 2008), and the parts the branch-and-cut backends (``scip-bc``, ``gurobi-bc``) share with it.

The master :class:`~oraclepriv.solvers.mip.milp.HalfspaceHittingSet` ("misclassify at least one point of every
non-separable core") is solved by the backend's MIP solver; its optimal labeling is checked by a Farkas LP
(:class:`~oraclepriv.solvers.branch_and_cut.cores.Separator`), and every non-separable kept set yields new cores
(each verified in exact rational arithmetic on the original data before it becomes a row) until the master's
optimum is realisable. The master's dual bound is a proved lower bound over *all* halfspaces. A primal
heuristic (warm-start candidates, repaired by dropping one point per core (:func:`repair`), then greedily
re-adding points while the kept set stays separable (:func:`add_back`)) provides the incumbent every master
run starts from. Cores depend only on the points and reduced labels, so they are kept across calls with new
weights (:class:`HittingSetCache`). Why a core cut is valid for every halfspace: ``docs/theory/cover-cut-model.md``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from oraclepriv.solvers.base import Status, fingerprint
from oraclepriv.solvers.branch_and_cut.cores import CoreStatus, Separator
from oraclepriv.solvers.mip.adapter import MipModel, MipRun
from oraclepriv.solvers.mip.gaps import lattice_round_up
from oraclepriv.solvers.mip.heuristics import Candidates
from oraclepriv.solvers.mip.milp import HalfspaceHittingSet, MilpArrays
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv.hypotheses import Halfspace, Hypothesis

__all__ = [
    "BEST_SEPARABLE_KEPT",
    "note_cheapest_separable",
    "HittingSetCache",
    "repair",
    "add_back",
    "CutsLoop",
]

log = logging.getLogger(__name__)


#: how many of the cheapest separable sets a branch-and-cut handler keeps (its final hypothesis is polished
#: from the best of them)
BEST_SEPARABLE_KEPT = 3


def note_cheapest_separable(best: list[tuple[float, np.ndarray]], keep: np.ndarray, W: np.ndarray) -> float | None:
    """Record the separable set ``keep`` in ``best`` (cheapest first) when it is cheaper than every set met so far.

    Its cost is the weight of the groups it leaves out, ``W[~keep].sum()``; returns that cost, or None when the
    set is no improvement (then nothing changes). Shared by the cover-cut handlers of ``scip-bc`` and ``gurobi-bc``.
    """
    cost = float(W[~keep].sum())
    if best and cost >= best[0][0]:
        return None
    best.insert(0, (cost, keep.copy()))
    del best[BEST_SEPARABLE_KEPT:]
    return cost


class HittingSetCache:
    """The hitting-set master of the last point set a backend solved, with its core pool and separator.

    Cores depend only on the points and their reduced labels, never on the weights, so a weight-only
    re-solve on the same points (a learner's second call, a benchmark's re-weighting) reuses every core
    verified before. One per backend instance (``highs``/``scip``/``pyomo`` with ``method="cuts"``,
    ``scip-bc``, ``gurobi-bc``); :meth:`clear` after an interrupt, which may leave the pool half-updated.
    """

    def __init__(self) -> None:
        self.key: str | None = None
        self.form: HalfspaceHittingSet | None = None
        self.separator: Separator | None = None

    def holds(self, X: np.ndarray, y: np.ndarray) -> bool:
        """True when the cache holds the master of exactly these points and reduced labels."""
        return self.key is not None and self.key == fingerprint("halfspace-hitting-set", X, y)

    def get(self, X: np.ndarray, y: np.ndarray) -> tuple[HalfspaceHittingSet, Separator, bool]:
        """(master with its core pool, separator, reused) for these points, built when they are new."""
        if self.holds(X, y):
            assert self.form is not None and self.separator is not None
            return self.form, self.separator, True
        from oraclepriv.solvers.base import import_highspy  # the Farkas and polishing LPs run on HiGHS

        form = HalfspaceHittingSet(X, y)
        self.key, self.form = fingerprint("halfspace-hitting-set", X, y), form
        self.separator = Separator(import_highspy(), form.Xs, form.yg, form.groups.X)
        return form, self.separator, False

    def clear(self) -> None:
        self.key = self.form = self.separator = None


def repair(
    sep: Separator, keep: np.ndarray, W: np.ndarray, yg: np.ndarray, deadline: Deadline | None = None
) -> tuple[np.ndarray, list[np.ndarray], int]:
    """Drop one point per core until ``keep`` is separable: (separable subset, cores, unverified).

    The dropped point of a core is taken from its smaller label class (a Radon partition of a
    flipped point against its surroundings has it alone on its side): a zero-weight point if
    there is one, else the largest Farkas multiplier per unit weight. One Farkas LP per step;
    a repair the ``deadline`` cuts short returns the empty set and counts one unverified
    proposal, like an LP failure: its set is never claimed separable (the cores it met are kept)."""
    keep = np.array(keep, dtype=bool)
    cores: list[np.ndarray] = []
    unverified = 0
    while True:
        if deadline is not None and deadline.expired():
            deadline.note("repair")
            return np.zeros_like(keep), cores, unverified + 1
        status, S = sep.find_core(keep)
        if status == CoreStatus.SEPARABLE:
            return keep, cores, unverified
        if S is None or S.size == 0:  # LP trouble with no proposal: give up on this subset
            return np.zeros_like(keep), cores, unverified + 1
        if status == CoreStatus.CORE:
            cores.append(S)
        else:
            unverified += 1
        lam = sep.last_multipliers if len(sep.last_multipliers) == S.size else np.ones(S.size)
        ones = yg[S] == 1
        side = ones if 0 < ones.sum() <= (~ones).sum() or not (~ones).any() else ~ones
        cand, score = S[side], lam[side]
        free = W[cand] <= 0
        pick = cand[np.argmax(free)] if free.any() else cand[np.argmax(score / W[cand])]
        keep[pick] = False


def add_back(sep: Separator, keep: np.ndarray, W: np.ndarray, deadline: Deadline | None = None) -> np.ndarray:
    """Greedy 1-opt: re-add dropped points (heaviest first) while the kept set stays separable
    (one Farkas LP per point; the set stays separable when the ``deadline`` stops it)."""
    keep = np.array(keep, dtype=bool)
    for g in sorted(np.flatnonzero(~keep), key=lambda g: -W[g]):
        if deadline is not None and deadline.expired():
            deadline.note("add-back")
            break
        if W[g] <= 0:
            continue
        keep[g] = True
        if sep.find_core(keep)[0] != CoreStatus.SEPARABLE:
            keep[g] = False
    return keep


#: a solver model of a MILP, built within a deadline (:meth:`oraclepriv.solvers.mip.mipbackend.MipBackend.new_model`)
NewModel = Callable[[MilpArrays, Deadline], MipModel]
#: the max-margin halfspace over the groups a labeling keeps, None when there is none in time
#: (:meth:`oraclepriv.solvers.mip.mipbackend.MipBackend._polish`)
Polish = Callable[[HalfspaceHittingSet, np.ndarray, Deadline], Halfspace | None]


@dataclass
class CutsLoop:
    """Combinatorial Benders over one hitting-set master (module docstring): its start, its rounds, and what
    they proved so far. The fields after ``tol`` are the loop's state; they keep what was proved when a
    model build stops at the deadline (:class:`~oraclepriv.solvers.runtime.deadline.DeadlineExceeded`)."""

    form: HalfspaceHittingSet
    sep: Separator
    W: np.ndarray  # group weights
    cands: Candidates
    new_model: NewModel
    polish: Polish
    deadline: Deadline
    heuristic: Deadline  # the start heuristics' share of the deadline (also bounds the add-back of every round)
    abs_gap: float
    q: float | None  # the weight lattice (:func:`oraclepriv.solvers.mip.gaps.gap_rule`)
    total: float  # the total weight
    tol: float  # the protocol's certification tolerance
    bound: float = -math.inf
    status: Status = "optimal"
    rounds: int = 0
    nodes: int = 0
    master_seconds: float = 0.0
    unverified: int = 0  # core proposals that could not be verified exactly
    last_run: MipRun | None = None
    stalled: str | None = None  # why the rounds stopped short of closing the gap, if they did

    def correct_of(self, h: Hypothesis) -> np.ndarray:
        """The groups ``h`` classifies correctly."""
        return h.predict(self.form.groups.X) == self.form.yg

    def improve(self, keep: np.ndarray, tag: str) -> None:
        """Grow the separable set ``keep`` greedily (:func:`add_back`) and add its max-margin halfspace."""
        keep = add_back(self.sep, keep, self.W, self.heuristic)
        self.cands.add(tag, self.polish(self.form, keep, self.deadline))

    def start(self, warm_start: bool) -> None:
        """The primal heuristic that every master run starts from: repair the all-points set (its cores join
        the master), and with ``warm_start`` extend the correct sets of the three best warm-start candidates."""
        keep, cores, bad = repair(
            self.sep, np.ones(self.form.groups.size, dtype=bool), self.W, self.form.yg, self.heuristic
        )
        self.unverified += bad
        self.form.add_cores(cores)
        self.improve(keep, "repair-all")
        if warm_start:
            for _, source, h in sorted(self.cands.items, key=lambda item: item[0])[:3]:
                if source.startswith("heuristic") and not self.heuristic.expired():
                    self.improve(self.correct_of(h), f"{source}-addback")

    def solve_master(self) -> MipRun:
        """One run of the master over the cores known, from the best candidate's labeling; its dual bound,
        rounded up to the weight lattice, raises the proved bound."""
        model = self.new_model(self.form.milp, self.deadline)
        model.set_costs(self.W)
        start = self.form.encode_correct(self.correct_of(self.cands.best()[2]))
        run = model.run(self.deadline.solver_seconds(), abs_gap=self.abs_gap, start=start)
        self.last_run = run
        self.rounds += 1
        self.nodes += run.nodes
        self.master_seconds += run.seconds
        if math.isfinite(run.dual_bound):
            self.bound = max(self.bound, lattice_round_up(run.dual_bound, self.q, self.total))
        return run

    def run(self) -> None:
        """Rounds until the best candidate meets the bound: solve the master; if its labeling is realisable, its
        max-margin halfspace is optimal; otherwise the cores its repair meets join the master. Stops at the
        deadline, on a master that fails, or when a round makes no progress (``stalled`` says why)."""
        best_loss = self.cands.best()[0]
        while best_loss > self.bound + self.tol:
            if self.deadline.expired():
                self.deadline.note("cuts master")
                self.status = "time_limit"
                return
            run = self.solve_master()
            if best_loss <= self.bound + self.tol:
                return
            if run.status != "optimal" or run.x is None:
                self.status = run.status if run.status != "optimal" else "error"
                return
            keep = run.x < 0.5
            repaired, cores, bad = repair(self.sep, keep, self.W, self.form.yg, self.deadline)
            self.unverified += bad
            added = self.form.add_cores(cores)
            log.debug(
                "cuts round %d: %d new cores (%d in the pool), bound %.12g",
                self.rounds,
                added,
                len(self.form.cores),
                self.bound,
            )
            if not cores:  # the master's labeling is realisable: its max-margin halfspace is optimal
                self.cands.add(f"master-{self.rounds}", self.polish(self.form, keep, self.deadline))
                best_loss = self.cands.best()[0]
                if best_loss > self.bound + self.tol:  # degenerate data / float trouble / the deadline: stay honest
                    self._stall("master labeling separable but its halfspace does not attain the bound")
                    return
                continue
            self.improve(repaired, f"master-{self.rounds}-repaired")
            best_loss = self.cands.best()[0]
            if added == 0:  # every proposed core was unverified or known: cannot make progress
                self._stall("no new exactly verified core")
                return

    def _stall(self, why: str) -> None:
        self.status = "time_limit" if self.deadline.expired() else "feasible"
        self.stalled = why
