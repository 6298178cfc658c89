"""Algorithm 1 and steps 8-9 of Algorithm 2 of R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of
Private and Public Populations" (``docs/theory/ppm.md``): the candidate family, the class G, and the exact
streaming scorer, checked against brute force (predict every g ∈ G and count)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oraclepriv.ppm import ClassG, a_constr_half, brute_force_mistakes, score_class
from oraclepriv.ppm.constr_half import project
from oraclepriv.ppm.hypothesis import polytope_complement_from_dict


def _instance(rng, d, n_pub, n_priv, kind="uniform", noise=0.2):
    n = n_pub + n_priv
    if kind == "grid":
        X = rng.integers(-2, 3, size=(n, d)).astype(float)
    else:
        X = rng.uniform(-1, 1, size=(n, d))
    if kind == "flat" and d >= 2:
        X[:, 0] = 1.0  # a constant "bias" feature: Aff is a hyperplane
    if kind == "plane" and d == 3:
        X[:, 2] = X[:, 0] - 2 * X[:, 1]
    y = np.r_[np.zeros(n_pub), np.ones(n_priv)].astype(np.int8)
    y[rng.random(n) < noise] ^= 1  # scoring does not care about the privacy model
    return X, y


def _check_against_brute_force(X, y, X_pub, block=3, **kw):
    fam = a_constr_half(X_pub, **kw)
    G = ClassG(fam)
    scored = score_class(G, X, y, block=block)
    hist = scored.histogram()
    descs, m = brute_force_mistakes(G, X, y)
    assert len(descs) == G.size == hist.sum()
    np.testing.assert_array_equal(hist, np.bincount(m, minlength=len(y) + 1))
    # locate(m, .) enumerates exactly the members with m mistakes: the two-pass sampler is exact
    by_m: dict[int, list] = {}
    for desc, mi in zip(descs, m):
        by_m.setdefault(int(mi), []).append(desc)
    for mi, members in by_m.items():
        assert sorted(scored.members_with(mi), key=repr) == sorted(members, key=repr)
    assert dict(scored.members()) == dict(zip(descs, m.tolist()))
    return fam, G, scored


@pytest.mark.parametrize(
    "d,n_pub,n_priv,kind",
    [
        (1, 6, 7, "uniform"),
        (1, 1, 5, "uniform"),
        (2, 7, 6, "uniform"),
        (2, 8, 5, "uniform"),
        (2, 6, 6, "grid"),
        (2, 5, 5, "flat"),
        (2, 2, 5, "uniform"),
        (2, 1, 5, "uniform"),
        (3, 4, 4, "uniform"),
        (3, 4, 3, "plane"),
        (3, 4, 4, "grid"),
    ],
)
def test_fast_scorer_matches_brute_force(d, n_pub, n_priv, kind):
    rng = np.random.default_rng(100 * d + n_pub + n_priv)
    X, y = _instance(rng, d, n_pub, n_priv, kind)
    _check_against_brute_force(X, y, X[:n_pub])


def test_fast_scorer_matches_brute_force_affine_basis_mode():
    rng = np.random.default_rng(7)
    for kind in ("uniform", "flat", "grid"):
        X, y = _instance(rng, 2, 7, 6, kind)
        _check_against_brute_force(X, y, X[:7], support="affine-basis")


@settings(max_examples=25, deadline=None)
@given(
    d=st.integers(1, 2),
    n_pub=st.integers(1, 7),
    n_priv=st.integers(0, 6),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["uniform", "grid", "flat"]),
    block=st.integers(1, 6),
)
def test_fast_scorer_property(d, n_pub, n_priv, seed, kind, block):
    rng = np.random.default_rng(seed)
    X, y = _instance(rng, d, n_pub, n_priv, kind)
    _check_against_brute_force(X, y, X[:n_pub], block=block)


def test_d1_sorted_path_equals_generic_path():
    rng = np.random.default_rng(3)
    x = np.round(rng.uniform(0, 1, size=(400, 1)), 2)  # many ties, duplicates
    y = (rng.random(400) < 0.5).astype(np.int8)
    fam = a_constr_half(x[:150])
    G = ClassG(fam)
    fast = score_class(G, x, y).histogram()
    generic = score_class(G, x, y, allow_sorted_d1=False).histogram()
    np.testing.assert_array_equal(fast, generic)


def test_class_sizes_match_the_counting_formula():
    """|W| = Σ_{i=1}^{d} C(n_pub, i) in general position; |G| = 2 + Σ_{j=1}^{d} C(|C̃|, j)
    (docs/theory/ppm.md#feasible-sizes)."""
    rng = np.random.default_rng(0)
    for d, n_pub in [(1, 50), (2, 30), (3, 9)]:
        P = rng.normal(size=(n_pub, d))
        fam = a_constr_half(P)
        W = sum(math.comb(n_pub, i) for i in range(1, d + 1))
        assert fam.n_base == W and fam.size == 2 * W
        assert ClassG(fam).size == 2 + sum(math.comb(2 * W, j) for j in range(1, d + 1))
    # d = 1 (docs/theory/ppm.md#case-5): rays (-inf, p] and [p, inf) at the public points, plus ONES and
    # AFF0 (the constant 0 here)
    fam = a_constr_half(rng.uniform(size=(10, 1)))
    assert ClassG(fam).size == 2 + 20


def test_public_points_lie_on_their_hyperplanes_and_test_inside():
    """Closed membership (docs/theory/ppm.md#g1): each generating point is on its hyperplane within tau
    and inside both orientations."""
    rng = np.random.default_rng(1)
    for kind in ("uniform", "grid", "flat"):
        X, _ = _instance(rng, 2, 12, 0, kind)
        fam = a_constr_half(X)
        P = fam.points
        for u in range(fam.n_base):
            members = [i for i in fam.support[u] if i >= 0]
            proj = project(P[members], fam.normals[u : u + 1])[0]
            assert np.all(proj >= fam.lo[u]) and np.all(proj <= fam.hi[u])
            assert np.all(np.abs(proj - fam.offsets[u]) <= fam.tau)
        assert np.all(fam.aff.contains(P))


def test_grid_membership_is_exact():
    """Case 9 (docs/theory/ppm.md#case-9): on integer data the float membership equals exact integer
    orientation tests."""
    rng = np.random.default_rng(5)
    X = rng.integers(-6, 7, size=(40, 2)).astype(float)
    fam = a_constr_half(X[:15])
    P = fam.points
    pts = [(Fraction(int(a)), Fraction(int(b))) for a, b in X]
    for u in range(fam.n_base):
        members = [i for i in fam.support[u] if i >= 0]
        if len(members) < 2:
            continue
        (p1, p2), (q1, q2) = P[members[0]], P[members[1]]
        proj = project(X, fam.normals[u : u + 1])[0]
        inside = proj >= fam.lo[u]
        inside_minus = proj <= fam.hi[u]
        for i, (a, b) in enumerate(pts):
            # exact orientation of x relative to the line p -> q, in integers
            cross = (Fraction(q1) - Fraction(p1)) * (b - Fraction(p2)) - (Fraction(q2) - Fraction(p2)) * (
                a - Fraction(p1)
            )
            on_line = cross == 0
            assert inside_minus[i] and inside[i] if on_line else inside[i] != inside_minus[i]


def test_aff_aware_hyperplanes_cut_the_flat():
    """Aff-aware rule (docs/theory/ppm.md#aff-aware): with a constant feature, non-spanning subsets give
    hyperplanes that do NOT contain Aff."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(8, 2))
    X[:, 0] = 1.0
    fam = a_constr_half(X)
    assert fam.aff.dim == 1
    singles = [u for u in range(fam.n_base) if (fam.support[u] >= 0).sum() == 1]
    assert singles
    for u in singles:
        # normal lies in Aff's direction space: orthogonal to the complement
        assert abs(float(fam.normals[u] @ fam.aff.complement[:, 0])) < 1e-12


def test_dedupe_and_duplicate_public_points():
    """Duplicates (docs/theory/ppm.md#g6): duplicate public points are removed before W; the family equals
    the deduplicated one."""
    rng = np.random.default_rng(4)
    P = rng.normal(size=(6, 2))
    dup = np.vstack([P, P[:3], P[[0]]])
    a, b = a_constr_half(P), a_constr_half(dup[rng.permutation(len(dup))])
    assert a.fingerprint() == b.fingerprint()
    # three collinear points: their three pairs span one line (one base hyperplane after dedupe)
    line = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 3.0]])
    fam = a_constr_half(line, support="affine-basis")
    assert fam.n_subsets == 6 and fam.n_base == 4
    assert a_constr_half(line, support="affine-basis", dedupe=False).n_base == 6


def test_no_public_points_gives_ones_only():
    fam = a_constr_half(np.zeros((0, 3)))
    G = ClassG(fam)
    assert G.size == 1 and list(G.descriptors()) == [("ones",)]
    X = np.random.default_rng(0).normal(size=(5, 3))
    scored = score_class(G, X, np.array([1, 1, 0, 1, 0]))
    np.testing.assert_array_equal(np.flatnonzero(scored.histogram()), [2])


def test_hypothesis_round_trip():
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(10, 2))
    X[:, 1] = 0.5  # Aff is a line
    G = ClassG(a_constr_half(X))
    Xt = rng.uniform(-1, 1, size=(50, 2))
    Xt[:25, 1] = 0.5
    for desc in [("ones",), ("aff0",), (0,), (1, 5), (2, G.n_oriented - 1)]:
        h = G.hypothesis(desc)
        h2 = polytope_complement_from_dict(h.to_dict())
        np.testing.assert_array_equal(h.predict(Xt), h2.predict(Xt))
    with pytest.raises(ValueError, match="distinct"):
        G.hypothesis((1, 1))


def test_threads_and_tiling_do_not_change_the_result():
    rng = np.random.default_rng(8)
    X, y = _instance(rng, 2, 40, 40, "uniform", noise=0.1)
    G = ClassG(a_constr_half(X[:40]))
    runs = [score_class(G, X, y, workers=w, block=b) for w, b in [(1, 512), (2, 512), (2, 37), (1, 37)]]
    hists = [r.histogram() for r in runs]
    for h in hists[1:]:
        np.testing.assert_array_equal(h, hists[0])
    m = int(np.flatnonzero(hists[0])[1])
    assert sorted(runs[0].members_with(m)) == sorted(runs[2].members_with(m))
