"""Algorithm 1 ``A_ConstrHalf`` of R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of Private and
Public Populations" (§4): the candidate halfspaces C̃_pub and the affine hull Aff, built from the
**public points only** (``docs/theory/ppm.md#constr-half``).

Everything in this module is a function of the public feature vectors and of fixed tolerances
(``docs/theory/ppm.md#p1``): the privacy of A_LearnHalf (Lemma 4.1) rests on that.

Implementation choices (choices the paper leaves open or departures from its text, none of which touches
the privacy argument; ``docs/theory/ppm.md`` §9):

* Public points are deduplicated first (np.unique on rows: sorted, so the result does not depend
  on the order of the data). Multiplicities still count when scoring.
* Aff = c + span(U): SVD of the centred distinct public points, rank threshold relative to the
  largest singular value (scale-relative, fixed: ``docs/theory/ppm.md#g7``).
* **Aff-aware supporting hyperplanes.** For a subset Ŝ = {s_1..s_m} the paper takes "one arbitrary
  halfspace supported by Ŝ". We take the normal inside Aff's direction space: a = U b with b in the
  null space of Z = [(s_i - s_1)^T U]; when Ŝ affinely spans Aff (no such b) the normal is the
  first column of Aff's orthogonal complement (the hyperplane then contains Aff). An arbitrary
  choice breaks Observation 4.2 / Lemma 4.5 when Aff != R^d: on the line x_1 = 1 in R^2 every
  candidate can contain Aff (``docs/theory/ppm.md#aff-aware``, case 4). When Aff = R^d this is one
  admissible choice of the paper's arbitrary halfspace.
* W: by default the paper's subsets of size 1..d (``support="paper"``; the empty subset, which
  "supports" any hyperplane, is omitted). ``support="affine-basis"`` is the reduction of
  ``docs/theory/ppm.md#affine-basis``:
  only affinely independent subsets of exactly k = dim Aff points. That deviates from the paper's W
  (smaller G, same Lemma 4.5 guarantee) and must be flagged in any write-up.
* Base hyperplanes are deduplicated geometrically (normalised normal with a canonical sign,
  offset, rounded to 1e-9 relative): C̃ is a *set* in the paper. A near-duplicate that rounding
  misses stays as a second member, which only adds a hypothesis to G (``docs/theory/ppm.md#g8``).
* Closed-halfspace membership with a public tolerance τ (``docs/theory/ppm.md#g1``): x ∈ h = {a.x >= w0} iff
  fl(a.x) >= fl(w0 - τ), with a.x evaluated by :func:`project` in one fixed order, so the fast
  scorer and the hypothesis's own ``predict`` agree bit for bit. τ covers the rounding error of
  every supporting point (public points lie on the hyperplanes they generate and must test inside).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

__all__ = [
    "AffineHull",
    "CandidateFamily",
    "a_constr_half",
    "project",
    "SUPPORT_MODES",
    "DEFAULT_TOL",
    "DEFAULT_RANK_TOL",
]

SUPPORT_MODES = ("paper", "affine-basis")
#: membership tolerance relative to the public data's scale max(1, max |x|)
DEFAULT_TOL = 1e-9
#: singular values <= DEFAULT_RANK_TOL * sigma_max are treated as zero (Aff's dimension)
DEFAULT_RANK_TOL = 1e-9


def project(X: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """fl(a . x) for every normal a (rows of ``normals``, shape (m, d)) and row x of X (n, d).

    Evaluated as ((x_0 a_0 + x_1 a_1) + x_2 a_2) + ... with separate IEEE multiplies and adds (no
    BLAS, no FMA), so the same (a, x) always gives the same float; negating a negates the result
    exactly. Returns shape (m, n).
    """
    X = np.asarray(X, dtype=np.float64)
    normals = np.asarray(normals, dtype=np.float64)
    out = np.multiply.outer(normals[:, 0], X[:, 0])
    for k in range(1, X.shape[1]):
        out += np.multiply.outer(normals[:, k], X[:, k])
    return out


@dataclass(frozen=True)
class AffineHull:
    """Aff = {c + U z}: the affine hull of the distinct public points (Alg 1 step 7).

    ``basis`` is d x k orthonormal (direction space), ``complement`` is d x (d-k) orthonormal.
    ``contains`` tests ||complement^T (x - c)|| <= tol, evaluated with :func:`project`.
    """

    center: np.ndarray
    basis: np.ndarray
    complement: np.ndarray
    tol: float

    @property
    def dim(self) -> int:
        return int(self.basis.shape[1])

    @property
    def ambient_dim(self) -> int:
        return int(self.center.shape[0])

    @property
    def is_full(self) -> bool:
        return self.dim == self.ambient_dim

    def residual(self, X: np.ndarray) -> np.ndarray:
        """Distance of each row of X to Aff (zeros when Aff = R^d)."""
        X = np.asarray(X, dtype=np.float64)
        if self.is_full:
            return np.zeros(X.shape[0])
        r = project(X - self.center, self.complement.T)  # (d-k, n)
        return np.sqrt((r * r).sum(axis=0))

    def contains(self, X: np.ndarray) -> np.ndarray:
        """Boolean mask: row x of X lies in Aff (within the public tolerance)."""
        X = np.asarray(X, dtype=np.float64)
        if self.is_full:
            return np.ones(X.shape[0], dtype=bool)
        return self.residual(X) <= self.tol

    def to_dict(self) -> dict:
        return {
            "center": self.center.tolist(),
            "basis": self.basis.tolist(),
            "complement": self.complement.tolist(),
            "tol": float(self.tol),
            "dim": self.dim,
        }


@dataclass(frozen=True)
class CandidateFamily:
    """C̃_pub (Alg 1 output) as W base hyperplanes {a.x = w0}, each in both orientations.

    Oriented index o in [0, 2W): o < W is h_o = {a_o.x >= w0_o}; o >= W is the opposite halfspace
    h_{o-W}^- = {a.x <= w0}. Membership (closed, ``docs/theory/ppm.md#g1``): h_o contains x iff project(x) >= lo_o;
    h_o^- contains x iff project(x) <= hi_o, with lo = fl(w0 - tau), hi = fl(w0 + tau).
    ``support[u]`` lists the indices (into ``points``) of the public points that generated base
    hyperplane u (padded with -1): the compression set of Lemma 4.8 (``docs/theory/ppm.md#case-13``).
    """

    points: np.ndarray  # distinct public points, (n_distinct, d)
    aff: AffineHull | None  # None iff there are no public points
    normals: np.ndarray  # (W, d) unit normals
    offsets: np.ndarray  # (W,) w0
    lo: np.ndarray  # (W,) fl(w0 - tau)
    hi: np.ndarray  # (W,) fl(w0 + tau)
    tau: float
    support: np.ndarray  # (W, d) int, -1 padded
    support_mode: str
    n_subsets: int  # |W| before geometric dedupe
    details: dict = field(default_factory=dict)

    @property
    def n_base(self) -> int:
        return int(self.normals.shape[0])

    @property
    def size(self) -> int:
        """|C̃_pub| = number of oriented candidate halfspaces."""
        return 2 * self.n_base

    @property
    def d(self) -> int:
        return int(self.points.shape[1])

    def oriented(self, o: int) -> tuple[np.ndarray, float]:
        """(normal, lower threshold) of oriented candidate o: x is inside iff project(x) >= lower."""
        W = self.n_base
        if not 0 <= o < 2 * W:
            raise IndexError(f"oriented candidate index {o} out of range [0, {2 * W})")
        if o < W:
            return self.normals[o], float(self.lo[o])
        return -self.normals[o - W], float(-self.hi[o - W])

    def fingerprint(self) -> bytes:
        """Bytes identifying the family exactly (used by tests: G is identical across neighbours)."""
        parts = [self.points, self.normals, self.offsets, self.lo, self.hi, self.support, np.array([self.tau])]
        if self.aff is not None:
            parts += [self.aff.center, self.aff.basis, self.aff.complement, np.array([self.aff.tol])]
        return b"|".join(np.ascontiguousarray(p).tobytes() for p in parts) + self.support_mode.encode()


def _affine_hull(P: np.ndarray, rank_tol: float, tol_abs: float) -> AffineHull:
    d = P.shape[1]
    c = P[0].copy()
    if P.shape[0] == 1:
        k = 0
        Vt = np.eye(d)
    else:
        delta = P - c
        if delta.shape[0] > d:  # tall: the d x d R factor has the same singular values and V
            delta = np.linalg.qr(delta, mode="r")
        _, sigma, Vt = np.linalg.svd(delta, full_matrices=True)
        k = int(np.sum(sigma > rank_tol * sigma[0])) if sigma[0] > 0 else 0
    basis = np.ascontiguousarray(Vt[:k].T)
    complement = np.ascontiguousarray(Vt[k:].T)
    hull = AffineHull(c, basis, complement, tol=math.inf)
    # every public point must test as inside Aff: cover their own residuals (public-only)
    max_res = float(hull.residual(P).max()) if k < d else 0.0
    return AffineHull(c, basis, complement, tol=max(tol_abs, 2.0 * max_res))


def _canonical_sign(normals: np.ndarray) -> np.ndarray:
    """Flip each row so that its first component with |a_k| > 1e-12 is positive."""
    big = np.abs(normals) > 1e-12
    first = np.argmax(big, axis=1)
    lead = normals[np.arange(normals.shape[0]), first]
    return normals * np.where(lead < 0, -1.0, 1.0)[:, None]


def _subset_hyperplanes(P: np.ndarray, idx: np.ndarray, aff: AffineHull, rank_tol: float, require_independent: bool):
    """Aff-aware unit normals for the subsets P[idx] (rows of idx); returns (normals, keep_mask)."""
    N, m = idx.shape
    d = P.shape[1]
    k = aff.dim
    U, Uc = aff.basis, aff.complement
    keep = np.ones(N, dtype=bool)
    if k == 0:
        # Aff is a point: every hyperplane through it contains Aff
        return np.tile(Uc[:, 0], (N, 1)), keep
    if m == 1:
        b = np.zeros((N, k))
        b[:, 0] = 1.0  # fixed "arbitrary" direction inside Aff (data-independent)
        return b @ U.T, keep
    diffs = P[idx[:, 1:]] - P[idx[:, :1]]  # (N, m-1, d)
    Z = diffs @ U  # (N, m-1, k): coordinates inside Aff
    _, sv, Vt = np.linalg.svd(Z, full_matrices=True)  # Vt: (N, k, k)
    smax = sv[:, :1]
    rank = np.sum(sv > rank_tol * np.maximum(smax, np.finfo(float).tiny), axis=1)
    normals = np.empty((N, d))
    has_null = rank < k
    rows = np.flatnonzero(has_null)
    if rows.size:
        b = Vt[rows, rank[rows], :]  # first right-singular vector of the null space
        normals[rows] = b @ U.T
    if (~has_null).any():
        if Uc.shape[1] == 0:  # cannot happen: m <= d points never affinely span R^d
            raise AssertionError("a subset of <= d points affinely spans R^d")
        normals[~has_null] = Uc[:, 0]
    if require_independent:
        keep &= (rank == m - 1) & has_null
    return normals, keep


def a_constr_half(
    X_public: np.ndarray,
    *,
    support: str = "paper",
    tol: float = DEFAULT_TOL,
    rank_tol: float = DEFAULT_RANK_TOL,
    dedupe: bool = True,
) -> CandidateFamily:
    """Algorithm 1 (A_ConstrHalf): candidate halfspaces and Aff from the public points only.

    ``X_public`` has shape (n_pub, d); n_pub = 0 gives an empty family with ``aff=None`` (the
    paper: "if there are no public examples ... C̃_pub = ∅"; A_LearnHalf then outputs all-ones).
    """
    if support not in SUPPORT_MODES:
        raise ValueError(f"support must be one of {SUPPORT_MODES}; got {support!r}")
    X_public = np.asarray(X_public, dtype=np.float64)
    if X_public.ndim != 2:
        raise ValueError(f"X_public must be 2-D (n_pub, d); got shape {X_public.shape}")
    d = X_public.shape[1]
    if X_public.shape[0] == 0:
        empty = np.zeros((0, d))
        return CandidateFamily(
            points=empty,
            aff=None,
            normals=empty,
            offsets=np.zeros(0),
            lo=np.zeros(0),
            hi=np.zeros(0),
            tau=0.0,
            support=np.zeros((0, d), dtype=np.int64),
            support_mode=support,
            n_subsets=0,
        )
    P = np.unique(X_public, axis=0)  # sorted distinct rows: order-independent (docs/theory/ppm.md#g6)
    scale = max(1.0, float(np.abs(P).max()))
    tol_abs = tol * scale
    aff = _affine_hull(P, rank_tol, tol_abs)
    k = aff.dim
    sizes = range(1, min(d, P.shape[0]) + 1) if support == "paper" else ([k] if 1 <= k <= P.shape[0] else [])

    normal_blocks, idx_blocks = [], []
    for m in sizes:
        idx = np.array(list(combinations(range(P.shape[0]), m)), dtype=np.int64).reshape(-1, m)
        normals, keep = _subset_hyperplanes(P, idx, aff, rank_tol, require_independent=(support == "affine-basis"))
        idx = idx[keep]
        normals = normals[keep]
        padded = np.full((idx.shape[0], d), -1, dtype=np.int64)
        padded[:, :m] = idx
        normal_blocks.append(normals)
        idx_blocks.append(padded)
    if not normal_blocks:
        normal_blocks, idx_blocks = [np.zeros((0, d))], [np.zeros((0, d), dtype=np.int64)]
    normals = np.concatenate(normal_blocks)
    subsets = np.concatenate(idx_blocks)
    n_subsets = normals.shape[0]
    if n_subsets:
        normals = normals / np.sqrt((normals * normals).sum(axis=1))[:, None]
        normals = _canonical_sign(normals) + 0.0
    first = subsets[:, 0] if n_subsets else np.zeros(0, dtype=np.int64)
    # w0 = a . s_1, evaluated with the canonical projection (vectorised row-wise)
    offsets = _rowwise_project(P[first], normals) if n_subsets else np.zeros(0)

    rep = np.arange(n_subsets)
    if dedupe and n_subsets:
        keys = np.round(np.column_stack([normals, offsets / scale]), 9) + 0.0
        _, first_idx, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.sort(first_idx)  # keep the enumeration order of first occurrences
        position = np.empty(n_subsets, dtype=np.int64)
        position[order] = np.arange(order.size)
        rep = position[first_idx[inverse]]  # subset -> index of its kept representative
        normals, offsets, kept_support = normals[order], offsets[order], subsets[order]
    else:
        kept_support = subsets

    # tau: cover the rounding error of every generating point against its (representative) hyperplane
    max_res = 0.0
    if n_subsets:
        for col in range(d):
            members = subsets[:, col]
            valid = members >= 0
            if valid.any():
                vals = _rowwise_project(P[members[valid]], normals[rep[valid]]) - offsets[rep[valid]]
                max_res = max(max_res, float(np.abs(vals).max()))
    tau = max(tol_abs, 2.0 * max_res)
    lo = offsets - tau
    hi = offsets + tau
    return CandidateFamily(
        points=P,
        aff=aff,
        normals=np.ascontiguousarray(normals),
        offsets=offsets,
        lo=lo,
        hi=hi,
        tau=tau,
        support=kept_support,
        support_mode=support,
        n_subsets=int(n_subsets),
        details={"scale": scale, "tol_abs": tol_abs, "max_support_residual": max_res, "subset_sizes": list(sizes)},
    )


def _rowwise_project(X: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """fl(a_i . x_i) row by row, in the same operation order as :func:`project`."""
    out = X[:, 0] * normals[:, 0]
    for k in range(1, X.shape[1]):
        out = out + X[:, k] * normals[:, k]
    return out
