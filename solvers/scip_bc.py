"""``scip-bc``: exact margin-free halfspace ERM by branch-and-cut in SCIP (PySCIPOpt), lazy core cuts.

Problem (Block et al., "Oracle-Efficient Differentially Private Learning with Public Data",
Def. 4, reduced by the protocol so every weight is >= 0): min over closed halfspaces h of
sum_i w_i 1[h(x_i) != y_i].

Model. One binary z_g per group of identical (x, y) points (:class:`oraclepriv.solvers.milp.HalfspaceHittingSet`
groups; z_g = 1 means "group g misclassified"), objective sum_g W_g z_g, and *no* big-M rows:
the halfspace itself is implicit. Feasibility of a labeling is enforced by a SCIP constraint
handler (:class:`CoreHandler`) that, at every integral LP / pseudo solution (``consenfolp`` /
``consenfops``) and for every candidate solution (``conscheck``), takes the set
S = {g : z_g < 0.5} of groups claimed correct and tests whether S is strictly separable with the
Farkas LP of :class:`oraclepriv.solvers.cores.Separator`. If it is not, the handler adds lazy cover cuts
sum_{g in C} z_g >= 1 for minimal non-separable cores C inside S (one per round of the
repair loop of :meth:`oraclepriv.solvers.mipbackend.MipBackend._repair`, so one enforcement call usually adds
several cuts). At every node (``conssepalp``, ``SEPA_FREQ``) it also separates the *fractional*
LP point x with Pfetsch's separation LP: the Farkas system over {g : x_g < 1} with objective
min sum_g x_g lambda_g, whose optimal vertex is a minimal non-separable set made of points with
small x (:meth:`oraclepriv.solvers.cores.Separator.min_cost_core`, primal simplex: between the LPs of one call
only the costs change). After each proposal the cost of its points rises by ``SEPA_PENALTY`` so the
next LP finds another core; a call stops after ``SEPA_LPS`` LPs or ``SEPA_MISSES`` useless
proposals in a row (root, deeper nodes). Only violated proposals that are not rows yet go to the
exact check (memoised). The first call and every ``REPAIR_EVERY``-th one after it also
repairs the rounded point {g : x_g < 0.5} (drop rule of ``MipBackend._repair``), offers the
separable result to SCIP as a solution and keeps the violated cores it met. Core rows added by the
handler are *removable* (SCIP may age them out of the LP; they stay constraints of the model).

Measured (issue #3 suite, 60 s cap, 2 CPUs, wall seconds, one run each). Where the time went before (cProfile, seconds of the call): n200-d10 (23.0 s
under the profiler): SCIP itself 8.4 (of which relpscost strong branching ~7.7), exact core checks
12.0 (Fraction arithmetic: 2.4 M gcd calls), HiGHS Farkas LPs 1.4, greedy add-back 1.1;
n400-d5 (18.1 s): SCIP 12.3 (strong branching 7.1, the RENS sub-MIP 4.4, LPs 1.5), exact checks 3.6,
HiGHS 1.3, add-back 1.6; n400-d10 (60 s, unsolved): SCIP 35.2 (LPs over ~8000 non-removable core
rows), exact checks 20.0, HiGHS 3.1, add-back 6.5. getSolVal loops, conscheck, polishing and the
start heuristics were below 0.6 s everywhere. What changed and what each step bought:

* :func:`oraclepriv.solvers.cores.verify_core` does the back substitution in integers (Cramer: D * lambda is
  integral for the last Bareiss pivot D) instead of Fractions: ~3.5x faster per core, same
  verdicts (tested against the rational reference);
* SCIP's primal heuristics off (RENS etc. cost seconds and found nothing the start heuristics had
  not), pseudo-cost branching without strong branching, removable core rows: n400-d5 16.6 -> 4.5 s,
  n200-d10 19 -> 6 s;
* the x-objective separation above instead of the former drop-the-largest-x loop: the old loop's
  root stalled at bound 21.1 on n400-d10 while the LP point still violated cores the x-objective LP
  found at once (117 from the final root point in 300 LPs); n400-d5 -> 3.3 s, n400-d2 2.0 -> 0.25 s;
* Gomory, aggregation and {0,1/2} separators off (dense rows on a covering LP, no fewer nodes):
  n200-d10 4.5 -> 3.4 s, n100-d10 0.64 -> 0.29 s in back-to-back runs.

Result (``python3 -m oraclepriv bench mip --suite issue --backends scip-bc --time-limit 60``, 2 CPUs,
shared machine): seconds before -> after: n100 d2 0.09 -> 0.07, d5 0.17 -> 0.06, d10 1.17 -> 0.45;
n200 d2 0.43 -> 0.10, d5 1.43 -> 0.27, d10 16.7 -> 3.7; n400 d2 1.96 -> 0.22, d5 14.7 -> 2.5,
d10 timeout -> timeout (bound 24 -> 26, objective 38 -> 36); SGM 6.17 -> 3.35 s (naive-highs 18.3).
The limit is the relaxation, not speed: sepnoise-n400-d10 still times out (bound 26-27 at 60 s,
~30 after 400 s, vs. objective 36). A hard cap explains it: for points in general position every
core has exactly d + 2 points (fewer points are affinely independent, so their two label classes
have disjoint hulls), so z = 1/(d + 2) everywhere satisfies *every* core cut and the LP bound of
the complete core closure is at most n/(d + 2): 400/12 = 33.3 (34 after lattice rounding) on
n400-d10, below its optimum, 36. Closing it needs branching far below the root or inequalities
stronger than covers: with a 1800 s limit scip-bc proves 36 optimal in 550 s and 2300 nodes
(``oraclepriv bench mip --suite issue --backends scip-bc --time-limit 1800 --out
docs/bench-mip-long``); halving the deep-node separation budget left it at ~2500 nodes. On n200-d10 the root bound of the full core closure is
~11 vs. the optimum 16 (the tree needs ~130-150 nodes). Rank-2 sets T (every g in T has a verified core
inside T - {g}, so sum_T z >= 2) were tried: strong (n200-d10 root bound 10.5 -> 12.7) but, grown
by one Farkas LP per point, ~70 LPs per cut, far too slow (60 s for that root); not kept.

Primal side. SCIP's heuristics are off; the handler offers separable sets: the repaired rounded
point every REPAIR_EVERY-th separation call, and *rank rounding* of the root LP point (claim the k
groups with the largest x wrong for up to ROUNDING_TRIES values of k, repair, add back the
ROUNDING_ADD_BACK cheapest) at root calls 5, 15, 45, ... and once when the root has converged. On
sepnoise-n400-d10 a 5 s call used to end at 39 (start heuristics 40, optimum 36); with rank
rounding it ends at 36. A labeling offered this way is still checked by ``conscheck``; a test with a
broken rounding (it offers the all-correct labeling) shows SCIP refusing it.

Kept in session 4 (n400-d10 proved to optimality, variants run concurrently on the 2 CPUs):
* core rows enter the LP only when violated (``CORE_ROWS_INITIAL``, ``LINEAR_SEPAFREQ``): 949 s /
  3333 nodes -> 651 s / 2414 nodes, and 851 s -> 595 s in a second pair; the LP does 6.7 k instead of
  3.6 k simplex iterations per second;
* ``workers=2`` (parallel search below): 399 s alone on the machine, regions 263 + 96 + 133 + 97 + 40 +
  46 + 64 + 36 = 777 s of work (each region redoes a root). The first version dispatched the regions
  in index order and took 485 s (the hardest region last). In ``docs/bench-mip-long``: 552 s serial,
  406 s with 2 workers.
* Rank rounding (session 3) had raised the full proof to 3333 nodes (the 550 s / 2300 nodes of the
  long bench predate it); with the LP-row change it is 2414 nodes, and rank rounding now helps: 538 s /
  2414 nodes with it, 593 s / 2599 nodes without (concurrent pair).

Tried for n400-d10 and not kept (measured on this 2-CPU VM; session 3 of issue #3):
* propagation of *implied-correct* points at nodes (a free point that every halfspace correct on
  the fixed-correct groups classifies correctly, proved by an exactly verified core of the fixed
  groups plus the flipped point, is fixed to z = 0): 5.4 fixings per node, yet 2620 nodes and 830 s
  to prove 36 against 2300 nodes and 593 s without it;
* SCIP's reliability (strong) branching or inference branching instead of pseudo-costs, and LP
  pricing variants: dual bounds 25-27 at 60 s either way; SoPlex dual simplex is ~89% of the time
  (2.46 M iterations over ~1000-row LPs in the 593 s run);
* rank-2 sets from pairs of tight cores: of ~400 pair checks per round about one pair's union
  stays non-separable after deleting the shared point;
* conditional rank cuts k z_e + sum_T z >= k (T the tight cores through e minus e, k the exact
  minimum number of errors on T when e is correct, by a sub-solve): violated by up to 3 at the root
  of n200-d10, but the root bound rose only 11.5 -> 13.0 (optimum 16) after 117 sub-solves (~50 s).
Why the covering LP is weak here: at the root of n400-d10 (bound 22.2) no z is 1; even the points
that are deep on the wrong side get z <= 0.49, the rest of their cores being covered by a thin
blanket of z ~ 0.06-0.08 on the points near the boundary. Forcing such a point correct costs some
Tukey-depth-like number of errors, which fractional covers by (d + 2)-point cores cannot express.

This is the branch-and-cut for the maximum feasible subsystem problem of Pfetsch (SIAM J. Optim. 19(1), 2008) with the combinatorial
Benders cuts of Codato & Fischetti (Oper. Res. 54(4), 2006), run inside one search tree instead
of the re-solved hitting-set master of ``mipbackend`` (``method="cuts"``; HiGHS has no lazy
constraint callback).

What ``certified`` means. Every cut is a core verified in exact rational arithmetic on the
original data (:func:`oraclepriv.solvers.cores.verify_core`); a proposal that fails the exact check is never
added. So every row of SCIP's model is satisfied by z = 1[h wrong] for *every* halfspace h, and
SCIP's dual bound is a proved lower bound over all halfspaces (margin-free). The invariant that
makes this true: *SCIP is only ever told "infeasible" with a proof*. Precisely,

* every cut (and every INFEASIBLE verdict of ``conscheck``) comes with an exactly verified core
  inside the kept set, so no labeling a halfspace realises is ever rejected;
* when the float LP calls a kept set non-separable but no proposed core passes the exact check,
  the handler *accepts* the labeling (details["accepted_unverified"] counts these). SCIP then
  solves a relaxation (a superset of the realisable labelings), so its dual bound stays a lower
  bound; the answer is simply not certified unless a real halfspace attains the bound. (SCIP
  uses check verdicts as proofs: presolve can fix all z and ask ``conscheck`` about the one
  labeling left, so an unproved "infeasible" there would yield a wrong bound. A test shows it.)
* the variable locks (``conslock``) are truthful: the cuts are covering rows and a subset of a
  separable set is separable, so decreasing z_g may destroy feasibility and increasing it never
  does; each z_g is locked downwards (without locks SCIP's dual fixing sets z = 0 in presolve and
  loses the lazy cuts; a negative-control test shows the wrong bound).

If SCIP finishes "optimal" but no real halfspace attains its bound (an accepted unverified set, or
a max-margin LP that finds margin 0 on degenerate data), the status is reported as "error".

The returned hypothesis is a real (w, b): the max-margin LP (:func:`oraclepriv.solvers.milp.margin_lp`, on
HiGHS) over the kept set of SCIP's best solution, and of the best separable sets the handler
met; the protocol re-scores it. Start solution: the best of the constants, the best stump, the
least-squares direction (:func:`oraclepriv.solvers.milp.heuristic_halfspaces`) and the repaired all-points
set, each greedily extended (``_add_back``). Gaps: relative 0 and the absolute gap / lattice
rounding of :func:`oraclepriv.solvers.milp.gap_rule`. Cores depend only on the points and reduced labels and
are kept across calls on the same points (seeded as initial rows).

Parallel search (``workers`` = k > 1; :func:`_parallel_branch_and_cut`). The root is solved here
(node limit 1); if it does not close, the p most fractional groups of the root LP point, with
2^p >= REGIONS_PER_WORKER * k, split the labelings into 2^p regions (every z_g of the p fixed to 0
or 1). Each region is a separate SCIP search in a joblib worker process, seeded with every core
known after the root and with the incumbent as objective limit. The regions partition the
labelings, so min over regions of (the incumbent if the region has no cheaper labeling, else its
SCIP dual bound) is a proved bound, with the same meaning as the serial one. Cost: each region
re-runs a root separation under its fixings; worker start-up ~1 s.

Options: ``time_limit`` (seconds, whole call), ``threads`` (SCIP's LP threads; default 1),
``workers`` (processes for the parallel search above; default 1 = one sequential tree),
``output_flag`` (SCIP log; default False).
"""

