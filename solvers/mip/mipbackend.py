"""The solver-independent driver shared by the MIP backends (``highs``, ``scip``, ``pyomo``).

A concrete backend supplies one thing: a model adapter (:class:`MipModel`) built from a
:class:`~oraclepriv.solvers.mip.milp.MilpArrays` with ``set_costs(cost)`` and
``run(time_limit, abs_gap=..., feasibility_tolerance=..., start=...) -> MipRun``.
This module does the rest, identically for every solver:

* one persistent model per formulation, reused when the points are the same (X and reduced
  labels, compared by a BLAKE2 fingerprint): a new call only changes the costs;
* gaps that prove integer optimality (relative 0; absolute and bound rounding from
  :func:`~oraclepriv.solvers.mip.gaps.gap_rule` / :func:`~oraclepriv.solvers.mip.gaps.lattice_round_up`);
* warm starts from cheap heuristics (halfspaces, :mod:`oraclepriv.solvers.mip.heuristics`), and the best
  re-scored candidate returned;
* the two certification modes for halfspaces (``certify``):

  - ``method="auto"`` picks ``"cuts"`` when the weights lie on a power-of-two lattice (e.g. unit
    weights) and ``"bigm"`` otherwise (real signed weights, as RRSPM's first call has), where the
    re-solved master needs many rounds and the relaxation is faster (figures in
    ``docs/solvers/scip-bc.md``). The default stays ``"cuts"``, exact on all data: bigm's
    relaxation is not tight on degenerate data (collinear points), where it stays honestly
    uncertified.
  - ``"margin-free"`` with ``method="cuts"`` (the default): combinatorial Benders / implicit
    hitting set (Codato & Fischetti, Oper. Res. 2006; Pfetsch, SIAM J. Optim. 2008;
    :mod:`oraclepriv.solvers.mip.benders`). The master :class:`~oraclepriv.solvers.mip.milp.HalfspaceHittingSet` ("misclassify at least one point of every
    non-separable core") is solved by the backend's MIP solver; its optimal labeling is checked
    by a Farkas LP (:class:`~oraclepriv.solvers.branch_and_cut.cores.Separator`), and every non-separable kept set yields
    new cores (each verified in exact rational arithmetic on the original data before it becomes
    a row) until the master's optimum is realisable. ``bound`` is the master's dual bound, a
    proved lower bound over *all* halfspaces; ``certified`` means optimal over all halfspaces.
    A primal heuristic (warm-start candidates, repaired by dropping one point per core, then
    greedily re-adding points while the kept set stays separable) provides the incumbent that
    every master run starts from. Cores depend only on the points and reduced labels, so they
    are kept across calls with new weights.
  - ``"margin-free"`` with ``method="bigm"``: ``bound = max(conflict bound, min(relaxed dual bound,
    cost(all 1), cost(all 0)))`` from :class:`~oraclepriv.solvers.mip.milp.HalfspaceRelaxedMilp`, a lower bound
    over *all* halfspaces, so ``certified`` means optimal over all halfspaces. (The relaxation
    already contains both constant labelings at b = +-R; the ``min`` is kept as a guard.) The
    relaxed solution is turned into a real halfspace by the max-margin LP
    :func:`~oraclepriv.solvers.mip.milp.margin_lp`; if the result does not attain the bound (degenerate data or
    a time limit), the gamma-margin model is searched too for a better hypothesis, and the
    answer stays honestly uncertified if the gap remains.
  - ``"margin"``: only the gamma-margin model; ``bound`` is its dual bound, proved over
    halfspaces whose correctly classified points have margin >= gamma at ||w||_inf <= 1 on the
    [-1, 1]-scaled data and *not* over all halfspaces; ``certified`` means optimal over that class.

* one deadline (``docs/deadlines.md``): with a time limit, the start heuristics may use at most
  :data:`HEURISTIC_SHARE` of the time left, model building stops at the deadline
  (:class:`~oraclepriv.solvers.runtime.deadline.DeadlineExceeded`, answered with what is proved so far),
  every solver run gets the time that remains, and a run is interrupted by Ctrl-C through the
  solver's own cancellation (the adapters, :func:`~oraclepriv.solvers.runtime.interrupts.call_interruptibly`);
* the big-M trap (a MIP solver may answer "optimal" with a solution that violates big-M rows at its
  default tolerances; HiGHS does): hypotheses are rebuilt from (w, b) or from an LP over the solution's labeling,
  never from z values, and the protocol re-scores them, so a violated row can only show up as
  objective > bound (uncertified), never as a false certificate.

The models, why a core cut is valid for every halfspace, and how the bound becomes a certificate:
``docs/theory/cover-cut-model.md``.
"""

