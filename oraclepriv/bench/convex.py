"""Benchmark of the convex oracle (regularized ERM of Algorithm 3, the regularization learner of Block,
Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data") against
a general-purpose baseline and a commercial peer, in one run.

The problem, on inputs in the l1 unit ball with labels in {-1, +1} and S = Z'Z / m:
    min  1/2 sum_i |<w, X_i> - y_i| + eta_sum w'S w   over  -1 <= w <= 1.
Methods, each on the same instance in the same process, one after another (they are timings):

* ``highs-qp+kkt``: the project's backend (``solvers/convex_linear.py``), certified by its own bound.
  On these instances (rows in the l1 ball) it solves the d-variable box QP the problem reduces to;
* ``highs-qp+kkt-epigraph``: the same backend without that reduction (HiGHS' QP on the epigraph form
  in (w, t), d + n variables), to show what the reduction buys;
* ``scipy-slsqp``: SLSQP on the epigraph form (the project's earlier backend; dense and O(n^3) per
  iteration, so only run up to ``slsqp_max_n``);
* ``gurobi-box-qp``: Gurobi (1 thread) on the reduced box QP, when gurobipy is installed. The
  size-limited licence that ships with gurobipy refuses quadratic models above about 200 variables,
  so the epigraph form is out of its reach at these sizes; the reduced form is not.

Every answer is re-scored in float64 and its gap measured against the best *proved* lower bound
of the run (the project's certificate, and the Lagrangian bound at each method's own answer), so a
peer's status proves nothing here either. The agreement check fails when a method's objective lies
below a certified bound (a wrong certificate).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.optimize import minimize

from oraclepriv.bench.learners import synthetic_instance
from oraclepriv.bench.report import markdown_table
from oraclepriv.execution import Progress
from oraclepriv.solvers.convex_linear import ConvexLinearBackend

__all__ = [
    "DEFAULT_SIZES",
    "QUICK_SIZES",
    "METHODS",
    "bench_convex",
    "check_methods",
    "disagreements",
    "markdown_report",
    "row_line",
]

#: (n, d) of the default run; m public points and eta per sample as the learner's defaults scale them
DEFAULT_SIZES = ((500, 4), (1000, 6), (2000, 8), (10_000, 10), (50_000, 20))
QUICK_SIZES = ((200, 3), (400, 4))
METHODS = ("highs-qp+kkt", "highs-qp+kkt-epigraph", "scipy-slsqp", "gurobi-box-qp")
PROJECT = "highs-qp+kkt"
#: fast methods are timed this many times at most, while their runs add up to under FAST_SECONDS
FAST_REPEATS = 11
FAST_SECONDS = 1.0


def regularized_instance(
    n: int, d: int, m: int, eta: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(X, y in {-1, +1}, Z, eta_sum = n eta): a noisy linear rule on the l1 ball, public Z from the same marginal."""
    X, y01, Z = synthetic_instance(n, m, d, seed, l1_ball=True)
    return X, 2.0 * y01 - 1.0, Z, n * eta


def _slsqp(X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> np.ndarray:
    """SLSQP on  min 1/2 sum t + eta_sum w'Sw,  t >= +-(Xw - y),  -1 <= w <= 1,  from w = 0."""
    n, d = X.shape
    A = np.block([[-X, np.eye(n)], [X, np.eye(n)]])
    shift = np.concatenate([y, -y])
    v0 = np.concatenate([np.zeros(d), np.abs(y) + 1e-3])
    res = minimize(
        lambda v: 0.5 * v[d:].sum() + eta_sum * (v[:d] @ S @ v[:d]),
        v0,
        jac=lambda v: np.concatenate([2.0 * eta_sum * (S @ v[:d]), 0.5 * np.ones(n)]),
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda v: A @ v + shift, "jac": lambda v: A}],
        bounds=[(-1.0, 1.0)] * d + [(0, None)] * n,
        options={"maxiter": 500, "ftol": 1e-12},
    )
    return np.clip(res.x[:d], -1.0, 1.0)


