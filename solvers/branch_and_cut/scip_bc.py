"""``scip-bc``: exact, margin-free halfspace ERM by branch-and-cut in SCIP (PySCIPOpt) with lazy core cuts.

Problem: the reduced weighted ERM of the oracle protocol (Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data", Def. 4; labels flipped so
every weight is >= 0): min over closed halfspaces h of  sum_i w_i 1[h(x_i) != y_i].

Method: the maximum-feasible-subsystem branch-and-cut of Pfetsch with the combinatorial Benders
(cover) cuts of Codato and Fischetti, run inside one SCIP search tree: binary "misclassified"
variables per group of identical points, no big-M rows, and a constraint handler that cuts off
every labeling no halfspace realises with a cover cut over an exactly verified non-separable
core. ``method="cuts"`` of :mod:`oraclepriv.solvers.mip.mipbackend` uses the same cuts but re-solves a
hitting-set master from scratch after each round (HiGHS has no lazy-constraint callback).

Layout (one job per module):

* this module: the backend (options, start heuristics, the final hypothesis, the certificate);
* :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_model`: the SCIP model and one branch-and-cut run;
* :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_handler`: the constraint handler (enforcement, check,
  separation of fractional points, primal rounding, locks);
* :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_parallel`: the parallel search over regions (``workers`` > 1).

What ``certified`` means: SCIP's dual bound is a lower bound over *all* halfspaces, because every
row of its model is a cover cut over a core verified in exact arithmetic and SCIP is never told
"infeasible" without such a core; the protocol re-scores the returned (w, b) and certifies when
it meets the bound. The argument is spelled out in ``docs/theory/cover-cut-model.md``; the
design (cuts, rounding, parallel search, SCIP parameters) and its measurements are in
``docs/solvers/scip-bc.md``.

Deadline (``docs/deadlines.md``): the start heuristics may use at most
:data:`~oraclepriv.solvers.mip.mipbackend.HEURISTIC_SHARE` of the time left; SCIP gets the rest minus
the time one polishing LP took (kept back to turn its best labeling into a hypothesis); the
constraint handler honours the same deadline inside its callbacks. Ctrl-C raises
KeyboardInterrupt (:mod:`oraclepriv.solvers.branch_and_cut.scip_bc_model`).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem, Status
from oraclepriv.solvers.branch_and_cut import scip_bc_handler
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.branch_and_cut.scip_bc_decompose import decompose_branch_and_cut
from oraclepriv.solvers.branch_and_cut.scip_bc_model import (
    TESTED_PYSCIPOPT,
    ScipOptions,
    import_pyscipopt,
    not_started,
    run_branch_and_cut,
)
from oraclepriv.solvers.branch_and_cut.scip_bc_parallel import parallel_branch_and_cut, split_groups
from oraclepriv.solvers.branch_and_cut.scip_bc_split import (
    PART_SHARE,
    PART_SIZE,
    STRATEGIES,
    PartResult,
    choose_strategy,
    heavy_first_priorities,
    random_partition,
    solve_part,
    split_groups_by_weight,
)
from oraclepriv.solvers.combinatorial.exact_halfspace import exact_polish
from oraclepriv.solvers.combinatorial.local_search import LOCAL_SEARCH_SECONDS, search_from_start
from oraclepriv.solvers.mip import benders
from oraclepriv.solvers.mip.milp import (
    HalfspaceHittingSet,
    HalfspaceMarginMilp,
    gap_rule,
    heuristic_halfspaces,
    lattice_round_up,
    margin_lp,
    reduced_loss,
)
from oraclepriv.solvers.mip.mipbackend import HEURISTIC_SHARE, HittingSetCache
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

from oraclepriv.hypotheses import Halfspace, Hypothesis

__all__ = ["ScipBcBackend", "import_pyscipopt", "TESTED_PYSCIPOPT", "run_branch_and_cut", "split_groups"]

log = logging.getLogger(__name__)


def __getattr__(name: str):
    # the handler class is built when pyscipopt is first imported; read it where it lives
    if name == "CoreHandler":
        return scip_bc_handler.CoreHandler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ScipBcBackend(Backend):
    """Exact halfspace oracle: SCIP branch-and-cut with lazy, exactly verified core cuts.

    Solves the reduced problem (weights >= 0) over all closed halfspaces ``1[w.x + b >= 0]``,
    margin-free. The bound is SCIP's dual bound over cover cuts that every halfspace satisfies, so
    a certified answer is optimal over the whole class (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Wall-clock seconds for the whole call (start heuristics, search, polishing); None for no
        limit. At the limit the answer has status ``"time_limit"`` and the bound proved so far.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        threads : int, default 1
            SCIP's LP threads (``lp/threads``).
        workers : int, default 1
            Processes for the parallel search of :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_parallel`; 1 runs
            one sequential search tree.
        output_flag : bool, default False
            Print SCIP's log.
        strategy : {"auto", "plain", "priority", "split", "heavy-first", "decompose", "partition"}, default "auto"
            How to use a few heavy groups among many light ones (the private learners' calls:
            :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_split`): "plain" ignores the weights' spread;
            "priority" branches on the heavy groups first, heaviest first; "split" solves the light
            and the heavy groups apart first and adds their proved optima as rows (with their cores and
            hypotheses as seeds and warm starts); "heavy-first" does both; "decompose" searches the
            heavy groups' error patterns best-first (:mod:`oraclepriv.solvers.branch_and_cut.scip_bc_decompose`);
            "partition" cuts the groups at random into parts of about ``part_size``, solves each apart
            and adds their proved optima as rows (a bound without the cover LP's cap W/(d + 2), for
            noisy instances no search closes; never chosen by "auto");
            "auto" chooses from the share of the weight on the heavy groups
            (:func:`~oraclepriv.solvers.branch_and_cut.scip_bc_split.choose_strategy`: "plain", "priority" or
            "heavy-first"), and keeps "plain" with ``workers`` > 1, whose parallel search runs only
            then. Every strategy is exact.
        part_size : int, default 110
            Groups per part for ``strategy="partition"`` (at least 2); fewer than two parts means no
            partition (a plain search).
        local_search : float, default 5.0
            Seconds (at most; and at most a tenth of a time-limited call's time left) of iterated local
            search over hyperplanes from the best start halfspace, when its loss is above the cover LP's
            cap W/(d + 2) (:func:`~oraclepriv.solvers.combinatorial.local_search.search_from_start`); 0 turns it off.
        random_seed : int or None, default None
            In [0, 2^31 - 1]: shifts every random seed of SCIP and its LP solver
            (``randomization/randomseedshift``) and seeds the local search and ``strategy="partition"``'s
            parts. None keeps SCIP's defaults and seed 0 for the others. Exact either way; the seed
            changes the search path, hence the time and the incumbents a time-limited call ends with.

    Attributes
    ----------
    threads, workers : int
        The validated options.
    output_flag : bool
        The validated option.
    strategy : str
        The validated option ("auto" is resolved per call, ``details["strategy_used"]``).
    certificate : str
        What ``certified`` means for this backend's answers.

    Raises
    ------
    ValueError
        An unknown option or an invalid value, named in the message.
    oraclepriv.solvers.base.SolverNotInstalledError
        PySCIPOpt cannot be imported.

    See Also
    --------
    oraclepriv.solvers.mip.mipbackend.MipBackend : the same cuts in a re-solved hitting-set master.

    Notes
    -----
    Cores depend only on the points and the reduced labels, so a call on the same points with new
    weights (RRSPM's pattern) seeds the cores found before (``details["model_reused"]``). The
    hypothesis returned is a real (w, b): the max-margin LP over the correctly classified groups
    of the best labeling found; the protocol re-scores it. If SCIP finishes but no real halfspace
    attains its bound, or a found halfspace beats it, the answer is not certified (status
    ``"error"``, or the bound falls back to what is proved without SCIP).

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).
    .. [2] M. E. Pfetsch, "Branch-and-cut for the maximum feasible subsystem problem", SIAM J.
       Optim. 19(1), 2008.
    .. [3] G. Codato, M. Fischetti, "Combinatorial Benders' cuts for mixed-integer linear
       programming", Oper. Res. 54(4), 2006.
    .. [4] S. Maher, M. Miltenberger, J. P. Pedroso, D. Rehfeldt, R. Schwarz, F. Serrano,
       "PySCIPOpt: Mathematical Programming in Python with the SCIP Optimization Suite", ICMS 2016;
       SCIP documentation (constraint handlers, parameters): https://www.scipopt.org

    Examples
    --------
    XOR with weights 1, 2, 3, 4: no halfspace classifies all four points, and the cheapest
    mistake is the point of weight 1.

    >>> import numpy as np
    >>> from oraclepriv import make_oracle
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([0, 1, 1, 0])
    >>> res = make_oracle("halfspace", backend="scip-bc").solve(X, y, [1.0, 2.0, 3.0, 4.0])
    >>> res.certified, res.objective, res.bound
    (True, 1.0, 1.0)
    """

    name = "scip-bc"
    requires = ("pyscipopt",)
    classes = frozenset({"halfspace"})
    options = frozenset({"threads", "output_flag", "workers", "strategy", "part_size", "local_search", "random_seed"})
    certificate = (
        "halfspaces: bound = SCIP's dual bound of the branch-and-cut over exactly verified non-separable "
        "cores (lazy cover cuts), a proved lower bound over all halfspaces (margin-free)"
    )

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.threads = self.int_option("threads", 1, 1)
        self.workers = self.int_option("workers", 1, 1)
        self.output_flag = self.flag_option("output_flag", False)
        self.strategy = self.choice_option("strategy", "auto", STRATEGIES)
        self.part_size = self.int_option("part_size", PART_SIZE, 2)
        self.local_search = self.seconds_option("local_search", LOCAL_SEARCH_SECONDS)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self._parts: ScipBcBackend | None = None  # a plain backend for the parts of a split (its own cores)
        self._pyscipopt = import_pyscipopt()
        scip_bc_handler.handler_class(self._pyscipopt)
        self._cache = HittingSetCache()

    def __getstate__(self) -> dict[str, Any]:
        """A pickle or copy keeps the options only: the core pool and separator of the last point set (built from
        the private points a call saw) and the solver module stay behind."""
        state = dict(self.__dict__)
        state["_parts"] = None
        state["_pyscipopt"] = None
        state["_cache"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pyscipopt = import_pyscipopt()
        scip_bc_handler.handler_class(self._pyscipopt)
        self._cache = HittingSetCache()

    # -- persistence: cores depend only on the points and reduced labels ---------------------
    def _hitting_set(self, X: np.ndarray, y: np.ndarray) -> tuple[HalfspaceHittingSet, Separator, bool]:
        return self._cache.get(X, y)

    @staticmethod
    def _polish(
        form: HalfspaceHittingSet | HalfspaceMarginMilp, keep: np.ndarray, seconds: float | None = None
    ) -> Halfspace | None:
        """Max-margin halfspace over the kept groups of a halfspace model (this backend's hitting set, or the
        big-M model of the Gurobi peer) (None if the LP finds margin 0, or runs out of its ``seconds``)."""
        from oraclepriv.solvers.mip.highs import HighsModel, import_highspy

        lp = margin_lp(form.Xs, form.yg, keep, B=float(form.d + 1))
        run = HighsModel(import_highspy(), lp, threads=1).run(seconds)
        if run.status != "optimal" or run.x is None:
            return None
        return exact_polish(form, keep, run.x)

    def _solve_parts(
        self, form: HalfspaceHittingSet, W: np.ndarray, masks: list[np.ndarray], deadline: Deadline, *, even: bool
    ) -> list[PartResult]:
        """The parts (boolean masks over the groups) solved apart by a plain search (:func:`solve_part`),
        within :data:`PART_SHARE` of the time left: one after the other on that share, or (``even``) each
        on an equal share of what is left; an empty part is skipped."""
        if self._parts is None:
            self._parts = ScipBcBackend(threads=self.threads, strategy="plain", random_seed=self.random_seed)
        share = deadline.share(PART_SHARE)
        masks = [part for part in masks if part.any()]
        out = []
        for k, part in enumerate(masks):
            if share.expired():
                break
            limit = share.share(1.0 / (len(masks) - k)) if even else share
            out.append(solve_part(self._parts, self._parts._cache, form.groups.X, form.yg, W, part, limit))
        return out

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        try:
            return self._solve(problem, deadline)
        except BaseException:  # an interrupt may leave the kept separator half-updated: drop it
            self._cache.clear()
            raise

    def _solve(self, problem: ReducedProblem, deadline: Deadline) -> BackendAnswer:
        t_start = time.perf_counter()
        X, y, w = problem.X, problem.y, problem.w
        d = problem.d
        total = float(w.sum())
        tol = 1e-9 * max(1.0, total)
        cands: list[tuple[float, str, Halfspace]] = []
        trace = IncumbentTrace.for_deadline(deadline)

        def add(source: str, h: Halfspace | None) -> None:
            if h is not None:
                cands.append((reduced_loss(h, X, y, w), source, h))
                trace.note(cands[-1][0])

        add("constant-1", Halfspace(tuple([0.0] * d), 1.0))
        add("constant-0", Halfspace(tuple([0.0] * d), -1.0))
        if np.all(X == X[0]):  # one distinct point: only the two constant labelings exist
            loss, source, h = min(cands, key=lambda c: c[0])
            return BackendAnswer(
                h,
                bound=loss,
                status="optimal",
                nodes=0,
                details={
                    "formulation": "constant (all points identical)",
                    "hypothesis_source": source,
                    "incumbents": trace.to_list(),
                },
            )
        for i, h in enumerate(heuristic_halfspaces(X, y, w)[2:]):
            add(f"heuristic-{i}", h)

        form, sep, reused = self._hitting_set(X, y)
        W = form.groups.group_weights(w)
        yg = form.yg
        abs_gap, q = gap_rule(w)
        cores_before = len(form.cores)
        lp_before = sep.lp_calls
        # the parallel search (workers > 1) is its own way to split the labelings: "auto" keeps it
        strategy = "plain" if self.workers > 1 and self.strategy == "auto" else choose_strategy(self.strategy, W)
        heavy = split_groups_by_weight(W) if strategy not in ("plain", "partition") else np.zeros(W.size, dtype=bool)
        priorities = heavy_first_priorities(W, heavy) if strategy in ("priority", "heavy-first") else None
        if strategy in ("split", "heavy-first", "decompose"):
            parts = self._solve_parts(form, W, [~heavy, heavy], deadline, even=False)
        elif strategy == "partition":
            parts = self._solve_parts(
                form, W, random_partition(W.size, self.part_size, self.random_seed or 0), deadline, even=True
            )
        else:
            parts = []
        for part in parts:
            form.add_cores(part.cores)
        bound_rows = tuple((p.groups, p.bound) for p in parts if p.bound > 0) if strategy != "decompose" else ()

        # primal heuristic: repair the all-points set, extend it and the heuristics' correct sets,
        # within a share of the time left (the search that proves the bound needs the rest)
        heuristic = deadline.share(HEURISTIC_SHARE)
        keep_all, cores, bad = benders.repair(sep, np.ones(form.groups.size, dtype=bool), W, yg, heuristic)
        form.add_cores(cores)
        starts = [("repair-all", benders.add_back(sep, keep_all, W, heuristic))]
        seeds: list[tuple[str, Hypothesis]] = [
            (source, h) for _loss, source, h in sorted(cands, key=lambda c: c[0])[:3]
        ]
        tags = [f"part{k}" for k in range(len(parts))] if strategy == "partition" else ["light", "heavy"]
        seeds += [(f"{tag}-part", p.hypothesis) for p, tag in zip(parts, tags) if p.hypothesis is not None]
        for source, seed in seeds:  # warm starts: the heuristics' and the parts' correct sets, extended
            if source.startswith(("heuristic", "light", "heavy", "part")) and not heuristic.expired():
                keep_h = seed.predict(form.groups.X) == yg
                starts.append((f"{source}-addback", benders.add_back(sep, keep_h, W, heuristic)))
        polish_seconds = 0.0  # the longest polishing LP: kept back from SCIP for the final one
        for source, keep in starts:
            t0 = time.perf_counter()
            add(source, self._polish(form, keep, deadline.solver_seconds()))
            polish_seconds = max(polish_seconds, time.perf_counter() - t0)
        loss, _, h = min(cands, key=lambda c: c[0])
        add("local-search", search_from_start(X, y, w, h, loss, deadline, self.local_search, self.random_seed or 0))
        heuristic_seconds = time.perf_counter() - t_start

        best_loss, _, best_h = min(cands, key=lambda c: c[0])
        start_keep = best_h.predict(form.groups.X) == yg
        seeded = len(form.cores)
        options: ScipOptions = {
            "abs_gap": float(abs_gap),
            "threads": self.threads,
            "output_flag": self.output_flag,
            "random_seed": self.random_seed,
        }
        if deadline.expired():
            deadline.note("branch-and-cut (not started)")
            run = not_started()
        else:
            remaining = deadline.solver_seconds(reserve=min(polish_seconds, 0.25 * (deadline.remaining() or 0.0)))
            if strategy == "decompose" and heavy.any() and not heavy.all():
                light = parts[0].bound if parts and not heavy[parts[0].groups[0]] else 0.0
                run = decompose_branch_and_cut(
                    self._pyscipopt,
                    form,
                    sep,
                    W,
                    heavy,
                    light,
                    best_loss,
                    start_keep,
                    time_limit=remaining,
                    deadline=deadline,
                    trace=trace,
                    **options,
                )
            elif self.workers > 1 and strategy == "plain":
                run = parallel_branch_and_cut(
                    self._pyscipopt,
                    X,
                    y,
                    form,
                    sep,
                    W,
                    best_loss,
                    start_keep,
                    remaining,
                    self.workers,
                    options,
                    deadline=deadline,
                    trace=trace,
                )
            else:
                run = run_branch_and_cut(
                    self._pyscipopt,
                    sep,
                    W,
                    yg,
                    list(form.cores),
                    start_keep=start_keep,
                    time_limit=remaining,
                    deadline=deadline,
                    priorities=priorities,
                    bound_rows=bound_rows,
                    # the parts' cores (thousands) enter the LP only when violated
                    seed_rows_initial=not parts,
                    trace=trace,
                    **options,
                )
        raw, nodes, dual = run["raw"], run["nodes"], run["dual"]
        status: Status
        if raw in ("optimal", "gaplimit"):
            status = "optimal"
        elif raw in ("timelimit", "notstarted"):
            status = "time_limit"
        else:
            status = "error"
        # the final hypothesis: SCIP's best solution (polished even just past the deadline: the time
        # was kept back for it) and, while time remains, the separable sets the handler met
        for k, keep in enumerate(run["keeps"]):
            if k > 0 and deadline.expired():
                deadline.note("final polishing")
                break
            add(f"scip-{k}", self._polish(form, keep, deadline.solver_seconds(minimum=max(polish_seconds, 0.05))))
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
            status = "error"  # SCIP finished, but no real halfspace attains its bound
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
                "polish_seconds": polish_seconds,
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
                "strategy_used": strategy,
                "heavy_groups": int(heavy.sum()),
                "parts": [
                    {"groups": int(p.groups.size), "bound": p.bound, "certified": p.certified, "seconds": p.seconds}
                    for p in parts
                ],
                "hypothesis_source": source,
                "hypothesis_reduced_loss": loss,
                "candidates": {src: value for value, src, _ in cands},
                "incumbents": trace.to_list(),
                **run["stats"],
            }
        )
        return BackendAnswer(hypothesis, bound=float(bound), status=status, nodes=nodes, details=details)
