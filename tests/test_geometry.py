"""The exact predicates of ``solvers/combinatorial/geometry.py`` on degenerate points, against determinants
computed in rational arithmetic here: the scalar ``orient3d_sign`` (the comparison sort's predicate) gives the
sign ``orient3d`` gives, and the cross-product signs are the signs of the exact cross product."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from oraclepriv.solvers.combinatorial.geometry import (
    cross_component_signs,
    cross_signs,
    float_is_exact,
    orient3d,
    orient3d_sign,
)


def exact_det3(a, b, c, d) -> int:
    """Sign of det[b - a, c - a, d - a] in rational arithmetic."""
    u, v, w = ([Fraction(p[k]) - Fraction(a[k]) for k in range(3)] for p in (b, c, d))
    det = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])
    return (det > 0) - (det < 0)


def exact_cross(p, q, r) -> list[int]:
    """Signs of the components of (q - p) x (r - p) in rational arithmetic."""
    u = [Fraction(q[k]) - Fraction(p[k]) for k in range(3)]
    v = [Fraction(r[k]) - Fraction(p[k]) for k in range(3)]
    c = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    return [(x > 0) - (x < 0) for x in c]


def degenerate_quadruples(rng: np.random.Generator) -> list[np.ndarray]:
    """(4, 3) arrays: exactly coplanar integer points, coplanar decimal points (not exactly coplanar in float64),
    a point one ulp off a plane, collinear triples, repeated points, and each at the scales 2^-600 (products of
    differences underflow) and 2^500 (they overflow)."""
    out = []
    for _ in range(40):
        a, b, c = rng.integers(-5, 6, size=(3, 3)).astype(float)
        s, t = rng.integers(-3, 4, size=2)
        out.append(np.array([a, b, c, a + s * (b - a) + t * (c - a)]))  # coplanar on the integers
        dec = np.round(rng.uniform(-1, 1, size=(3, 3)), 1)
        out.append(np.array([*dec, dec[0] + 0.3 * (dec[1] - dec[0]) + 0.7 * (dec[2] - dec[0])]))  # decimal plane
        off = np.array([a, b, c, (a + b + c) / 3.0])
        off[3, 2] = math.nextafter(off[3, 2], math.inf)  # one ulp off the plane
        out.append(off)
        out.append(np.array([a, b, a + 2.0 * (b - a), c]))  # three collinear points
        out.append(np.array([a, a, b, c]))  # a repeated point
    scaled = [q * 2.0**k for q in out[:60] for k in (-600, 500)]
    return out + scaled


def test_the_scalar_orientation_is_the_exact_one_on_degenerate_points():
    rng = np.random.default_rng(0)
    cases = degenerate_quadruples(rng)
    zero = 0
    for q in cases:
        a, b, c, d = (tuple(float(v) for v in row) for row in q)
        truth = exact_det3(a, b, c, d)
        with np.errstate(over="ignore", invalid="ignore"):  # 2^500: the float filter overflows, exact path
            assert orient3d_sign(a, b, c, d) == truth == int(orient3d(*q)[0]), q
            for perm in ((b, a, c, d), (a, c, b, d), (d, b, c, a)):  # a transposition flips the sign
                assert orient3d_sign(*perm) == -truth
        zero += truth == 0
    assert zero > len(cases) // 4, "the cases must include many exactly degenerate quadruples"


def test_the_scalar_orientation_trusts_floats_only_where_every_product_is_exact():
    """``exact_floats`` skips the filter: right on a small integer grid, where float64 is exact."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        q = rng.integers(-8, 9, size=(4, 3)).astype(float)
        assert float_is_exact(q)
        pts = [tuple(float(v) for v in row) for row in q]
        assert orient3d_sign(*pts, exact_floats=True) == exact_det3(*pts)


@pytest.mark.parametrize("scale", [1.0, 2.0**-600, 2.0**500])
def test_cross_product_signs_are_exact_on_degenerate_points(scale):
    rng = np.random.default_rng(2)
    P = np.vstack([rng.integers(-3, 4, size=(12, 3)).astype(float), np.round(rng.uniform(-1, 1, (12, 3)), 1)]) * scale
    P[5] = P[0] + 2.0 * (P[1] - P[0])  # on the line through P[0] and P[1]: every component zero
    with np.errstate(over="ignore", invalid="ignore"):
        signs = cross_signs(P[0], P[1], P)
    assert [list(map(int, row)) for row in signs] == [exact_cross(P[0], P[1], r) for r in P]
    assert not signs[5].any()
    I, J, K = rng.integers(0, len(P), size=(3, 200))
    comp = rng.integers(0, 3, size=200)
    with np.errstate(over="ignore", invalid="ignore"):
        got = cross_component_signs(P, I, J, K, comp)
    assert [int(s) for s in got] == [exact_cross(P[i], P[j], P[k])[c] for i, j, k, c in zip(I, J, K, comp)]
