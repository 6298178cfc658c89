"""``direction-bb``: exact weighted 0-1 halfspace ERM by branch-and-bound over the halfspace's normal.

Where the cover-cut models of ``scip-bc`` are weak — noisy data whose optimum exceeds n/(d + 2), the
cap of their LP bound (``docs/solvers/scip-bc.md``, section 7) — this backend searches the space the
class is parameterised by instead of the space of labelings. A halfspace is {u : v . u >= t} in
whitened coordinates (:mod:`oraclepriv.solvers.combinatorial.direction_bounds`); scaling (v, t) by a positive
number changes nothing, so every halfspace with v != 0 has its normal on one of the 2d faces of the
cube [-1, 1]^d, and the two constants are the offsets t = -inf, +inf of any normal.

The search keeps boxes of normals on the faces, starting from the 2d faces themselves. For a box it
computes an interval lower bound on the loss of every halfspace with its normal in the box
(:func:`~oraclepriv.solvers.combinatorial.direction_bounds.region_lower_bounds`) and the exact best offset of its
centre (an incumbent, realised by a real halfspace). Boxes whose bound reaches the incumbent are
discarded; the others are bisected along their widest side, the lowest bounds first (best-first, in
vectorised batches). The proved bound is the smallest bound of the boxes left (or the incumbent,
when none is left), so a time-limited search still reports a bound over the whole class.

Exactness. The interval bounds are proved for the real numbers (rounding errors bounded and added
to the intervals), so the bound is a bound over all closed halfspaces. The search converges where
the optimum's normal separates the points strictly; around normals of hyperplanes through d + 1 or
more points (degenerate data: grids, duplicated features) a box's bound may stay below its true
minimum however small the box, and when the points span fewer than d dimensions whole curves of
normals are degenerate. So the problem goes to the ``fallback`` backend for the time left (by
default ``enumerate``, combinatorial and exact on degenerate data, for d <= 3, and ``scip-bc``
above) when the points are flat (up front), when the first box becomes narrower than
``MIN_WIDTH``, in d <= 3 after a budget of boxes comparable with enumerate's work, or beyond
``max_boxes`` open boxes; the answer keeps the larger of the two proved bounds and the better of
the two halfspaces (without a fallback, narrow boxes are kept open and never split).

The design (a search over the normals with interval bounds) is ours; what it buys against the
cover-cut models is measured in ``docs/solvers/direction-bb.md``.

References
----------
.. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
   Learning with Public Data" (the weighted ERM oracle, Def. 4).
.. [2] R. E. Moore, R. B. Kearfott, M. J. Cloud, "Introduction to Interval Analysis", SIAM, 2009
   (interval bounds in branch-and-bound).
"""

from __future__ import annotations

import logging
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
    Status,
    UnsupportedProblemError,
)
from oraclepriv.solvers.combinatorial import direction_compiled
from oraclepriv.solvers.combinatorial.direction_bounds import (
    MAX_CELLS,
    WhitenedGroups,
    Window,
    best_offsets,
    region_lower_bounds,
)
from oraclepriv.solvers.combinatorial.direction_pool import OpenBoxes
from oraclepriv.solvers.combinatorial.line_search import improve_by_line_search
from oraclepriv.solvers.combinatorial.local_search import to_original
from oraclepriv.solvers.combine import combine_answers
from oraclepriv.solvers.mip.milp import gap_rule, heuristic_halfspaces, lattice_round_up, reduced_loss
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.heap import keep_freed_memory
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

from oraclepriv.hypotheses import Halfspace

__all__ = ["DirectionBbBackend", "FALLBACKS"]

log = logging.getLogger(__name__)

#: boxes narrower than this (in the cube's coordinates, side 2) are not split further
MIN_WIDTH = 1e-7
#: in d <= 3 the search hands over to enumerate after max(BUDGET_MIN, BUDGET_FACTOR * G^(d-1))
#: boxes (degenerate data can keep it from converging without any box becoming narrow)
BUDGET_MIN = 5_000
BUDGET_FACTOR = 20
#: the search stops (and the fallback takes over) beyond this many open boxes
MAX_BOXES = 2_000_000
#: boxes bisected per step by default: up to d = 6 the open boxes are few and a step's arrays that stay
#: small are faster per box (they stay in cache); above, millions of boxes
#: are open and larger steps spread the cost of ranking them (docs/solvers/direction-bb.md, section 5)
SMALL_D_BATCH = 256
LARGE_D_BATCH = 1024
#: above this many open boxes the batch is taken from the highest bounds (those closest to being
#: discarded) instead of the lowest, so that memory stays bounded
CROWDED = 500_000
#: the centres offered as incumbents per step: those of the children with the lowest bounds (a
#: thirty-second of them, at least 16); a best offset costs about as much as a bound, and offering
#: fewer centres left more time for bounds (docs/solvers/direction-bb.md, section 5)
CENTRES_FRACTION = 32
CENTRES_MIN = 16
#: backends the search may hand a problem to when it cannot finish
FALLBACKS = ("auto", "enumerate", "scip-bc", "none")