from __future__ import annotations

import math
import textwrap
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem, Status, fingerprint
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.combinatorial.exact_halfspace import exact_polish
from oraclepriv.solvers.mip.adapter import MipModel, MipRun
from oraclepriv.solvers.mip.benders import CutsLoop, HittingSetCache, note_cheapest_separable
from oraclepriv.solvers.mip.gaps import gap_rule, lattice_round_up
from oraclepriv.solvers.mip.heuristics import HEURISTIC_SHARE, Candidates, constant_costs, heuristic_halfspaces
from oraclepriv.solvers.mip.milp import (
    DEFAULT_GAMMA,
    GAMMA_RANGE,
    GAMMA_WHY,
    HalfspaceHittingSet,
    HalfspaceMarginMilp,
    HalfspaceRelaxedMilp,
    MilpArrays,
    StumpMilp,
    margin_lp,
)
from oraclepriv.solvers.runtime.deadline import Deadline, DeadlineExceeded

from oraclepriv.hypotheses import Halfspace, Stump, Threshold

__all__ = [
    "MipBackend",
    "MipModel",
    "MipRun",
    "HittingSetCache",
    "note_cheapest_separable",
    "CERTIFY_MODES",
    "METHODS",
    "HEURISTIC_SHARE",
    "fingerprint",
]

T = TypeVar("T")

CERTIFY_MODES = ("margin-free", "margin")
METHODS = ("auto", "cuts", "bigm")

#: the numpydoc entries of the options every MIP backend takes; :func:`document_mip_options` puts them in a docstring
MIP_OPTION_ENTRIES = """\
certify : {"margin-free", "margin"}, default "margin-free"
    Halfspaces: ``"margin-free"`` proves the bound over all halfspaces; ``"margin"`` solves only
    the gamma-margin model, whose bound holds over a restricted class (:meth:`restriction`), so
    its answers are never ``certified``.
method : {"cuts", "bigm", "auto"}, default "cuts"
    Halfspaces with ``certify="margin-free"``: ``"cuts"``, the hitting-set master over exactly
    verified cores (combinatorial Benders); ``"bigm"``, the margin-free big-M relaxation with
    ``||w||_1 = 1``; ``"auto"``, cuts for weights on a power-of-two lattice and bigm otherwise.
gamma : float, default 1e-3
    The margin of the gamma-margin model on [-1, 1]-scaled data, in [1e-6, 0.5].
warm_start : bool, default True
    Halfspaces: start from the best of the constants, the best stump and the least-squares
    direction.
threads : int or None, default None
    Solver threads (None: the solver's default).
random_seed : int or None, default None
    Solver random seed (None: the solver's default).
output_flag : bool, default False
    Print the solver's log."""


def document_mip_options(cls: type[T]) -> type[T]:
    """Class decorator: the line ``{mip_options}`` of the class docstring becomes :data:`MIP_OPTION_ENTRIES`, at that
    line's indentation (the four MIP backends document the same options once).

    Raises
    ------
    ValueError
        When the docstring has no ``{mip_options}`` line.
    """
    doc = cls.__doc__ or ""
    line = next((text for text in doc.splitlines() if text.strip() == "{mip_options}"), None)
    if line is None:
        raise ValueError(f"{cls.__name__}'s docstring has no {{mip_options}} line")
    indent = line[: len(line) - len(line.lstrip())]
    cls.__doc__ = doc.replace(line, textwrap.indent(MIP_OPTION_ENTRIES, indent))
    return cls


