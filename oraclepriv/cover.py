"""Public covers: every labeling of the public points that a hypothesis class realizes, with one
representative hypothesis per labeling, computed from the public points alone.

This is the candidate set of the exponential-mechanism baseline
:class:`~oraclepriv.learners.public_cover_em.PublicCoverEM` (Wang, Lei, Fienberg, "Learning with
Differential Privacy: Stability, Learnability and the Sufficiency and Necessity of ERM Principle",
JMLR 2016, Algorithm 1 with Examples 3 and 7: the exponential mechanism over a finite, data-independent
cover; Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees", NeurIPS 2022,
Algorithm 5: the cover taken from the points themselves; ``docs/theory/public-cover-em.md``).
Because nothing here sees a private record, the cover is post-processing of public data: the
mechanism is private for *any* cover, complete or not
(``docs/theory/public-cover-em.md#privacy-for-any-cover``).

Enumeration per class (m public points, of which m' distinct values per feature):

* **thresholds** (h(x) = 1 iff x >= theta): theta = -inf, the m' - 1 midpoints between consecutive
  distinct values, +inf; m' + 1 labelings, all distinct. Complete.
* **stumps**: the same cuts for every feature and both signs, 2 d (m' + 1) hypotheses. With
  ``dedup=True`` (default) one representative per distinct labeling of the public points (the first
  in (feature, sign, theta) order), so the exponential mechanism's base measure is uniform over
  labelings; ``dedup=False`` keeps every (feature, sign, cut). Complete.
* **halfspaces** (h(x) = 1 iff w.x + b >= 0): a labeling of points in general position that a
  non-constant halfspace realizes is also realized by a hyperplane through d affinely independent
  points, pushed off them: move the hyperplane (keeping every point's side) until it touches d
  points, then perturb it so the touched points get any prescribed sides. So the cover is the two
  constant labelings plus, for every d-subset S, both orientations of the hyperplane through S and
  every sign pattern s in {+1, -1}^d for S: the perturbation (dw, db) = A_S^+ s (A_S = [Z_S, 1],
  minimum norm), scaled by half the largest step that keeps every other point on its side. Labelings
  are de-duplicated; of the hypotheses realizing one labeling the one with the largest margin
  (min_k |w.z_k + b| / ||w||) is kept, a cheap stand-in for the max-margin representative.
  Cost: C(m, d) 2^(d+1) candidate hypotheses, each scored on all m points. Cover's count, the
  number of labelings of m points in general position, is 2 sum_{i<=d} C(m - 1, i)
  (:func:`cover_count`); the tests check the enumeration against it and against a brute-force LP
  feasibility check of all 2^m labelings. If the points are not in general position (a d-subset
  is affinely dependent or another point lies on a subset's hyperplane), the labelings found are
  still realized by their representatives, but some may be missing: ``complete`` is then False.

Labelings are always those the representatives produce under the class's own rule (for
halfspaces w.z + b >= 0 in float64, recomputed after mapping back to the original coordinates), so a
cover never claims a labeling its representative does not produce.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations, islice

import numpy as np

from oraclepriv.hypotheses import Halfspace, Hypothesis, Stump, Threshold
from oraclepriv.integer_search import largest_holding
from oraclepriv.validation import as_features, as_labels

__all__ = [
    "PublicCover",
    "public_cover",
    "cover_count",
    "candidate_count",
    "largest_halfspace_cover",
    "CoverTooLargeError",
    "DEFAULT_MAX_CANDIDATES",
]

#: refuse to enumerate more halfspace candidates than this (C(m, d) 2^(d+1)); see ``max_candidates``
DEFAULT_MAX_CANDIDATES = 4_000_000
#: subsets per vectorised batch of the halfspace enumeration
_BATCH = 4096
#: relative tolerance for "affinely dependent" and "on the hyperplane"
_TOL = 1e-9


def cover_count(m: int, d: int) -> int:
    """Cover's function counting argument: labelings of m points in general position in R^d by
    affine halfspaces, 2 sum_{i=0}^{d} C(m - 1, i) (constants included)."""
    return 2 * sum(math.comb(m - 1, i) for i in range(min(d, m - 1) + 1))


def candidate_count(m: int, d: int) -> int:
    """Halfspace hypotheses the enumeration scores before de-duplication: C(m, d) 2^(d+1) + 2."""
    return math.comb(m, d) * 2 ** (d + 1) + 2


def largest_halfspace_cover(d: int, max_candidates: int = DEFAULT_MAX_CANDIDATES) -> int:
    """The most public points in d dimensions whose halfspace cover scores at most ``max_candidates``."""
    return largest_holding(lambda m: candidate_count(m, d) <= max_candidates)  # candidate_count grows with m


class CoverTooLargeError(ValueError):
    """A halfspace cover would score more candidates than ``max_candidates``.

    The message names the Python parameters; the attributes let a caller with other levers (the command
    line: the public file) say what to change in its own terms.

    Parameters
    ----------
    message : str
        The error message.
    m : int
        The number of public points.
    d : int
        The dimension.
    candidates : int
        The number of candidates the cover would score.
    limit : int
        The ``max_candidates`` it exceeds.
    """

    def __init__(self, message: str, *, m: int, d: int, candidates: int, limit: int) -> None:
        super().__init__(message)
        self.m, self.d, self.candidates, self.limit = m, d, candidates, limit


@dataclass
class PublicCover:
    """A finite hypothesis set built from public points only: parameters of every representative
    (one row per candidate) and what the enumeration proved about it."""

    hypothesis_class: str
    #: thresholds: (k, 1) [theta]; stumps: (k, 3) [feature, theta, sign]; halfspaces: (k, d + 1) [w, b]
    params: np.ndarray
    #: True when every labeling of the public points the class realizes is in the cover
    complete: bool
    n_public: int
    d: int
    #: candidate hypotheses scored before de-duplication
    n_scored: int
    dedup: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return int(self.params.shape[0])

    def __len__(self) -> int:
        return self.size

    def hypothesis_at(self, index: int) -> Hypothesis:
        """The representative hypothesis of candidate ``index``."""
        row = self.params[int(index)]
        if self.hypothesis_class == "threshold":
            return Threshold(float(row[0]))
        if self.hypothesis_class == "stump":
            return Stump(int(row[0]), float(row[1]), int(row[2]))
        return Halfspace(tuple(float(v) for v in row[:-1]), float(row[-1]))

    def hypotheses(self) -> Iterator[Hypothesis]:
        for i in range(self.size):
            yield self.hypothesis_at(i)

    def fingerprint(self) -> str:
        """SHA-256 of the class and the parameter array: equal covers have equal fingerprints."""
        h = hashlib.sha256(self.hypothesis_class.encode())
        h.update(np.ascontiguousarray(self.params, dtype=np.float64).tobytes())
        return h.hexdigest()

    def errors(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mistake counts of every candidate on (X, y), int64 of shape (k,), exact integers.

        Thresholds and stumps by sorting and prefix sums, O((n + k) log n) per feature; halfspaces
        by a chunked product X @ W^T, O(n k d), with the closed rule w.x + b >= 0 of
        :class:`~oraclepriv.hypotheses.Halfspace`."""
        X = as_features(X, "X")
        if X.shape[1] != self.d:
            raise ValueError(f"X has {X.shape[1]} features but the cover was built on {self.d}")
        y = as_labels(y, X.shape[0], "y")
        if self.hypothesis_class == "threshold":
            return _cut_errors(X[:, 0], y, self.params[:, 0], np.ones(self.size, dtype=np.int8))
        if self.hypothesis_class == "stump":
            out = np.empty(self.size, dtype=np.int64)
            features = self.params[:, 0].astype(np.int64)
            for j in np.unique(features):
                rows = np.flatnonzero(features == j)
                out[rows] = _cut_errors(X[:, j], y, self.params[rows, 1], self.params[rows, 2].astype(np.int8))
            return out
        return _halfspace_errors(X, y, self.params)

    def labelings(self, Z: np.ndarray) -> np.ndarray:
        """Predictions of every candidate on the rows of Z, bool of shape (k, len(Z))."""
        Z = as_features(Z, "Z")
        if self.hypothesis_class == "halfspace":  # the closed rule w.z + b >= 0, vectorised
            return ((Z @ self.params[:, : self.d].T + self.params[:, self.d]) >= 0).T
        x = Z[:, self.params[:, 0].astype(np.int64)] if self.hypothesis_class == "stump" else Z[:, [0] * self.size]
        theta = self.params[:, 1] if self.hypothesis_class == "stump" else self.params[:, 0]
        sign = self.params[:, 2] if self.hypothesis_class == "stump" else np.ones(self.size)
        return np.where(sign == 1, x >= theta, x <= theta).T


