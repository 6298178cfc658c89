"""The vectorised d = 3 sweep of the ``enumerate`` oracle against independent references.

* ``brute_force.brute_halfspace`` (LP over all 2^n labelings) on many seeded small instances
  (n <= 8): Gaussian points, integer grids with duplicates, coplanar and collinear subsets,
  signed weights of every kind.
* ``plane_reference`` below, for mid-size instances (n up to ~25) that the brute force cannot
  reach: the completeness formula of ``solvers/combinatorial/enumerate.py`` evaluated the slowest obvious way,
  with no code in common with the oracle: every plane through three data points, every point's
  side by an exact rational determinant, the points on the plane labelled by the best
  LP-realisable labeling (``brute_force.halfspace_realizable``), weights summed as Fractions.
* invariances that must hold exactly (coordinate permutations, power-of-two scalings far into
  overflow/underflow territory, block size of the vectorised sweep, float-exact vs filtered
  predicates) and the exact repair of misordered angular proposals.

``-m slow`` runs the same checks on many more instances.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import oraclepriv.solvers.combinatorial.enumerate_3d as enumerate_3d
import pytest
from brute_force import brute_halfspace, halfspace_realizable
from oraclepriv.solvers.combinatorial.enumerate import best_separable_set
from oraclepriv.solvers.combinatorial.geometry import float_is_exact, orient3d

from oraclepriv import make_oracle

ORACLE = make_oracle("halfspace", backend="enumerate")


# ---------------------------------------------------------------- instance families


def signed_weights(rng: np.random.Generator, n: int) -> np.ndarray:
    kind = rng.integers(4)
    if kind == 0:
        return rng.laplace(size=n)
    if kind == 1:
        return rng.integers(-3, 4, size=n).astype(float)  # ties and zeros
    if kind == 2:
        return -rng.exponential(size=n)  # all negative
    return rng.choice([-1.0, 1.0], size=n)  # unit weights, both signs


def points(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    """n points in R^3 of one family (integer-valued unless kind starts with 'gauss')."""
    if kind == "gauss":
        return rng.normal(size=(n, 3))
    if kind == "gauss-coplanar":  # a float-exact plane z = 0.5 and a float-exact line
        X = rng.normal(size=(n, 3))
        X[: n // 2, 2] = 0.5
        X[n // 2 : n // 2 + 3, :2] = 0.25
        return X
    if kind == "grid1":
        return rng.integers(-1, 2, size=(n, 3)).astype(float)
    if kind == "grid2":
        return rng.integers(-2, 3, size=(n, 3)).astype(float)
    if kind == "duplicates":
        base = rng.integers(-3, 4, size=(max(2, n // 2), 3)).astype(float)
        return base[rng.integers(len(base), size=n)]
    if kind == "tilted-plane":  # integer points on a tilted plane plus a few off it
        u, v = rng.integers(-2, 3, size=(2, 3))
        X = (rng.integers(-2, 3, size=(n, 2)) @ np.stack((u, v))).astype(float)
        X[: max(1, n // 3)] += rng.integers(-2, 3, size=(max(1, n // 3), 3))
        return X
    if kind == "lines":  # points on two integer lines plus a few others: many on-axis pairs
        p, q = rng.integers(-2, 3, size=(2, 3))
        t = rng.integers(-3, 4, size=n)
        X = np.where(
            (np.arange(n) % 2 == 0)[:, None],
            p + t[:, None] * np.array([1, 1, 0]),
            q + t[:, None] * np.array([0, 1, -1]),
        )
        X[: max(1, n // 4)] = rng.integers(-3, 4, size=(max(1, n // 4), 3))
        return X.astype(float)
    raise ValueError(kind)


KINDS = ["gauss", "gauss-coplanar", "grid1", "grid2", "duplicates", "tilted-plane", "lines"]


def instance(seed: int, kind: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = points(rng, kind, n)
    y = rng.integers(0, 2, size=n)
    if rng.random() < 0.2:
        y[:] = rng.integers(0, 2)
    return X, y, signed_weights(rng, n)


# ---------------------------------------------------------------- small n: the LP brute force


def check_against_brute_force(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
    res = ORACLE.solve(X, y, w)
    expected = brute_halfspace(X, y, w)
    assert res.certified and res.status == "optimal", (res.objective, res.bound, res.details)
    assert res.bound <= expected + res.tolerance
    if res.objective < expected - res.tolerance:
        # only possible if the LP reference missed a labeling realised by the returned halfspace
        assert not float_is_exact(X) and not halfspace_realizable(X, res.hypothesis.predict(X))
    else:
        assert abs(res.objective - expected) <= res.tolerance, (
            res.objective,
            expected,
            X.tolist(),
            y.tolist(),
            w.tolist(),
        )


def run_brute_force_cases(count: int, first_seed: int) -> None:
    for seed in range(first_seed, first_seed + count):
        kind = KINDS[seed % len(KINDS)]
        n = 4 + seed % 5  # 4..8
        X, y, w = instance(seed, kind, n)
        check_against_brute_force(X, y, w)


@pytest.mark.slow
def test_d3_matches_brute_force_seeded():
    run_brute_force_cases(210, first_seed=0)


@pytest.mark.slow
def test_d3_matches_brute_force_seeded_thorough():
    run_brute_force_cases(4000, first_seed=10_000)


# ---------------------------------------------------------------- mid-size n: an independent plane reference


def _fraction_rows(X: np.ndarray) -> list[tuple[Fraction, ...]]:
    return [tuple(Fraction(float(v)) for v in row) for row in X]


def plane_reference(X: np.ndarray, G: np.ndarray) -> Fraction:
    """max over separable S of sum_{x in S} G[x] for distinct points X of affine dimension 3.

    Every separable labeling with both labels present is, after rotating a separating plane onto
    data points, "one open side of a plane H through three non-collinear data points, plus a
    labeling of the points on H that a halfspace realises"; and every such combination is separable.
    """
    F = _fraction_rows(X)
    gains = [Fraction(float(g)) for g in G]
    n = len(F)
    best = max(Fraction(0), sum(gains))
    seen: set[tuple[int, ...]] = set()
    for i, j, k in itertools.combinations(range(n), 3):
        a, b, c = F[i], F[j], F[k]
        u = [b[t] - a[t] for t in range(3)]
        v = [c[t] - a[t] for t in range(3)]
        normal = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
        if not any(normal):
            continue  # collinear triple
        side = [sum(normal[t] * (p[t] - a[t]) for t in range(3)) for p in F]
        on = tuple(q for q in range(n) if side[q] == 0)
        if on in seen:
            continue
        seen.add(on)
        plus = sum((gains[q] for q in range(n) if side[q] > 0), Fraction(0))
        minus = sum((gains[q] for q in range(n) if side[q] < 0), Fraction(0))
        best = max(best, max(plus, minus) + _best_on_plane(X[list(on)], [gains[q] for q in on]))
    return best


def _best_on_plane(Xon: np.ndarray, gains: list[Fraction]) -> Fraction:
    """Best realisable labeling of the points on one plane: labelings by decreasing gain, the first
    the LP accepts (exact for small integer or well-conditioned points)."""
    k = len(gains)
    if k == 3:
        return sum((g for g in gains if g > 0), Fraction(0))  # 3 non-collinear points: all 8 labelings
    scored = sorted(
        (
            (sum((g for g, bit in zip(gains, bits) if bit), Fraction(0)), bits)
            for bits in itertools.product((0, 1), repeat=k)
        ),
        key=lambda item: -item[0],
    )
    for value, bits in scored:
        if halfspace_realizable(Xon, np.array(bits)):
            return value
    raise AssertionError("unreachable: constant labelings are realisable")


def merged(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    P, inverse = np.unique(X, axis=0, return_inverse=True)
    G = np.bincount(inverse.reshape(-1), weights=np.where(y == 1, w, -w), minlength=len(P))
    return P, G


def full_dimensional(P: np.ndarray) -> bool:
    return len(P) >= 4 and np.linalg.matrix_rank(P[1:] - P[0]) == 3


def run_plane_reference_cases(seeds: range, sizes: tuple[int, ...], kinds: list[str]) -> int:
    checked = 0
    for seed in seeds:
        kind = kinds[seed % len(kinds)]
        n = sizes[seed % len(sizes)]
        P, G = merged(*instance(seed, kind, n))
        if not full_dimensional(P):
            continue
        best = best_separable_set(P, G)
        reference = plane_reference(P, G)
        scale = max(1.0, float(np.abs(G).sum()))
        assert abs(best.gain - float(reference)) <= 1e-9 * scale, (seed, kind, best.gain, float(reference))
        assert abs(float(G[best.mask].sum()) - best.gain) <= 1e-9 * scale
        assert halfspace_realizable(P, best.mask.astype(int)), (seed, kind)
        checked += 1
    return checked


@pytest.mark.slow
def test_d3_matches_plane_reference_mid_size():
    kinds = ["gauss", "gauss-coplanar", "tilted-plane", "lines", "duplicates"]
    assert run_plane_reference_cases(range(12), (12, 16, 20), kinds) >= 8


@pytest.mark.slow
def test_d3_matches_plane_reference_thorough():
    kinds = ["gauss", "gauss-coplanar", "tilted-plane", "lines", "duplicates", "grid1", "grid2"]
    assert run_plane_reference_cases(range(100, 260), (10, 14, 18, 22, 26), kinds) >= 100


def test_decimal_grid_near_degenerate_matches_plane_reference():
    """0.1-spaced decimal points: coplanar in decimal, not in float64, so the float angles misorder
    near-parallel planes and the exact repair runs; the exact rational reference must agree."""
    checked = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X = rng.integers(-5, 6, size=(14, 3)) / 10.0
        X[:6, 2] = X[:6, 0] * 0.3 + 0.1  # decimal-coplanar, float-near-coplanar
        P, G = merged(X, rng.integers(0, 2, size=14), rng.laplace(size=14))
        if not full_dimensional(P):
            continue
        best = best_separable_set(P, G)
        assert abs(best.gain - float(plane_reference(P, G))) <= 1e-9 * max(1.0, float(np.abs(G).sum()))
        checked += 1
    assert checked >= 3


# ---------------------------------------------------------------- exact invariances


def gain(P: np.ndarray, G: np.ndarray, **kwargs) -> float:
    return best_separable_set(P, G, **kwargs).gain


@pytest.mark.parametrize("seed", range(6))
def test_invariant_under_coordinate_permutation_and_point_order(seed):
    P, G = merged(*instance(seed, ["gauss", "grid2", "tilted-plane"][seed % 3], 30))
    reference = gain(P, G)
    rng = np.random.default_rng(seed)
    for perm in ([1, 2, 0], [2, 1, 0]):
        rows = rng.permutation(len(P))
        assert gain(P[rows][:, perm], G[rows]) == pytest.approx(reference, abs=1e-9 * max(1.0, np.abs(G).sum()))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # expected: the float filters overflow,
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # then the exact path decides
@pytest.mark.parametrize("exponent", [-700, -300, 300, 520])
def test_invariant_under_power_of_two_scaling(exponent):
    """Scaling by 2^k is exact, so every orientation sign is unchanged; at 2^-700 the norms are
    below the filter's underflow guard and at 2^520 the squared norms overflow, so the exact
    fallbacks decide every sign."""
    P, G = merged(*instance(7, "gauss-coplanar", 9))
    assert gain(P * 2.0**exponent, G) == pytest.approx(gain(P, G), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_filtered_predicates_agree_with_float_exact_ones_on_grids(seed):
    """On integer grids float arithmetic is exact; forcing the filtered path (many zero
    determinants, all sent to the exact fallback) must give the same optimum."""
    P, G = merged(*instance(seed, ["grid1", "grid2", "lines", "tilted-plane"][seed], 18))
    assert float_is_exact(P)
    assert gain(P, G, exact=False) == pytest.approx(gain(P, G, exact=True), abs=1e-12)


@pytest.mark.parametrize("kind", ["gauss", "grid2", "lines"])
def test_block_size_does_not_change_the_optimum(kind, monkeypatch):
    """One pair per block (every block generic or not on its own) vs the default blocks."""
    P, G = merged(*instance(3, kind, 25))
    reference = best_separable_set(P, G)
    monkeypatch.setattr(enumerate_3d, "_BLOCK_ENTRIES", 1)
    single = best_separable_set(P, G)
    assert single.gain == pytest.approx(reference.gain, abs=1e-12)
    assert float(G[single.mask].sum()) == pytest.approx(single.gain, abs=1e-9)


# ---------------------------------------------------------------- the exact repair of angular proposals


def exact_sorted(pts, i, j, members, sign):
    """Reference: the members' exact angular order about the axis, by a plain comparison sort."""
    import functools

    p, q = np.array(pts[i]), np.array(pts[j])

    def compare(u, v):
        return -int(orient3d(p, q, np.array(pts[u]), np.array(pts[v]))[0]) * sign[u] * sign[v]

    return sorted(members, key=functools.cmp_to_key(compare)), compare


