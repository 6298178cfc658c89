"""The parallel search of ``scip-bc`` (``workers`` = k > 1): a root here, then regions in worker processes.

The root is solved in this process (node limit 1). If it does not close the gap, the p most
fractional groups of the root LP point, with 2^p >= REGIONS_PER_WORKER * k, split the labelings
into 2^p regions (each of the p variables z_g fixed to 0 or 1). Every region is an independent
SCIP search (:func:`oraclepriv.solvers.branch_and_cut.scip_bc_model.run_branch_and_cut`) in a joblib worker,
seeded with every core known after the root and with the incumbent as objective limit; all regions
share one wall-clock deadline.

Why the result is a proved bound: the regions partition the labelings, so the optimum is the
minimum over regions of the region optima. A region that has no labeling cheaper than the
incumbent ("infeasible" under the objective limit) is bounded by the incumbent; any other region
is bounded by its SCIP dual bound, and by the root's dual bound, which holds in every region (also
one that timed out or never started). The minimum of these is a lower bound over all halfspaces,
with the same meaning as the serial bound (``docs/theory/cover-cut-model.md``). Measurements of
the speed-up and of the region order are in ``docs/solvers/scip-bc.md``.

Where the regions run: joblib's active configuration decides (``joblib.parallel_config``), with
processes preferred, so the default is joblib's local process pool (loky) and
``with joblib.parallel_config(backend="dask"):`` runs the regions on a Dask cluster (
``docs/solvers/scip-bc.md``, "Parallel search"). The bound does not depend on where a region ran.

Deadlines and signals (``docs/deadlines.md``): every region gets the call's deadline as a
wall-clock time (``time.time()``, shared by the processes of one machine; a cluster's clocks must
agree to within the tolerance one wants); regions are not dispatched at all when less than
:data:`MIN_REGION_SECONDS` remain after the root. Ctrl-C in this process raises KeyboardInterrupt
in joblib's wait, which aborts the pool and kills the workers; SIGTERM to this process alone first
unwinds the same way (:func:`~oraclepriv.solvers.runtime.interrupts.terminate_cleanly`) and then terminates
it, so no worker outlives its parent.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.branch_and_cut.scip_bc_model import (
    ScipOptions,
    import_pyscipopt,
    not_started,
    run_branch_and_cut,
)
from oraclepriv.solvers.mip.milp import HalfspaceHittingSet
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace
from oraclepriv.solvers.runtime.interrupts import terminate_cleanly

__all__ = ["REGIONS_PER_WORKER", "MIN_REGION_SECONDS", "split_groups", "parallel_branch_and_cut"]

#: regions per worker (2^p regions for the smallest p reaching REGIONS_PER_WORKER * workers)
REGIONS_PER_WORKER = 4
#: with a time limit, regions are dispatched only if at least this many seconds remain after the
#: root (a worker process needs about a second to start and rebuild the groups and the separator)
MIN_REGION_SECONDS = 1.0

log = logging.getLogger(__name__)


def split_groups(root_x: np.ndarray, n_regions: int) -> list[int]:
    """The p groups to split the search on (2^p >= n_regions regions): the most fractional
    coordinates of the root LP point (ties: lower index)."""
    p = max(1, math.ceil(math.log2(max(n_regions, 2))))
    frac = root_x * (1.0 - root_x)
    order = np.argsort(-frac, kind="stable")
    return [int(g) for g in order[: min(p, root_x.size)]]


def _region_worker(
    X: np.ndarray,
    y: np.ndarray,
    W: np.ndarray,
    cores: list[tuple[int, ...]],
    fix: dict[int, int],
    start_keep: np.ndarray,
    objlimit: float,
    deadline: float | None,
    options: ScipOptions,
    trace_origin: float | None = None,
) -> dict[str, Any]:
    """One region of the parallel search, in a worker process (rebuilds the groups and the separator).

    ``deadline`` is wall-clock time (``time.time()``, shared by the processes): a region that starts
    after it is not searched (status "notstarted", no bound of its own). ``worker`` in the result
    names the host and process that ran it; ``incumbents``, the region's improving solutions stamped
    on the caller's clock (``trace_origin``, wall-clock time of the call's start), when given."""
    worker = f"{socket.gethostname()}:{os.getpid()}"
    if deadline is not None and deadline - time.time() <= 0.05:
        return {**not_started(), "worker": worker, "separation_lps": 0}
    from oraclepriv.solvers.base import import_highspy

    form = HalfspaceHittingSet(X, y)
    sep = Separator(import_highspy(), form.Xs, form.yg, form.groups.X)
    time_limit = None if deadline is None else deadline - time.time()  # after the rebuild
    if time_limit is not None and time_limit <= 0.05:
        return {**not_started(), "worker": worker, "separation_lps": 0}
    local = Deadline(time_limit)  # the same deadline, on this process's clock
    trace = None if trace_origin is None else IncumbentTrace(trace_origin)
    # the root's cores (thousands) enter the region's LP only when violated, like the handler's own
    out = run_branch_and_cut(
        import_pyscipopt(),
        sep,
        W,
        form.yg,
        cores,
        start_keep=start_keep,
        time_limit=time_limit,
        fix=fix,
        objlimit=objlimit,
        seed_rows_initial=False,
        deadline=local,
        trace=trace,
        **options,
    )
    out["incumbents"] = [] if trace is None else trace.to_list()
    out["separation_lps"] = sep.lp_calls
    out["worker"] = worker
    return out


def _merge_stats(root: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The root's handler counters plus every region's (numeric counters add up)."""
    stats = dict(root["stats"])
    for r in results:
        for key, value in r["stats"].items():
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and isinstance(stats.get(key), (int, float))
            ):
                stats[key] = stats[key] + value
    return stats