@dataclass
class _Incumbent:
    loss: float
    hypothesis: Halfspace
    source: str


class DirectionBbBackend(Backend):
    """Exact halfspace ERM by branch-and-bound over boxes of normals with interval bounds.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for one call (the protocol's deadline when called through an oracle).
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        fallback : {"auto", "enumerate", "scip-bc", "none"}, default "auto"
            The backend that gets the time left when the search cannot finish (degenerate normals, or
            more than ``max_boxes`` open boxes); ``"none"``, or a fallback whose solver is not
            installed, returns the search's own bound; ``"auto"`` is ``enumerate`` for d <= 3 and
            ``scip-bc`` above.
        batch : int or None, default None
            Boxes bisected per vectorised step (fewer when there are many points); None:
            ``SMALL_D_BATCH`` up to d = 6 and ``LARGE_D_BATCH`` above.
        max_boxes : int, default 2_000_000
            Open boxes beyond which the search stops.
        random_seed : int or None, default None
            Seeds the random directions of the incumbents' line searches (None: seed 0) and is passed to a
            ``scip-bc`` fallback. Exact either way; the search is deterministic for a given seed.
        crossing_pairs : bool, default True
            Lift each box's bound by a matching of crossing pairs
            (:mod:`~oraclepriv.solvers.combinatorial.direction_bounds`), from d = 6 on, when the compiled
            kernel is ready (:mod:`~oraclepriv.solvers.combinatorial.direction_compiled`) and the pairs' larger
            summation slack stays below a quarter of the gap rule's absolute gap; ``details["crossing_pairs"]``
            says whether and why. Exact either way.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv import make_oracle
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> y[:5] = 1 - y[:5]
    >>> res = make_oracle("halfspace", backend="direction-bb").solve(X, y)
    >>> res.certified, res.objective <= 5
    (True, True)
    """

    name = "direction-bb"
    classes = frozenset({"halfspace"})
    options = frozenset({"fallback", "batch", "max_boxes", "random_seed", "crossing_pairs"})
    certificate = (
        "proved over all closed halfspaces: interval bounds (rounding errors included) over boxes of "
        "normals covering every direction, each box either discarded by its bound or still open"
    )

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.fallback = self.choice_option("fallback", "auto", FALLBACKS)
        self.batch = self.int_option("batch", None, 1)
        self.max_boxes = self.int_option("max_boxes", MAX_BOXES, 1)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self.crossing_pairs = self.flag_option("crossing_pairs", True)

    def check(self, hypothesis_class: str, n: int, d: int) -> None:
        super().check(hypothesis_class, n, d)
        if d < 1:
            raise UnsupportedProblemError(f"backend 'direction-bb' needs d >= 1; got d={d}")

    # -- the search -------------------------------------------------------------------------
    def solve(self, problem: ReducedProblem, start: Halfspace | None = None) -> BackendAnswer:
        """Search ``problem``; ``start``, a halfspace found elsewhere (e.g. by another backend), is
        re-scored and kept as the first incumbent if it is the best start."""
        deadline = self.deadline(problem)
        t_start = time.perf_counter()
        keep_freed_memory()  # the kernels' temporaries would otherwise page-fault (oraclepriv.solvers.runtime.heap)
        X, y, w = problem.X, problem.y, problem.w
        d = problem.d
        groups = WhitenedGroups.build(X, y, w)
        abs_gap, lattice = gap_rule(w)
        pairs_choice = "no crossing pairs (crossing_pairs=False)"
        if self.crossing_pairs:
            choice = direction_compiled.choose(d, deadline)
            pairs_choice = choice.reason
            if choice.kernels is not None and lattice is None and 4.0 * groups.summation_slack() > abs_gap / 4.0:
                pairs_choice = "no crossing pairs (their summation slack would exceed a quarter of the absolute gap)"
            elif choice.kernels is not None:
                groups = groups.with_crossing_pairs(choice.kernels)  # its slack: 4 times the slack without pairs
        slack = groups.summation_slack()

        trace = IncumbentTrace.for_deadline(deadline)
        best = self._start(X, y, w)
        if start is not None and (loss := reduced_loss(start, X, y, w)) < best.loss:
            best = _Incumbent(loss, start, "given start")
        trace.note(best.loss)
        # the 2d faces: coordinate k fixed to +-1, the others in [-1, 1]
        lower = np.repeat(-np.ones((1, d)), 2 * d, axis=0)
        upper = np.repeat(np.ones((1, d)), 2 * d, axis=0)
        for k in range(d):
            for s, row in ((1.0, 2 * k), (-1.0, 2 * k + 1)):
                lower[row, k] = upper[row, k] = s
        # the line searches' random directions: the same answer every run with the same seed
        rng = np.random.default_rng(self.random_seed or 0)
        best = self._improve(best, groups, X, y, w, (lower + upper) / 2, rng)
        trace.note(best.loss)
        bounds, windows = region_lower_bounds(groups, lower, upper, threshold=best.loss - abs_gap + slack)
        bounds -= slack
        stuck_bounds = np.empty(0)
        fallback = self._fallback_for(d)
        # enumerate's cost, O(G^(d-1) log G) in d <= 3, sets how long the search may try before handing over
        budget = (
            max(BUDGET_MIN, BUDGET_FACTOR * groups.size ** (d - 1)) if fallback is not None and d <= 3 else math.inf
        )
        batch = self.batch if self.batch is not None else (SMALL_D_BATCH if d <= 6 else LARGE_D_BATCH)
        per_step = max(16, min(batch, MAX_CELLS // max(1, 4 * groups.size)))
        pool = OpenBoxes(lower, upper, bounds, windows)
        boxes = len(bounds)
        steps = 0
        stop = "finished"
        if groups.flat and fallback is not None:
            stop = "flat"
        while stop == "finished":
            cutoff = best.loss - abs_gap
            count = pool.count(cutoff)
            if not count:
                break
            if boxes > budget:
                stop = "box_budget"
                break
            if deadline.expired():
                deadline.note("direction-bb search")
                stop = "time_limit"
                break
            if count > self.max_boxes:
                stop = "box_limit"
                break
            steps += 1
            slots = pool.select(per_step, cutoff, highest=count > min(CROWDED, self.max_boxes // 2))
            lo, hi, parent_bounds, window = pool.take(slots)
            narrow = (hi - lo).max(axis=1) < MIN_WIDTH
            if narrow.any() and fallback is not None:
                # degenerate normals: the search may not converge here; the fallback takes over now,
                # with every box still open (this batch included) counted in the bound
                stop = "degenerate"
                break
            pool.remove(slots)
            threshold = cutoff + slack
            if narrow.any():  # no fallback: kept aside with their bounds, never split
                narrow_bounds, _ = region_lower_bounds(groups, lo[narrow], hi[narrow], window.take(narrow), threshold)
                stuck_bounds = np.concatenate([stuck_bounds, narrow_bounds - slack])
                lo, hi, window = lo[~narrow], hi[~narrow], window.take(~narrow)
                parent_bounds = parent_bounds[~narrow]
            width = hi - lo
            if not len(lo):
                continue
            rows = np.arange(len(lo))
            axis = width.argmax(axis=1)
            middle = (lo[rows, axis] + hi[rows, axis]) / 2
            hi_left, lo_right = hi.copy(), lo.copy()
            hi_left[rows, axis] = middle
            lo_right[rows, axis] = middle
            child_lower = np.concatenate([lo, lo_right])
            child_upper = np.concatenate([hi_left, hi])
            child_bounds, child_windows = region_lower_bounds(
                groups, child_lower, child_upper, Window.join(window, window), threshold
            )
            child_bounds -= slack
            promising = np.argsort(child_bounds)[: max(CENTRES_MIN, len(child_bounds) // CENTRES_FRACTION)]
            best = self._improve(best, groups, X, y, w, (child_lower[promising] + child_upper[promising]) / 2, rng)
            trace.note(best.loss)
            boxes += len(child_bounds)
            pool.push(child_lower, child_upper, child_bounds, child_windows, best.loss - abs_gap)

        cutoff = best.loss - abs_gap
        stuck_open = stuck_bounds < cutoff
        open_bounds = np.concatenate([pool.open_bounds(cutoff), stuck_bounds[stuck_open]])
        proved = min(float(open_bounds.min()) if open_bounds.size else math.inf, cutoff)
        proved = max(lattice_round_up(proved, lattice, groups.total), 0.0)
        if stop == "finished" and stuck_open.any():
            stop = "degenerate"
        details: dict[str, Any] = {
            "method": "branch-and-bound over normals (interval bounds)",
            "groups": groups.size,
            "boxes": int(boxes),
            "open_boxes": int(open_bounds.size),
            "degenerate_boxes": int(stuck_open.sum()),
            "search_stop": stop,
            "search_seconds": time.perf_counter() - t_start,
            "crossing_pairs": pairs_choice,
            "hypothesis_source": best.source,
            "search_bound": proved,
            "incumbents": trace.to_list(),
        }
        if groups.pairs is None:
            direction_compiled.record_search(details["search_seconds"])
        status: Status = (
            "optimal" if best.loss <= proved + abs_gap else ("time_limit" if stop == "time_limit" else "feasible")
        )
        if status != "optimal" and stop in ("degenerate", "box_limit", "box_budget", "flat") and fallback is not None:
            return self._fall_back(fallback, problem, deadline, best, proved, details, steps)
        return BackendAnswer(best.hypothesis, bound=proved, status=status, nodes=int(boxes), details=details)

    # -- incumbents ---------------------------------------------------------------------------
    @staticmethod
    def _start(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> _Incumbent:
        """The best of the constants, the best stump and the least-squares direction (re-scored)."""
        best: _Incumbent | None = None
        for i, h in enumerate(heuristic_halfspaces(X, y, w)):
            loss = reduced_loss(h, X, y, w)
            if best is None or loss < best.loss:
                best = _Incumbent(loss, h, f"heuristic-{i}")
        assert best is not None
        return best

    @staticmethod
    def _improve(
        best: _Incumbent,
        groups: WhitenedGroups,
        X: np.ndarray,
        y: np.ndarray,
        w: np.ndarray,
        normals: np.ndarray,
        rng: np.random.Generator,
    ) -> _Incumbent:
        """Offer the best offsets of ``normals``; a better one is turned into a halfspace of the
        original points and re-scored there (the re-scored loss is what the incumbent keeps), and
        improved further by line searches (:mod:`oraclepriv.solvers.combinatorial.line_search`; ``rng`` draws their
        random directions)."""
        offsets = best_offsets(groups, normals)
        order = np.argsort(offsets.loss, kind="stable")
        for k in order[:4]:
            if not offsets.loss[k] < best.loss - groups.summation_slack():
                break
            h = to_original(groups, normals[k], float(offsets.threshold[k]))
            loss = reduced_loss(h, X, y, w)
            if loss < best.loss:
                best = _Incumbent(loss, h, "search")
                if math.isfinite(offsets.threshold[k]):
                    best = _polished(best, groups, X, y, w, normals[k], float(offsets.threshold[k]), rng)
            if loss <= offsets.loss[k] + groups.summation_slack():
                break  # the float halfspace realised the labeling: the others are worse
        return best

    def _fallback_for(self, d: int) -> type[Backend] | None:
        """The fallback backend's class for dimension d, or None (``"none"``, not installed, or
        ``enumerate`` beyond d = 3)."""
        name = ("enumerate" if d <= 3 else "scip-bc") if self.fallback == "auto" else self.fallback
        if name == "none" or (name == "enumerate" and d > 3):
            return None
        if name == "enumerate":
            from oraclepriv.solvers.combinatorial.enumerate import EnumerateBackend

            return EnumerateBackend
        from oraclepriv.solvers.branch_and_cut.scip_bc import ScipBcBackend

        return ScipBcBackend if ScipBcBackend.is_installed() else None

    def _fall_back(
        self,
        fallback: type[Backend],
        problem: ReducedProblem,
        deadline: Deadline,
        best: _Incumbent,
        proved: float,
        details: dict[str, Any],
        steps: int,
    ) -> BackendAnswer:
        """Hand the problem to the fallback backend for the time left; keep the larger proved bound
        and the better halfspace (both bounds hold over the whole class)."""
        log.debug("direction-bb: %s after %d steps; falling back to %s", details["search_stop"], steps, fallback.name)
        seeded = {"random_seed": self.random_seed} if "random_seed" in fallback.options else {}
        answer = fallback(time_limit=None, **seeded).solve(problem.with_deadline(deadline))
        details = {
            **details,
            "fallback": fallback.name,
            "fallback_status": answer.status,
            "fallback_bound": answer.bound,
        }
        own = BackendAnswer(best.hypothesis, bound=proved, status="feasible")
        combined = combine_answers(problem, own, answer, details)
        if combined.details["hypothesis_from"] == "second":
            combined.details["hypothesis_source"] = f"fallback {fallback.name}"
        return combined


def _polished(
    best: _Incumbent,
    groups: WhitenedGroups,
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    normal: np.ndarray,
    threshold: float,
    rng: np.random.Generator,
) -> _Incumbent:
    """``best`` or the line-search improvement of the halfspace (normal, threshold), whichever
    re-scores lower on the original points."""
    v, t, float_loss = improve_by_line_search(groups.U, groups.w_pos, groups.w_neg, normal, threshold, rng)
    if not float_loss < best.loss - groups.summation_slack():
        return best
    h = to_original(groups, v, t)
    loss = reduced_loss(h, X, y, w)
    return _Incumbent(loss, h, "search, line search") if loss < best.loss else best
