"""The Gurobi backends (optional extra ``[gurobi]``): ``gurobi-bc`` exact, ``gurobi`` honestly restricted.

Skipped as a whole when gurobipy is not installed or its licence does not solve a tiny model (the optional
extra is not in ``.[test]``; what holds without it -- the backends listed as not installed, a clear error when
asked for -- is tested in tests/test_backends.py).

``gurobi-bc`` (the cover-cut branch-and-cut through Gurobi's lazy-constraint callback) is checked
against the independent brute force of ``tests/brute_force.py`` on random tiny instances with signed
weights and degenerate points, and against ``enumerate`` on degenerate grids (duplicates, opposite
labels on one point, collinear points, zero weights): its bound is a lower bound, and a certificate
means the true optimum. ``gurobi`` (the big-M margin model) must never be certified, its re-scored
objective is never below the optimum, and the answer Gurobi calls OPTIMAL with its default
tolerances at margin 1e-5 on duplicated points -- a (w, b) with more errors than its objective
claims -- is reported as such (``claim_mismatch``) and not as optimal. Also: the deadline, Ctrl-C,
nothing on stdout, the licence limit said in the answer, and gurobipy beside PySCIPOpt and highspy
in one process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from brute_force import brute_halfspace
from cover_controls import break_the_rounding
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances, points

from oraclepriv import make_oracle

pytest.importorskip("gurobipy")
from oraclepriv.solvers.peers.gurobi import GurobiBackend  # noqa: E402 - after the skip

if not GurobiBackend.is_installed():
    pytest.skip("gurobipy's licence does not solve a tiny model here", allow_module_level=True)

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def tolerance(w) -> float:
    return 1e-7 * max(1.0, float(np.abs(w).sum()))


def check_exact(res, truth: float, w) -> None:
    """bound <= optimum <= objective; certified => objective = optimum; 'optimal' => meets its bound."""
    tol = tolerance(w)
    assert res.bound <= truth + tol, f"bound {res.bound} exceeds the true optimum {truth}"
    assert res.objective >= truth - tol, f"objective {res.objective} below the true optimum {truth}"
    if res.certified:
        assert res.objective == pytest.approx(truth, abs=tol)
    if res.status == "optimal":
        assert res.meets_bound


def check_restricted(res, truth: float, w) -> None:
    """The big-M answer: never certified, a real hypothesis (objective >= optimum), 'optimal' only
    when it meets its (restricted-class) bound."""
    assert not res.certified and res.restriction is not None and "margin" in res.restriction
    assert res.objective >= truth - tolerance(w)
    if res.status == "optimal":
        assert res.meets_bound


def check_both_against_brute_force(X, y, w) -> None:
    """gurobi-bc certifies the brute-force optimum; gurobi is honest about its restricted class."""
    truth = brute_halfspace(X, y, w)
    res = make_oracle("halfspace", backend="gurobi-bc").solve(X, y, w)
    check_exact(res, truth, w)
    assert res.certified, f"gurobi-bc did not certify a {len(y)}-point instance: {res.status}"
    assert res.objective == res.hypothesis.loss(X, y, w)
    check_restricted(make_oracle("halfspace", backend="gurobi").solve(X, y, w), truth, w)


def grid_instance(seed: int):
    """Integer grids: duplicates, one point with both labels, collinear triples, zero weights."""
    rng = np.random.default_rng(seed)
    n, d = (40, 2) if seed % 2 == 0 else (30, 3)
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    y = rng.integers(0, 2, size=n)
    w = rng.integers(-3, 4, size=n).astype(float) if seed < 2 else rng.laplace(size=n)
    w[rng.random(n) < 0.15] = 0.0
    return X, y, w


def duplicated_noisy(seed: int = 0):
    """60 points in d = 3, each three times, 20 % of the copies' labels flipped (unit weights)."""
    rng = np.random.default_rng(seed)
    X0 = rng.normal(size=(60, 3))
    y0 = (X0 @ rng.normal(size=3) > 0).astype(int)
    X, y = np.repeat(X0, 3, axis=0), np.repeat(y0, 3)
    y = np.where(rng.random(y.size) < 0.2, 1 - y, y)
    return X, y, np.ones(y.size)


