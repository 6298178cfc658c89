"""Numerically extreme but valid data (docs/theory/certification.md, "Extreme magnitudes").

Subnormal coordinates (~5e-324), 1e+-300 scales, columns of very different magnitudes and weights
near the ends of the float64 range are solved exactly, or refused up front with a ValueError that
names the argument and the limit, never a crash inside a backend or a hypothesis constructor
(before: "Halfspace: w and b must be finite" from enumerate at 5e-324, from cpsat at 1e-307,
"SCIP: error in input data" from scip-bc at weights of 1e25).

The reference is the brute force of ``tests/brute_force.py`` on the *unscaled* points: multiplying
a column by a power of two changes no halfspace labeling, so the optimum on X = G 2^k (column-wise)
is the optimum on G. Comparisons are relative to sum |w| (the certificate's own tolerance has an
absolute floor of 1e-9, meaningless for weights of 1e-300).
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_halfspace, brute_stump
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.exponents import COLUMN_SPAN
from strategies import grid_points, labels, points, signed_weights, wild_floats_column

from oraclepriv import make_oracle

#: column exponents: subnormal, near the bottom and top of the normal range, ordinary
SUBNORMAL = [-1074, -1070, -1060]
NORMAL = [-1010, -997, -500, -130, 0, 130, 500, 997, 1010]
#: weight exponents (scaling every weight by 2^m multiplies the optimum by 2^m)
WEIGHT_EXPONENTS = [-1000, -70, 0, 70, 1000]


@st.composite
def scaled_instances(draw, d: int):
    """(G, X, y, w): X = G with column j multiplied by 2^k_j exactly; signed weights scaled by 2^m."""
    integer = draw(st.booleans())
    G = draw(grid_points(d, 1, 6, lo=-4, hi=4) if integer else points(d, 1, 6))
    k = np.array([draw(st.sampled_from(SUBNORMAL + NORMAL if integer else NORMAL)) for _ in range(d)])
    X = np.ldexp(G, k)
    assume(np.isfinite(X).all() and np.array_equal(np.ldexp(X, -k), G))  # the scaling is exact
    y = draw(labels(G.shape[0]))
    w = np.ldexp(draw(signed_weights(G.shape[0])), draw(st.sampled_from(WEIGHT_EXPONENTS)))
    assume(np.isfinite(w).all() and np.isfinite(np.abs(w).sum()))
    return G, X, y, w


def _span(X: np.ndarray) -> int:
    """How many binades apart the largest magnitudes of X's non-zero columns are."""
    peaks = np.abs(X).max(axis=0)
    orders = [np.frexp(p)[1] for p in peaks if p > 0]
    return int(max(orders) - min(orders)) if orders else 0


def check_exact(res, optimum: float, w: np.ndarray, *, must_certify: bool) -> None:
    """bound <= optimum <= objective (relative to sum |w|); a certificate holds up to its own tolerance;
    ``must_certify``: certified and optimal relative to sum |w| (the exact backends)."""
    tol = 1e-9 * float(np.abs(w).sum())
    assert res.bound <= optimum + tol, f"bound {res.bound!r} above the optimum {optimum!r}"
    assert res.objective >= optimum - tol
    if res.certified:  # what a certificate promises (tau has an absolute floor of 1e-9)
        assert res.objective <= optimum + max(tol, res.tolerance)
    if must_certify:
        assert res.certified, (res.status, res.objective, res.bound, optimum)
        assert abs(res.objective - optimum) <= tol, (res.objective, optimum)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), d=st.integers(1, 3), backend=st.sampled_from([None, "scip-bc"]))
def test_extreme_scales_are_solved_exactly(data, d, backend):
    """The default backend (enumerate for d = 1, portfolio, i.e. direction-bb, for d = 2, 3) and scip-bc on scaled points and weights: certified
    and optimal, exactly as on the unscaled points."""
    G, X, y, w = data.draw(scaled_instances(d))
    if _span(X) > COLUMN_SPAN:  # no two float64 weights reach that far apart: refused, naming the limit
        with pytest.raises(ValueError, match=f"differ in magnitude by more than 2\\^{COLUMN_SPAN}"):
            make_oracle("halfspace", backend=backend).solve(X, y, w)
        return
    res = make_oracle("halfspace", backend=backend).solve(X, y, w)
    check_exact(res, brute_halfspace(G, y, w), w, must_certify=True)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    data=st.data(),
    d=st.integers(1, 3),
    backend=st.sampled_from(["highs", "scip", "pyomo", "cpsat", "scip-bc", "enumerate"]),
)
def test_extreme_scales_every_backend(data, d, backend):
    """Every halfspace backend: a proved bound and an honest answer on extreme data; the exact ones
    (all but cpsat, whose real-valued model is a heuristic) certify the optimum."""
    G, X, y, w = data.draw(scaled_instances(d))
    assume(_span(X) <= COLUMN_SPAN)
    res = make_oracle("halfspace", backend=backend).solve(X, y, w)
    check_exact(res, brute_halfspace(G, y, w), w, must_certify=backend != "cpsat")


