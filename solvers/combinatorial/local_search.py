"""Iterated local search over hyperplanes: a primal heuristic for noisy instances in higher dimension.

The cover-cut searches (``scip-bc``, ``gurobi-bc``) find good halfspaces late where the cover LP is
weak, i.e. where the best loss is above W / (d + 2) (``docs/solvers/scip-bc.md``, section 7). There a
local search in the space of hyperplanes does better: from a start halfspace, perturb its (normal,
offset) at random, improve it by exact line searches (:func:`~oraclepriv.solvers.combinatorial.line_search.improve_by_line_search`),
and keep the result when it is no worse (sideways moves let the search cross plateaus of equal loss).
This is iterated local search (Lourenco, Martin, Stuetzle, "Iterated local search", in *Handbook of
Metaheuristics*, 2003) with the line searches as the local step; what it buys is measured in
``docs/solvers/scip-bc.md``, section 3.

The search works on the whitened groups of :class:`~oraclepriv.solvers.combinatorial.direction_bounds.WhitenedGroups`
(u = A (x - mu)), where random perturbations are isotropic for the data, and compares halfspaces by
their float loss there; the halfspace it returns is mapped back to x and re-scored by the caller, like
every candidate. It proves nothing: a heuristic for the primal side only.
"""

from __future__ import annotations

import numpy as np
from oraclepriv.solvers.combinatorial.direction_bounds import WhitenedGroups
from oraclepriv.solvers.combinatorial.line_search import improve_by_line_search
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv.hypotheses import Halfspace

__all__ = ["iterated_line_search", "to_original", "to_whitened"]

#: perturbation sizes, relative to the largest coordinate of (normal, offset); one is drawn per step
PERTURBATION_SCALES = (0.02, 0.05, 0.1, 0.2)
#: steps without a strictly better halfspace after which a chain ends (and the next one starts)
STALL_STEPS = 300


def to_whitened(groups: WhitenedGroups, h: Halfspace) -> tuple[np.ndarray, float]:
    """(normal v, offset t) of ``h`` = {x : w . x + b >= 0} in whitened coordinates: {u : v . u >= t},
    scaled to |v|_inf = 1 (or |t| = 1 for a constant)."""
    w = np.asarray(h.w, dtype=np.float64)
    v = np.linalg.solve(groups.A.T, w)  # w = A^T v
    t = -(float(w @ groups.mu) + float(h.b))
    scale = float(np.abs(v).max()) or abs(t) or 1.0
    return v / scale, t / scale


def to_original(groups: WhitenedGroups, normal: np.ndarray, threshold: float) -> Halfspace:
    """{u : v . u >= t} with u = A (x - mu) as a halfspace of x: w = A^T v, b = -(w . mu + t)."""
    d = groups.d
    if threshold == -np.inf:
        return Halfspace(tuple([0.0] * d), 1.0)
    if threshold == np.inf:
        return Halfspace(tuple([0.0] * d), -1.0)
    w = groups.A.T @ normal
    return Halfspace(tuple(float(v) for v in w), float(-(w @ groups.mu + threshold)))


def _chain(
    groups: WhitenedGroups, v: np.ndarray, t: float, deadline: Deadline, max_steps: int, rng: np.random.Generator
) -> tuple[np.ndarray, float, float, int]:
    """One chain of the search from (v, t): (normal, offset, float loss, steps taken)."""
    v, t, best = improve_by_line_search(groups.U, groups.w_pos, groups.w_neg, v, t, rng)
    steps = stall = 0
    while steps < max_steps and stall < STALL_STEPS and not deadline.expired():
        steps += 1
        size = float(rng.choice(PERTURBATION_SCALES)) * max(float(np.abs(v).max()), abs(t), 1e-12)
        v2 = v + size * rng.standard_normal(v.size)
        t2 = t + size * float(rng.standard_normal())
        v3, t3, loss = improve_by_line_search(groups.U, groups.w_pos, groups.w_neg, v2, t2, rng)
        stall = 0 if loss < best - 1e-9 * max(1.0, abs(best)) else stall + 1
        if loss <= best:  # sideways moves cross plateaus of equal loss
            v, t, best = v3, t3, loss
    return v, t, best, steps


def iterated_line_search(
    groups: WhitenedGroups,
    start: Halfspace,
    deadline: Deadline,
    *,
    max_steps: int,
    seed: int = 0,
) -> tuple[Halfspace, int]:
    """The best halfspace found from ``start`` within ``max_steps`` perturbation steps in all or the
    ``deadline``, and the number of steps taken. A chain that makes :data:`STALL_STEPS` steps without a
    strict improvement ends, and the next starts again from ``start`` with fresh random numbers (the
    chains' results vary much more than one long chain gains; ``docs/solvers/scip-bc.md``, section 3).
    Deterministic for a given ``seed`` and number of steps."""
    v0, t0 = to_whitened(groups, start)
    best: tuple[float, np.ndarray, float] | None = None
    steps = chain = 0
    while steps < max_steps and not deadline.expired():
        v, t, loss, taken = _chain(groups, v0, t0, deadline, max_steps - steps, np.random.default_rng((seed, chain)))
        steps, chain = steps + taken, chain + 1
        if best is None or loss < best[0]:
            best = (loss, v, t)
        if taken == 0:
            break
    if best is None:
        return start, 0
    return to_original(groups, best[1], best[2]), steps


#: the default of the branch-and-cut backends' ``local_search`` option: at most this many seconds
LOCAL_SEARCH_SECONDS = 5.0
#: the local search runs for at most this share of the time a time-limited call has left
LOCAL_SEARCH_SHARE = 0.1
#: ... and at most this many perturbation steps in all
LOCAL_SEARCH_STEPS = 5000
#: ... and only on instances of at least this many groups (distinct labelled points): on smaller ones
#: the exact search is quick and the local search's cost would dominate
LOCAL_SEARCH_MIN_GROUPS = 100


def search_from_start(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    start: Halfspace,
    loss: float,
    deadline: Deadline,
    seconds: float,
    seed: int = 0,
    *,
    whatever_the_cap: bool = False,
) -> Halfspace | None:
    """The branch-and-cut backends' use of the search: from their best start halfspace (reduced loss
    ``loss``), for at most ``seconds`` (0: never) and :data:`LOCAL_SEARCH_SHARE` of the time left, when
    the instance is noisy beyond the cover LP's reach (``loss`` above W / (d + 2), the most that LP's bound
    can prove for points in general position; ``whatever_the_cap``: at any loss, for calls whose heavy weights
    the LP cannot use, :func:`~oraclepriv.solvers.portfolio.heavily_weighted`), has at least
    :data:`LOCAL_SEARCH_MIN_GROUPS` groups and its points span all d dimensions. ``seed`` seeds the chains
    (:func:`iterated_line_search`). None when it does not run; else its halfspace, for the caller to re-score."""
    d = X.shape[1]
    if seconds <= 0 or (loss <= float(w.sum()) / (d + 2) and not whatever_the_cap):
        return None
    groups = WhitenedGroups.build(X, y, w)
    if groups.flat or len(groups.U) < LOCAL_SEARCH_MIN_GROUPS:
        return None
    budget = Deadline(seconds, parent=deadline.share(LOCAL_SEARCH_SHARE))
    h, _ = iterated_line_search(groups, start, budget, max_steps=LOCAL_SEARCH_STEPS, seed=seed)
    return h