@pytest.mark.parametrize("shuffle", ["adjacent-swaps", "random"])
def test_exact_angular_sort_repairs_proposals(shuffle):
    """Decimal points (near-parallel planes, exact fallbacks): a nearly sorted proposal is repaired
    by insertion; a random one exhausts the comparison budget and falls back to a full sort."""
    rng = np.random.default_rng(11)
    P = np.unique(rng.integers(-4, 5, size=(60, 3)), axis=0).astype(float) / 10.0
    i, j, m = 0, len(P) - 1, len(P) // 2
    # flipped directions in the half-turn [0, pi) starting at the half-plane of the axis and P_m
    side = orient3d(P[i], P[j], P[m], P)
    members = [m] + [k for k in range(len(P)) if side[k] != 0 and k not in (i, j)]
    flip = side < 0
    sign = np.where(flip, -1, 1).tolist()
    pts = [tuple(map(float, row)) for row in P]
    truth, compare = exact_sorted(pts, i, j, members, sign)
    proposal = list(truth)
    if shuffle == "random":
        rng.shuffle(proposal)
    else:
        for t in rng.integers(0, len(proposal) - 1, size=15):
            proposal[t], proposal[t + 1] = proposal[t + 1], proposal[t]
    proposal = np.array(proposal)
    adj = np.array(
        [int(orient3d(P[i], P[j], P[u], P[v])[0]) * sign[u] * sign[v] for u, v in zip(proposal[:-1], proposal[1:])],
        dtype=np.int8,
    )
    order, signs = enumerate_3d._exact_angular_sort(pts, i, j, proposal, flip, adj, False)
    assert sorted(order.tolist()) == sorted(members)
    assert (signs >= 0).all()
    assert all(compare(u, v) <= 0 for u, v in zip(order[:-1], order[1:]))
    # the same groups (exactly coplanar with the axis) as the reference order, in the same sequence
    assert [compare(u, v) for u, v in zip(order[:-1], order[1:])] == [
        compare(u, v) for u, v in zip(truth[:-1], truth[1:])
    ]