@settings(max_examples=30, deadline=None)
@given(column=wild_floats_column(1, 7), data=st.data())
def test_stumps_on_any_floats_with_extreme_weights(column, data):
    """Stumps and thresholds need no scaling of X (the sweep is exact on any finite floats); their
    weights are scaled like a halfspace's."""
    n = column.shape[0]
    y = data.draw(labels(n))
    w = np.ldexp(data.draw(signed_weights(n)), data.draw(st.sampled_from(WEIGHT_EXPONENTS)))
    assume(np.isfinite(np.abs(w).sum()))
    res = make_oracle("stump").solve(column[:, None], y, w)
    check_exact(res, brute_stump(column[:, None], y, w), w, must_certify=True)


# -- reported failures, reproduced ------------------------------------------------------------------


def _grid_instance(seed: int = 0, n: int = 8, d: int = 2):
    rng = np.random.default_rng(seed)
    G = rng.integers(-4, 5, size=(n, d)).astype(float)
    return G, rng.integers(0, 2, n), rng.laplace(size=n)


@pytest.mark.parametrize("backend", [None, "scip-bc", "highs", "cpsat"])
def test_subnormal_coordinates_are_solved(backend):
    """Coordinates around 5e-324 (before: 'w and b must be finite' from the default backend)."""
    G, y, w = _grid_instance(1)
    X = G * 5e-324
    assert np.array_equal(X / 5e-324, G)  # small integers times the smallest subnormal: exact
    res = make_oracle("halfspace", backend=backend).solve(X, y, w)
    check_exact(res, brute_halfspace(G, y, w), w, must_certify=True)
    assert all(np.isfinite(res.hypothesis.w)) and np.isfinite(res.hypothesis.b)


@pytest.mark.parametrize("scale", [1e-307, 2.0**-1070, 2.0**-1060, 1e300])
def test_cpsat_at_tiny_and_huge_scales(scale):
    """cpsat failed for data scaled 1e-307 or smaller; now a proved bound and an honest answer, and
    a certificate where its exact (dyadic) model applies."""
    G, y, w = _grid_instance(2)
    X = G * scale
    assert np.array_equal(X / scale, G)
    res = make_oracle("halfspace", backend="cpsat").solve(X, y, w)
    dyadic = scale in (2.0**-1070, 2.0**-1060)  # powers of two keep the integer grid: cpsat's exact model
    check_exact(res, brute_halfspace(G, y, w), w, must_certify=dyadic)


def test_mixed_column_scales_and_huge_weights():
    """Columns at 1e-300 and 1e300 in one problem, with weights of 1e300 (before: scip-bc 'SCIP:
    error in input data', HiGHS treating the costs as infinite)."""
    G, y, w = _grid_instance(3, n=8, d=2)
    X = G * np.array([1e-300, 1e300])
    assert np.array_equal(X / np.array([1e-300, 1e300]), G)
    big = w * 1e300
    optimum = brute_halfspace(G, y, big)
    for backend in (None, "scip-bc", "highs", "scip"):
        check_exact(make_oracle("halfspace", backend=backend).solve(X, y, big), optimum, big, must_certify=True)


# -- refused up front ---------------------------------------------------------------------------------


def test_complex_inputs_are_refused():
    X = np.array([[1.0, 2.0], [3.0, 4.0 + 1e-3j]])
    for bad in (X, X.tolist()):
        with pytest.raises(ValueError, match="X must be real; got complex"):
            make_oracle("halfspace").solve(bad, [0, 1])
    with pytest.raises(ValueError, match="weights must be real; got complex"):
        make_oracle("stump").solve([[0.0], [1.0]], [0, 1], np.array([1.0, 1.0 + 0j]))
    with pytest.raises(ValueError, match="y must contain labels in \\{0, 1\\}; got complex"):
        make_oracle("stump").solve([[0.0], [1.0]], np.array([0, 1 + 0j]))


def test_weights_whose_sum_overflows_are_refused():
    """Before: objective inf, bound -inf. The limit is named."""
    with pytest.raises(ValueError, match=r"weights: the sum of \|weights\| overflows float64.*1.8e308"):
        make_oracle("stump").solve([[0.0], [1.0], [2.0]], [0, 1, 0], [1e308, -1e308, 1e308])


def test_a_column_too_wide_for_a_float64_halfspace_is_refused():
    """A column holding 1e300 and 1e-30: no float64 weight scores both ends. Two columns whose
    magnitudes are more than 2^2040 apart (5e-324 and 1e300): no two float64 weights span them."""
    X = np.array([[1e300, 0.0], [1e-30, 1.0], [0.0, 2.0]])
    with pytest.raises(ValueError, match=r"X: column 0 mixes magnitudes .* 1e-30"):
        make_oracle("halfspace").solve(X, [0, 1, 1])
    X = np.array([[5e-324, 1e300], [0.0, 0.0], [1e-323, -1e300]])
    with pytest.raises(ValueError, match=r"X: columns 0 and 1 differ in magnitude by more than 2\^2040"):
        make_oracle("halfspace", backend="scip-bc").solve(X, [0, 1, 1])
    # stumps need no float64 weight per column: the same data are fine there
    assert make_oracle("stump").solve(X, [0, 1, 1]).certified
