"""Incumbent traces (solvers/runtime/incumbents.py) and the primal measures of ``bench mip`` (bench/primal.py).

The trace is a timing diagnostic: improving values, stamped on the call's clock, mapped to the
signed problem by the protocol. The measures are checked against integrals worked out by hand."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from mipbench_rows import row
from optional_backends import BRANCH_AND_CUT, needs_gurobi
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace, merge_traces

from oraclepriv import make_oracle
from oraclepriv.bench import mip_report
from oraclepriv.bench.mip_summary import summarize
from oraclepriv.bench.primal import add_primal_measures, best_found_seconds, primal_gap, primal_integral

# -- the trace --------------------------------------------------------------------------------------


def test_a_trace_keeps_only_improvements_in_time_order():
    trace = IncumbentTrace(0.0)
    for t, v in [(1.0, 10.0), (2.0, 12.0), (3.0, 10.0), (4.0, 7.0), (5.0, math.nan), (3.5, 6.0)]:
        trace.note(v, seconds=t)
    # 12 and the repeated 10 are not improvements, NaN is dropped, a stamp earlier than the last is raised to it
    assert trace.to_list() == [[1.0, 10.0], [4.0, 7.0], [4.0, 6.0]]
    assert trace.best == 6.0


def test_merging_traces_keeps_the_running_minimum():
    merged = merge_traces([[1.0, 10.0], [4.0, 5.0]], None, [[2.0, 8.0], [3.0, 9.0], [5.0, 5.0], [6.0, 4.0]])
    assert merged == [[1.0, 10.0], [2.0, 8.0], [4.0, 5.0], [6.0, 4.0]]


def test_a_phase_deadline_stamps_on_the_calls_clock():
    call = Deadline(None, start=time.perf_counter() - 5.0)  # the call started 5 s ago
    phase = Deadline(1.0, parent=call)  # e.g. the portfolio's lead, which starts now
    trace = IncumbentTrace.for_deadline(phase)
    trace.note(3.0)
    assert 5.0 <= trace.points[0][0] < 6.0


def test_a_step_of_the_wall_clock_does_not_move_the_calls_stamps(monkeypatch):
    """In the calling process a stamp is on the call's own perf_counter clock: a wall clock stepped
    forward (NTP on a freshly booted machine) cannot put a stamp past the call's end."""
    call = Deadline(None)
    trace = IncumbentTrace.for_deadline(call)
    wall = time.time
    monkeypatch.setattr(time, "time", lambda: wall() + 10.0)
    trace.note(3.0)
    assert 0.0 <= trace.points[0][0] <= call.elapsed()


def test_a_region_places_the_calls_wall_clock_start_on_its_own_clock():
    origin = time.time() - 2.0  # the caller started 2 s ago, as a region in another process hears it
    trace = IncumbentTrace(origin)
    trace.note(1.0)
    assert 2.0 <= trace.points[0][0] < 3.0


# -- the measures, by hand ----------------------------------------------------------------------------


def test_primal_gap_cases():
    assert primal_gap(None, 5.0) == 1.0
    assert primal_gap(10.0, 5.0) == pytest.approx(0.5)
    assert primal_gap(5.0, 5.0) == 0.0
    assert primal_gap(0.0, 0.0) == 0.0
    assert primal_gap(3.0, -2.0) == 1.0  # opposite signs
    assert primal_gap(-1.0, -2.0) == pytest.approx(0.5)


def test_primal_integral_of_a_step_function():
    # no incumbent on [0, 1): gap 1; 10 on [1, 3): gap 0.5; 5 from 3 on: gap 0  ->  1 + 1 = 2
    assert primal_integral([[1.0, 10.0], [3.0, 5.0]], final=5.0, end=4.0, best=5.0, horizon=10.0) == pytest.approx(2.0)
    # the re-scored final objective stands from the call's end even if the trace claimed less
    value = primal_integral([[1.0, 10.0], [3.0, 4.0]], final=5.0, end=4.0, best=4.0, horizon=10.0)
    assert value == pytest.approx(1.0 + 2 * 0.6 + 0.0 + 6 * 0.2)
    # never any incumbent before the horizon: the whole horizon
    assert primal_integral([], final=math.inf, end=10.0, best=1.0, horizon=10.0) == pytest.approx(10.0)
    with pytest.raises(ValueError, match="horizon"):
        primal_integral([], final=1.0, end=1.0, best=1.0, horizon=0.0)