def hard_instance():
    """n = 400, d = 10, 10 % label noise: minutes to certify (test_interrupts' instance)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 10))
    y = (X @ rng.normal(size=10) >= 0).astype(int)
    flip = rng.choice(400, 40, replace=False)
    y[flip] = 1 - y[flip]
    return X, y


# -- exactness against independent methods -----------------------------------------------------


@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
def test_gurobi_bc_exact_and_gurobi_honest_against_brute_force(data, d):
    check_both_against_brute_force(*data.draw(instances(points(d, min_n=1, max_n=7))))


@pytest.mark.parametrize("seed", range(4))
def test_degenerate_grids_against_enumerate(seed):
    X, y, w = grid_instance(seed)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    assert truth.certified
    res = make_oracle("halfspace", backend="gurobi-bc").solve(X, y, w)
    check_exact(res, truth.objective, w)
    assert res.certified and res.status == "optimal" and res.details["accepted_unverified"] == 0
    check_restricted(make_oracle("halfspace", backend="gurobi").solve(X, y, w), truth.objective, w)


def test_general_position_signed_weights_match_enumerate_and_resolve_reuses_cores():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = (X @ rng.normal(size=3) + 0.8 * rng.normal(size=40) > 0).astype(int)
    oracle = make_oracle("halfspace", backend="gurobi-bc")
    for k in range(3):  # signed integer weights, then two positive real re-weightings of the same points
        w = rng.integers(-3, 4, size=40).astype(float) if k == 0 else rng.exponential(size=40)
        ref = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
        res = oracle.solve(X, y, w)
        assert ref.certified and res.certified
        assert res.objective == pytest.approx(ref.objective, abs=1e-9 * np.abs(w).sum())
        assert res.details["cores_unverified"] == 0
    assert res.details["model_reused"] and res.details["cores_seeded"] > 0


# -- rank rounding of the root LP point (shared with scip-bc) ----------------------------------------


def _rounding_instance(seed: int, n: int):
    """Noisy labels and signed integer weights in d = 3: the root leaves a gap, so the rounding runs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ rng.normal(size=3) + rng.normal(size=n) > 0).astype(int)
    return X, y, rng.integers(-3, 4, size=n).astype(float)


@pytest.mark.slow
def test_rank_rounding_runs_and_offers_real_labelings():
    """The root's rank rounding runs; its best cost is that of a realisable labeling, so never below
    the exact optimum (enumerate), and the answer is that optimum."""
    X, y, w = _rounding_instance(5, 60)
    res = make_oracle("halfspace", backend="gurobi-bc").solve(X, y, w)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w).objective
    check_exact(res, truth, w)
    assert res.certified and res.details["rounding_tries"] > 0
    # rounding_best is in reduced weights (|w| after the sign reduction), like the reduced loss
    assert res.details["rounding_best"] >= res.details["hypothesis_reduced_loss"] - 1e-9


def test_a_broken_rounding_cannot_corrupt_the_answer(monkeypatch):
    """Negative control: the rank rounding's add-back is broken to return a labeling no halfspace
    realises yet every core known so far allows (the cheapest such labeling, cheaper than the
    optimum), offered with cbSetSolution. Only the MIPSOL callback (a verified core) can refuse
    it; accepting it would end at a bound no halfspace attains, uncertified."""
    X, y, w = _rounding_instance(0, 40)  # the cores at the rounding allow cost 19 < 21
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w).objective
    offered = break_the_rounding(monkeypatch)
    res = make_oracle("halfspace", backend="gurobi-bc").solve(X, y, w)
    # the bogus labelings were offered, and the cheapest is below the optimum (reduced weights)...
    assert offered and res.details["rounding_best"] == min(offered) < res.details["hypothesis_reduced_loss"]
    check_exact(res, truth, w)  # ...and refused: the answer is still the exact optimum
    assert res.certified


# -- the big-M model: a wrong "OPTIMAL" caught by re-scoring ---------------------------------------


