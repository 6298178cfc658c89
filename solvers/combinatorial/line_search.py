"""Exact line searches that improve a halfspace: a local search for incumbents.

A halfspace {u : v . u >= t} is the homogeneous vector theta = (v, t), and a point u is predicted 1
when theta . (u, -1) >= 0. Along a line theta + s * delta every point's margin a_i + s * b_i changes
sign at most once, at s_i = -a_i / b_i, so the weighted 0-1 loss along the line is a step function
of s that one sort of the s_i and one cumulative sum give exactly (up to float rounding of the
margins). :func:`improve_by_line_search` moves theta to the middle of the best open step, over a few
directions at a time (the coordinate axes of (v, t) and random ones), until no direction improves.

This is a heuristic: what it returns is an upper bound only once the caller re-scores the halfspace
on the original points, which every caller does (``direction-bb``'s incumbents are re-scored before
they prune anything). Moving to the middle of an open step keeps every margin away from zero, so
the float labeling is the labeling the re-scoring sees unless points are closer than rounding.

Local search over hyperplanes is an old idea for the 0-1 loss; this version (exact 1-D sweeps over
homogeneous directions) is ours, and what it buys in ``direction-bb`` is measured in
``docs/solvers/direction-bb.md``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["improve_by_line_search"]

#: random directions per round, besides the d + 1 coordinate axes of (v, t)
RANDOM_DIRECTIONS = 8
#: rounds without improvement after which the search stops; at most MAX_ROUNDS rounds in all
MAX_ROUNDS = 30


def _step_losses(
    Z: np.ndarray, theta: np.ndarray, deltas: np.ndarray, w_pos: np.ndarray, w_neg: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each direction (rows of ``deltas``): the lowest loss over the open steps of the line
    theta + s * delta and the s in the middle of that step (0 when no step beats s = 0's step)."""
    a = Z @ theta  # (G,)
    b = deltas @ Z.T  # (K, G)
    K, G = b.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(b != 0, -a / b, np.inf)  # where each margin changes sign (inf: never)
    # at s -> -inf a point is predicted 1 iff b < 0, or b == 0 and a >= 0
    positive = (b < 0) | ((b == 0) & (a >= 0))
    start = np.where(positive, w_neg, w_pos).sum(axis=1)
    # crossing s_i flips point i: from 0 to 1 when b > 0, from 1 to 0 when b < 0
    delta_loss = np.where(b > 0, w_neg - w_pos, np.where(b < 0, w_pos - w_neg, 0.0))
    order = np.argsort(s, axis=1)
    s_sorted = np.take_along_axis(s, order, axis=1)
    loss_after = start[:, None] + np.cumsum(np.take_along_axis(delta_loss, order, axis=1), axis=1)
    # step j lies between s_sorted[j] and s_sorted[j + 1]; it is open only if it has positive length
    nxt = np.concatenate([s_sorted[:, 1:], np.full((K, 1), np.inf)], axis=1)
    valid = np.isfinite(s_sorted) & (nxt > s_sorted)
    loss_after = np.where(valid, loss_after, np.inf)
    j = loss_after.argmin(axis=1)
    rows = np.arange(K)
    best = loss_after[rows, j]
    lo, hi = s_sorted[rows, j], nxt[rows, j]
    middle = np.where(np.isfinite(hi), lo / 2 + hi / 2, lo + np.maximum(1.0, np.abs(lo)))
    # the step before the first break (s -> -inf) is also a candidate
    first = s_sorted[:, 0]
    before = np.isfinite(first) & (start < best)
    best = np.where(before, start, best)
    middle = np.where(before, first - np.maximum(1.0, np.abs(first)), middle)
    return best, middle


def improve_by_line_search(
    U: np.ndarray,
    w_pos: np.ndarray,
    w_neg: np.ndarray,
    normal: np.ndarray,
    threshold: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float, float]:
    """Local search from the halfspace {u : normal . u >= threshold} of the points ``U`` (rows; the
    weights of their label-1 and label-0 copies in ``w_pos``, ``w_neg``).

    Returns (normal, threshold, loss) of the best halfspace found, the loss as computed in float on
    ``U`` (the caller re-scores it). The given halfspace must have a finite threshold."""
    G, d = U.shape
    Z = np.column_stack([U, -np.ones(G)])
    theta = np.append(np.asarray(normal, dtype=np.float64), float(threshold))
    current = float(np.where(Z @ theta >= 0, w_neg, w_pos).sum())
    axes = np.eye(d + 1)
    stale = 0
    for _ in range(MAX_ROUNDS):
        scale = float(np.abs(theta).max()) or 1.0
        deltas = np.concatenate([axes, rng.standard_normal((RANDOM_DIRECTIONS, d + 1))]) * scale
        losses, steps = _step_losses(Z, theta, deltas, w_pos, w_neg)
        k = int(losses.argmin())
        if losses[k] < current - 1e-9 * max(1.0, abs(current)):
            theta = theta + steps[k] * deltas[k]
            current = float(np.where(Z @ theta >= 0, w_neg, w_pos).sum())
            stale = 0
        else:
            stale += 1
            if stale >= 2:
                break
    return theta[:d], float(theta[d]), current
