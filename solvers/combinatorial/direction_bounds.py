"""Interval bounds for ``direction-bb``: the weighted 0-1 loss over a box of halfspace normals.

The search of :mod:`oraclepriv.solvers.combinatorial.direction_bb` covers the normals of all halfspaces with boxes
on the faces of the cube [-1, 1]^d (every nonzero normal, scaled to sup-norm 1, lies on a face).
For a box it needs two numbers, both computed here for many boxes at once:

* a **lower bound** on the loss of every closed halfspace whose normal lies in the box, with any
  offset (:func:`region_lower_bounds`);
* the exact best loss of one normal in the box, its centre, with a labeling that a real halfspace
  provably realises (:func:`best_offsets`): an incumbent.

Coordinates. The points are grouped (identical points merged, each group with the weight W+ of its
label-1 points and W- of its label-0 points) and whitened, u = A (x - mu) with A = C^(-1/2) for the
covariance C (small eigenvalues clipped): an invertible affine map, so halfspaces of u are exactly
the halfspaces of x, and boxes of equal width cut the data about equally in every direction. Every
float error is bounded, never assumed away: ``tolerance[g]`` bounds, for every normal v with
|v|_inf <= 1, the difference between the float value of v . u_g computed here and the exact value
v . A (x_g - mu) (the rounding of u_g and of the dot product, with a safety factor of 8). Intervals
are widened by it, so the lower bound holds for the real numbers, not only for the floats.

Lower bound over a box. For a group g, the projection v . u_g over the box lies in an interval
[lo_g, hi_g] (interval arithmetic; the face coordinate is fixed). With offset t (predict 1 iff
v . u >= t), the group costs W-_g if t <= lo_g (surely predicted 1), W+_g if t > hi_g (surely
predicted 0) and at least min(W+_g, W-_g) in between. The sum of these step functions is minimised
over t exactly by a sweep over the 2G sorted interval ends (evaluated only after the last of equal
ends). As the box shrinks to a normal v whose cut separates the points strictly, the bound tends to
the exact loss of v's best offset, so the search converges wherever no d + 1 points lie on one
hyperplane near the optimum (at such degenerate normals it may not; the backend says so).

Crossing pairs. The sweep treats a group whose interval contains t as free (it costs only min(W+, W-)).
Two free groups can still be in each other's way: take i with W+ > W- and j with W- > W+ such that
v . u_i <= v . u_j for every v of the box (a *crossing pair*: max over the box of v . (u_i - u_j) <= 0,
one more interval computation, with its own proved rounding bound). No (v, t) of the box classifies
both as their larger weight says: if t <= v . u_i then v . u_j >= t and j is predicted 1, else i is
predicted 0. So one of them pays its excess, at least p = min(W+_i - W-_i, W-_j - W+_j), at every t
where the sweep counts neither excess, t in (lo_j, hi_i]. For a *matching* of crossing pairs (no group
in two pairs) these extra costs add up, and they enter the sweep as two more events per pair (+p at
lo_j, -p at hi_i); any matching gives a valid bound, and a larger one a stronger bound. The matching is
chosen per box, greedily, among the groups whose intervals meet the box's window (only those can be in a
useful pair), by a compiled kernel (:mod:`~oraclepriv.solvers.combinatorial.direction_kernels`). This is the
matching bound of a vertex cover of the crossing graph (each edge needs one endpoint wrong); it lifts the
bound of the boxes in which many free points are already out of order, which the search meets near the
optimum of every noisy instance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = ["WhitenedGroups", "Window", "best_offsets", "region_lower_bounds", "MAX_CELLS"]

EPS = float(np.finfo(np.float64).eps)
#: safety factor on the proved rounding-error bounds
ERROR_SAFETY = 8.0
#: eigenvalues of the covariance below this fraction of the largest are raised to it (A stays
#: well conditioned; any invertible A is exact, the clipping only affects how fast boxes shrink)
EIGEN_FLOOR = 1e-8
#: the points count as flat (lower-dimensional) below this ratio of covariance eigenvalues
FLAT_RATIO = 1e-12
#: boxes x 2G entries per vectorised batch (memory: about 40 bytes per entry)
MAX_CELLS = 1 << 22
#: a batch's sweep is split into groups of boxes (:func:`_buckets`) when the largest count of events
#: inside a window exceeds twice the mean plus this; the groups are cut at these quantiles of the
#: counts, none smaller than BUCKET_MIN boxes
BUCKET_SLACK = 8
BUCKET_QUANTILES = (0.5, 0.8, 0.95)
BUCKET_MIN = 16


@dataclass(frozen=True)
class WhitenedGroups:
    """The grouped, whitened points with their error bounds (module docstring).

    Attributes
    ----------
    U : (G, d) array
        Whitened group points u_g = A (x_g - mu), as computed in float64.
    tolerance : (G,) array
        Bound on |float(v . u_g) - exact v . A (x_g - mu)| for every |v|_inf <= 1.
    w_pos, w_neg : (G,) arrays
        Summed weights of the group's label-1 and label-0 points.
    A, mu :
        The whitening map (u = A (x - mu)); a normal v of u is the normal A^T v of x.
    group_of : (n,) int array
        The group of each original point.
    flat : bool
        The points span less than d dimensions, up to float precision (G <= d, or a covariance
        eigenvalue below FLAT_RATIO of the largest): a continuum of normals is then degenerate.
    """

    U: np.ndarray
    tolerance: np.ndarray
    w_pos: np.ndarray
    w_neg: np.ndarray
    A: np.ndarray
    mu: np.ndarray
    group_of: np.ndarray
    events: _Events
    flat: bool
    pairs: _Pairs | None = None

    @classmethod
    def build(cls, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> WhitenedGroups:
        X = np.asarray(X, dtype=np.float64)
        points, group_of = np.unique(X, axis=0, return_inverse=True)
        group_of = np.asarray(group_of).ravel()
        G, d = points.shape
        w_pos = np.bincount(group_of, weights=np.where(y == 1, w, 0.0), minlength=G)
        w_neg = np.bincount(group_of, weights=np.where(y == 1, 0.0, w), minlength=G)
        mu = points.mean(axis=0)
        centred = points - mu
        cov = np.atleast_2d(np.cov(centred.T)) if G > 1 else np.eye(d)
        values, vectors = np.linalg.eigh(cov)
        top = float(values.max()) if values.size and values.max() > 0 else 1.0
        flat = G <= d or bool(values.min() <= FLAT_RATIO * top)
        values = np.maximum(values, EIGEN_FLOOR * top)
        A = (vectors / np.sqrt(values)).T
        U = centred @ A.T
        # rounding of x - mu (one operation) and of the d-term dot product with A's rows
        gamma = (d + 2) * EPS / (1 - (d + 2) * EPS)
        coordinate_error = gamma * ((np.abs(points) + np.abs(mu)) @ np.abs(A).T)
        # |v| <= 1 coordinate-wise: the rounded u moves v . u by at most sum_j error_j. A d-term dot
        # product v . u rounds by at most gamma * sum_j |u_j| more, the 2d-term product that gives an
        # interval end (centre and radius, |c_j| + r_j <= 1 + 4 eps) and the sum with the tolerance
        # by at most 4 gamma sum_j |u_j| + 2 eps sum_j |u_j|: the factor 8 covers both
        tolerance = ERROR_SAFETY * (coordinate_error.sum(axis=1) + gamma * np.abs(U).sum(axis=1))
        return cls(U, tolerance, w_pos, w_neg, A, mu, group_of, _Events.of(U, tolerance, w_pos, w_neg), flat)

    def with_crossing_pairs(self, kernels: Any) -> WhitenedGroups:
        """The same groups with their candidate crossing pairs (module docstring), which the bounds then use;
        ``kernels`` is the compiled module that matches them
        (:func:`~oraclepriv.solvers.combinatorial.direction_compiled.choose`)."""
        return replace(self, pairs=_Pairs.of(self.U, self.tolerance, self.w_pos, self.w_neg, kernels))

    @property
    def size(self) -> int:
        return int(self.U.shape[0])

    @property
    def d(self) -> int:
        return int(self.U.shape[1])

    @property
    def total(self) -> float:
        return float(self.w_pos.sum() + self.w_neg.sum())

    def summation_slack(self) -> float:
        """A bound on the float error of any sum of group weights formed here (cumulative sums).

        With crossing pairs a sum has at most G more nonzero terms (a matching has at most G / 2 pairs, two
        events each; the pairs left out sit at +inf and add exact zeros) and its terms' magnitudes at most
        three times the total more (base, steps, and the matched pairs' 2 sum p <= 2 total): four times the
        slack without them covers both."""
        return (4.0 if self.pairs is not None else 1.0) * 4.0 * (2 * self.size + 2) * EPS * self.total


@dataclass(frozen=True)
class _Events:
    """The interval ends at which the sum of the groups' step functions changes.

    A group's cost steps from W- to min(W+, W-) at lo_g and from there to W+ at hi_g, so it
    changes at lo_g only if W- > W+ (by W+ - W-) and at hi_g only if W+ > W- (by W+ - W-): one
    event per group at most, none for a group with W+ = W-."""

    stacked: np.ndarray  # (2d, E): the event groups' points u, then side * |u|
    offset: np.ndarray  # (E,) side * tolerance
    step: np.ndarray  # (E,) change of the total cost when t passes the event

    @classmethod
    def of(cls, U: np.ndarray, tolerance: np.ndarray, w_pos: np.ndarray, w_neg: np.ndarray) -> _Events:
        keep = w_pos != w_neg
        side = np.where(w_pos[keep] > w_neg[keep], 1.0, -1.0)  # -1: the event is at lo_g, +1: at hi_g
        stacked = np.ascontiguousarray(np.concatenate([U[keep], side[:, None] * np.abs(U[keep])], axis=1).T)
        return cls(stacked, side * tolerance[keep], (w_pos - w_neg)[keep])


@dataclass(frozen=True)
class _Pairs:
    """What the compiled kernel needs to match crossing pairs per box (module docstring).

    Per event group (the groups with W+ != W-, in the events' order): its whitened point, tolerance and excess
    |W+ - W-|; ``plus`` and ``minus``, the label-1 (W+ > W-) and label-0 groups, each in the matching's fixed
    order (larger excess first); ``other_stacked`` and ``other_offset``, the other interval end of each group
    (lo for label-1, hi for label-0), computed like the events' ends; ``pair_error``, the factor of sum |delta| in
    a pair's rounding bound (delta and a (2d + 3)-term sum in any order, with the safety factor; a pair that
    passes the test has sum |delta| at least its tolerance, which covers the rounding of the tolerance's own
    addition); ``most``, the largest matching."""

    points: np.ndarray
    tolerance: np.ndarray
    excess: np.ndarray
    plus: np.ndarray
    minus: np.ndarray
    other_stacked: np.ndarray
    other_offset: np.ndarray
    pair_error: float
    most: int
    kernels: Any

    @classmethod
    def of(
        cls, U: np.ndarray, tolerance: np.ndarray, w_pos: np.ndarray, w_neg: np.ndarray, kernels: Any
    ) -> _Pairs | None:
        keep = np.flatnonzero(w_pos != w_neg)  # the groups with an event, in the events' order
        excess = np.abs(w_pos - w_neg)[keep]
        plus = np.flatnonzero(w_pos[keep] > w_neg[keep])  # event indices
        minus = np.flatnonzero(w_pos[keep] < w_neg[keep])
        if not plus.size or not minus.size:
            return None
        plus = plus[np.argsort(-excess[plus], kind="stable")]
        minus = minus[np.argsort(-excess[minus], kind="stable")]
        points = np.ascontiguousarray(U[keep])
        side = np.where(w_pos[keep] > w_neg[keep], 1.0, -1.0)
        other_stacked = np.ascontiguousarray(np.concatenate([points, -side[:, None] * np.abs(points)], axis=1).T)
        d = U.shape[1]
        gamma = (2 * d + 3) * EPS / (1 - (2 * d + 3) * EPS)
        pair_error = ERROR_SAFETY * (gamma + 2 * EPS) * (1 + gamma)
        return cls(
            points,
            np.ascontiguousarray(tolerance[keep]),
            np.ascontiguousarray(excess),
            plus.astype(np.int64),
            minus.astype(np.int64),
            other_stacked,
            -side * tolerance[keep],
            float(pair_error),
            int(min(plus.size, minus.size)),
            kernels,
        )

    def bounds(
        self, centre_radius: np.ndarray, events: _Events, base: float, window: Window, threshold: float
    ) -> tuple[np.ndarray, Window]:
        """The boxes' bounds and windows with each box's greedy matching of crossing pairs, from the compiled kernel
        (:mod:`~oraclepriv.solvers.combinatorial.direction_kernels`): the interval ends, the matching and the sweep in
        one pass per box, by the rules of :func:`region_lower_bounds`."""
        try:
            bounds, new_lo, new_hi = self._kernel_bounds(centre_radius, events, base, window, threshold)
        except SystemError as error:
            if _interrupted(error):
                raise KeyboardInterrupt from None
            raise
        return bounds, Window(new_lo, new_hi, np.minimum(window.floor, threshold))

    def _kernel_bounds(
        self, centre_radius: np.ndarray, events: _Events, base: float, window: Window, threshold: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.kernels.paired_bounds(
            np.ascontiguousarray(centre_radius, dtype=np.float64),
            events.stacked,
            events.offset,
            events.step,
            base,
            self.other_stacked,
            self.other_offset,
            self.points,
            self.tolerance,
            self.excess,
            self.plus,
            self.minus,
            self.pair_error,
            np.int64(self.most),
            np.ascontiguousarray(window.lo, dtype=np.float64),
            np.ascontiguousarray(window.hi, dtype=np.float64),
            np.ascontiguousarray(window.floor, dtype=np.float64),
            float(threshold),
        )


def _interrupted(error: BaseException) -> bool:
    """Whether a SystemError from the compiled kernel is a Ctrl-C: numba's dispatcher calls back into Python while the
    kernel runs (to unpickle its constants), and a KeyboardInterrupt raised there comes out as a chain of SystemErrors
    ("returned a result with an exception set") ending in it."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@dataclass(frozen=True)
class Window:
    """Per box: offsets t outside (lo, hi] are known to cost at least ``floor`` (raw, before the
    summation slack). A box's window is computed from its own sweep; its children inherit it, since
    a child's intervals lie inside its parent's and its costs are at least the parent's at every t.
    """

    lo: np.ndarray
    hi: np.ndarray
    floor: np.ndarray

    @classmethod
    def everything(cls, boxes: int) -> Window:
        return cls(np.full(boxes, -np.inf), np.full(boxes, np.inf), np.full(boxes, np.inf))

    def take(self, rows: np.ndarray) -> Window:
        return Window(self.lo[rows], self.hi[rows], self.floor[rows])

    @staticmethod
    def join(*windows: Window) -> Window:
        return Window(*(np.concatenate([getattr(w, f) for w in windows]) for f in ("lo", "hi", "floor")))


def region_lower_bounds(
    groups: WhitenedGroups,
    lower: np.ndarray,
    upper: np.ndarray,
    window: Window | None = None,
    threshold: float = np.inf,
) -> tuple[np.ndarray, Window]:
    """For each box [lower_k, upper_k] of normals (shape (B, d)), a lower bound on the loss of every
    halfspace {u : v . u >= t} with v in the box and any t (module docstring), and the box's window:
    the offsets where its cost may be below ``threshold`` (a raw value: the caller's pruning level plus
    the summation slack). Float sums of weights are not corrected here: subtract
    :meth:`WhitenedGroups.summation_slack` from the bounds before using them as proofs.

    The box is written as centre c +- radius r (r widened by 4 eps, so that the float centre and
    radius still cover the box: every coordinate is in [-1, 1]); then v . u ranges over
    c . u +- r . |u|, one matrix product of (c, r) with (u, +-|u|). Its rounding, and that of the
    sum with the tolerance, is at most 2 gamma_2d sum_j |u_j| + 2 eps sum_j |u_j|, within the
    tolerance's safety factor.

    Only the offsets inside the inherited ``window`` are swept: events at or below its lower end
    count for all of them, events at or above its upper end for none, and the cost outside it is at
    least its floor. The events inside are moved to the front by a partition and only they are
    sorted (deep in the search most events lie outside the window), per bucket of boxes with similar
    counts of them (:func:`_buckets`)."""
    events = groups.events
    B = lower.shape[0]
    window = Window.everything(B) if window is None else window
    base = float(groups.w_neg.sum())  # t below every interval: everything predicted 1
    if not events.step.size:
        return np.full(B, base), Window.everything(B)
    centre_radius = np.concatenate([lower / 2 + upper / 2, (upper - lower) / 2 + 4 * EPS], axis=1)
    if groups.pairs is not None:
        return groups.pairs.bounds(centre_radius, events, base, window, threshold)
    ends = centre_radius @ events.stacked
    ends += events.offset
    step = events.step
    below = ends <= window.lo[:, None]
    start = base + below @ step  # cost just above window.lo
    inside = ends < window.hi[:, None]
    inside &= ~below
    count = inside.sum(axis=1)
    bounds = np.minimum(start, window.floor)
    new_lo = np.where(start < threshold, window.lo, np.inf)
    new_hi = np.where(start < threshold, window.hi, -np.inf)
    # the events inside the windows, grouped by box (boxes in bucket order), each with its place in its box
    E = ends.shape[1]
    flat = np.flatnonzero(inside)
    order, cuts = _buckets(count)
    if order is not None:  # the events of the boxes in bucket order: move each box's run of events
        first_of = np.cumsum(count) - count
        count_in_order = count[order]
        first_in_order = np.cumsum(count_in_order) - count_in_order
        flat = flat[np.repeat(first_of[order] - first_in_order, count_in_order) + np.arange(flat.size)]
        count = count_in_order
    rows_in_order = np.arange(B) if order is None else order
    first_event = np.concatenate([[0], np.cumsum(count)])
    box_of = flat // E
    end_of = ends.ravel()[flat]
    step_of = step[flat - box_of * E]
    position = np.repeat(np.arange(B), count)  # the box's position in bucket order
    place = np.arange(flat.size) - first_event[position]
    for lo_box, hi_box in zip(cuts[:-1], cuts[1:]):
        rows = rows_in_order[lo_box:hi_box]
        span = slice(first_event[lo_box], first_event[hi_box])
        sweep = _sweep(position[span] - lo_box, place[span], end_of[span], step_of[span], start[rows], threshold)
        if sweep is None:
            continue
        low_bound, first_low, past_low, first_end = sweep
        bounds[rows] = np.minimum(bounds[rows], low_bound)
        any_low = np.isfinite(first_low)
        kept = start[rows] < threshold
        new_lo[rows] = np.where(any_low, np.minimum(new_lo[rows], first_low), new_lo[rows])
        past_low = np.where(np.isfinite(past_low), past_low, window.hi[rows])
        new_hi[rows] = np.where(
            any_low,
            past_low,
            np.where(kept, np.where(np.isfinite(first_end), first_end, window.hi[rows]), new_hi[rows]),
        )
    return bounds, Window(new_lo, new_hi, np.minimum(window.floor, threshold))


def _buckets(count: np.ndarray) -> tuple[np.ndarray | None, list[int]]:
    """The boxes split into buckets of similar counts of events inside their windows: an order of the
    boxes (None: as they are) and the cuts of that order into buckets (positions, from 0 to B).

    The sweep pads every box of a bucket to the bucket's largest count, so one box with many events
    would make every box of the batch pay for them; where the counts are spread (the learners' calls:
    a mean of about 40 inside events against a largest of about 140), the boxes are ordered by count
    and cut at quantiles. Any bucketing gives the same bounds."""
    B = count.size
    K = int(count.max()) if B else 0
    if K <= 2 * float(count.mean()) + BUCKET_SLACK or B < 4 * BUCKET_MIN:
        return None, [0, B]
    order = np.argsort(count, kind="stable")
    cuts = sorted({int(q * B) for q in BUCKET_QUANTILES if BUCKET_MIN <= int(q * B) <= B - BUCKET_MIN})
    return order, [0, *cuts, B]


def _sweep(
    row: np.ndarray, place: np.ndarray, end: np.ndarray, step: np.ndarray, start: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The sweep of :func:`region_lower_bounds` over the events inside the windows of some boxes.

    The events are given by their box (``row``, 0 to len(start) - 1), their place among that box's
    events, their interval end and their step. Returns, per box, the lowest cost at an event inside
    the window, the first such event where the cost is below ``threshold`` and the event after the
    last such (+inf where none), and the first event inside the window (+inf where none); None when
    no box has an event inside its window."""
    if not end.size:
        return None
    B = start.size
    K = int(place.max()) + 1
    # the events moved to the front of each row (padded with +inf)
    target = row * K + place
    key = np.full((B, K), np.inf)
    steps = np.zeros((B, K))
    np.put(key, target, end)
    np.put(steps, target, step)
    order = np.argsort(key, axis=1)
    order += (np.arange(B) * K)[:, None]
    sorted_ends = key.ravel()[order]
    finite = np.isfinite(sorted_ends)
    value = start[:, None] + np.cumsum(steps.ravel()[order], axis=1)  # padding steps are 0
    last_of_equal = np.ones(sorted_ends.shape, dtype=bool)
    last_of_equal[:, :-1] = sorted_ends[:, 1:] != sorted_ends[:, :-1]
    value = np.where(last_of_equal & finite, value, np.inf)
    # from the first to past the last place where the cost is below the threshold
    low = value < threshold
    any_low = low.any(axis=1)
    rows = np.arange(B)
    first = low.argmax(axis=1)
    last = K - 1 - low[:, ::-1].argmax(axis=1)
    past = np.where(last + 1 < K, sorted_ends[rows, np.minimum(last + 1, K - 1)], np.inf)
    first_low = np.where(any_low, sorted_ends[rows, first], np.inf)
    past_low = np.where(any_low, past, np.inf)
    return value.min(axis=1), first_low, past_low, sorted_ends[:, 0]


@dataclass(frozen=True)
class Offsets:
    """Best offsets of B normals (:func:`best_offsets`)."""

    loss: np.ndarray  # (B,) float sum of the weights the labeling misclassifies
    threshold: np.ndarray  # (B,) t: predict 1 iff v . u >= t (+-inf for the constants)
    margin: np.ndarray  # (B,) proved distance from t to the nearest exact projection (inf for constants)


def best_offsets(groups: WhitenedGroups, normals: np.ndarray) -> Offsets:
    """For each normal v (rows of ``normals``, |v|_inf <= 1), the offset t minimising the loss of
    {u : v . u >= t}, among the cuts that provably separate the exact projections: a cut between
    sorted neighbours p_i < p_j is allowed only if p_i + tol_i < p_j - tol_j, so the labeling it
    claims is realised by a real halfspace (the loss is an upper bound on the optimum). The two
    constants (t = +-inf) are always allowed."""
    B = normals.shape[0]
    p = normals @ groups.U.T
    order = np.argsort(p, axis=1)
    sp = np.take_along_axis(p, order, axis=1)
    st = groups.tolerance[order]
    below = np.concatenate([np.zeros((B, 1)), np.cumsum(groups.w_pos[order], axis=1)], axis=1)
    above = np.concatenate([np.cumsum(groups.w_neg[order][:, ::-1], axis=1)[:, ::-1], np.zeros((B, 1))], axis=1)
    loss = below + above  # cut k: the first k sorted groups predicted 0
    allowed = np.ones(loss.shape, dtype=bool)
    allowed[:, 1:-1] = (sp[:, 1:] - st[:, 1:]) > (sp[:, :-1] + st[:, :-1])
    loss = np.where(allowed, loss, np.inf)
    k = loss.argmin(axis=1)
    rows = np.arange(B)
    G = groups.size
    threshold = np.full(B, np.inf)
    margin = np.full(B, np.inf)
    threshold[k == 0] = -np.inf
    inner = (k > 0) & (k < G)
    if inner.any():
        lo_p, hi_p = sp[rows[inner], k[inner] - 1], sp[rows[inner], k[inner]]
        threshold[inner] = lo_p / 2 + hi_p / 2
        margin[inner] = np.minimum(
            threshold[inner] - lo_p - st[rows[inner], k[inner] - 1],
            hi_p - st[rows[inner], k[inner]] - threshold[inner],
        )
    return Offsets(loss[rows, k], threshold, margin)
