"""Decomposition over the labelings of the heavy groups (``scip-bc`` with ``strategy="decompose"``).

The private call of RRSPM (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private
Learning with Public Data", Algorithm 4) has a few heavy groups H (the public points, weights
|Lap(2m/eps)|) among many light ones (the private points). Every halfspace h has an error pattern
p = e(h)|_H on the heavy groups, and its loss splits as

    L(h) = c_H(p) + L_light(h),   c_H(p) = sum_{g in H} W_g p_g,   L_light(h) >= B_light,

with B_light a proved lower bound on the ERM over the light groups alone (the non-private ERM on
the private data, :func:`oraclepriv.solvers.branch_and_cut.scip_bc_split.solve_part`). So the patterns can be
searched best-first by c_H, and every pattern with c_H(p) + B_light >= U (the incumbent) is pruned
without looking at the private data at all.

The patterns are enumerated exactly by Lawler's partitioning (E. L. Lawler, "A procedure for
computing the K best solutions to discrete optimization problems and its application to the
shortest path problem", Management Sci. 18(7), 1972): a node fixes some heavy groups correct (IN)
and some wrong (OUT); its cheapest pattern is the ERM over H alone under those fixings (a small
``scip-bc`` search on the m heavy points, whose handler admits only patterns whose correct set is
linearly separable, checked with exactly verified cores: :mod:`oraclepriv.solvers.branch_and_cut.cores`). Taking
that pattern p* out of the node leaves children that fix the free groups one by one to p*'s value
and the next one to the opposite: the node's patterns are p* plus the disjoint union of the
children's. Children inherit the parent's bound and are solved only when they come first (lazy).

For each pattern p* taken, the *region* {h : e(h)|_H = p*} is searched by the full branch-and-cut
with the heavy groups fixed to p* (``fix`` of :func:`~oraclepriv.solvers.branch_and_cut.scip_bc_model.run_branch_and_cut`)
and the incumbent as objective limit: a constrained ERM on the private data, near-realisable and
much easier than the whole problem.

Why the bound is proved over all halfspaces: the heavy patterns of the nodes and the regions
taken partition {0, 1}^H (Lawler), every halfspace lies in the region of its own pattern, and a
pattern whose correct set is not separable has no halfspace. A node's bound (its heavy ERM's proved
dual bound, or its parent's, plus B_light) is a lower bound over its halfspaces; a region searched
to the end is bounded by the incumbent (or its optimum); a region cut short by the deadline by its
own dual bound. The minimum over what remains is the bound reported. Measurements:
``docs/solvers/learners-tier.md``.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.branch_and_cut.scip_bc_model import run_branch_and_cut
from oraclepriv.solvers.mip.milp import HalfspaceHittingSet
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

__all__ = ["decompose_branch_and_cut"]

_FINISHED = ("optimal", "gaplimit")


@dataclass
class _Node:
    """Heavy groups fixed correct (0) or wrong (1), indices into the heavy part; its cheapest pattern
    once solved (None before)."""

    fix: dict[int, int]
    pattern: np.ndarray | None = None


def _heavy_solve(pyscipopt, sep_h, W_h, form_h, fix, deadline, threads, random_seed) -> dict[str, Any]:
    run = run_branch_and_cut(
        pyscipopt,
        sep_h,
        W_h,
        form_h.yg,
        list(form_h.cores),
        start_keep=None,
        time_limit=deadline.solver_seconds(),
        abs_gap=0.0,
        threads=threads,
        fix=fix,
        deadline=deadline,
        random_seed=random_seed,
    )
    form_h.add_cores(run["new_cores"])
    return run


def decompose_branch_and_cut(
    pyscipopt,
    form: HalfspaceHittingSet,
    sep: Separator,
    W: np.ndarray,
    heavy: np.ndarray,
    light_bound: float,
    incumbent: float,
    start_keep: np.ndarray,
    *,
    abs_gap: float,
    threads: int = 1,
    output_flag: bool = False,
    time_limit: float | None = None,
    deadline: Deadline | None = None,
    trace: IncumbentTrace | None = None,
    random_seed: int | None = None,
) -> dict[str, Any]:
    """The decomposition search (module docstring); returns the plain data of
    :func:`~oraclepriv.solvers.branch_and_cut.scip_bc_model.run_branch_and_cut` for the whole problem.

    ``heavy``: mask of the heavy groups; ``light_bound``: a proved lower bound on the ERM over the
    other groups alone; ``incumbent``/``start_keep``: the best labeling known and its correct groups;
    ``trace``: where the regions' improving solutions are noted (the heavy part's are not solutions
    of the whole problem); ``random_seed``: SCIP's seed shift in every search (None: SCIP's default)."""
    from oraclepriv.solvers.base import import_highspy

    t0 = time.perf_counter()
    deadline = Deadline(time_limit) if deadline is None else deadline
    hidx = np.flatnonzero(heavy)
    form_h = HalfspaceHittingSet(form.groups.X[hidx], form.yg[hidx])
    back = np.empty(form_h.groups.size, dtype=np.int64)  # heavy-part group -> heavy index
    back[form_h.groups.group_of] = np.arange(hidx.size)
    full = hidx[back]  # heavy-part group -> whole-problem group
    W_h = W[full]
    sep_h = Separator(import_highspy(), form_h.Xs, form_h.yg, form_h.groups.X)
    tol = 1e-9 * max(1.0, float(W.sum()))

    best, keeps = float(incumbent), [np.asarray(start_keep, dtype=bool)]
    new_cores: list[tuple[int, ...]] = []
    nodes = heavy_solves = regions = 0
    unverified = accepted = 0
    open_bounds: list[float] = []  # regions cut short: their own dual bounds
    tie = itertools.count()
    heap: list[tuple[float, int, _Node]] = [(light_bound, next(tie), _Node({}))]
    region_seconds: list[float] = []
    stopped = False
    while heap:
        bound, _, node = heap[0]
        if bound >= best - tol:
            break  # every pattern left costs at least the incumbent
        if deadline.expired():
            deadline.note("decomposition")
            stopped = True
            break
        heapq.heappop(heap)
        if node.pattern is None:  # lazy: the node's cheapest heavy pattern, and its own bound
            run = _heavy_solve(pyscipopt, sep_h, W_h, form_h, node.fix, deadline, threads, random_seed)
            heavy_solves += 1
            if run["raw"] == "infeasible":
                continue  # no separable pattern satisfies these fixings
            own = max(bound, float(run["dual"]) + light_bound) if math.isfinite(run["dual"]) else bound
            if run["raw"] not in _FINISHED or not run["keeps"]:
                open_bounds.append(own)  # the heavy search itself was cut short
                stopped = True
                break
            node.pattern = np.where(run["keeps"][0], 0, 1)
            heapq.heappush(heap, (own, next(tie), node))
            continue
        # the region of the node's cheapest pattern: the full search with the heavy groups fixed
        p = node.pattern
        fix = {int(full[k]): int(p[k]) for k in range(p.size)}
        t_region = time.perf_counter()
        run = run_branch_and_cut(
            pyscipopt,
            sep,
            W,
            form.yg,
            list(form.cores),
            start_keep=keeps[0],
            time_limit=deadline.solver_seconds(),
            abs_gap=abs_gap,
            threads=threads,
            output_flag=output_flag,
            fix=fix,
            objlimit=best,
            seed_rows_initial=False,  # thousands of known cores: rows enter the LP when violated
            deadline=deadline,
            trace=trace,
            random_seed=random_seed,
        )
        region_seconds.append(time.perf_counter() - t_region)
        regions += 1
        nodes += run["nodes"]
        form.add_cores(run["new_cores"])
        new_cores += run["new_cores"]
        unverified += run["unverified"]
        accepted += run["accepted_unverified"]
        if run["raw"] in _FINISHED and run["keeps"] and run["primal"] < best:
            best = float(run["primal"])
            keeps.insert(0, run["keeps"][0])
        elif run["raw"] not in _FINISHED and run["raw"] != "infeasible":
            open_bounds.append(max(bound, float(run["dual"])) if math.isfinite(run["dual"]) else bound)
            keeps += run["keeps"][:1]
        # Lawler: the node's other patterns, split into children that inherit its bound
        free = [k for k in range(p.size) if k not in node.fix]
        for i, k in enumerate(free):
            child = dict(node.fix)
            child.update({j: int(p[j]) for j in free[:i]})
            child[k] = 1 - int(p[k])
            heapq.heappush(heap, (bound, next(tie), _Node(child)))
    remaining = [b for b, _, _ in heap]
    dual = min([best] + remaining + open_bounds)
    finished = not stopped and not open_bounds
    return {
        "raw": "optimal" if finished else "timelimit",
        "nodes": nodes,
        "dual": float(dual),
        "primal": best,
        "seconds": time.perf_counter() - t0,
        "keeps": keeps,
        "new_cores": new_cores,
        "unverified": unverified,
        "accepted_unverified": accepted,
        "stats": {
            "decompose_regions": regions,
            "decompose_heavy_solves": heavy_solves,
            "decompose_open_nodes": len(heap),
            "decompose_region_seconds": region_seconds,
        },
        "start_accepted": True,
        "root_x": None,
    }