def _gurobi_box_qp(X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float, time_limit: float) -> np.ndarray:
    """Gurobi (1 thread) on  min -1/2 (X'y)'w + eta_sum w'Sw  over the box (the reduced form of rows in
    the l1 ball); raises GurobiError when the licence refuses it."""
    from oraclepriv.solvers.peers.gurobi_env import gurobi_env, import_gurobipy

    gp = import_gurobipy("gurobi-box-qp")
    d = X.shape[1]
    model = gp.Model(env=gurobi_env(gp))
    try:
        model.Params.Threads = 1
        model.Params.TimeLimit = time_limit
        w = model.addMVar(d, lb=-1.0, ub=1.0)
        model.setObjective(-0.5 * (X.T @ y) @ w + eta_sum * (w @ S @ w), gp.GRB.MINIMIZE)
        model.optimize()
        return np.clip(np.asarray(w.X), -1.0, 1.0) if model.SolCount > 0 else np.zeros(d)
    finally:
        model.dispose()


def _run(method: str, X, y, Z, eta_sum: float, time_limit: float, slsqp_max_n: int) -> dict[str, Any]:
    """One method on one instance: its answer w and seconds, or the reason it did not run."""
    n, d = X.shape
    S = Z.T @ Z / len(Z)
    start = time.perf_counter()
    if method in (PROJECT, "highs-qp+kkt-epigraph"):
        backend = ConvexLinearBackend(box_qp=method == PROJECT)
        w, info = backend.solve_regularized(X, y, Z, eta_sum)
        seconds = time.perf_counter() - start
        return {
            "w": w,
            "seconds": seconds,
            "bound": info["bound"],
            "certified": info["certified"],
            "solver": info["solver"],
        }
    if method == "scipy-slsqp":
        if n > slsqp_max_n:
            return {"status": f"not run (n > {slsqp_max_n}: dense, O(n^3) per iteration)"}
        return {"w": _slsqp(X, y, S, eta_sum), "seconds": time.perf_counter() - start}
    from oraclepriv.solvers.peers.gurobi_env import licence_limit, licence_works

    if not licence_works():
        return {"status": "not installed (gurobipy with a working licence)"}
    try:
        w = _gurobi_box_qp(X, y, S, eta_sum, time_limit)
    except Exception as exc:  # noqa: BLE001 - the licence's refusal is a row, any other failure too
        if licence_limit(exc):
            return {"status": f"licence limit ({d} variables)"}
        return {"status": f"error: {exc}"}
    return {"w": w, "seconds": time.perf_counter() - start}


def _timed_run(method: str, X, y, Z, eta_sum: float, time_limit: float, slsqp_max_n: int) -> dict[str, Any]:
    """:func:`_run`, repeated up to ``FAST_REPEATS`` times while the runs take under ``FAST_SECONDS``;
    ``seconds`` is the median (a millisecond solve timed once is noise)."""
    run = _run(method, X, y, Z, eta_sum, time_limit, slsqp_max_n)
    times = [run["seconds"]] if "seconds" in run else []
    while times and len(times) < FAST_REPEATS and sum(times) < FAST_SECONDS:
        times.append(_run(method, X, y, Z, eta_sum, time_limit, slsqp_max_n)["seconds"])
    if times:
        run["seconds"], run["runs"] = float(np.median(times)), len(times)
    return run


def check_methods(methods: tuple[str, ...], option: str = "methods") -> tuple[str, ...]:
    """``methods`` if it names at least one method, each among :data:`METHODS` and once (a repeat would run the
    same method twice under one name, as ``bench mip`` refuses repeated backends); else a ValueError naming
    ``option``."""
    if not methods or any(name not in METHODS for name in methods):
        raise ValueError(f"{option} must name methods among {list(METHODS)}; got {','.join(methods)!r}")
    repeated = sorted({name for name in methods if methods.count(name) > 1})
    if repeated:
        raise ValueError(f"{option} must not repeat a method; got {','.join(methods)!r} ({repeated} twice or more)")
    return methods