# ---------------------------------------------------------------------- scoring
def _cut_errors(x: np.ndarray, y: np.ndarray, thetas: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Mistakes of the cuts h(x) = 1 iff x >= theta (sign +1) / x <= theta (sign -1) on (x, y)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    ys = y[order].astype(np.int64)
    cum1 = np.concatenate(([0], np.cumsum(ys)))
    cum0 = np.concatenate(([0], np.cumsum(1 - ys)))
    ones, zeros = int(cum1[-1]), int(cum0[-1])
    out = np.empty(thetas.size, dtype=np.int64)
    up = signs == 1
    below = np.searchsorted(xs, thetas[up], side="left")  # x < theta: predicted 0
    out[up] = cum1[below] + (zeros - cum0[below])
    at_most = np.searchsorted(xs, thetas[~up], side="right")  # x <= theta: predicted 1
    out[~up] = cum0[at_most] + (ones - cum1[at_most])
    return out


def _halfspace_errors(X: np.ndarray, y: np.ndarray, params: np.ndarray) -> np.ndarray:
    n, d = X.shape
    W = np.ascontiguousarray(params[:, :d].T)  # (d, k)
    b = params[:, d]
    yb = y.astype(bool)[:, None]
    out = np.empty(params.shape[0], dtype=np.int64)
    step = max(1, 2_000_000 // max(n, 1))
    for lo in range(0, params.shape[0], step):
        hi = min(lo + step, params.shape[0])
        pred = (X @ W[:, lo:hi] + b[lo:hi]) >= 0
        out[lo:hi] = np.count_nonzero(pred != yb, axis=0)
    return out


# ---------------------------------------------------------------------- enumeration
def _cuts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cut points of one feature: (theta for sign +1, theta for sign -1), each of length m' + 1.

    Sign +1 (x >= theta) needs v_k < theta <= v_{k+1}; sign -1 (x <= theta) needs
    v_k <= theta < v_{k+1}. The midpoint satisfies both unless v_k and v_{k+1} are adjacent floats."""
    v = np.unique(values)
    mid = v[:-1] + (v[1:] - v[:-1]) / 2.0
    up = np.where(mid > v[:-1], mid, v[1:])
    down = np.where(mid < v[1:], mid, v[:-1])
    return (np.concatenate(([-np.inf], up, [np.inf])), np.concatenate(([-np.inf], down, [np.inf])))


def _threshold_cover(Z: np.ndarray) -> PublicCover:
    up, _ = _cuts(Z[:, 0])
    return PublicCover("threshold", up[:, None].copy(), True, Z.shape[0], 1, up.size)


def _stump_cover(Z: np.ndarray, dedup: bool) -> PublicCover:
    m = Z.shape[0]
    # set hashes of the labelings, without materialising them (2 d (m' + 1) rows of m labels would be
    # gigabytes at m ~ 10^4): a labeling is the set of points labelled 1, hashed as the sum mod 2^64
    # of fixed random 64-bit keys of its points; for one feature these sets are the suffixes
    # (sign +1) and prefixes (sign -1) of the points sorted by value, so prefix sums give them all
    keys = np.random.default_rng(0x5EED).integers(0, np.iinfo(np.uint64).max, size=m, dtype=np.uint64, endpoint=True)
    rows, hashes = [], []
    for j in range(Z.shape[1]):
        up, down = _cuts(Z[:, j])
        rows.append(np.column_stack([np.full(up.size, j), up, np.ones(up.size)]))
        rows.append(np.column_stack([np.full(down.size, j), down, -np.ones(down.size)]))
        values, rank = np.unique(Z[:, j], return_inverse=True)
        per_rank = np.zeros(values.size, dtype=np.uint64)
        np.add.at(per_rank, rank, keys)
        prefix = np.concatenate((np.zeros(1, np.uint64), np.cumsum(per_rank, dtype=np.uint64)))  # {rank < k}
        total = prefix[-1]
        hashes.append(total - prefix)  # sign +1, cut k: {rank >= k}  (uint64 arithmetic wraps mod 2^64)
        hashes.append(prefix)  # sign -1, cut k: {rank < k}
    params = np.concatenate(rows)
    scored = params.shape[0]
    if dedup:
        params = params[_dedup_by_hash(np.concatenate(hashes), params, Z)]
    return PublicCover("stump", params, True, m, Z.shape[1], scored, dedup)


def _dedup_by_hash(hashes: np.ndarray, params: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Indices (sorted) of the first stump of every distinct labeling of Z. Candidates with equal
    hashes are compared on their actual labelings, so a hash collision can never merge two."""
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    keep = [order[starts[counts == 1]]]
    for g in np.flatnonzero(counts > 1):
        members = order[starts[g] : starts[g] + counts[g]]
        labels = PublicCover("stump", params[members], True, Z.shape[0], Z.shape[1], members.size).labelings(Z)
        _, first = np.unique(_pack(labels), return_index=True)
        keep.append(members[first])
    return np.sort(np.concatenate(keep))


def _pack(labels: np.ndarray) -> np.ndarray:
    """Rows of a bool matrix as fixed-width byte strings (for np.unique)."""
    packed = np.ascontiguousarray(np.packbits(labels, axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


def _subsets(m: int, d: int) -> Iterator[np.ndarray]:
    """All d-subsets of range(m) in lexicographic order, in blocks of at most _BATCH rows."""
    it = combinations(range(m), d)
    while block := list(islice(it, _BATCH)):
        yield np.array(block, dtype=np.int64).reshape(-1, d)


def _halfspace_cover(Z: np.ndarray, max_candidates: int) -> PublicCover:
    m, d = Z.shape
    scored = candidate_count(m, d) if m >= d else 2
    if scored > max_candidates:
        raise CoverTooLargeError(
            f"the halfspace cover of m={m} public points in d={d} dimensions scores C(m, d) 2^(d+1) = {scored:,} "
            f"candidates, above max_candidates={max_candidates:,}; use fewer public points (max_public) "
            "or raise max_candidates",
            m=int(m),
            d=int(d),
            candidates=int(scored),
            limit=int(max_candidates),
        )
    # an affine change of coordinates maps halfspaces to halfspaces: work on centred points with
    # every feature in [-1, 1] (tolerances then mean the same for any units), map (w, b) back
    center = Z.mean(axis=0)
    spread = np.abs(Z - center).max(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    Zs = (Z - center) / spread
    complete = True
    notes: list[str] = []
    signs = np.array(list(np.ndindex(*(2,) * d)), dtype=np.float64) * 2 - 1 if d else np.zeros((1, 0))
    keys, margins, params = [], [], []
    # the two constant labelings (w = 0), preferred as representatives of all-0 / all-1
    const = np.zeros((2, d + 1))
    const[0, d], const[1, d] = 1.0, -1.0
    params.append(const)
    margins.append(np.full(2, np.inf))
    keys.append(_pack(np.stack([np.ones(m, bool), np.zeros(m, bool)])))
    if m >= d:
        for S in _subsets(m, d):
            A = np.concatenate([Zs[S], np.ones(S.shape + (1,))], axis=2)  # (B, d, d + 1)
            _, sv, Vt = np.linalg.svd(A)
            ok = sv[:, -1] > _TOL * np.maximum(sv[:, 0], 1.0)
            if not ok.all():
                complete = False
                S, A, Vt = S[ok], A[ok], Vt[ok]
                if S.shape[0] == 0:
                    continue
            v = Vt[:, -1, :]  # null vector (w, b) of A
            v = v / np.linalg.norm(v[:, :d], axis=1, keepdims=True)
            pinv = np.linalg.pinv(A)  # (B, d + 1, d)
            on_plane = np.zeros((S.shape[0], m), dtype=bool)
            np.put_along_axis(on_plane, S, True, axis=1)
            D = Zs @ v[:, :d].T + v[:, d]  # (m, B): signed distances (||w|| = 1)
            D = D.T
            if np.any((np.abs(D) <= _TOL) & ~on_plane):
                complete = False  # another point on the hyperplane: labelings may be missing
            D[on_plane] = 0.0
            for orientation in (1.0, -1.0):
                base = orientation * v
                Do = orientation * D
                for s in signs:
                    delta = pinv @ s  # (B, d + 1): A delta = s
                    E = (Zs @ delta[:, :d].T + delta[:, d]).T  # (B, m)
                    toward = (Do * E < 0) & ~on_plane
                    with np.errstate(divide="ignore", invalid="ignore"):
                        steps = np.where(toward, np.abs(Do) / np.abs(E), np.inf)
                    t = 0.5 * np.min(steps, axis=1)
                    t = np.where(np.isfinite(t), t, 1.0)[:, None]
                    cand = base + t * delta  # (B, d + 1)
                    values = Zs @ cand[:, :d].T + cand[:, d]  # (m, B)
                    labels = (values >= 0).T
                    norms = np.linalg.norm(cand[:, :d], axis=1)
                    marg = np.min(np.abs(values), axis=0) / np.where(norms > 0, norms, np.inf)
                    keys.append(_pack(labels))
                    margins.append(marg)
                    params.append(cand)
            if sum(k.size for k in keys) > 4 * max(1, cover_count(m, d)):
                keys, margins, params = _dedup(keys, margins, params)
    keys, margins, params = _dedup(keys, margins, params)
    P = params[0].copy()
    P[:, :d] /= spread  # w.((z - c) / s) + b = (w / s).z + (b - (w / s).c)
    P[:, d] -= P[:, :d] @ center
    if not complete:
        notes.append("public points not in general position: some labelings may be missing")
    cover = PublicCover("halfspace", P, complete, m, d, scored, True, notes)
    # the labelings after mapping back to the original coordinates decide (rounding could merge two)
    _, first = np.unique(_pack(cover.labelings(Z)), return_index=True)
    if first.size != cover.size:
        cover.params = P[np.sort(first)]
    return cover


def _dedup(keys, margins, params):
    """Keep, for every distinct labeling, the candidate with the largest margin."""
    k = np.concatenate(keys)
    g = np.concatenate(margins)
    p = np.concatenate(params)
    order = np.argsort(-g, kind="stable")
    _, first = np.unique(k[order], return_index=True)
    keep = np.sort(order[first])
    return [k[keep]], [g[keep]], [p[keep]]


def public_cover(
    X_public: np.ndarray,
    hypothesis_class: str,
    *,
    dedup: bool = True,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> PublicCover:
    """The cover of ``hypothesis`` ("threshold", "stump", "halfspace") on the public points alone
    (module docstring). Raises ValueError naming the argument for bad input."""
    Z = as_features(X_public, "X_public")
    if hypothesis_class not in ("threshold", "stump", "halfspace"):
        raise ValueError(f"hypothesis must be 'threshold', 'stump' or 'halfspace'; got {hypothesis_class!r}")
    if not isinstance(dedup, (bool, np.bool_)):
        raise ValueError(f"dedup must be True or False; got {dedup!r}")
    if isinstance(max_candidates, bool) or not isinstance(max_candidates, (int, np.integer)) or max_candidates < 1:
        raise ValueError(f"max_candidates must be a positive integer; got {max_candidates!r}")
    if hypothesis_class == "threshold":
        if Z.shape[1] != 1:
            raise ValueError(f"hypothesis_class='threshold' needs one feature; X_public has shape {Z.shape}")
        return _threshold_cover(Z)
    if hypothesis_class == "stump":
        return _stump_cover(Z, bool(dedup))
    return _halfspace_cover(Z, int(max_candidates))
