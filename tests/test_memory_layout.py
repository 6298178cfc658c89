"""Fortran-ordered data (pandas' ``to_numpy()``) is accepted without a copy and solved identically.

``as_features`` keeps a contiguous input's layout (forcing C order would copy the private data in every
learner fit), so every backend must give the same answer on C- and
Fortran-ordered copies of the same points.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from oraclepriv import make_oracle
from oraclepriv.learners import RRSPM, Perturbation
from oraclepriv.learners._workspace import union
from oraclepriv.validation import as_features

BACKEND_CASES = [
    ("stump", "sweep", 3),
    ("threshold", "sweep", 1),
    ("halfspace", "enumerate", 2),
    ("halfspace", "highs", 3),
    ("halfspace", "scip", 3),
    ("halfspace", "scip-bc", 3),
    ("halfspace", "naive-highs", 2),
    ("halfspace", "pyomo", 2),
    ("halfspace", "cpsat", 2),
    ("stump", "highs", 2),
]


def test_as_features_keeps_fortran_order_without_copy():
    X = np.asfortranarray(np.arange(12.0).reshape(6, 2))
    out = as_features(X)
    assert out.flags.f_contiguous and np.shares_memory(out, X)
    strided = np.arange(24.0).reshape(6, 4)[:, ::2]  # neither C nor F contiguous: copied to C
    out = as_features(strided)
    assert out.flags.c_contiguous and not np.shares_memory(out, strided)
    np.testing.assert_array_equal(out, strided)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("other", ["C", "F"])
def test_union_keeps_the_private_layout_and_values(order, other):
    rng = np.random.default_rng(0)
    top = np.asarray(rng.normal(size=(7, 3)), order=order)
    bottom = np.asarray(rng.normal(size=(2, 3)), order=other)
    y, yt, xi = rng.integers(0, 2, 7).astype(np.int8), np.array([1, 0], dtype=np.int8), np.array([-2.5, 4.0])
    with union(top, bottom, y, yt, xi) as (rows, labels, weights):
        np.testing.assert_array_equal(rows, np.vstack([top, bottom]))
        np.testing.assert_array_equal(labels, np.concatenate([y, yt]))
        np.testing.assert_array_equal(weights, np.concatenate([np.ones(7), xi]))
        assert (rows.flags.f_contiguous and not rows.flags.c_contiguous) == (order == "F")


def test_union_reuses_buffers_but_never_while_busy_or_across_threads():
    X, Z = np.ones((5, 2)), np.zeros((2, 2))
    y, yt = np.ones(5, dtype=np.int8), np.zeros(2, dtype=np.int8)
    with union(X, Z, y, yt, 1.0) as first:
        with union(2 * X, Z, y, yt, 3.0) as nested:  # busy: fresh arrays, the outer ones untouched
            assert not any(np.shares_memory(a, b) for a, b in zip(first, nested))
        np.testing.assert_array_equal(first[0][:5], X)
        np.testing.assert_array_equal(first[2], [1, 1, 1, 1, 1, 1, 1])
    assert not any(a.any() for a in first)  # zeroed on exit: no private record (or noise) stays behind
    with union(3 * X, Z, y, yt, 2.0) as again:  # released: the same buffers, rewritten
        assert all(np.shares_memory(a, b) for a, b in zip(first, again))
        np.testing.assert_array_equal(again[0][:5], 3 * X)
        np.testing.assert_array_equal(again[2][5:], [2.0, 2.0])
    seen = {}

    def other_thread():
        with union(X, Z, y, yt, 1.0) as arrays:
            seen["shares"] = any(np.shares_memory(a, b) for a, b in zip(arrays, again))

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert seen == {"shares": False}


@pytest.mark.parametrize("cls,backend,d", BACKEND_CASES)
def test_backends_agree_on_c_and_fortran_layout(cls, backend, d):
    rng = np.random.default_rng(11)
    n = 24
    X = np.round(4 * rng.normal(size=(n, d))) / 4  # a dyadic grid: cpsat is exact there
    y = rng.integers(0, 2, n)
    # signed weights; integer ones for cpsat (it rounds other weights and then does not certify)
    w = rng.integers(-5, 6, n).astype(float) if backend == "cpsat" else rng.laplace(0, 2, n)
    options = {"time_limit": 60} if backend not in ("sweep", "enumerate") else {}
    oracle = make_oracle(cls, backend=backend, **options)
    a = oracle.solve(np.ascontiguousarray(X), y, w)
    b = make_oracle(cls, backend=backend, **options).solve(np.asfortranarray(X), y, w)
    assert a.meets_bound and b.meets_bound  # certified, or (naive-highs) optimal over its restricted class
    assert a.objective == pytest.approx(b.objective, abs=1e-9)
    np.testing.assert_array_equal(a.hypothesis.predict(X), b.hypothesis.predict(X))


def test_learners_give_identical_output_on_fortran_data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(np.int8)
    Z = rng.normal(size=(12, 3))
    for make in (
        lambda: RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=3),
        lambda: Perturbation(epsilon=1.0, delta=1e-4, hypothesis_class="stump", J=3, random_state=3),
    ):
        c = make().fit(np.ascontiguousarray(X), y, X_public=np.ascontiguousarray(Z))
        f = make().fit(np.asfortranarray(X), y, X_public=np.asfortranarray(Z))
        assert c.hypothesis_.to_dict() == f.hypothesis_.to_dict()
