"""The backend registry (oraclepriv.backends): installed backends, defaults that only pick installed
solvers, backends given as names, classes or instances, third-party registration, learner options."""

from __future__ import annotations

import numpy as np
import pytest
from oraclepriv.solvers.base import SolverNotInstalledError
from oraclepriv.solvers.branch_and_cut.scip_bc import ScipBcBackend
from oraclepriv.solvers.combinatorial.sweep import SweepBackend
from oraclepriv.solvers.mip.highs import HighsBackend

from oraclepriv import make_oracle
from oraclepriv.backends import (
    available_backends,
    backend_class,
    installed_backends,
    register_backend,
    registered_backend,
    registry_snapshot,
    restore_registry,
    unregister_backend,
)
from oraclepriv.learners import RRSPM
from oraclepriv.oracle import default_backend


class MissingSolverBackend(ScipBcBackend):
    """scip-bc as it looks on a machine without its solver."""

    requires = ("oraclepriv_no_such_solver_package",)


def test_installed_backends_are_importable_and_support_their_classes():
    installed = installed_backends()
    assert {"sweep", "enumerate", "highs", "scip-bc"} <= set(installed)
    assert all(backend_class(name).is_installed() for name in installed)
    assert "enumerate" not in installed_backends("stump") and "sweep" in installed_backends("stump")
    assert not MissingSolverBackend.is_installed() and SweepBackend.is_installed()


def test_default_backend_falls_back_when_the_preferred_solver_is_missing():
    assert default_backend("halfspace", 500, 10) == "scip-bc"
    with registered_backend("scip-bc", MissingSolverBackend):
        assert default_backend("halfspace", 500, 10) == "highs"
        with pytest.raises(SolverNotInstalledError, match="oraclepriv_no_such_solver_package"):
            make_oracle("halfspace", backend="scip-bc")
    assert default_backend("halfspace", 500, 10) == "scip-bc"  # restored


def test_the_portfolio_runs_direction_bb_alone_when_scip_bc_is_missing(monkeypatch):
    from oraclepriv.solvers.branch_and_cut.scip_bc import ScipBcBackend

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5))
    y = (X[:, 0] > 0).astype(int)
    y[:4] = 1 - y[:4]
    reference = make_oracle("halfspace", backend="scip-bc").solve(X, y)
    monkeypatch.setattr(ScipBcBackend, "is_installed", classmethod(lambda cls: False))
    res = make_oracle("halfspace", backend="portfolio").solve(X, y)
    assert res.details["portfolio"] == "direction-bb" and res.certified
    assert res.objective == reference.objective


def test_make_oracle_takes_a_name_a_class_or_an_instance():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.integers(0, 2, 30)
    by_name = make_oracle("halfspace", backend="highs", method="cuts").solve(X, y)
    by_class = make_oracle("halfspace", backend=HighsBackend, method="cuts").solve(X, y)
    by_instance = make_oracle("halfspace", backend=HighsBackend(method="cuts")).solve(X, y)
    assert by_name.objective == by_class.objective == by_instance.objective and by_instance.backend == "highs"
    with pytest.raises(ValueError, match="already configured"):
        make_oracle("halfspace", backend=HighsBackend(), method="cuts")
    with pytest.raises(ValueError, match="Backend subclass or instance"):
        make_oracle("halfspace", backend=dict)


def test_third_parties_register_backends_by_name():
    class MySweep(SweepBackend):
        name = "my-sweep"

    snapshot = registry_snapshot()
    register_backend("my-sweep", MySweep)
    try:
        assert "my-sweep" in available_backends() and "my-sweep" in installed_backends("stump")
        assert make_oracle("stump", backend="my-sweep").solve(np.eye(3), [0, 1, 0]).certified
        with pytest.raises(ValueError, match="already registered"):
            register_backend("my-sweep", MySweep)
        register_backend("my-sweep", "oraclepriv.solvers.combinatorial.sweep:SweepBackend", replace=True)
    finally:
        unregister_backend("my-sweep")
    assert registry_snapshot() == snapshot
    for bad in (42, "no-colon"):
        with pytest.raises(ValueError, match="Backend subclass or a 'module:Class' string"):
            register_backend("bad", bad)
    with pytest.raises(ValueError, match="no backend named 'nope'"):
        unregister_backend("nope")
    restore_registry(snapshot)


