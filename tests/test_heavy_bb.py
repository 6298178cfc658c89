"""``heavy-bb`` (``solvers/combinatorial/heavy_bb.py``): exact on heavy signed weights, and its forcings must be proved.

The answers are compared with independent exact methods: ``enumerate`` in d <= 3 (random instances
with a few heavy signed weights among light ones, gridded points with duplicates and collinear
triples, equal heavy weights), the rational brute force on tiny n, and ``direction-bb`` on recorded
RRSPM calls in d = 4. The probe (a first search by the inner backend) is switched off so that the
branch-and-bound itself answers. Negative control: forcings accepted without the exact check give a
bound above the optimum on some instance, and the exactness check catches it.
"""

from __future__ import annotations

import numpy as np
import oraclepriv.solvers.combinatorial.heavy_bb as heavy_bb
import pytest
from brute_force import brute_halfspace_rational
from oraclepriv.solvers.combinatorial.heavy_bb import HEAVY_RATIO, heavy_points

from oraclepriv import make_oracle
from oraclepriv.bench.learner_calls import learner_calls

KINDS = ("general", "grid", "duplicates", "equal-heavy")


def instance(kind: str, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Light points of weight 1 (noisy labels of a halfspace) and 2-6 heavy points with signed weights
    of a few times :data:`HEAVY_RATIO` (random labels), in the geometry ``kind`` names."""
    rng = np.random.default_rng([d, seed, KINDS.index(kind)])
    n_light, n_heavy = int(rng.integers(10, 26)), int(rng.integers(2, 7))
    n = n_light + n_heavy
    if kind == "grid":  # small integer grid: duplicates and collinear points everywhere
        X = rng.integers(-2, 3, size=(n, d)).astype(float)
    else:
        X = rng.standard_normal((n, d))
    y = ((X @ rng.standard_normal(d) + 0.2 * rng.standard_normal(n)) >= 0).astype(int)
    if kind == "duplicates":  # copies of some points with the other label
        copies = rng.choice(n_light, size=4, replace=False)
        X[n_light - 4 : n_light] = X[copies]
        y[n_light - 4 : n_light] = 1 - y[copies]
    y[n_light:] = rng.integers(0, 2, size=n_heavy)
    w = np.ones(n)
    magnitude = np.full(n_heavy, 2.0 * HEAVY_RATIO) if kind == "equal-heavy" else rng.uniform(1.5, 6.0, n_heavy)
    w[n_light:] = magnitude * HEAVY_RATIO * rng.choice([-1.0, 1.0], size=n_heavy)
    return X, y, w


def solve(X, y, w):
    return make_oracle("halfspace", backend="heavy-bb", probe=0).solve(X, y, w)


def check_exact(res, truth: float, label: str) -> None:
    tol = res.tolerance
    assert res.bound <= truth + tol, f"{label}: bound {res.bound!r} exceeds the optimum {truth!r}: not a proved bound"
    assert res.certified, f"{label}: not certified ({res.status}, objective {res.objective!r}, bound {res.bound!r})"
    assert abs(res.objective - truth) <= tol, (
        f"{label}: certified objective {res.objective!r} but the optimum is {truth!r}"
    )


def enumerate_optimum(X, y, w) -> float:
    res = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    assert res.certified
    return res.objective


def test_heavy_points_are_the_heaviest_above_the_ratio():
    w = np.array([1.0, 1.0, 1.0, 3.0, HEAVY_RATIO, 10 * HEAVY_RATIO, 0.0])
    assert heavy_points(w).tolist() == [5, 4]
    assert heavy_points(np.ones(5)).size == 0
    assert heavy_points(np.zeros(0)).size == 0


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_exact_against_enumerate(kind, d):
    forcings = 0
    for seed in range(5):
        X, y, w = instance(kind, d, seed)
        res = solve(X, y, w)
        check_exact(res, enumerate_optimum(X, y, w), f"{kind} d={d} seed={seed}")
        assert res.objective == res.hypothesis.loss(X, y, w)
        forcings += res.details["cores_proved"]
    assert forcings > 0  # the forcings were used, not only the leaves' inner backend


def test_exact_against_the_rational_brute_force_on_tiny_degenerate_sets():
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.integers(-1, 2, size=(9, 2)).astype(float)  # a 3x3 grid: duplicates, collinear triples
        y = rng.integers(0, 2, size=9)
        w = np.ones(9)
        w[:3] = HEAVY_RATIO * rng.uniform(2, 5, 3) * rng.choice([-1.0, 1.0], 3)
        check_exact(solve(X, y, w), brute_halfspace_rational(X, y, w), f"grid seed={seed}")


def test_the_tree_branches_and_forces_on_recorded_rrspm_calls():
    for seed in range(2):
        call = learner_calls("rrspm", 4, 40, 8, seed)
        res = solve(call.X, call.y, call.w)
        truth = make_oracle("halfspace", backend="direction-bb").solve(call.X, call.y, call.w)
        assert truth.certified
        check_exact(res, truth.objective, f"rrspm d=4 seed={seed}")
        assert res.details["heavy_points"] >= 1 and res.nodes >= 1


def test_the_probe_alone_may_answer():
    X, y, w = instance("general", 2, 0)
    res = make_oracle("halfspace", backend="heavy-bb").solve(X, y, w)
    check_exact(res, enumerate_optimum(X, y, w), "probe")


def test_unverified_forcings_are_caught(monkeypatch):
    """Negative control: every least-squares answer taken as a forcing without the exact check."""
    cases = [(kind, d, seed) for kind in ("general", "grid") for d in (2, 3) for seed in range(4)]
    truths = {case: enumerate_optimum(*instance(*case)) for case in cases}
    monkeypatch.setattr(heavy_bb, "NNLS_RESIDUAL", 1e12)  # every residual accepted as a certificate
    for case in cases:  # with the exact check the proposals are refused: still exact
        check_exact(solve(*instance(*case)), truths[case], f"verified {case}")
    monkeypatch.setattr(heavy_bb, "verify_core", lambda X, y, support: True)
    caught = []
    for case in cases:
        try:
            check_exact(solve(*instance(*case)), truths[case], f"unverified {case}")
        except AssertionError as error:
            caught.append(str(error))
    assert any("not a proved bound" in c or "but the optimum is" in c for c in caught), caught


def test_options_are_checked():
    with pytest.raises(ValueError, match="probe"):
        make_oracle("halfspace", backend="heavy-bb", probe=-1.0)


def test_direction_bb_objective_limit_keeps_its_bound_proved():
    """The leaves' searches stop at the incumbent: below the optimum the bound is still proved (and reaches the
    limit), above it the search is the same exact search."""
    from oraclepriv.solvers.base import ReducedProblem
    from oraclepriv.solvers.combinatorial.direction_bb import DirectionBbBackend

    for seed in range(3):
        X, y, w = instance("general", 3, seed)
        y = np.where(w < 0, 1 - y, y)
        w = np.abs(w)
        truth = enumerate_optimum(X, y, w)
        problem = ReducedProblem("halfspace", X, y.astype(np.int8), w)
        below = DirectionBbBackend(fallback="none").solve(problem, objective_limit=truth - 1.0)
        assert truth - 1.0 - 1e-6 <= below.bound <= truth + 1e-9
        above = DirectionBbBackend(fallback="none").solve(problem, objective_limit=truth + 1.0)
        assert above.status == "optimal" and above.hypothesis.loss(X, y, w) == pytest.approx(truth)
