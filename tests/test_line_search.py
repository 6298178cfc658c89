"""The line searches that polish direction-bb's incumbents (solvers/combinatorial/line_search.py).

The search is a heuristic, so the checks are about what it claims: each 1-D sweep finds the lowest
loss along its line (against evaluating every open step by brute force), the step it returns
realises the loss it reports, and the search never returns a worse halfspace than it was given.
Exactness of direction-bb with the search on is covered by tests/test_direction_bb.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.combinatorial.line_search import _step_losses, improve_by_line_search


def _loss(Z: np.ndarray, theta: np.ndarray, w_pos: np.ndarray, w_neg: np.ndarray) -> float:
    return float(np.where(Z @ theta >= 0, w_neg, w_pos).sum())


def _brute_line(Z, theta, delta, w_pos, w_neg) -> float:
    """The lowest loss over the open steps of theta + s delta: evaluate every step's midpoint and
    a point beyond each end."""
    a, b = Z @ theta, Z @ delta
    s = np.unique(-a[b != 0] / b[b != 0])
    if not s.size:
        return np.inf
    probes = [s[0] - max(1.0, abs(s[0]))] + list((s[:-1] + s[1:]) / 2) + [s[-1] + max(1.0, abs(s[-1]))]
    return min(_loss(Z, theta + p * delta, w_pos, w_neg) for p in probes)


def _instance(seed: int, G: int, d: int, signed_like: bool):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((G, d))
    labels = rng.random(G) < 0.5
    w = rng.exponential(5.0, G) if signed_like else np.ones(G)
    w_pos, w_neg = np.where(labels, w, 0.0), np.where(labels, 0.0, w)
    return rng, U, w_pos, w_neg


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(2, 40), d=st.integers(1, 4), heavy=st.booleans())
def test_each_sweep_finds_the_best_open_step_and_realises_it(seed, G, d, heavy):
    rng, U, w_pos, w_neg = _instance(seed, G, d, heavy)
    Z = np.column_stack([U, -np.ones(G)])
    theta = rng.standard_normal(d + 1)
    deltas = rng.standard_normal((5, d + 1))
    losses, steps = _step_losses(Z, theta, deltas, w_pos, w_neg)
    for k in range(len(deltas)):
        expected = _brute_line(Z, theta, deltas[k], w_pos, w_neg)
        assert losses[k] == pytest.approx(expected, abs=1e-9)
        # the reported step lies in an open step of that loss
        assert _loss(Z, theta + steps[k] * deltas[k], w_pos, w_neg) == pytest.approx(losses[k], abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), G=st.integers(3, 60), d=st.integers(1, 5), heavy=st.booleans())
def test_the_search_never_worsens_and_beats_the_best_offset_of_its_start(seed, G, d, heavy):
    rng, U, w_pos, w_neg = _instance(seed, G, d, heavy)
    normal = rng.uniform(-1, 1, d)
    threshold = float(rng.standard_normal())
    start = _loss(np.column_stack([U, -np.ones(G)]), np.append(normal, threshold), w_pos, w_neg)
    v, t, loss = improve_by_line_search(U, w_pos, w_neg, normal, threshold, rng)
    assert loss == pytest.approx(_loss(np.column_stack([U, -np.ones(G)]), np.append(v, t), w_pos, w_neg), abs=1e-9)
    assert loss <= start + 1e-9
    # the offset axis alone is one of the first round's lines, so the search is at least as good
    # as the exact best offset of the starting normal (strictly separating cuts)
    a = U @ normal
    order = np.argsort(a)
    cuts = [np.inf, -np.inf] + list((a[order][:-1] + a[order][1:]) / 2)
    best_cut = min(_loss(np.column_stack([U, -np.ones(G)]), np.append(normal, c), w_pos, w_neg) for c in cuts)
    assert loss <= best_cut + 1e-9


def test_the_search_improves_a_poor_start_on_separable_data():
    rng = np.random.default_rng(3)
    U = rng.standard_normal((200, 4))
    labels = U @ np.array([1.0, -2.0, 0.5, 1.0]) >= 0.2
    w_pos, w_neg = labels.astype(float), (~labels).astype(float)
    v, t, loss = improve_by_line_search(U, w_pos, w_neg, np.array([1.0, 0.0, 0.0, 0.0]), 0.0, rng)
    start = _loss(np.column_stack([U, -np.ones(200)]), np.array([1.0, 0.0, 0.0, 0.0, 0.0]), w_pos, w_neg)
    assert start >= 40
    assert loss <= start / 4