def bench_convex(
    sizes: tuple[tuple[int, int], ...] = DEFAULT_SIZES,
    methods: tuple[str, ...] = METHODS,
    m: int = 400,
    eta: float = 0.1,
    seed: int = 0,
    time_limit: float = 600.0,
    slsqp_max_n: int = 1000,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """One row per (size, method): status, seconds, re-scored objective, gap to the run's best proved
    bound, and seconds as a ratio to the project's backend on the same instance (module docstring)."""
    methods = check_methods(methods)
    if PROJECT not in methods:
        methods = (PROJECT, *methods)  # the reference every ratio and gap is measured against
    X, y, Z, eta_sum = regularized_instance(50, 2, 20, eta, seed)
    for name in methods:  # warm-up: imports, the Gurobi environment, first-call caches
        _run(name, X, y, Z, eta_sum, time_limit, slsqp_max_n)
    rows: list[dict[str, Any]] = []
    for k, (n, d) in enumerate(sizes):
        X, y, Z, eta_sum = regularized_instance(n, d, m, eta, seed)
        S = Z.T @ Z / len(Z)
        runs = {name: _timed_run(name, X, y, Z, eta_sum, time_limit, slsqp_max_n) for name in methods}
        certified_bound = runs[PROJECT]["bound"]
        best_bound = max(
            [certified_bound]
            + [ConvexLinearBackend.lower_bound(run["w"], X, y, S, eta_sum) for run in runs.values() if "w" in run]
        )
        for name, run in runs.items():
            row: dict[str, Any] = {"instance": f"l1-n{n}-d{d}", "n": n, "m": m, "d": d, "eta_sum": eta_sum}
            row["method"] = name
            if "w" not in run:
                rows.append({**row, "status": run["status"]})
                continue
            objective = ConvexLinearBackend.objective(run["w"], X, y, S, eta_sum)
            gap = objective + ConvexLinearBackend.objective_error(run["w"], X, y, S, eta_sum) - best_bound
            rows.append(
                {
                    **row,
                    "status": "ok",
                    "seconds": run["seconds"],
                    "runs": run["runs"],
                    "ratio": run["seconds"] / runs[PROJECT]["seconds"],
                    "objective": objective,
                    "gap": max(0.0, gap),
                    "below_certified_bound": bool(objective < certified_bound - 1e-9 * max(1.0, abs(objective))),
                    **({"certified": run["certified"], "solver": run["solver"]} if "solver" in run else {}),
                }
            )
        if progress is not None:
            progress(k + 1, len(sizes))
    return rows


def disagreements(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows whose objective lies below the project's certified bound: that certificate would be wrong."""
    return [row for row in rows if row.get("below_certified_bound")]


def markdown_report(rows: list[dict[str, Any]], command: str) -> str:
    """:func:`bench_convex`'s rows as a Markdown table, stating the command and machine that produced it."""
    columns = [
        "instance",
        "n",
        "m",
        "d",
        "method",
        "status",
        "seconds",
        "runs",
        "ratio",
        "objective",
        "gap",
        "certified",
        "solver",
    ]
    note = (
        "Regularized ERM of the regularization learner (Algorithm 3), eta_sum = n * eta. seconds: the median of "
        "`runs` runs (fast methods are repeated); ratio = seconds / the project's seconds on the same instance "
        "(the project's include its certificate, the peers' do not); gap = re-scored objective (plus its rounding bound) "
        "minus the best proved lower bound of the run; certified (the project's backends only): gap <= 1e-6. "
        f"Agreement: {'clean' if not disagreements(rows) else 'FAILED'} (no objective below a certified bound)."
    )
    return markdown_table("Convex oracle: regularized ERM", command, rows, columns, note)


def row_line(row: dict[str, Any]) -> str:
    """One row as the CLI prints it."""
    head = f"{row['instance']:<16} {row['method']:<22}"
    if row["status"] != "ok":
        return f"{head} {row['status']}"
    flag = "" if "certified" not in row else ("  certified" if row["certified"] else "  NOT certified")
    return (
        f"{head} {row['seconds']:9.3f} s  ratio {row['ratio']:8.2f}  objective {row['objective']:.10g}  "
        f"gap {row['gap']:.2e}{flag}"
    )