def test_gurobi_big_m_wrong_optimal_is_caught_by_rescoring():
    """Gurobi's default IntFeasTol (1e-5) lets z_g = 1e-5 count as "correct" while relaxing the
    big-M row by M_g * 1e-5, far more than the margin 1e-5: Gurobi reports OPTIMAL with an
    objective its own (w, b) does not attain. The answer records both numbers and is neither
    certified nor called optimal; with the tolerances tightened to the margin it is consistent."""
    X, y, w = duplicated_noisy(0)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w).objective
    res = make_oracle("halfspace", backend="gurobi", gamma=1e-5, tolerances="default").solve(X, y, w)
    assert res.details["gurobi_status"] == "OPTIMAL"
    claim, own = res.details["gurobi_objective"], res.details["gurobi_solution_loss"]
    assert res.details["claim_mismatch"] and own > claim + 1, (claim, own)
    assert claim < truth  # the claim is below what any halfspace attains
    assert res.objective == res.hypothesis.loss(X, y, w) >= truth
    assert not res.certified and res.status != "optimal" and not res.meets_bound
    assert res.bound <= truth  # its bound still holds (Gurobi's bound is of a relaxation)
    tight = make_oracle("halfspace", backend="gurobi", gamma=1e-5).solve(X, y, w)
    assert not tight.details["claim_mismatch"] and tight.status == "optimal" and tight.meets_bound
    assert not tight.certified and tight.objective >= truth


def test_options_are_validated():
    with pytest.raises(ValueError, match="gamma"):
        make_oracle("halfspace", backend="gurobi", gamma=0.0)
    with pytest.raises(ValueError, match="tolerances"):
        make_oracle("halfspace", backend="gurobi", tolerances="loose")
    with pytest.raises(ValueError, match="threads"):
        make_oracle("halfspace", backend="gurobi-bc", threads=0)
    with pytest.raises(ValueError, match="unknown option"):
        make_oracle("halfspace", backend="gurobi-bc", workers=2)


# -- deadline, licence, output ------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["gurobi-bc", "gurobi"])
def test_deadline_is_honoured_on_a_hard_instance(backend):
    X, y = hard_instance()
    start = time.perf_counter()
    res = make_oracle("halfspace", backend=backend, time_limit=1).solve(X, y)
    wall = time.perf_counter() - start
    assert wall <= 2.5, f"{backend}: {wall:.2f} s for a 1 s limit"
    assert res.status == "time_limit" and not res.certified
    assert res.objective == res.hypothesis.loss(X, y, np.ones(400)) and res.bound <= res.objective


def _check_licence_answer(res, row, X, y) -> None:
    assert res.status == "error" and not res.certified and res.details["licence_limit"] is True
    assert "licence" in res.details["error"] and "2000" in res.details["error"]
    assert res.objective == res.hypothesis.loss(X, y, np.ones(len(y)))  # still a real hypothesis
    assert row["status"] == "error" and not row["certified"] and "licence" in row["error"]


@pytest.mark.parametrize("backend", ["gurobi", "gurobi-bc"])
def test_a_licence_limit_is_said_in_the_answer_and_the_bench_row(backend, monkeypatch):
    """Whatever licence is installed: Gurobi's size-limit error (GurobiError 10010, raised where the solve
    starts) becomes an answer with status error, the limit named, and the same in a bench row."""
    import gurobipy
    from oraclepriv.solvers.peers import gurobi_env

    from oraclepriv.bench.mip import BenchInstance, run_one

    def refused(self, model, time_limit):
        raise gurobipy.GurobiError(10010, "Model too large for size-limited license")

    monkeypatch.setattr(gurobi_env.GuardedSolve, "run", refused)
    X, y, _ = grid_instance(0)
    res = make_oracle("halfspace", backend=backend, time_limit=2).solve(X, y)
    row = run_one(BenchInstance("refused", "halfspace", X, y, np.ones(len(y))), backend, 2.0)
    _check_licence_answer(res, row, X, y)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["gurobi", "gurobi-bc"])
