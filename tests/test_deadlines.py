"""One deadline per oracle call (docs/deadlines.md).

A call with ``time_limit=T`` returns within T plus a small overhead for every backend, honestly:
a time-limited answer's bound is still a proved lower bound (checked across backends and against
exact optima), and it is certified only when that bound proves it. The timing assertions use a
generous slack (the machine may be shared) but are far below what a solver whose start heuristics
ignore the limit takes on the instances here, so such a solver fails them.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from brute_force import brute_halfspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.mip import benders
from oraclepriv.solvers.mip.highs import import_highspy
from oraclepriv.solvers.mip.milp import HalfspaceHittingSet
from oraclepriv.solvers.runtime.deadline import Deadline, DeadlineExceeded
from strategies import instances, points

from oraclepriv import make_oracle
from oraclepriv.backends import registered_backend
from oraclepriv.hypotheses import Halfspace

ROOT = Path(__file__).resolve().parent.parent
#: what a time-limited call may take beyond its limit here: far above the overhead documented in
#: docs/deadlines.md (0.25 s measured at n = 20000), so a loaded machine does not make the test flaky
SLACK = 1.5


def noisy_halfspace(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = (X @ rng.normal(size=d) >= 0).astype(np.int8)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


# -- the deadline object ------------------------------------------------------------------------


def test_deadline_counts_down_expires_and_shares():
    d = Deadline(0.2)
    assert d.limited and not d.expired() and 0 < d.remaining() <= 0.2
    half = d.share(0.5)
    assert half.remaining() <= 0.1 + 1e-6 and half.limited
    time.sleep(0.12)
    assert half.expired() and not d.expired()
    with pytest.raises(DeadlineExceeded):
        half.check("phase a")
    assert d.stopped == ["phase a"]  # a share records into its parent's list
    time.sleep(0.1)
    assert d.expired() and d.remaining() == 0.0 and d.solver_seconds() == 1e-3
    unlimited = Deadline(None)
    assert unlimited.remaining() is None and not unlimited.expired() and unlimited.solver_seconds() is None
    assert unlimited.share(0.5).remaining() is None and unlimited.wall_clock() is None
    unlimited.interrupt()  # Ctrl-C expires even an unlimited deadline, and its shares
    assert unlimited.expired() and unlimited.share(0.5).expired()
    with pytest.raises(ValueError, match="seconds"):
        Deadline(-1.0)


def test_the_deadline_starts_with_the_call_and_the_overrun_is_recorded():
    """The backend receives the protocol's deadline (started before validation, T = time_limit);
    a backend that ignores it is caught in details["overrun_seconds"] = max(0, seconds - T)."""
    seen: list[tuple[Deadline | None, Deadline]] = []

    class Sleepy(Backend):
        name = "sleepy"
        classes = frozenset({"halfspace"})

        def solve(self, problem: ReducedProblem) -> BackendAnswer:
            seen.append((problem.deadline, self.deadline(problem)))
            time.sleep(0.3)
            return BackendAnswer(Halfspace((0.0, 0.0), 1.0), bound=-math.inf, status="time_limit")

    X, y = noisy_halfspace(20, 2, 0)
    with registered_backend("sleepy", Sleepy):
        before = time.perf_counter()
        res = make_oracle("halfspace", backend="sleepy", time_limit=0.1).solve(X, y)
        free = make_oracle("halfspace", backend="sleepy").solve(X, y)
    given, deadline = seen[0]
    assert given is not None and deadline is given
    assert deadline.seconds == 0.1 and before <= deadline.start <= before + 0.05
    assert res.details["time_limit"] == 0.1
    assert res.details["overrun_seconds"] == pytest.approx(res.seconds - 0.1) and res.details["overrun_seconds"] > 0.15
    assert free.details["time_limit"] is None and free.details["overrun_seconds"] == 0.0
    # called directly, a backend starts its own deadline from its time_limit
    problem = ReducedProblem("halfspace", X, y, np.ones(20))
    assert Sleepy(time_limit=5.0).deadline(problem).seconds == 5.0


def test_the_repair_heuristics_stop_at_the_deadline_without_claiming_separability():
    """An expired deadline stops the repair loop before its next Farkas LP: the set it returns is
    empty and counted unverified (never claimed separable), and the add-back returns its input."""
    X, y = noisy_halfspace(300, 4, 1)
    form = HalfspaceHittingSet(X, y)
    sep = Separator(import_highspy(), form.Xs, form.yg, form.groups.X)
    W = np.ones(form.groups.size)
    expired = Deadline(0.0)
    keep, cores, unverified = benders.repair(sep, np.ones(form.groups.size, bool), W, form.yg, expired)
    assert not keep.any() and cores == [] and unverified == 1 and sep.lp_calls == 0
    start = np.zeros(form.groups.size, bool)
    assert np.array_equal(benders.add_back(sep, start, W, expired), start) and sep.lp_calls == 0
    assert expired.stopped == ["repair", "add-back"]
    keep, cores, unverified = benders.repair(sep, np.ones(form.groups.size, bool), W, form.yg)
    assert keep.any() and sep.lp_calls > 0  # without a deadline: the full repair


# -- real backends -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "n", "d", "limit"),
    [("scip-bc", 3000, 5, 0.5), ("highs", 3000, 5, 0.5), ("cpsat", 3000, 5, 0.5), ("enumerate", 400, 3, 0.3)],
)
def test_a_time_limit_holds_on_an_instance_where_it_matters(backend, n, d, limit):
    """Before the one-deadline rule these calls took 5.7 s (scip-bc), 6.1 s (highs) and 3.8 s
    (enumerate, which ignored time limits) at these limits. Now: within the limit plus the slack,
    status time_limit unless the answer is certified, the overrun recorded."""
    X, y = noisy_halfspace(n, d, 0)
    t0 = time.perf_counter()
    res = make_oracle("halfspace", backend=backend, time_limit=limit).solve(X, y)
    elapsed = time.perf_counter() - t0
    assert elapsed <= limit + SLACK, f"{backend}: {elapsed:.2f} s for a limit of {limit} s (load {os.getloadavg()})"
    assert res.details["overrun_seconds"] == pytest.approx(max(0.0, res.seconds - limit))
    assert res.objective == res.hypothesis.loss(X, y, np.ones(n))  # a real hypothesis, re-scored
    assert res.bound <= res.objective + res.tolerance  # a proved lower bound never exceeds a real loss
    assert res.certified or res.status == "time_limit"
    assert res.certified == (res.objective <= res.bound + res.tolerance)


@pytest.mark.parametrize("backend", ["scip-bc", "highs", "cpsat", "enumerate"])
def test_deadlines_at_every_phase_never_give_a_false_certificate(backend):
    """Limits of 5 ms and 50 ms stop the search in various phases (heuristics, model build, solve,
    callbacks, polishing); on every instance the bound stays below the exact optimum (enumerate,
    no limit) and a certified answer is optimal."""
    for seed in range(5):
        X, y = noisy_halfspace(60, 3, 100 + seed)
        w = np.random.default_rng(seed).laplace(size=60)  # signed weights
        exact = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
        for limit in (0.005, 0.05):
            res = make_oracle("halfspace", backend=backend, time_limit=limit).solve(X, y, w)
            assert res.bound <= exact.objective + exact.tolerance, (backend, seed, limit)
            assert res.objective >= exact.objective - exact.tolerance
            if res.certified:
                assert res.objective == pytest.approx(exact.objective, abs=2 * exact.tolerance)
            else:
                assert res.status != "optimal"


# -- the n = 20000, d = 5 learning task --------------------------------------------------------------

TASK = ROOT / "instances" / "task-5d-n20000-private.csv"
HALFSPACE_MIP_BACKENDS = ["scip-bc", "highs", "scip", "pyomo", "cpsat", "naive-highs"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", HALFSPACE_MIP_BACKENDS)
def test_time_limit_2_on_the_n20000_d5_instance(backend):
    """A large task at --time-limit 2 (a MIP solver that ignores the limit takes minutes here): the oracle call returns within 2 s plus the slack, and the whole command
    ``oraclepriv erm ... --time-limit 2 --json`` (interpreter, imports and CSV included) within 5 s
    on an idle machine (asserted with a slack of 5 s for a loaded one)."""
    import pandas as pd

    frame = pd.read_csv(TASK)
    X, y = frame.drop(columns="y").to_numpy(), frame["y"].to_numpy()
    res = make_oracle("halfspace", backend=backend, time_limit=2.0).solve(X, y)
    assert res.seconds <= 2.0 + SLACK, (backend, res.seconds, os.getloadavg())
    assert res.bound <= res.objective + res.tolerance and not res.certified
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "oraclepriv", "erm", str(TASK), "--hypothesis-class", "halfspace"]
    out = subprocess.run(
        cmd + ["--backend", backend, "--time-limit", "2", "--json"], capture_output=True, text=True, cwd=ROOT
    )
    wall = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout)  # nothing but the JSON on stdout
    assert summary["status"] == "time_limit" and summary["details"]["overrun_seconds"] < SLACK
    assert wall <= 10.0, (backend, wall, os.getloadavg())


@pytest.mark.slow
def test_enumerate_refuses_d5_up_front():
    """enumerate handles d <= 3: on the d = 5 instance it refuses before any work, naming the limit."""
    cmd = [sys.executable, "-m", "oraclepriv", "erm", str(TASK), "--hypothesis-class", "halfspace"]
    out = subprocess.run(cmd + ["--backend", "enumerate", "--time-limit", "2"], capture_output=True, text=True)
    assert out.returncode == 2 and "d <= 3" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    d=st.integers(1, 3),
    backend=st.sampled_from(["scip-bc", "highs", "scip", "pyomo", "cpsat", "enumerate"]),
    limit=st.sampled_from([0.001, 0.005, 0.02, 0.1]),
)
def test_deadlines_on_degenerate_data_against_brute_force(data, d, backend, limit):
    """Duplicates, collinear and coplanar points, signed weights (tests/strategies.py), limits that
    stop the search anywhere: the bound never exceeds the brute-force optimum and a certified answer
    is optimal."""
    X, y, w = data.draw(instances(points(d, 1, 7)))
    optimum = brute_halfspace(X, y, w)
    res = make_oracle("halfspace", backend=backend, time_limit=limit).solve(X, y, w)
    tol = 1e-7 * max(1.0, float(np.abs(w).sum()))
    assert res.bound <= optimum + tol and res.objective >= optimum - tol
    if res.certified:
        assert res.objective == pytest.approx(optimum, abs=tol)