def test_learners_take_backend_options():
    rng = np.random.default_rng(1)
    X, y, Z = rng.normal(size=(40, 2)), rng.integers(0, 2, 40), rng.normal(size=(4, 2))
    clf = RRSPM(epsilon=1.0, backend="highs", backend_options={"method": "cuts"}, random_state=0).fit(X, y, X_public=Z)
    assert clf.get_params()["backend_options"] == {"method": "cuts"}
    with pytest.raises(ValueError, match="unknown option"):
        RRSPM(backend="highs", backend_options={"bogus": 1}).fit(X, y, X_public=Z)
    with pytest.raises(ValueError, match="proves its bounds only over halfspaces whose"):
        RRSPM(backend="highs", backend_options={"certify": "margin"}).fit(X, y, X_public=Z)
    with pytest.raises(ValueError, match="backend_options must be a dict"):
        RRSPM(backend="highs", backend_options=["cuts"]).fit(X, y, X_public=Z)


@pytest.mark.parametrize("backend", ["gurobi", "gurobi-bc"])
def test_without_gurobipy_the_gurobi_backends_are_listed_but_not_installed_and_asking_names_the_package(
    backend, monkeypatch
):
    """The optional peers (extra [gurobi]) on a machine without gurobipy, as in CI: registered, never chosen or
    listed as installed, and asking for one is a one-line error naming what to install."""
    import sys

    from oraclepriv.backends import available_backends, installed_backends

    monkeypatch.setitem(sys.modules, "gurobipy", None)  # `import gurobipy` now fails, as when not installed
    assert backend in available_backends()
    assert backend not in installed_backends("halfspace")
    with pytest.raises(SolverNotInstalledError, match=rf"backend '{backend}' needs the gurobipy package"):
        make_oracle("halfspace", backend=backend)


@pytest.mark.parametrize(("d", "ran"), [(3, "direction-bb"), (6, "direction-bb"), (7, "scip-bc (lead"), (9, "scip-bc")])
@pytest.mark.slow
def test_the_portfolio_chooses_by_dimension_and_is_exact(d, ran):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(40, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    y[:6] = 1 - y[:6]
    w = rng.laplace(size=40)
    res = make_oracle("halfspace", backend="portfolio").solve(X, y, w)
    reference = make_oracle("halfspace", backend="enumerate" if d <= 3 else "scip-bc").solve(X, y, w)
    assert res.certified and reference.certified
    assert res.objective == pytest.approx(reference.objective, abs=res.tolerance)
    assert res.details["portfolio"].startswith(ran)


@pytest.mark.slow
def test_the_portfolio_hands_direction_bb_the_lead_s_halfspace_and_keeps_the_larger_bound():
    # d = 7, noisy (loss above the LP cap), a lead too short for scip-bc to finish: direction-bb starts from
    # scip-bc's halfspace
    rng = np.random.default_rng(11)
    X = rng.normal(size=(60, 7))
    y = (X[:, 0] > 0).astype(int)
    y[:12] = 1 - y[:12]
    res = make_oracle("halfspace", backend="portfolio", lead=0.0).solve(X, y)
    reference = make_oracle("halfspace", backend="scip-bc").solve(X, y)
    assert res.certified and res.objective == reference.objective
    assert res.details["portfolio"] == "scip-bc (lead 0 s), then direction-bb"
    assert res.details["lead_status"] in ("time_limit", "optimal")
    for bad in (-1, float("inf"), float("nan"), True, "1"):
        with pytest.raises(ValueError, match=f"lead must be a number of seconds >= 0.*got {bad!r}"):
            make_oracle("halfspace", backend="portfolio", lead=bad)


@pytest.mark.parametrize(
    ("n", "flipped", "tag"), [(30, 8, "scip-bc (lead 0 s), then direction-bb"), (100, 1, "scip-bc (start loss")]
)
def test_the_portfolio_in_d7_hands_over_to_direction_bb_only_above_the_switch(n, flipped, tag):
    # d = 7: a loss above the switch (a quarter of W / (d + 2), the cover-cut LP's cap in general position) after
    # the lead goes to direction-bb; start heuristics already at or below it leave the whole call to scip-bc; both
    # exact
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 7))
    y = (X[:, 0] + (n > 30) * X[:, 1] > 0).astype(int)
    y[:flipped] = 1 - y[:flipped]
    res = make_oracle("halfspace", backend="portfolio", lead=0.0).solve(X, y)
    reference = make_oracle("halfspace", backend="scip-bc").solve(X, y)
    assert res.certified and reference.certified and res.objective == reference.objective
    assert res.details["portfolio"].startswith(tag)
    assert res.details["lp_cap"] == pytest.approx(n / 9)