def test_time_to_the_final_incumbent():
    assert best_found_seconds([[1.0, 10.0], [3.0, 5.0]], final=5.0, end=4.0, tolerance=1e-9) == 3.0
    # the returned halfspace re-scores better than anything the search noted: found at the end
    assert best_found_seconds([[1.0, 10.0], [3.0, 5.0]], final=4.0, end=4.0, tolerance=1e-9) == 4.0


def test_bench_rows_get_primal_measures_and_the_summary_reports_them():
    rows = [
        {**row("a", "traced", objective=5.0, seconds=4.0, limit=10.0), "incumbents": [[1.0, 10.0], [3.0, 5.0]]},
        {**row("a", "untraced", objective=6.0, seconds=2.0, limit=10.0), "incumbents": None},
        {**row("b", "traced", objective=2.0, seconds=1.0, limit=10.0), "incumbents": [[0.5, 2.0]]},
        {**row("b", "untraced", objective=2.0, seconds=1.0, limit=10.0)},
    ]
    add_primal_measures(rows, {"a": None, "b": 1.0})  # the manifest knows a better objective for b
    assert rows[0]["best_known"] == 5.0 and rows[0]["primal_integral"] == pytest.approx(2.0)
    assert rows[0]["best_found_seconds"] == 3.0
    assert rows[1]["primal_integral"] is None and rows[3]["best_found_seconds"] is None
    # b: gap 1 on [0, 0.5), then |1 - 2| / 2 = 0.5 for 9.5 s
    assert rows[2]["best_known"] == 1.0 and rows[2]["primal_integral"] == pytest.approx(0.5 + 9.5 * 0.5)
    summary = {s["backend"]: s for s in summarize(rows)}
    assert summary["traced"]["traced"] == 2 and summary["untraced"]["traced"] == 0
    assert summary["traced"]["mean_primal_integral"] == pytest.approx((2.0 + 5.25) / 2)
    assert summary["traced"]["best_known_found"] == 1 and summary["untraced"]["best_known_found"] == 0
    assert summary["untraced"]["mean_primal_integral"] is None
    md = mip_report.markdown_summary(rows, list(summary.values()), [], [], "cmd", "noisy-halfspaces", 10.0)
    assert "## Primal side" in md and "| untraced | 2 | 0 | 0 | - | - |" in md


# -- the backends' traces --------------------------------------------------------------------------


def check_trace(res, tolerance: float, *, exact: bool = True) -> None:
    """Improving values, times on the call's clock (>= 0, non-decreasing, within the call), and an
    exact backend's optimal answer's final objective as the last value."""
    trace = res.details["incumbents"]
    assert trace, "a backend that keeps a trace noted at least its start heuristics"
    times = [t for t, _ in trace]
    values = [v for _, v in trace]
    assert all(0.0 <= t <= res.seconds for t in times), (times, res.seconds)
    assert times == sorted(times)
    assert all(b < a for a, b in zip(values, values[1:], strict=False))
    if exact and res.status == "optimal":
        assert values[-1] == pytest.approx(res.objective, abs=tolerance)


@pytest.mark.parametrize("backend", [*BRANCH_AND_CUT, "direction-bb", "portfolio"])
@pytest.mark.parametrize("seed", range(3))
def test_exact_backends_trace_their_incumbents_on_the_signed_problem(backend, seed):
    rng = np.random.default_rng(seed)
    n, d = 40, 3
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    y[rng.choice(n, 6, replace=False)] ^= 1
    w = rng.laplace(size=n) * 1e-3  # signed (the offset) and scaled by a power of two (value_back)
    res = make_oracle("halfspace", backend=backend).solve(X, y, w)
    assert res.certified
    check_trace(res, 1e-9 * max(1.0, float(np.abs(w).sum())))
    assert res.details["incumbents"][0][1] >= res.objective


@needs_gurobi
def test_the_gurobi_big_m_model_traces_its_own_solutions():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    y[:5] ^= 1
    res = make_oracle("halfspace", backend="gurobi").solve(X, y)
    # its values are the big-M model's own objective (margin class), not re-scored: no final equality
    check_trace(res, 1e-9 * 40, exact=False)


@pytest.mark.slow
def test_parallel_regions_stamp_their_incumbents_on_the_callers_clock():
    from oraclepriv.bench.mip_suite import halfspace_instance

    _, X, y, w = halfspace_instance(200, 10, 0)
    res = make_oracle("halfspace", backend="scip-bc", workers=2).solve(X, y, w)
    assert res.certified and res.details["regions"] > 0
    check_trace(res, 1e-9 * max(1.0, float(np.abs(w).sum())))


def test_a_backend_without_a_trace_reports_none():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    res = make_oracle("halfspace", backend="enumerate").solve(X, y)
    assert "incumbents" not in res.details
