"""direction-bb's store of open boxes (solvers/combinatorial/direction_pool.py) against a plain list model.

Random sequences of pushes, selections, removals and falling cutoffs (which is how the search uses
it) must leave exactly the boxes the model keeps, with their windows, through compactions and growth.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.combinatorial.direction_bounds import Window
from oraclepriv.solvers.combinatorial.direction_pool import MIN_CAPACITY, OpenBoxes


def _boxes(rng: np.random.Generator, m: int, d: int):
    lower = rng.uniform(-1, 0, (m, d))
    upper = lower + rng.uniform(0, 1, (m, d))
    bounds = rng.integers(0, 50, m).astype(float)
    window = Window(rng.standard_normal(m), rng.standard_normal(m) + 5, rng.uniform(0, 60, m))
    return lower, upper, bounds, window


def _rows(lower, upper, bounds, window):
    return sorted(
        tuple(np.concatenate([lo, hi, [b, wl, wh, wf]]))
        for lo, hi, b, wl, wh, wf in zip(lower, upper, bounds, window.lo, window.hi, window.floor)
    )


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 4), highest=st.booleans())
def test_open_boxes_match_a_list_model(seed, d, highest):
    rng = np.random.default_rng(seed)
    first = _boxes(rng, int(rng.integers(1, 300)), d)
    pool = OpenBoxes(*first)
    model = [list(r) for r in _rows(*first)]
    cutoff = np.inf
    for _ in range(15):
        if rng.random() < 0.3:
            cutoff = min(cutoff, float(rng.integers(10, 60)))
        model = [r for r in model if r[2 * d] < cutoff]
        assert pool.count(cutoff) == len(model)
        assert sorted(pool.open_bounds(cutoff)) == sorted(r[2 * d] for r in model)
        k = int(rng.integers(1, 200))
        slots = pool.select(k, cutoff, highest=highest)
        taken = pool.take(slots)
        taken_rows = _rows(*taken)
        assert len(taken_rows) == min(k, len(model))
        ranked = sorted(r[2 * d] for r in model)
        expected = ranked[::-1][: len(taken_rows)] if highest else ranked[: len(taken_rows)]
        assert sorted(r[2 * d] for r in taken_rows) == sorted(expected)
        pool.remove(slots)
        for row in taken_rows:
            model.remove(list(row))
        new = _boxes(rng, int(rng.integers(0, MIN_CAPACITY // 3)), d)
        pool.push(*new, cutoff=cutoff)
        model += [list(r) for r in _rows(*new) if r[2 * d] < cutoff]
    lower, upper, bounds, window = pool.take(pool.select(10**9, cutoff))
    assert _rows(lower, upper, bounds, window) == sorted(tuple(r) for r in model)