@document_mip_options
class MipBackend(Backend):
    """Exact weighted 0-1 ERM by mixed-integer programming for thresholds, stumps and halfspaces.

    The solver-independent part of the ``highs``, ``scip`` and ``pyomo`` backends (module
    docstring); a subclass provides :meth:`new_model`. Thresholds and stumps use the exact staircase
    model (:class:`~oraclepriv.solvers.mip.milp.StumpMilp`); halfspaces one of the models selected by
    ``certify`` and ``method``.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    {mip_options}

    Attributes
    ----------
    certify, method, gamma, warm_start, threads, random_seed, output_flag
        The validated options.
    certificate : str
        What ``certified`` means for the chosen ``certify``/``method``.

    See Also
    --------
    oraclepriv.solvers.branch_and_cut.scip_bc.ScipBcBackend : the cuts inside one SCIP branch-and-cut tree.

    References
    ----------
    .. [1] G. Codato, M. Fischetti, "Combinatorial Benders' cuts for mixed-integer linear
       programming", Oper. Res. 54(4), 2006.
    .. [2] M. E. Pfetsch, "Branch-and-cut for the maximum feasible subsystem problem", SIAM J.
       Optim. 19(1), 2008.
    .. [3] ``docs/theory/cover-cut-model.md`` (the models and their certificates).
    """

    classes = frozenset({"threshold", "stump", "halfspace"})
    options = frozenset({"certify", "method", "gamma", "warm_start", "threads", "random_seed", "output_flag"})

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.certify = self.choice_option("certify", "margin-free", CERTIFY_MODES)
        self.gamma = self.number_option("gamma", DEFAULT_GAMMA, *GAMMA_RANGE, GAMMA_WHY)
        self.method = self.choice_option("method", "cuts", METHODS)
        self.threads = self.int_option("threads", None, 1)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self.warm_start = self.flag_option("warm_start", True)
        self.output_flag = self.flag_option("output_flag", False)
        self.certificate = self._describe_certificate()
        self._models: dict[str, tuple[str, Any, Any]] = {}  # kind -> (fingerprint, formulation, model)
        self._hitting = HittingSetCache()

    def restriction(self, hypothesis_class: str) -> str | None:
        """certify="margin" bounds halfspaces only over the gamma-margin class; everything else is exact."""
        if self.certify == "margin" and hypothesis_class == "halfspace":
            return (
                f"halfspaces whose correctly classified points have margin >= {self.gamma:g} at "
                "||w||_inf <= 1 on the [-1,1]-scaled data"
            )
        return None

    def _describe_certificate(self) -> str:
        """What ``certified`` means for this configuration (certify mode, method, margin)."""
        gamma = self.gamma
        if self.certify == "margin-free" and self.method == "auto":
            return (
                "thresholds/stumps: exact staircase MIP, bound = its proved dual bound; halfspaces "
                "(certify='margin-free', method='auto'): a proved lower bound over all halfspaces, from the "
                "hitting-set master over exactly verified non-separable cores when the weights lie on a "
                "power-of-two lattice (method='cuts'), else from the margin-free relaxation with ||w||_1 = 1 "
                "(method='bigm'), whichever measured faster for that weight type"
            )
        elif self.certify == "margin-free" and self.method == "cuts":
            return (
                "thresholds/stumps: exact staircase MIP, bound = its proved dual bound; halfspaces "
                "(certify='margin-free', method='cuts'): bound = dual bound of the hitting-set master over "
                "exactly verified non-separable cores, a proved lower bound over all halfspaces"
            )
        elif self.certify == "margin-free":
            return (
                "thresholds/stumps: exact staircase MIP, bound = its proved dual bound; halfspaces "
                "(certify='margin-free'): bound = min(dual bound of the margin-free relaxation with "
                "||w||_1 = 1, constant labelings), a proved lower bound over all halfspaces"
            )
        else:
            return (
                "thresholds/stumps: exact staircase MIP; halfspaces (certify='margin'): bound is the "
                f"dual bound of the gamma={gamma:g} margin model, proved only over halfspaces whose correct "
                "points have margin >= gamma at ||w||_inf <= 1 on [-1,1]-scaled data, not over all halfspaces"
            )

    # -- what a concrete backend provides --------------------------------------------------------

    @abstractmethod
    def new_model(self, milp: MilpArrays, deadline: Deadline | None = None) -> MipModel:
        """A solver model of ``milp`` (the :class:`MipModel` adapter); a build that takes time checks
        ``deadline`` as it goes (:meth:`Deadline.check <oraclepriv.solvers.runtime.deadline.Deadline.check>`)."""

    # -- persistence ---------------------------------------------------------------------------

    def _model(
        self, kind: str, X: np.ndarray, y: np.ndarray, build: Callable[[], Any], deadline: Deadline | None = None
    ) -> tuple[Any, Any, bool]:
        """The cached (formulation, model) for these points, or a fresh one; and a reused flag. A build
        stopped by the deadline raises DeadlineExceeded and caches nothing."""
        fp = fingerprint(kind, X, y, (self.gamma,))
        cached = self._models.get(kind)
        if cached is not None and cached[0] == fp:
            return cached[1], cached[2], True
        formulation = build()
        model = self.new_model(formulation.milp, deadline)
        self._models[kind] = (fp, formulation, model)
        return formulation, model, False

    # -- solve ---------------------------------------------------------------------------------

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        try:
            if problem.hypothesis_class in ("threshold", "stump"):
                return self._solve_stump(problem, deadline)
            return self._solve_halfspace(problem, deadline)
        except BaseException:  # an interrupt (or a failure) may leave a kept model half-updated: drop them
            self._models.clear()
            self._hitting.clear()
            raise

    def _solve_stump(self, problem: ReducedProblem, deadline: Deadline) -> BackendAnswer:
        X, y, w = problem.X, problem.y, problem.w
        cls = problem.hypothesis_class
        try:
            form, model, reused = self._model(f"staircase-{cls}", X, y, lambda: StumpMilp(X, cls), deadline)
        except DeadlineExceeded:  # no model in time: an honest constant and the trivial bound (w >= 0)
            constant = Threshold(math.inf) if cls == "threshold" else Stump(0, math.inf, 1)
            return BackendAnswer(constant, bound=0.0, status="time_limit", nodes=0, details={"model_built": False})
        cost, offset = form.costs(y, w)
        model.set_costs(cost)
        abs_gap, q = gap_rule(w)
        run = model.run(deadline.solver_seconds(), abs_gap=abs_gap)
        bound = (
            lattice_round_up(run.dual_bound + offset, q, float(w.sum())) if math.isfinite(run.dual_bound) else -math.inf
        )
        bound = max(bound, 0.0)  # weights are >= 0
        if run.x is not None:
            hypothesis = form.decode(run.x)
        else:  # no incumbent (time limit before any solution): an honest, uncertified constant
            hypothesis = Threshold(math.inf) if cls == "threshold" else Stump(0, math.inf, 1)
        details = form.details()
        details.update(self._run_details("mip", run, q, abs_gap, reused))
        return BackendAnswer(hypothesis, bound=bound, status=run.status, nodes=run.nodes, details=details)

    def _solve_halfspace(self, problem: ReducedProblem, deadline: Deadline) -> BackendAnswer:
        X, y, w = problem.X, problem.y, problem.w
        d = problem.d
        total = float(w.sum())
        tol = 1e-9 * max(1.0, total)  # the protocol's certification tolerance
        abs_gap, q = gap_rule(w)
        c_ones, c_zeros = constant_costs(y, w)
        cands = Candidates(X, y, w)
        cands.add("constant-1", Halfspace(tuple([0.0] * d), 1.0))
        cands.add("constant-0", Halfspace(tuple([0.0] * d), -1.0))
        if np.all(X == X[0]):  # one distinct point: only the two constant labelings exist
            _, source, h = cands.best()
            return BackendAnswer(
                h,
                bound=min(c_ones, c_zeros),
                status="optimal",
                nodes=0,
                details={"formulation": "constant (all points identical)", "hypothesis_source": source},
            )
        if self.warm_start:
            for i, h in enumerate(heuristic_halfspaces(X, y, w)[2:]):
                cands.add(f"heuristic-{i}", h)
        details: dict[str, Any] = {"certify": self.certify, "warm_start": self.warm_start}

        def search_margin(tag: str) -> tuple[MipRun, HalfspaceMarginMilp]:
            form, model, reused = self._model(
                "halfspace-margin", X, y, lambda: HalfspaceMarginMilp(X, y, self.gamma), deadline
            )
            model.set_costs(form.costs(y, w)[0])
            start = form.encode(cands.best()[2]) if self.warm_start else None
            run = model.run(
                deadline.solver_seconds(),
                abs_gap=abs_gap,
                feasibility_tolerance=form.feasibility_tolerance(),
                start=start,
            )
            if run.x is not None:
                cands.add(f"{tag}-mip", form.decode(run.x))
                cands.add(f"{tag}-polished", self._polish(form, form.correct_mask(run.x), deadline))
            details[f"{tag}_model"] = form.details()
            details.update(self._run_details(tag, run, q, abs_gap, reused))
            return run, form

        method = self.method
        if method == "auto":  # measured: cuts wins on lattice (e.g. unit) weights, bigm on real signed weights
            method = "cuts" if q is not None else "bigm"
        details["method_used"] = method
        if self.certify == "margin-free" and method == "cuts":
            return self._solve_halfspace_cuts(problem, deadline, cands, details, search_margin)
        bound, nodes = 0.0, 0  # what is proved if the deadline stops the build (w >= 0)
        status: Status = "time_limit"
        try:
            if self.certify == "margin":
                run, form = search_margin("margin")
                nodes = run.nodes
                conflict = form.groups.conflict_bound(w)
                bound = max(lattice_round_up(run.dual_bound, q, total), conflict, 0.0)
                details["conflict_bound"] = conflict
                status = run.status
            else:
                form, model, reused = self._model(
                    "halfspace-relaxed", X, y, lambda: HalfspaceRelaxedMilp(X, y), deadline
                )
                model.set_costs(form.costs(y, w)[0])
                start = None
                if self.warm_start:
                    for _, _, h in sorted(cands.items, key=lambda item: item[0]):
                        start = form.encode(h)
                        if start is not None:
                            break
                run = model.run(deadline.solver_seconds(), abs_gap=abs_gap, start=start)
                nodes = run.nodes
                details["relaxed_model"] = form.details()
                details.update(self._run_details("relaxed", run, q, abs_gap, reused))
                relaxed_bound = lattice_round_up(run.dual_bound, q, total)
                conflict = form.groups.conflict_bound(w)
                bound = max(conflict, min(relaxed_bound, c_ones, c_zeros), 0.0)
                details.update(
                    {"relaxed_bound": relaxed_bound, "conflict_bound": conflict, "constant_costs": [c_ones, c_zeros]}
                )
                status = run.status
                if run.x is not None:
                    cands.add("relaxed-mip", form.decode(run.x))
                    polished = self._polish(form, form.correct_mask(run.x), deadline)
                    cands.add("relaxed-polished", polished)
                    details["relaxed_polish_ok"] = polished is not None
                if cands.best()[0] > bound + tol and not deadline.expired():
                    # degenerate data or a time limit: search the margin model for a better hypothesis
                    margin_run, _ = search_margin("margin")
                    nodes += margin_run.nodes
                    if margin_run.status != "optimal" and status == "optimal":
                        status = margin_run.status
        except DeadlineExceeded:
            status = "time_limit"
        loss, source, hypothesis = cands.best()
        details["hypothesis_source"] = source
        details["hypothesis_reduced_loss"] = loss
        details["candidates"] = {src: value for value, src, _ in cands.items}
        return BackendAnswer(hypothesis, bound=float(bound), status=status, nodes=nodes, details=details)

    # -- combinatorial Benders (method="cuts") -----------------------------------------------------

    def _hitting_set(self, X: np.ndarray, y: np.ndarray) -> tuple[HalfspaceHittingSet, Separator, bool]:
        """The cached (master formulation with its core pool, separator) for these points."""
        return self._hitting.get(X, y)

    def _solve_halfspace_cuts(
        self,
        problem: ReducedProblem,
        deadline: Deadline,
        cands: Candidates,
        details: dict[str, Any],
        search_margin: Callable[[str], Any],
    ) -> BackendAnswer:
        """``method="cuts"``: combinatorial Benders over the cached hitting-set master
        (:class:`~oraclepriv.solvers.mip.benders.CutsLoop`); when it stalls with a gap, a last look at the
        gamma-margin model (``search_margin``) for a better hypothesis (the bound stays the master's)."""
        X, y, w = problem.X, problem.y, problem.w
        total = float(w.sum())
        tol = 1e-9 * max(1.0, total)
        abs_gap, q = gap_rule(w)
        form, sep, reused = self._hitting_set(X, y)
        cores_before = len(form.cores)
        lp_before = sep.lp_calls
        loop = CutsLoop(
            form,
            sep,
            form.groups.group_weights(w),
            cands,
            self.new_model,
            self._polish,
            deadline,
            deadline.share(HEURISTIC_SHARE),
            abs_gap,
            q,
            total,
            tol,
        )
        loop.start(self.warm_start)
        try:
            loop.run()
            if loop.stalled is not None:
                details["cuts_stalled"] = loop.stalled
                if cands.best()[0] > loop.bound + tol and not deadline.expired():
                    search_margin("margin")
        except DeadlineExceeded:  # a model build stopped at the deadline: the bound proved so far stands
            loop.status = "time_limit"
        loss, source, hypothesis = cands.best()
        conflict = form.groups.conflict_bound(w)
        bound = max(loop.bound, conflict, 0.0) if math.isfinite(loop.bound) else max(conflict, 0.0)
        status = loop.status
        if status == "feasible" and loss <= bound + tol:  # a late candidate closed the gap
            status = "optimal"
        details["cuts_model"] = form.details()
        details.update(
            {
                "method": "cuts",
                "cuts_rounds": loop.rounds,
                "cores_total": len(form.cores),
                "cores_new": len(form.cores) - cores_before,
                "cores_unverified": loop.unverified,
                "separation_lps": sep.lp_calls - lp_before,
                "master_seconds_total": loop.master_seconds,
                "cuts_model_reused": reused,
                "weight_lattice": q,
                "mip_abs_gap": abs_gap,
                "hypothesis_source": source,
                "hypothesis_reduced_loss": loss,
                "candidates": {src: value for value, src, _ in cands.items},
            }
        )
        if loop.last_run is not None:
            details.update(self._run_details("master", loop.last_run, q, abs_gap, reused))
        return BackendAnswer(hypothesis, bound=float(bound), status=status, nodes=loop.nodes, details=details)

    def _polish(self, form, correct: np.ndarray, deadline: Deadline | None = None) -> Halfspace | None:
        """Max-margin LP over the groups a MIP solution classifies correctly (None if margin 0, or if
        the deadline leaves it no time)."""
        lp = margin_lp(form.Xs, form.yg, correct, B=float(form.d + 1))
        try:
            run = self.new_model(lp, deadline).run(None if deadline is None else deadline.solver_seconds())
        except DeadlineExceeded:  # no time to build the LP: no candidate
            return None
        if run.status != "optimal" or run.x is None:
            return None
        return exact_polish(form, correct, run.x)

    @staticmethod
    def _run_details(tag: str, run: MipRun, q: float | None, abs_gap: float, reused: bool) -> dict[str, Any]:
        return {
            f"{tag}_status": run.raw_status,
            f"{tag}_dual_bound": run.dual_bound,
            f"{tag}_primal": run.primal,
            f"{tag}_mip_gap": run.gap,
            f"{tag}_nodes": run.nodes,
            f"{tag}_seconds": run.seconds,
            f"{tag}_start_accepted": run.start_accepted,
            f"{tag}_model_reused": reused,
            "weight_lattice": q,
            "mip_abs_gap": abs_gap,
        }