from __future__ import annotations

import importlib
import math
import time
from typing import Any

import numpy as np

from oraclepriv.hypotheses import Halfspace, Hypothesis
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem, SolverNotInstalledError
from oraclepriv.solvers.cores import CoreStatus, Separator
from oraclepriv.solvers.milp import HalfspaceHittingSet, gap_rule, heuristic_halfspaces, lattice_round_up, margin_lp, reduced_loss
from oraclepriv.solvers.mipbackend import MipBackend, fingerprint

__all__ = ["ScipBcBackend", "CoreHandler", "import_pyscipopt", "TESTED_PYSCIPOPT"]

TESTED_PYSCIPOPT = "6.3.0"
_VIOLATION_TOL = 1e-6  # a fractional point violates sum z >= 1 when the sum is below 1 - tol
#: separation of fractional LP points: every SEPA_FREQ-th depth (0 = root only), see includeConshdlr
SEPA_FREQ = 1
#: Farkas LPs per separation call (root, deeper nodes) and consecutive useless proposals that end a call
SEPA_LPS = (100, 30)
SEPA_MISSES = (10, 4)
#: cost added to every point of a proposal, so that the next Farkas LP of the call looks elsewhere
SEPA_PENALTY = 0.2
#: the first and every REPAIR_EVERY-th separation call also repair {g : x_g < 0.5} (a primal
#: heuristic; at every root call it cost n200-d10 ~1.5 s for no fewer nodes)
REPAIR_EVERY = 10
#: core rows enter the LP at once (True) or only when an LP point violates them (False; SCIP's linear
#: handler then separates them at every node: LINEAR_SEPAFREQ = 1, its default 0 is the root only).
#: Measured on sepnoise-n400-d10 to optimality, two pairs of concurrent runs on 2 CPUs: 949 s / 3333
#: nodes (True) vs 651 s / 2414 nodes (False), and 851 s vs 595 s; the LP runs 1.9x more simplex
#: iterations per second (smaller LPs) and needs fewer nodes. Small instances lose ~0.1-0.5 s.
CORE_ROWS_INITIAL = False
SEED_ROWS_INITIAL = True
LINEAR_SEPAFREQ: int | None = 1
#: rank rounding of the converged root LP point (:meth:`_CoreHandler._rank_rounding`): at most
#: this many k values, spread over [s / 2, 3 s] for s = sum_g x_g
ROUNDING_TRIES = 24
#: ... of which the ROUNDING_ADD_BACK cheapest repaired sets get the greedy add-back
ROUNDING_ADD_BACK = 4