def test_a_model_above_the_shipped_licence_size_is_refused_or_solved_honestly(backend):
    """2500 distinct points: 2500+ binaries, above the size-limited licence that ships with gurobipy. With
    that licence the answer says so; with an unrestricted one it is a real, honestly labelled answer."""
    from oraclepriv.bench.mip import BenchInstance, run_one

    rng = np.random.default_rng(1)
    X = rng.normal(size=(2500, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=2500) > 0).astype(int)
    res = make_oracle("halfspace", backend=backend, time_limit=2).solve(X, y)
    row = run_one(BenchInstance("too-big", "halfspace", X, y, np.ones(2500)), backend, 2.0)
    if res.details.get("licence_limit"):
        _check_licence_answer(res, row, X, y)
    else:  # an unrestricted licence: no error, a real hypothesis, a bound below it
        assert res.status != "error" and "licence" not in row["error"]
        assert res.objective == res.hypothesis.loss(X, y, np.ones(2500)) and res.bound <= res.objective + 1e-6
        assert not (backend == "gurobi" and res.certified)  # the big-M model never certifies


def test_nothing_reaches_stdout(capfd):
    X, y, w = grid_instance(0)
    for backend in ("gurobi", "gurobi-bc"):
        make_oracle("halfspace", backend=backend).solve(X, y, w)
    out, _ = capfd.readouterr()
    assert out == ""


def test_is_installed_needs_a_working_licence(monkeypatch):
    import oraclepriv.solvers.branch_and_cut.gurobi_bc as gurobi_bc_module
    from oraclepriv.solvers.peers import gurobi as gurobi_module

    from oraclepriv.backends import installed_backends

    assert {"gurobi", "gurobi-bc"} <= set(installed_backends("halfspace"))
    monkeypatch.setattr(gurobi_module, "licence_works", lambda: False)
    monkeypatch.setattr(gurobi_bc_module.genv, "licence_works", lambda: False)
    assert not {"gurobi", "gurobi-bc"} & set(installed_backends("halfspace"))


@pytest.mark.slow
def test_ctrl_c_stays_a_keyboard_interrupt():
    """Gurobi's own SIGINT handler would print "Interrupt request received" on stdout and end the
    solve as INTERRUPTED; both backends raise KeyboardInterrupt, print nothing, run no fallback."""
    from test_interrupts import _interrupt_each

    _interrupt_each(["gurobi", "gurobi-bc"])


COEXIST = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    for name in sys.argv[1].split(","):
        __import__(name)
    from oraclepriv import make_oracle
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) + 0.5 * rng.normal(size=40) > 0).astype(int)
    w = rng.integers(-3, 4, size=40).astype(float)
    out = {}
    for backend in ("gurobi", "gurobi-bc", "scip-bc", "highs"):
        res = make_oracle("halfspace", backend=backend).solve(X, y, w)
        out[backend] = [res.objective, res.certified, res.meets_bound]
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize(
    "order",
    [
        pytest.param("gurobipy,pyscipopt,highspy", marks=pytest.mark.slow),
        pytest.param("pyscipopt,highspy,gurobipy", marks=pytest.mark.slow),
    ],
)
def test_gurobipy_beside_pyscipopt_and_highspy_in_one_process(order):
    proc = subprocess.run([sys.executable, "-c", COEXIST, order], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"unexpected output on stdout:\n{proc.stdout}"
    out = json.loads(lines[0])
    assert out["gurobi-bc"][1] and out["scip-bc"][1] and out["highs"][1]
    assert out["gurobi-bc"][0] == out["scip-bc"][0] == out["highs"][0]
    assert not out["gurobi"][1] and out["gurobi"][0] >= out["scip-bc"][0]


# -- longer checks ---------------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), d=st.integers(1, 3))
def test_many_random_instances_against_brute_force(data, d):
    check_both_against_brute_force(*data.draw(instances(points(d, min_n=1, max_n=8))))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4, 16))
def test_many_grids_and_duplicates_against_enumerate(seed):
    X, y, w = grid_instance(seed) if seed % 3 else duplicated_noisy(seed)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w).objective
    res = make_oracle("halfspace", backend="gurobi-bc").solve(X, y, w)
    check_exact(res, truth, w)
    assert res.certified
    for tolerances in ("margin", "default"):
        for gamma in (1e-3, 1e-5):
            big_m = make_oracle("halfspace", backend="gurobi", gamma=gamma, tolerances=tolerances).solve(X, y, w)
            check_restricted(big_m, truth, w)
