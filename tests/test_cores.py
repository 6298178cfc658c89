"""``oraclepriv.solvers.branch_and_cut.cores``: the integer-only exact core check and the x-objective Farkas LP separator.

* :func:`verify_core` (fraction-free Bareiss + integer Cramer back substitution) is compared with
  a rational-arithmetic reference (the former implementation, kept here) on random, degenerate
  and badly scaled supports, and with the brute-force LP on small point sets;
* :meth:`Separator.min_cost_core` (Pfetsch's "min sum_i x_i lambda_i" separation used by the
  ``scip-bc`` handler) proposes subsets of ``keep`` that, once verified, are non-separable, answers
  None exactly when ``keep`` is separable, and follows its objective;
* :meth:`Separator.verify` is memoised and counts refusals (negative control: a refusing
  ``verify_core`` is seen through the memo).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from brute_force import halfspace_realizable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.branch_and_cut.cores import CoreStatus, Separator, verify_core
from oraclepriv.solvers.mip.milp import AffineScaling
from strategies import points

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference_verify(X, y, support) -> bool:
    """The rational-arithmetic check the integer version replaced (Gaussian elimination on Fractions)."""
    S = [int(i) for i in support]
    k = len(S)
    if k < 2:
        return False
    d = X.shape[1]
    s = [1 if y[i] == 1 else -1 for i in S]
    rows = [[Fraction(s[c] * float(X[S[c], j])) for c in range(k)] + [Fraction(0)] for j in range(d)]
    rows.append([Fraction(v) for v in s] + [Fraction(0)])
    rows.append([Fraction(1)] * k + [Fraction(1)])
    m = len(rows)
    for c in range(k):
        p = next((r for r in range(c, m) if rows[r][c] != 0), None)
        if p is None:
            return False
        rows[c], rows[p] = rows[p], rows[c]
        for r in range(m):
            if r != c and rows[r][c] != 0:
                f = rows[r][c] / rows[c][c]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[c])]
    if any(rows[r][k] != 0 for r in range(k, m)):
        return False
    lam = [rows[c][k] / rows[c][c] for c in range(k)]
    return all(v >= 0 for v in lam) and sum(lam) == 1


def radon_core(rng, d, scale=1.0):
    """d + 2 random points labelled by the signs of their affine dependency: a core."""
    X = rng.normal(size=(d + 2, d)) * scale
    A = np.vstack([X.T, np.ones(d + 2)])
    dep = np.linalg.svd(A)[2][-1]
    return X, (dep > 0).astype(int)


@pytest.mark.slow
def test_integer_verify_agrees_with_the_rational_reference():
    rng = np.random.default_rng(0)
    hits = 0
    for t in range(3000):
        d = int(rng.integers(1, 6))
        k = int(rng.integers(2, d + 3))
        kind = t % 4
        if kind == 0:
            X = rng.integers(-2, 3, size=(k, d)).astype(float)  # duplicates, collinear points
            y = rng.integers(0, 2, size=k)
        elif kind == 1:
            X = rng.normal(size=(k, d)) * 10.0 ** rng.integers(-8, 8, size=(k, d))  # wild scales
            y = rng.integers(0, 2, size=k)
        elif kind == 2:
            X, y = radon_core(rng, d, scale=10.0 ** rng.integers(-3, 4))
            k = d + 2
        else:
            X = rng.normal(size=(k, d))
            y = rng.integers(0, 2, size=k)
        got = verify_core(X, y, range(k))
        assert got == reference_verify(X, y, range(k)), (X, y)
        hits += got
    assert hits > 300  # the comparison exercised both answers


@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
def test_verified_sets_are_non_separable(data, d):
    X = data.draw(points(d, min_n=2, max_n=5))
    y = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=len(X), max_size=len(X))))
    S = list(range(len(X)))
    if verify_core(X, y, S):
        assert not halfspace_realizable(X, y)
    assert verify_core(X, y, S) == reference_verify(X, y, S)


@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
def test_min_cost_core_proposals(data, d):
    import highspy

    X = data.draw(points(d, min_n=2, max_n=8))
    n = len(X)
    y = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8)
    keep = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    cost = np.asarray(data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    sep = Separator(highspy, AffineScaling.fit(X).transform(X), y, X)
    S = sep.min_cost_core(keep, cost)
    sub = np.flatnonzero(keep)
    if S is None:  # a separable keep (or an LP failure, after which find_core proves nothing either)
        assert halfspace_realizable(X[sub], y[sub]) or sep.find_core(keep)[0] != CoreStatus.CORE
        return
    assert set(S.tolist()) <= set(sub.tolist())
    if sep.verify(S):
        assert not halfspace_realizable(X[S], y[S]), "a verified proposal must be non-separable"
    if not halfspace_realizable(X[sub], y[sub]):
        assert sep.find_core(keep)[0] != CoreStatus.SEPARABLE


def test_min_cost_core_follows_its_objective():
    """Two disjoint cores (a label-1 point inside a label-0 triangle, twice, far apart): the LP
    proposes the one whose points are cheap, and the other one when the costs swap."""
    import highspy

    tri = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    X = np.vstack([tri, tri + 100.0])
    y = np.array([0, 0, 0, 1, 0, 0, 0, 1], dtype=np.int8)
    sep = Separator(highspy, AffineScaling.fit(X).transform(X), y, X)
    keep = np.ones(8, dtype=bool)
    cheap_first = np.array([0.0] * 4 + [1.0] * 4)
    S = sep.min_cost_core(keep, cheap_first)
    assert S.tolist() == [0, 1, 2, 3] and sep.verify(S)
    S = sep.min_cost_core(keep, cheap_first[::-1].copy())
    assert S.tolist() == [4, 5, 6, 7] and sep.verify(S)
    keep[3] = keep[7] = False  # only label-0 points left: separable
    assert sep.min_cost_core(keep, cheap_first) is None


def test_verify_is_memoised_and_refusals_are_counted(monkeypatch):
    """Negative control: with a verify_core that refuses everything, Separator.verify refuses too
    (the memo never turns a refusal into a proof), counts the refusal once, and find_core reports
    the LP's proposal as UNVERIFIED rather than as a core."""
    import highspy
    import oraclepriv.solvers.branch_and_cut.cores as cores

    rng = np.random.default_rng(3)
    Xc, yc = radon_core(rng, 2)
    sep = Separator(highspy, AffineScaling.fit(Xc).transform(Xc), yc.astype(np.int8), Xc)
    calls = []
    real = cores.verify_core

    def counting(X, y, support):
        calls.append(tuple(support))
        return real(X, y, support)

    monkeypatch.setattr(cores, "verify_core", counting)
    assert sep.verify([0, 1, 2, 3]) and sep.verify([3, 2, 1, 0])
    assert len(calls) == 1  # memoised, in any order of the support

    sep2 = Separator(highspy, AffineScaling.fit(Xc).transform(Xc), yc.astype(np.int8), Xc)
    monkeypatch.setattr(cores, "verify_core", lambda X, y, support: False)
    assert not sep2.verify([0, 1, 2, 3]) and not sep2.verify([0, 1, 2, 3])
    assert sep2.unverified == 1
    status, S = sep2.find_core(np.ones(4, dtype=bool))
    assert status == CoreStatus.UNVERIFIED and S is not None


def test_verify_rejects_one_ulp_off():
    """Exact at float resolution, as before the rewrite."""
    eps = np.nextafter(0.5, 1.0) - 0.5
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5 + eps]])
    assert not verify_core(X, np.array([0, 0, 1]), [0, 1, 2])
    X[2, 1] = 0.5
    assert verify_core(X, np.array([0, 0, 1]), [0, 1, 2])


@pytest.mark.parametrize("d", [5, 10])
def test_radon_cores_in_higher_dimension(d):
    rng = np.random.default_rng(d)
    for _ in range(50):
        X, y = radon_core(rng, d)
        assert verify_core(X, y, range(d + 2))
        assert verify_core(X, 1 - y, range(d + 2))  # swapping the classes keeps the Radon partition
        flipped = y.copy()
        flipped[0] = 1 - flipped[0]  # one label against the affine dependency: separable
        assert not verify_core(X, flipped, range(d + 2))