def import_pyscipopt():
    """Import PySCIPOpt or raise SolverNotInstalledError saying what to install."""
    try:
        return importlib.import_module("pyscipopt")
    except ImportError as exc:
        raise SolverNotInstalledError(
            f"backend 'scip-bc' needs the pyscipopt package (tested with pyscipopt=={TESTED_PYSCIPOPT}; "
            f"install it with: pip install 'pyscipopt=={TESTED_PYSCIPOPT}'); importing it failed: {exc}"
        ) from exc


def _handler_class(pyscipopt):
    """The constraint-handler class, built on first use so importing this module needs no pyscipopt."""
    RESULT = pyscipopt.SCIP_RESULT

    class _CoreHandler(pyscipopt.Conshdlr):
        """Lazy core cuts: separability of {g : z_g < 0.5} by the Farkas LP, exactly verified cores."""

        def __init__(self, z, sep: Separator, W: np.ndarray, yg: np.ndarray, known: set[tuple[int, ...]]):
            self.z = z
            self.sep = sep
            self.W = W
            self.yg = yg
            self.known = known  # cores already rows of this model
            self.new_cores: list[tuple[int, ...]] = []
            self.pending: list[tuple[int, ...]] = []  # found by conscheck, added at the next enforcement
            self.best_keep: list[tuple[float, np.ndarray]] = []  # separable sets met, cheapest first
            self.unverified = 0  # core proposals that failed the exact check
            self.accepted_unverified = 0  # LP-non-separable labelings accepted for want of a proof
            self._tz = None  # the transformed variables (on first use)
            self.rounded = False  # rank rounding of the converged root LP done
            self.root_x: np.ndarray | None = None  # the last root LP point separated (parallel split)
            self.root_calls = 0
            self.next_rounding = 5
            self.stats = {"enforce_calls": 0, "check_calls": 0, "sepa_calls": 0, "cuts_enforce": 0, "cuts_sepa": 0,
                          "heuristic_solutions": 0, "rounding_tries": 0,
                          "rounding_best": None}

        # -- helpers -------------------------------------------------------------------------
        def _values(self, solution) -> np.ndarray:
            return np.array([self.model.getSolVal(solution, v) for v in self.z])

        def _add_cut(self, core: tuple[int, ...]) -> bool:
            if core in self.known:
                return False
            self.known.add(core)
            self.new_cores.append(core)
            self.model.addCons(
                pyscipopt.quicksum(self.z[g] for g in core) >= 1,
                name=f"core{len(self.known)}", initial=CORE_ROWS_INITIAL, separate=True, enforce=True, check=True,
                propagate=True, local=False, removable=True,
            )
            return True

        def _add_pending(self) -> int:
            added = sum(self._add_cut(c) for c in self.pending)
            self.pending = []
            return added

        def _note_separable(self, keep: np.ndarray) -> None:
            """Remember a separable set (for the final hypothesis) and offer it to SCIP as a solution."""
            cost = float(self.W[~keep].sum())
            if self.best_keep and cost >= self.best_keep[0][0]:
                return
            self.best_keep.insert(0, (cost, keep.copy()))
            del self.best_keep[3:]
            if cost < self.model.getPrimalbound() - 1e-9:
                values = np.where(keep, 0.0, 1.0)
                # SCIP refuses (an error, not a verdict) values that contradict a global fixing,
                # e.g. a reduced-cost fixing that proves no better solution has that value: skip those
                if self._tz is None:
                    self._tz = [self.model.getTransformedVar(v) for v in self.z]
                for g, v in enumerate(self._tz):
                    lb, ub = v.getLbGlobal(), v.getUbGlobal()
                    if lb == ub and lb != values[g]:
                        return
                sol = self.model.createSol()
                for g, v in enumerate(self.z):
                    self.model.setSolVal(sol, v, values[g])
                if self.model.trySol(sol, printreason=False):
                    self.stats["heuristic_solutions"] += 1

        def _cores_of(self, keep: np.ndarray) -> tuple[list[tuple[int, ...]], int, np.ndarray]:
            repaired, cores, bad = MipBackend._repair(self.sep, keep, self.W, self.yg)
            self.unverified += bad
            return [tuple(sorted(int(g) for g in c)) for c in cores], bad, repaired

        def _enforce(self) -> dict:
            self.stats["enforce_calls"] += 1
            added = self._add_pending()
            keep = self._values(None) < 0.5
            cores, bad, repaired = self._cores_of(keep)
            if not cores and bad == 0:  # the claimed-correct set is separable: a real labeling
                self._note_separable(keep)
                return {"result": RESULT.CONSADDED if added else RESULT.FEASIBLE}
            n_new = sum(self._add_cut(c) for c in cores)
            self.stats["cuts_enforce"] += n_new
            if cores:
                self._note_separable(MipBackend._add_back(self.sep, repaired, self.W))
            if added + n_new:
                return {"result": RESULT.CONSADDED}
            if not cores:
                # the LP calls the kept set non-separable but no core passed the exact check: no
                # proof, so accept (a relaxation; the bound stays valid, see the module docstring)
                self.accepted_unverified += 1
            # else: only cores that are already linear constraints of the model (a pseudo solution,
            # or rows not yet in the LP); the linear handler, enforced after this one, resolves them
            return {"result": RESULT.FEASIBLE}

        # -- SCIP callbacks ------------------------------------------------------------------
        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self._enforce()

        def consenforelax(self, solution, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
            self.stats["check_calls"] += 1
            keep = self._values(solution) < 0.5
            status, S = self.sep.find_core(keep)
            if status == CoreStatus.SEPARABLE:
                return {"result": RESULT.FEASIBLE}
            if status == CoreStatus.CORE:  # rejected with a proof: an exactly verified core
                self.pending.append(tuple(sorted(int(g) for g in S)))
                return {"result": RESULT.INFEASIBLE}
            self.unverified += 1  # no proof: never reject (SCIP would use the verdict to prune)
            self.accepted_unverified += 1
            return {"result": RESULT.FEASIBLE}

        def _min_x_cores(self, x: np.ndarray) -> list[tuple[int, ...]]:
            """Violated cores of the LP point x: the Farkas LP with objective min sum_i x_i lambda_i
            (Pfetsch 2008) returns a vertex, i.e. a minimal non-separable set, made of points with
            small x; after each proposal the cost of its points rises by SEPA_PENALTY so that the
            next LP finds another one. Only violated proposals that are not rows yet are verified
            (exactly, memoised); the call ends after SEPA_LPS LPs or SEPA_MISSES useless ones in a row."""
            cand = x < 1.0 - _VIOLATION_TOL  # a point with x_g = 1 satisfies every cut through it
            cost = x.copy()
            out: list[tuple[int, ...]] = []
            seen: set[tuple[int, ...]] = set()
            at = 0 if self.model.getDepth() == 0 else 1
            misses = 0
            for _ in range(SEPA_LPS[at]):
                S = self.sep.min_cost_core(cand, cost)
                if S is None:  # cand is separable (or the LP failed): no core left to propose
                    break
                core = tuple(sorted(int(g) for g in S))
                useful = core not in seen and core not in self.known and x[S].sum() < 1.0 - _VIOLATION_TOL
                seen.add(core)
                if useful and self.sep.verify(core):
                    out.append(core)
                    misses = 0
                else:
                    if useful:
                        self.unverified += 1
                    misses += 1
                    if misses >= SEPA_MISSES[at]:
                        break
                cost[S] += SEPA_PENALTY
            return out

        def _rank_rounding(self, x: np.ndarray) -> list[tuple[int, ...]]:
            """Primal heuristic on the converged root LP point x: for several k, claim the k groups
            with the largest x wrong, repair the rest to a separable set (drop rule of
            ``MipBackend._repair``), re-add what fits (``_add_back``) and offer the result. The LP
            ranks the likely errors well (sepnoise-n400-d10: the start heuristics give 40, rounding
            36 in ~0.5 s; the tree had needed 10 s or more). Returns the verified cores met that x
            violates (they become cuts)."""
            order = np.argsort(-x, kind="stable")
            mass = float(x.sum())
            positive = int(np.count_nonzero(x > _VIOLATION_TOL))
            lo, hi = max(1, int(mass // 2)), min(positive, int(math.ceil(3 * mass)))
            ks = sorted(set(np.linspace(lo, hi, num=ROUNDING_TRIES).round().astype(int))) if hi >= lo else []
            found: list[tuple[int, ...]] = []
            repaired: list[tuple[float, np.ndarray]] = []
            for k in ks:
                keep = np.ones(x.size, dtype=bool)
                keep[order[:k]] = False
                keep, more, bad = MipBackend._repair(self.sep, keep, self.W, self.yg)
                self.unverified += bad
                self.stats["rounding_tries"] += 1
                found += [tuple(sorted(int(g) for g in c)) for c in more if x[c].sum() < 1.0 - _VIOLATION_TOL]
                if bad == 0:
                    repaired.append((float(self.W[~keep].sum()), keep))
            # the greedy add-back costs one LP per dropped group: only for the cheapest repairs
            for _, keep in sorted(repaired, key=lambda r: r[0])[:ROUNDING_ADD_BACK]:
                keep = MipBackend._add_back(self.sep, keep, self.W)
                cost = float(self.W[~keep].sum())
                if self.stats["rounding_best"] is None or cost < self.stats["rounding_best"]:
                    self.stats["rounding_best"] = cost
                self._note_separable(keep)
            return found

        def conssepalp(self, constraints, nusefulconss):
            self.stats["sepa_calls"] += 1
            added = self._add_pending()
            x = self._values(None)
            if self.model.getDepth() == 0:
                self.root_x = x
            cores = self._min_x_cores(x)
            if self.model.getDepth() == 0 and not self.rounded:
                # round the root LP point when the root has converged (no violated core found) and,
                # on a long root, at root calls 5, 15, 45, ... (a time-limited call gets an early incumbent)
                self.root_calls += 1
                self.rounded = not cores
                if (self.rounded or self.root_calls == self.next_rounding) and \
                        self.model.getPrimalbound() > self.model.getDualbound() + 1e-9:
                    self.next_rounding = 3 * self.root_calls
                    cores += self._rank_rounding(x)
            if self.stats["sepa_calls"] % REPAIR_EVERY == 1 % REPAIR_EVERY:
                # primal side (SCIP's own heuristics are off): the rounded point, repaired by the
                # drop rule of MipBackend._repair, is a separable set, offered as a solution; the
                # verified cores the repair met become cuts when x violates them
                keep, more, bad = MipBackend._repair(self.sep, x < 0.5, self.W, self.yg)
                self.unverified += bad
                cores += [tuple(sorted(int(g) for g in c)) for c in more if x[c].sum() < 1.0 - _VIOLATION_TOL]
                if bad == 0:
                    self._note_separable(keep)
            n_new = sum(self._add_cut(c) for c in cores)
            self.stats["cuts_sepa"] += n_new
            return {"result": RESULT.CONSADDED if added + n_new else RESULT.DIDNOTFIND}

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            # covering rows sum z >= 1: decreasing any z may violate one, increasing never does
            for v in self.z:
                self.model.addVarLocksType(self.model.getTransformedVar(v), locktype, nlockspos, nlocksneg)

    return _CoreHandler


CoreHandler = None  # the class, once pyscipopt is imported (see _handler_class)


def _handler(pyscipopt):
    global CoreHandler
    if CoreHandler is None:
        CoreHandler = _handler_class(pyscipopt)
    return CoreHandler


def run_branch_and_cut(
    pyscipopt,
    sep: Separator,
    W: np.ndarray,
    yg: np.ndarray,
    cores: list[tuple[int, ...]],
    *,
    start_keep: np.ndarray | None,
    time_limit: float | None,
    abs_gap: float,
    threads: int = 1,
    output_flag: bool = False,
    fix: dict[int, int] | None = None,
    objlimit: float | None = None,
    node_limit: int | None = None,
    seed_rows_initial: bool = SEED_ROWS_INITIAL,
) -> dict[str, Any]:
    """One SCIP branch-and-cut over the groups (module docstring), optionally restricted to a region
    (``fix``: group -> 0/1) with an objective limit (only labelings strictly cheaper than ``objlimit``
    count; SCIP's status is then "infeasible" when the region has none) or a node limit.

    Returns plain data (also from a worker process): SCIP status, nodes, dual and primal bound,
    seconds, the kept sets worth polishing (SCIP's best solution, the handler's best separable sets),
    the new cores, the handler's counters, and the root LP point (``root_x``)."""
    scip = pyscipopt
    model = scip.Model("scip-bc")
    if not output_flag:
        model.hideOutput()
    n_groups = W.size
    z = [model.addVar(name=f"z{g}", vtype="B", obj=float(W[g])) for g in range(n_groups)]
    known: set[tuple[int, ...]] = set()
    for k, core in enumerate(cores):
        known.add(core)
        model.addCons(scip.quicksum(z[g] for g in core) >= 1, name=f"seed{k}", initial=seed_rows_initial)
    for g, value in (fix or {}).items():
        model.fixVar(z[g], float(value))
    handler = _handler(pyscipopt)(z, sep, W, yg, known)
    model.includeConshdlr(
        handler, "halfspace_cores", "lazy exactly verified non-separable cores",
        sepapriority=100, enfopriority=-100, chckpriority=-100, sepafreq=SEPA_FREQ, propfreq=-1,
        eagerfreq=-1, maxprerounds=0, needscons=False,
    )
    model.setParam("limits/gap", 0.0)
    model.setParam("limits/absgap", float(abs_gap))
    model.setParam("lp/threads", threads)
    model.setParam("presolving/maxrestarts", 0)
    if LINEAR_SEPAFREQ is not None:
        model.setParam("constraints/linear/sepafreq", LINEAR_SEPAFREQ)
    # SCIP's symmetry handling sees only the rows and the objective, not the handler's implicit
    # constraint (separability), so equal-weight points look interchangeable and symmetry-breaking
    # constraints cut off real optima (seen: rrspm-5d-n100, bound 6 above the optimum). Off.
    model.setParam("misc/usesymmetry", 0)
    # Measured on the issue-#3 suite (module docstring): SCIP's own primal heuristics (RENS and
    # other sub-MIPs, which cannot see the handler) cost seconds and found nothing the start
    # heuristics and the handler's separable sets had not; strong branching (relpscost) cost
    # half the time on an LP with thousands of cut rows. Pseudo-cost branching without strong
    # branching needed about as many nodes, far cheaper ones.
    model.setHeuristics(scip.SCIP_PARAMSETTING.OFF)
    model.setParam("branching/pscost/priority", 100000)
    # SCIP's Gomory, aggregation (c-MIR) and {0,1/2} separators on the covering rows: dense rows,
    # slower LPs, no fewer nodes (measured: n200-d10 4.5 -> 3.4 s, n100-d10 0.64 -> 0.29 s off)
    for sepa in ("gomory", "aggregation", "zerohalf"):
        model.setParam(f"separating/{sepa}/freq", -1)
    if time_limit is not None:
        model.setParam("limits/time", max(float(time_limit), 1e-2))
    if node_limit is not None:
        model.setParam("limits/nodes", int(node_limit))
    if objlimit is not None:
        model.setObjlimit(float(objlimit))
    start_accepted = False
    if start_keep is not None and all(start_keep[g] == (v == 0) for g, v in (fix or {}).items()):
        start = model.createSol()
        for g, v in enumerate(z):
            model.setSolVal(start, v, 0.0 if start_keep[g] else 1.0)
        start_accepted = bool(model.addSol(start))
    model.optimize()
    keeps = []
    if model.getNSols() > 0:
        best = model.getBestSol()
        keeps.append(np.array([model.getSolVal(best, v) for v in z]) < 0.5)
    keeps += [keep for _, keep in handler.best_keep]
    return {
        "raw": model.getStatus(),
        "nodes": int(model.getNNodes()),
        "dual": float(model.getDualbound()),
        "primal": float(model.getPrimalbound()),
        "seconds": float(model.getSolvingTime()),
        "keeps": keeps,
        "new_cores": handler.new_cores + handler.pending,
        "unverified": handler.unverified,
        "accepted_unverified": handler.accepted_unverified,
        "stats": dict(handler.stats),
        "start_accepted": start_accepted,
        "root_x": handler.root_x,
    }


def _check_threads(value: Any, name: str = "threads") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"backend 'scip-bc': {name} must be a positive integer; got {value!r}")
    return int(value)


#: parallel search (``workers`` > 1): regions per worker (2^p regions for the smallest p reaching it)
REGIONS_PER_WORKER = 4


def split_groups(root_x: np.ndarray, n_regions: int) -> list[int]:
    """The p groups to split the search on (2^p >= n_regions regions): the most fractional
    coordinates of the root LP point (ties: lower index)."""
    p = max(1, math.ceil(math.log2(max(n_regions, 2))))
    frac = root_x * (1.0 - root_x)
    order = np.argsort(-frac, kind="stable")
    return [int(g) for g in order[: min(p, root_x.size)]]


def _region_worker(X: np.ndarray, y: np.ndarray, W: np.ndarray, cores: list[tuple[int, ...]], fix: dict[int, int],
                   start_keep: np.ndarray, objlimit: float, deadline: float | None, options: dict[str, Any]) -> dict[str, Any]:
    """One region of the parallel search, in a worker process (rebuilds the groups and the separator).
    ``deadline`` is wall-clock time (``time.time()``, shared by the processes): a region that starts
    after it is not searched (status "notstarted", no bound of its own)."""
    time_limit = None if deadline is None else deadline - time.time()
    if time_limit is not None and time_limit <= 0.05:
        return {"raw": "notstarted", "nodes": 0, "dual": -math.inf, "primal": math.inf, "seconds": 0.0, "keeps": [],
                "new_cores": [], "unverified": 0, "accepted_unverified": 0, "stats": {}, "start_accepted": False,
                "root_x": None}
    import pyscipopt

    from oraclepriv.solvers.highs import import_highspy

    form = HalfspaceHittingSet(X, y)
    sep = Separator(import_highspy(), form.Xs, form.yg, form.groups.X)
    # the root's cores (thousands) enter the region's LP only when violated, like the handler's own
    out = run_branch_and_cut(pyscipopt, sep, W, form.yg, cores, start_keep=start_keep, time_limit=time_limit,
                             fix=fix, objlimit=objlimit, seed_rows_initial=False, **options)
    out["separation_lps"] = sep.lp_calls
    return out


def _parallel_branch_and_cut(pyscipopt, X, y, form: HalfspaceHittingSet, sep: Separator, W: np.ndarray, incumbent: float,
                             start_keep: np.ndarray, time_limit: float | None, workers: int,
                             options: dict[str, Any]) -> dict[str, Any]:
    """Branch-and-cut on ``workers`` processes: the root here, then the 2^p regions of the p most
    fractional root groups (each z_g fixed to 0 or 1), solved in parallel (joblib) with the root's
    cores as rows and the incumbent as objective limit. The regions partition the labelings, so
    the minimum of their proved bounds is a proved bound (a region with no labeling cheaper than
    the incumbent bounds it by the incumbent)."""
    from joblib import Parallel, delayed

    t0 = time.perf_counter()
    root = run_branch_and_cut(pyscipopt, sep, W, form.yg, list(form.cores), start_keep=start_keep,
                              time_limit=time_limit, node_limit=1, **options)
    form.add_cores(root["new_cores"])
    if root["raw"] in ("optimal", "gaplimit", "infeasible", "timelimit") or root["root_x"] is None:
        root["stats"]["regions"] = 0
        return root
    incumbent = min(incumbent, root["primal"])
    split = split_groups(root["root_x"], REGIONS_PER_WORKER * workers)
    # hardest first (joblib hands them out in order): the more groups a region fixes wrong (z = 1), the
    # fewer it forces correct and the larger its tree (n400-d10: the all-wrong region took 230 s of 774)
    regions = sorted((dict(zip(split, bits)) for bits in np.ndindex(*(2,) * len(split))),
                     key=lambda fix: -sum(fix.values()))
    # one wall-clock deadline for all regions: a region queued behind others gets what is left
    deadline = None if time_limit is None else time.time() + max(time_limit - (time.perf_counter() - t0), 1e-2)
    cores = list(form.cores)
    results = Parallel(n_jobs=workers, backend="loky", batch_size=1)(
        delayed(_region_worker)(X, y, W, cores, {g: int(v) for g, v in fix.items()}, start_keep, incumbent,
                                deadline, options)
        for fix in regions
    )
    finished = all(r["raw"] in ("optimal", "gaplimit", "infeasible") for r in results)
    # a region without any labeling cheaper than the incumbent is bounded by the incumbent; the root's
    # dual bound holds in every region (also one that timed out or never started)
    bounds = [incumbent if r["raw"] == "infeasible" else max(r["dual"], root["dual"]) for r in results]
    stats = dict(root["stats"])
    for r in results:
        for key, value in r["stats"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(stats.get(key), (int, float)):
                stats[key] = stats[key] + value
    stats.update({"regions": len(regions), "split_groups": split, "region_seconds": [r["seconds"] for r in results],
                  "region_nodes": [r["nodes"] for r in results], "region_status": [r["raw"] for r in results]})
    return {
        "raw": ("optimal" if finished else "timelimit"),
        "nodes": root["nodes"] + sum(r["nodes"] for r in results),
        "dual": float(min(bounds)),
        "primal": float(min([incumbent] + [r["primal"] for r in results if r["raw"] != "infeasible"])),
        "seconds": time.perf_counter() - t0,
        "keeps": root["keeps"] + [k for r in results for k in r["keeps"]],
        "new_cores": root["new_cores"] + [c for r in results for c in r["new_cores"]],
        "unverified": root["unverified"] + sum(r["unverified"] for r in results),
        "accepted_unverified": root["accepted_unverified"] + sum(r["accepted_unverified"] for r in results),
        "stats": stats,
        "start_accepted": root["start_accepted"],
        "root_x": root["root_x"],
    }


class ScipBcBackend(Backend):
    """Branch-and-cut halfspace oracle in SCIP with lazy, exactly verified core cuts (module docstring)."""

    name = "scip-bc"
    requires = ("pyscipopt",)
    classes = frozenset({"halfspace"})
    options = frozenset({"threads", "output_flag", "workers"})
    certificate = (
        "halfspaces: bound = SCIP's dual bound of the branch-and-cut over exactly verified non-separable "
        "cores (lazy cover cuts), a proved lower bound over all halfspaces (margin-free)"
    )

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        if time_limit is not None:
            try:
                ok = float(time_limit) > 0 and math.isfinite(float(time_limit))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(f"backend 'scip-bc': time_limit must be a positive number of seconds; got {time_limit!r}")
        self.threads = _check_threads(self.config.get("threads", 1))
        self.workers = _check_threads(self.config.get("workers", 1), "workers")
        flag = self.config.get("output_flag", False)
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"backend 'scip-bc': output_flag must be True or False; got {flag!r}")
        self.output_flag = bool(flag)
        self._pyscipopt = import_pyscipopt()
        _handler(self._pyscipopt)
        self._cache: tuple[str, HalfspaceHittingSet, Separator] | None = None

    # -- persistence: cores depend only on the points and reduced labels ---------------------
    def _hitting_set(self, X: np.ndarray, y: np.ndarray) -> tuple[HalfspaceHittingSet, Separator, bool]:
        fp = fingerprint("halfspace-hitting-set", X, y)
        if self._cache is not None and self._cache[0] == fp:
            return self._cache[1], self._cache[2], True
        from oraclepriv.solvers.highs import import_highspy  # the separation and polishing LPs run on HiGHS

        form = HalfspaceHittingSet(X, y)
        sep = Separator(import_highspy(), form.Xs, form.yg, form.groups.X)
        self._cache = (fp, form, sep)
        return form, sep, False

    @staticmethod
    def _polish(form: HalfspaceHittingSet, keep: np.ndarray) -> Halfspace | None:
        """Max-margin halfspace over the kept groups (None if the LP finds margin 0)."""
        from oraclepriv.solvers.highs import HighsModel, import_highspy

        lp = margin_lp(form.Xs, form.yg, keep, B=float(form.d + 1))
        run = HighsModel(import_highspy(), lp, threads=1).run(None)
        if run.status != "optimal" or run.x is None or run.x[-1] <= 1e-9:
            return None
        w, b = form.scaling.to_original(run.x[: form.d], run.x[form.d])
        if not (np.all(np.isfinite(w)) and math.isfinite(b)):
            return None
        return Halfspace(tuple(w), b)

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        t_start = time.perf_counter()
        deadline = None if self.time_limit is None else t_start + float(self.time_limit)
        X, y, w = problem.X, problem.y, problem.w
        d = problem.d
        total = float(w.sum())
        tol = 1e-9 * max(1.0, total)
        cands: list[tuple[float, str, Hypothesis]] = []

        def add(source: str, h: Hypothesis | None) -> None:
            if h is not None:
                cands.append((reduced_loss(h, X, y, w), source, h))

        add("constant-1", Halfspace(tuple([0.0] * d), 1.0))
        add("constant-0", Halfspace(tuple([0.0] * d), -1.0))
        if np.all(X == X[0]):  # one distinct point: only the two constant labelings exist
            loss, source, h = min(cands, key=lambda c: c[0])
            return BackendAnswer(h, bound=loss, status="optimal", nodes=0,
                                 details={"formulation": "constant (all points identical)", "hypothesis_source": source})
        for i, h in enumerate(heuristic_halfspaces(X, y, w)[2:]):
            add(f"heuristic-{i}", h)

        form, sep, reused = self._hitting_set(X, y)
        W = form.groups.group_weights(w)
        yg = form.yg
        abs_gap, q = gap_rule(w)
        cores_before = len(form.cores)
        lp_before = sep.lp_calls

        # primal heuristic: repair the all-points set, extend it and the heuristics' correct sets
        keep_all, cores, bad = MipBackend._repair(sep, np.ones(form.groups.size, dtype=bool), W, yg)
        form.add_cores(cores)
        starts = [("repair-all", MipBackend._add_back(sep, keep_all, W))]
        for loss, source, h in sorted(cands, key=lambda c: c[0])[:3]:
            if source.startswith("heuristic"):
                starts.append((f"{source}-addback", MipBackend._add_back(sep, h.predict(form.groups.X) == yg, W)))
        for source, keep in starts:
            add(source, self._polish(form, keep))
        heuristic_seconds = time.perf_counter() - t_start

        best_loss, _, best_h = min(cands, key=lambda c: c[0])
        start_keep = best_h.predict(form.groups.X) == yg
        seeded = len(form.cores)
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 1e-2)
        options = {"abs_gap": float(abs_gap), "threads": self.threads, "output_flag": self.output_flag}
        if self.workers > 1:
            run = _parallel_branch_and_cut(self._pyscipopt, X, y, form, sep, W, best_loss, start_keep, remaining,
                                           self.workers, options)
        else:
            run = run_branch_and_cut(self._pyscipopt, sep, W, yg, list(form.cores), start_keep=start_keep,
                                     time_limit=remaining, **options)
        raw, nodes, dual = run["raw"], run["nodes"], run["dual"]
        if raw in ("optimal", "gaplimit"):
            status = "optimal"
        elif raw == "timelimit":
            status = "time_limit"
        else:
            status = "error"
        # the final hypothesis: SCIP's best solution and the separable sets the handler met
        for k, keep in enumerate(run["keeps"]):
            add(f"scip-{k}", self._polish(form, keep))
        form.add_cores(run["new_cores"])

        conflict = form.groups.conflict_bound(w)
        if not math.isfinite(dual) or status == "error":
            bound = max(conflict, 0.0)
        else:
            bound = max(lattice_round_up(dual, q, total), conflict, 0.0)
        loss, source, hypothesis = min(cands, key=lambda c: c[0])
        invalid_bound = loss < bound - tol  # a real halfspace beats the "proved" bound: never report it
        if invalid_bound:  # fall back to the bounds proved without SCIP
            bound = max(conflict, 0.0)
            status = "optimal" if loss <= bound + tol else "error"
        if status == "optimal" and loss > bound + tol:
            status = "error"  # SCIP finished, but no real halfspace attains its bound (module docstring)
        details: dict[str, Any] = form.details()
        details.update(
            {
                "method": "branch-and-cut",
                "certificate": self.certificate,
                "scip_status": raw,
                "scip_dual_bound": dual,
                "scip_bound_contradicted": bool(invalid_bound),
                "scip_primal_bound": run["primal"],
                "scip_seconds": run["seconds"],
                "heuristic_seconds": heuristic_seconds,
                "start_accepted": run["start_accepted"],
                "cores_total": len(form.cores),
                "cores_seeded": seeded,
                "cores_new": len(form.cores) - cores_before,
                "cores_unverified": run["unverified"] + bad,
                "separation_lps": sep.lp_calls - lp_before,
                "accepted_unverified": run["accepted_unverified"],
                "model_reused": reused,
                "weight_lattice": q,
                "mip_abs_gap": abs_gap,
                "conflict_bound": conflict,
                "hypothesis_source": source,
                "hypothesis_reduced_loss": loss,
                "candidates": {src: value for value, src, _ in cands},
                **run["stats"],
            }
        )
        return BackendAnswer(hypothesis, bound=float(bound), status=status, nodes=nodes, details=details)