def parallel_branch_and_cut(
    pyscipopt,
    X,
    y,
    form: HalfspaceHittingSet,
    sep: Separator,
    W: np.ndarray,
    incumbent: float,
    start_keep: np.ndarray,
    time_limit: float | None,
    workers: int,
    options: ScipOptions,
    *,
    deadline: Deadline | None = None,
    trace: IncumbentTrace | None = None,
) -> dict[str, Any]:
    """Branch-and-cut on ``workers`` processes (module docstring).

    ``time_limit`` is SCIP's limit for the root; ``deadline`` the call's deadline (the regions'
    limit). Returns the same plain data as
    :func:`~oraclepriv.solvers.branch_and_cut.scip_bc_model.run_branch_and_cut`, for the whole search: status
    "optimal" when every region finished, the minimum of the region bounds as dual bound, and the
    per-region figures in ``stats`` (``region_workers``: where each ran). ``trace`` receives the
    improving solutions of the root and of every region, on the caller's clock."""
    from joblib import Parallel, delayed

    t0 = time.perf_counter()
    if deadline is None:
        deadline = Deadline(time_limit)
    root = run_branch_and_cut(
        pyscipopt,
        sep,
        W,
        form.yg,
        list(form.cores),
        start_keep=start_keep,
        time_limit=time_limit,
        node_limit=1,
        deadline=deadline,
        trace=trace,
        **options,
    )
    form.add_cores(root["new_cores"])
    if root["raw"] in ("optimal", "gaplimit", "infeasible", "timelimit") or root["root_x"] is None:
        root["stats"]["regions"] = 0
        return root
    left = deadline.remaining()
    if left is not None and left < MIN_REGION_SECONDS:
        deadline.note("parallel regions (not dispatched)")
        root["raw"] = "timelimit"
        root["stats"]["regions"] = 0
        return root
    incumbent = min(incumbent, root["primal"])
    split = split_groups(root["root_x"], REGIONS_PER_WORKER * workers)
    # hardest first (joblib hands them out in order): the more groups a region fixes wrong (z = 1),
    # the fewer it forces correct and the larger its tree
    regions = sorted(
        (dict(zip(split, bits)) for bits in np.ndindex(*(2,) * len(split))), key=lambda fix: -sum(fix.values())
    )
    # one wall-clock deadline for all regions: a region queued behind others gets what is left
    wall = deadline.wall_clock()
    cores = list(form.cores)
    log.debug("dispatching %d regions (split on groups %s) to %d workers", len(regions), split, workers)
    # the active joblib configuration chooses where they run (loky by default, dask inside
    # parallel_config(backend="dask")); SIGTERM unwinds through joblib's abort, which kills the workers
    with terminate_cleanly():
        results = Parallel(n_jobs=workers, prefer="processes", batch_size=1)(
            delayed(_region_worker)(
                X,
                y,
                W,
                cores,
                {g: int(v) for g, v in fix.items()},
                start_keep,
                incumbent,
                wall,
                options,
                None if trace is None else trace.origin,
            )
            for fix in regions
        )
    log.debug("regions done: %s", [r["raw"] for r in results])
    if trace is not None:
        for r in results:
            trace.merge(r.get("incumbents", []))
    finished = all(r["raw"] in ("optimal", "gaplimit", "infeasible") for r in results)
    # a region without any labeling cheaper than the incumbent is bounded by the incumbent; the root's
    # dual bound holds in every region (also one that timed out or never started)
    bounds = [incumbent if r["raw"] == "infeasible" else max(r["dual"], root["dual"]) for r in results]
    stats = _merge_stats(root, results)
    stats.update(
        {
            "regions": len(regions),
            "split_groups": split,
            "region_seconds": [r["seconds"] for r in results],
            "region_nodes": [r["nodes"] for r in results],
            "region_status": [r["raw"] for r in results],
            "region_workers": [r.get("worker") for r in results],
        }
    )
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