def _degenerate_points(kind: str, rng, n: int, d: int) -> np.ndarray:
    """Points of the kinds that break general-position assumptions, in d dimensions."""
    if kind == "duplicates":  # each point twice (the labels may conflict)
        half = rng.normal(size=((n + 1) // 2, d))
        return np.vstack([half, half])[:n]
    if kind == "plane":  # every point on one 2-dimensional plane, exactly (integer products; float products
        # of normals are coplanar only up to rounding, and then exact arithmetic rightly sees general position)
        return (rng.integers(-3, 4, size=(n, 2)) @ rng.integers(-2, 3, size=(2, d))).astype(float)
    return rng.integers(-1, 2, size=(n, d)).astype(float)  # "grid": {-1, 0, 1}^d, repeats likely


@pytest.mark.parametrize("kind", ["duplicates", "plane", "grid"])
@pytest.mark.parametrize(("d", "lead"), [(4, None), (6, None), (7, None), (7, 0.0), (8, 0.0)])
def test_the_portfolio_is_exact_on_degenerate_data_against_brute_force(kind, d, lead):
    """Every branch of the rule (direction-bb alone; scip-bc's lead; with lead 0, the hand-over to
    direction-bb from scip-bc's halfspace) on duplicates, coplanar points and grids with signed weights,
    against the independent brute force over all labelings (tests/brute_force.py)."""
    from brute_force import brute_halfspace

    rng = np.random.default_rng(100 * d + len(kind))
    n = 10
    X = _degenerate_points(kind, rng, n, d)
    y = rng.integers(0, 2, size=n)
    w = rng.integers(-3, 4, size=n).astype(float)
    truth = brute_halfspace(X, y, w, max_n=n)
    options = {} if lead is None else {"lead": lead}
    res = make_oracle("halfspace", backend="portfolio", **options).solve(X, y, w)
    assert res.certified and res.status == "optimal"
    assert res.objective == pytest.approx(truth, abs=1e-9)
    assert res.bound <= truth + 1e-9


@pytest.mark.parametrize(
    ("backend", "options", "message"),
    [
        ("direction-bb", {"fallback": "never"}, r"fallback must be one of \['auto', .*got 'never'"),
        ("direction-bb", {"fallback": 3}, "fallback must be one of .*got 3$"),
        ("direction-bb", {"batch": 0}, "batch must be a positive integer; got 0"),
        ("direction-bb", {"batch": 2.5}, "batch must be a positive integer; got 2.5"),
        ("direction-bb", {"max_boxes": True}, "max_boxes must be a positive integer; got True"),
        ("scip-bc", {"strategy": "greedy"}, "strategy must be one of .*got 'greedy'"),
        ("highs", {"gamma": float("nan")}, r"gamma must be in \[1e-06, 0.5\] \(margin on .*got nan"),
        ("highs", {"gamma": "wide"}, r"gamma must be a number in \[1e-06, 0.5\]; got 'wide'"),
        ("highs", {"certify": None}, "certify must be one of .*got None"),
        ("highs", {"method": "lagrange"}, "method must be one of .*got 'lagrange'"),
        ("cpsat", {"halfspace_model": "float"}, "halfspace_model must be one of .*got 'float'"),
    ],
)
def test_backend_options_are_checked_by_name_and_value(backend, options, message):
    """One set of validators (Backend.choice_option, number_option, int_option) for every backend: the message
    names the backend, the option, what it must be and the value given."""
    with pytest.raises(ValueError, match=f"backend '{backend}': {message}"):
        make_oracle("halfspace", backend=backend, **options)


def test_numpy_scalars_pass_the_option_validators():
    oracle = make_oracle("halfspace", backend="direction-bb", batch=np.int64(4), max_boxes=np.int32(1000))
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]])
    assert oracle.solve(X, np.array([0, 1, 0])).certified
    assert (
        make_oracle("halfspace", backend="highs", gamma=np.float64(0.01)).solve(X, np.array([0, 1, 0])).objective == 0
    )


def test_the_convex_backend_is_not_installed_without_highspy(monkeypatch):
    """The convex oracle's backend solves its QPs with highspy: the registry must not call it installed when
    highspy cannot be imported (it checks ``requires`` without importing)."""
    import importlib.util

    from oraclepriv.backends import CONVEX_BACKENDS

    assert CONVEX_BACKENDS.is_installed("highs-qp+kkt")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "highspy" else real_find_spec(name, *a)
    )
    assert not CONVEX_BACKENDS.is_installed("highs-qp+kkt")
