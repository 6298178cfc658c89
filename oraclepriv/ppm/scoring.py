"""Exact mistake counting over the whole class G: the scores of step 9 of A_LearnHalf (Algorithm 2 of
R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of Private and Public Populations";
``docs/theory/ppm.md#scoring``).

For every g in G we need the integer m(g) = Σ_i 1[g(x_i) != y_i] over **all** n examples. Write
z_i(g) = 1[x_i in the 0-region of g] and s_i = +1 if y_i = 1 else -1; then

    m(g) = n0 + Σ_i s_i z_i(g),       n0 = #{i : y_i = 0}.

G is far too large to materialise (8e8 members for d = 2, n_pub = 200), so we stream it and keep
only the *histogram* N_m = #{g : m(g) = m}, m = 0..n, per chunk ("segment"/"block"). The two-pass
sampler (:mod:`oraclepriv.ppm.exp_mech`; ``docs/theory/ppm.md#sampler``) draws m* from N_m e^{-εm/2}
and then a uniform member with that score; ``locate(m*, r)`` recomputes only the one chunk that holds it.

Recipes (all counts are exact integers; float32 products are exact because every partial sum is
an integer of magnitude <= 8n < 2^24; float64 is used beyond that):

* ONES: m = n0.  AFF0: m = n0 + Sf, with Sf = Σ s_i f_i, f_i = 1[x_i ∈ Aff].
* j = 1: row sums Sa_u = Σ s a_u (a_u = membership of h_u ∩ Aff) and Sa'_u; for d = 1 by sorting and
  prefix sums (O(n log n), n = 10^6 is fine), else blockwise.
* j = 2 with the **complement trick** (4x fewer flops than the plain product over oriented rows):
  the opposite closed halfspace satisfies a'_u = f - a_u + e_u exactly, e_u = boundary indicator
  (points within tau of the hyperplane, inside Aff). With P = A S A^T (one float32 GEMM over base
  hyperplanes), Q = E S A^T (sparse x dense) and R = E S E^T (sparse x sparse):
      m(h_u, h_v)   = n0 + P_uv
      m(h_u^-, h_v) = n0 + Sa_v - P_uv + Q_uv
      m(h_u, h_v^-) = n0 + Sa_u - P_uv + Q_vu
      m(h_u^-,h_v^-)= n0 + Sf - Sa_u - Sa_v + Se_u + Se_v + P_uv - Q_uv - Q_vu + R_uv
  and m(h_u, h_u^-) = n0 + Se_u (the hyperplane itself).
* j >= 3: for each prefix o_1 < .. < o_{j-2} of oriented candidates, one product
  (M_{>o} ⊙ z) M_{>o}^T with z = s ⊙ Π M[o_i].

:func:`brute_force_mistakes` is the slow independent reference (predict every g, count).
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from oraclepriv.ppm.class_g import AFF0, ONES, ClassG
from oraclepriv.ppm.constr_half import CandidateFamily, project

__all__ = [
    "ScoringData",
    "ScoredClass",
    "score_class",
    "brute_force_mistakes",
    "DEFAULT_BLOCK",
    "MAX_MEMBERSHIP_BYTES",
    "MembershipTooLargeError",
]

#: base hyperplanes per block in the j = 2 products (B x B float32 work arrays)
DEFAULT_BLOCK = 512
#: j >= 3 keeps the full oriented membership matrix; refuse beyond this many bytes
MAX_MEMBERSHIP_BYTES = 2 * 1024**3


class MembershipTooLargeError(MemoryError):
    """A membership matrix above :data:`MAX_MEMBERSHIP_BYTES`. The message names the Python parameters; the
    attributes let a caller with other levers (the command line: the data file) say what to change."""

    def __init__(self, message: str, *, nbytes: int, limit: int, n_base: int, n: int) -> None:
        super().__init__(message)
        self.nbytes, self.limit = nbytes, limit
        self.n_base = n_base  # W: base hyperplanes, built from the public points only
        self.n = n  # examples scored: all of them, public and private


class ScoringData:
    """The scored sample S' (all n examples) against one candidate family."""

    def __init__(
        self,
        family: CandidateFamily,
        X: np.ndarray,
        y: np.ndarray,
        *,
        block: int = DEFAULT_BLOCK,
        allow_sorted_d1: bool = True,
        workers: int | None = None,
    ):
        self.family = family
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.int8)
        self.n = int(self.X.shape[0])
        self.n0 = int(np.sum(self.y == 0))
        self.s64 = np.where(self.y == 1, 1.0, -1.0)
        # float32 is exact while every intermediate integer is < 2^24; the formulas stay within 8n
        self.dtype = np.float32 if 8 * self.n < 2**24 else np.float64
        self.s = self.s64.astype(self.dtype)
        self.f = family.aff.contains(self.X) if family.aff is not None else np.zeros(self.n, dtype=bool)
        self.Sf = int(self.s64[self.f].sum())
        self.W = family.n_base
        # keep B x (n+1) work arrays around 64 MB
        self.block = int(max(64, min(block, (64 * 1024**2) // (4 * (self.n + 1)))))
        self.allow_sorted_d1 = allow_sorted_d1
        # threads for the j = 2 tiles (results are identical for any number of workers)
        self.workers = int(workers) if workers is not None else min(2, os.cpu_count() or 1)
        self._row_sums: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def membership(self, u0: int, u1: int) -> tuple[np.ndarray, np.ndarray]:
        """(A, A') for base hyperplanes u0..u1-1: x_i ∈ h_u ∩ Aff and x_i ∈ h_u^- ∩ Aff (bool, (B, n))."""
        fam = self.family
        proj = project(self.X, fam.normals[u0:u1])
        A = proj >= fam.lo[u0:u1, None]
        Ap = proj <= fam.hi[u0:u1, None]
        if not self.f.all():
            A &= self.f
            Ap &= self.f
        return A, Ap

    def row_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Sa, Sa', Se) per base hyperplane: Σ_i s_i a_u,i etc. (int64). Se = Sa + Sa' - Sf."""
        if self._row_sums is None:
            fam = self.family
            W = self.W
            if self.allow_sorted_d1 and fam.d == 1 and W and np.all(fam.normals[:, 0] == 1.0):
                Sa, Sap = self._row_sums_sorted_1d()
            else:
                Sa = np.zeros(W, dtype=np.int64)
                Sap = np.zeros(W, dtype=np.int64)
                for u0 in range(0, W, self.block):
                    u1 = min(W, u0 + self.block)
                    A, Ap = self.membership(u0, u1)
                    Sa[u0:u1] = np.rint(A.astype(np.float64) @ self.s64).astype(np.int64)
                    Sap[u0:u1] = np.rint(Ap.astype(np.float64) @ self.s64).astype(np.int64)
            Se = Sa + Sap - self.Sf  # a + a' = f + e, summed against s
            self._row_sums = (Sa, Sap, Se)
        return self._row_sums

    def _row_sums_sorted_1d(self) -> tuple[np.ndarray, np.ndarray]:
        """d = 1 with normals == +1: project(x) == x exactly, so membership is x >= lo / x <= hi.

        Sorting once and prefix sums give every row sum in O((n + W) log n); the comparisons are
        the very same float comparisons the blockwise path and ``predict`` make.
        """
        x = self.X[self.f, 0]
        s = self.s64[self.f]
        order = np.argsort(x, kind="stable")
        xs = x[order]
        prefix = np.concatenate([[0.0], np.cumsum(s[order])])
        total = prefix[-1]
        fam = self.family
        below = np.searchsorted(xs, fam.lo, side="left")  # count of x < lo
        upto = np.searchsorted(xs, fam.hi, side="right")  # count of x <= hi
        Sa = np.rint(total - prefix[below]).astype(np.int64)
        Sap = np.rint(prefix[upto]).astype(np.int64)
        return Sa, Sap


class Segment(ABC):
    """A chunk of G with an exact histogram of mistake counts and a way to find its members."""

    name = ""
    size = 0

    @abstractmethod
    def histogram(self) -> np.ndarray:
        """Exact histogram of mistake counts over the segment's members."""

    @abstractmethod
    def locate(self, m: int, r: int) -> tuple:
        """The r-th member (0-based, segment order) among those with exactly m mistakes."""

    @abstractmethod
    def members(self):
        """Yield (descriptor, mistakes) for every member (small classes only: audits and tests)."""


class ConstantSegment(Segment):
    def __init__(self, name: str, descriptor: tuple, mistakes: int, n: int):
        self.name, self.descriptor, self.mistakes, self.size = name, descriptor, int(mistakes), 1
        self._hist = np.bincount([self.mistakes], minlength=n + 1).astype(np.int64)

    def histogram(self) -> np.ndarray:
        return self._hist

    def locate(self, m: int, r: int) -> tuple:
        if m != self.mistakes or r != 0:
            raise IndexError(f"{self.name}: no member #{r} with {m} mistakes")
        return self.descriptor

    def members(self):
        yield self.descriptor, self.mistakes


class SinglesSegment(Segment):
    """j = 1: the 2W oriented candidates (o < W: h_o; o >= W: h_{o-W}^-)."""

    name = "j=1"

    def __init__(self, data: ScoringData):
        self.data = data
        self.size = 2 * data.W
        Sa, Sap, _ = data.row_sums()
        self.values = data.n0 + np.concatenate([Sa, Sap])
        self._hist = _bincount(self.values, data.n)

    def histogram(self) -> np.ndarray:
        return self._hist

    def locate(self, m: int, r: int) -> tuple:
        return (int(np.flatnonzero(self.values == m)[r]),)

    def members(self):
        for o, m in enumerate(self.values):
            yield (o,), int(m)


class PairsSegment(Segment):
    """j = 2: all unordered pairs of distinct oriented candidates, via the complement trick.

    Work layout: the W base hyperplanes are cut into tiles of ``block`` rows. For each row tile I,
    one GEMM covers a chunk of up to ``CHUNK_TILES`` column tiles J >= I (BLAS-friendly shape);
    the formulas and the histogram then run tile by tile (cache-friendly). One histogram is kept
    per tile pair; ``locate`` recomputes only the tile pair holding the wanted member.
    """

    name = "j=2"
    CHUNK_TILES = 8

    def __init__(self, data: ScoringData):
        self.data = data
        W = data.W
        self.size = math.comb(2 * W, 2)
        nbytes = 2 * W * (data.n + 1) * np.dtype(data.dtype).itemsize
        if nbytes > MAX_MEMBERSHIP_BYTES:
            raise MembershipTooLargeError(
                f"scoring j=2 keeps the {W} x {data.n} base membership matrix twice ({nbytes / 1e9:.1f} GB); "
                "reduce the public sample (max_public=...) or n",
                nbytes=int(nbytes),
                limit=int(MAX_MEMBERSHIP_BYTES),
                n_base=int(W),
                n=int(data.n),
            )
        Sa, _, Se = data.row_sums()
        n0 = data.n0
        self.same_base = n0 + Se  # m(h_u ∩ h_u^-): the hyperplane itself, inside Aff
        B = data.block
        self.tiles = [(u0, min(W, u0 + B)) for u0 in range(0, W, B)]
        # per-index constants of the four formulas (n0 folded in; see the module docstring)
        self.c2 = (Sa + 2 * n0).astype(data.dtype)
        self.k_row = (Se - Sa).astype(data.dtype)
        self.k_col = (Se - Sa + data.Sf).astype(data.dtype)
        self._prepared = False
        self._tile_hists: list[tuple[int, int, np.ndarray]] | None = None
        self._hist: np.ndarray | None = None

    def _prepare(self) -> None:
        """Base memberships of all W hyperplanes: Af = [A | n0] (float), A^T, and E = A ∧ A' (sparse)."""
        if self._prepared:
            return
        d = self.data
        W, n = d.W, d.n
        Af = np.empty((W, n + 1), dtype=d.dtype)
        rows_all, cols_all = [], []
        for u0, u1 in self.tiles:
            A, Ap = d.membership(u0, u1)
            Af[u0:u1, :n] = A
            r, c = np.nonzero(A & Ap)
            rows_all.append(r + u0)
            cols_all.append(c)
        Af[:, n] = d.n0
        rows, cols = np.concatenate(rows_all), np.concatenate(cols_all)
        self.Af = Af
        self.AfT = np.ascontiguousarray(Af[:, :n].T)
        self.Es = sp.csr_matrix((d.s[cols], (rows, cols)), shape=(W, n))  # s_i e_u,i
        self.Eb = sp.csr_matrix((np.ones(rows.size, dtype=d.dtype), (rows, cols)), shape=(W, n))
        self._prepared = True

    def _chunk(self, ti: int, J0: int, J1: int):
        """P' = A S A^T + n0, Q = E S A^T and Q2^T, R = E S E^T for rows of tile ti and columns J0:J1."""
        d = self.data
        n = d.n
        I0, I1 = self.tiles[ti]
        AsI = self.Af[I0:I1].copy()
        AsI[:, :n] *= d.s
        AsI[:, n] = 1.0
        P = AsI @ self.Af[J0:J1].T  # (B, C): P + n0 via the augmented column
        Q = self.Es[I0:I1] @ self.AfT[:, J0:J1]  # Σ s e_u a_v
        Q2 = (self.Es[J0:J1] @ self.AfT[:, I0:I1]).T  # Σ s e_v a_u, as (u, v)
        R = (self.Es[I0:I1] @ self.Eb[J0:J1].T).toarray()  # Σ s e_u e_v
        return P, Q, Q2, R

    def _tile_values(self, ti: int, tj: int, chunk, J0: int, out: np.ndarray):
        """Fill out[0..3] (4, B, Bj) with the mistakes of the four orientation pairs; return the mask."""
        P, Q, Q2, R = chunk
        (I0, I1), (T0, T1) = self.tiles[ti], self.tiles[tj]
        c0, c1 = T0 - J0, T1 - J0
        Pt, Qt, Q2t, Rt = P[:, c0:c1], Q[:, c0:c1], Q2[:, c0:c1], R[:, c0:c1]
        m1, m2, m3, m4 = out
        m1[...] = Pt  # m(h_u, h_v)
        np.subtract(self.c2[T0:T1][None, :], Pt, out=m2)  # m(h_u^-, h_v)
        m2 += Qt
        np.subtract(self.c2[I0:I1][:, None], Pt, out=m3)  # m(h_u, h_v^-)
        m3 += Q2t
        np.add(Pt, self.k_row[I0:I1][:, None], out=m4)  # m(h_u^-, h_v^-)
        m4 += self.k_col[T0:T1][None, :]
        m4 -= Qt
        m4 -= Q2t
        m4 += Rt
        return _triu_mask(I1 - I0) if ti == tj else None

    def _pair_descriptor(self, t: int, u: int, v: int) -> tuple:
        W = self.data.W
        a = u + W if t in (1, 3) else u  # t = 1: (h_u^-, h_v); t = 2: (h_u, h_v^-); t = 3: both
        b = v + W if t in (2, 3) else v
        return tuple(sorted((a, b)))

    def _chunks_of_row(self, ti: int):
        """Consecutive column tiles tj >= ti, grouped CHUNK_TILES at a time."""
        tjs = list(range(ti, len(self.tiles)))
        for k in range(0, len(tjs), self.CHUNK_TILES):
            group = tjs[k : k + self.CHUNK_TILES]
            yield group, self.tiles[group[0]][0], self.tiles[group[-1]][1]

    # -- Segment API -----------------------------------------------------------------------
    def _row_histograms(self, ti: int) -> list[tuple[int, int, np.ndarray]]:
        """Histograms of every tile pair (ti, tj >= ti): one unit of (thread-parallel) work."""
        n = self.data.n
        B = self.data.block
        buf = np.empty((4, B, B), dtype=self.data.dtype)
        out_hists = []
        bi = self.tiles[ti][1] - self.tiles[ti][0]
        for group, J0, J1 in self._chunks_of_row(ti):
            chunk = self._chunk(ti, J0, J1)
            for tj in group:
                bj = self.tiles[tj][1] - self.tiles[tj][0]
                out = buf[:, :bi, :bj]
                mask = self._tile_values(ti, tj, chunk, J0, out)
                out_hists.append((ti, tj, _bincount(out if mask is None else out[:, mask], n)))
        return out_hists

    def histogram(self) -> np.ndarray:
        if self._hist is None:
            self._prepare()
            rows = range(len(self.tiles))
            workers = self.data.workers
            if workers > 1 and len(self.tiles) > 1:
                from concurrent.futures import ThreadPoolExecutor

                # numpy's GEMM and ufuncs release the GIL; BLAS is pinned to one thread per worker
                with _blas_threads(1), ThreadPoolExecutor(max_workers=workers) as pool:
                    per_row = list(pool.map(self._row_histograms, rows))
            else:
                with _blas_threads(1):  # small GEMMs: OpenBLAS's spinning helper threads cost more than they give
                    per_row = [self._row_histograms(ti) for ti in rows]
            hists = [h for row in per_row for h in row]  # deterministic tile order
            total = _bincount(self.same_base, self.data.n)
            for _, _, h in hists:
                total += h
            self._tile_hists = hists
            self._hist = total
            if int(total.sum()) != self.size:
                raise AssertionError(f"j=2 histogram counts {int(total.sum())} members, expected {self.size}")
        return self._hist

    def locate(self, m: int, r: int) -> tuple:
        self.histogram()
        hits = np.flatnonzero(self.same_base == m)
        if r < hits.size:
            u = int(hits[r])
            return (u, u + self.data.W)
        r -= hits.size
        assert self._tile_hists is not None  # filled by histogram()
        for ti, tj, h in self._tile_hists:
            c = int(h[m])
            if r < c:
                J0, J1 = self.tiles[tj]
                chunk = self._chunk(ti, J0, J1)
                bi = self.tiles[ti][1] - self.tiles[ti][0]
                out = np.empty((4, bi, J1 - J0), dtype=self.data.dtype)
                mask = self._tile_values(ti, tj, chunk, J0, out)
                hit = out == m
                if mask is not None:
                    hit &= mask
                t, row, col = np.unravel_index(np.flatnonzero(hit)[r], hit.shape)
                return self._pair_descriptor(int(t), self.tiles[ti][0] + int(row), J0 + int(col))
            r -= c
        raise IndexError(f"j=2: no member #{r} with {m} mistakes")

    def members(self):
        self._prepare()
        W = self.data.W
        for u, m in enumerate(self.same_base):
            yield (u, u + W), int(m)
        for ti in range(len(self.tiles)):
            for tj in range(ti, len(self.tiles)):
                J0, J1 = self.tiles[tj]
                bi = self.tiles[ti][1] - self.tiles[ti][0]
                out = np.empty((4, bi, J1 - J0), dtype=self.data.dtype)
                mask = self._tile_values(ti, tj, self._chunk(ti, J0, J1), J0, out)
                for t in range(4):
                    for row, col in zip(*np.nonzero(mask if mask is not None else np.ones(out.shape[1:], bool))):
                        yield (
                            self._pair_descriptor(t, self.tiles[ti][0] + int(row), J0 + int(col)),
                            int(out[t, row, col]),
                        )


class _blas_threads:
    """Limit BLAS threads inside the block (threadpoolctl when installed; otherwise a no-op)."""

    def __init__(self, n: int):
        self.n, self._ctx = n, None

    def __enter__(self):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - optional
            return self
        self._ctx = threadpool_limits(limits=self.n, user_api="blas")
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


def _triu_mask(b: int) -> np.ndarray:
    return np.triu(np.ones((b, b), dtype=bool), k=1)


class HigherSegment(Segment):
    """j >= 3: prefixes o_1 < .. < o_{j-2}, then one product for the last two indices."""

    def __init__(self, data: ScoringData, j: int):
        if j < 3:
            raise ValueError(f"HigherSegment handles j >= 3; got j={j}")
        self.data, self.j = data, j
        self.name = f"j={j}"
        W = data.W
        self.size = math.comb(2 * W, j)
        nbytes = 2 * W * data.n * np.dtype(data.dtype).itemsize
        if nbytes > MAX_MEMBERSHIP_BYTES:
            raise MembershipTooLargeError(
                f"scoring j={j} needs the {2 * W} x {data.n} oriented membership matrix ({nbytes / 1e9:.1f} GB); "
                "reduce the public sample (max_public=...) or n",
                nbytes=int(nbytes),
                limit=int(MAX_MEMBERSHIP_BYTES),
                n_base=int(W),
                n=int(data.n),
            )
        M = np.empty((2 * W, data.n), dtype=data.dtype)
        for u0 in range(0, W, data.block):
            u1 = min(W, u0 + data.block)
            A, Ap = data.membership(u0, u1)
            M[u0:u1] = A
            M[W + u0 : W + u1] = Ap
        self.M = M
        self._prefix_hists: list[tuple[tuple, np.ndarray]] | None = None
        self._hist: np.ndarray | None = None

    def _prefixes(self):
        from itertools import combinations

        K = 2 * self.data.W
        for prefix in combinations(range(K), self.j - 2):
            if prefix[-1] <= K - 3:
                yield prefix

    def _prefix_values(self, prefix: tuple) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        d = self.data
        z: np.ndarray = d.s.copy()
        for o in prefix:
            z *= self.M[o]
        tail = self.M[prefix[-1] + 1 :]
        T = (tail * z) @ tail.T
        iu = np.triu_indices(tail.shape[0], k=1)
        return T[iu] + d.n0, iu

    def histogram(self) -> np.ndarray:
        if self._hist is None:
            n = self.data.n
            total = np.zeros(n + 1, dtype=np.int64)
            hists = []
            for prefix in self._prefixes():
                vals, _ = self._prefix_values(prefix)
                h = _bincount(vals, n)
                hists.append((prefix, h))
                total += h
            self._prefix_hists, self._hist = hists, total
            if int(total.sum()) != self.size:
                raise AssertionError(f"{self.name} histogram counts {int(total.sum())} members, expected {self.size}")
        return self._hist

    def locate(self, m: int, r: int) -> tuple:
        self.histogram()
        assert self._prefix_hists is not None  # filled by histogram()
        for prefix, h in self._prefix_hists:
            c = int(h[m])
            if r < c:
                vals, (ri, ci) = self._prefix_values(prefix)
                k = int(np.flatnonzero(vals == m)[r])
                base = prefix[-1] + 1
                return tuple(prefix) + (base + int(ri[k]), base + int(ci[k]))
            r -= c
        raise IndexError(f"{self.name}: no member #{r} with {m} mistakes")

    def members(self):
        for prefix in self._prefixes():
            vals, (ri, ci) = self._prefix_values(prefix)
            base = prefix[-1] + 1
            for k in range(vals.size):
                yield tuple(prefix) + (base + int(ri[k]), base + int(ci[k])), int(vals[k])


def _bincount(values: np.ndarray, n: int) -> np.ndarray:
    """Exact histogram of integer-valued mistake counts in [0, n] (raises if any is outside)."""
    v = np.asarray(values)
    if v.dtype.kind == "f":
        v = v.astype(np.intp)
    h = np.bincount(v.ravel(), minlength=n + 1)
    if h.shape[0] != n + 1:
        raise AssertionError(f"mistake count above n={n}: the scorer is inconsistent")
    return h.astype(np.int64)


@dataclass
class ScoredClass:
    """G together with the exact histogram of mistake counts on S' (private: never release it;
    docs/theory/ppm.md#p7)."""

    G: ClassG
    data: ScoringData
    segments: list

    @property
    def n(self) -> int:
        return self.data.n

    def histogram(self) -> np.ndarray:
        total = np.zeros(self.n + 1, dtype=np.int64)
        for seg in self.segments:
            total += seg.histogram()
        return total

    def locate(self, m: int, r: int) -> tuple:
        """The r-th member of G (segment order) among those with exactly m mistakes."""
        for seg in self.segments:
            c = int(seg.histogram()[m])
            if r < c:
                return seg.locate(m, r)
            r -= c
        raise IndexError(f"G has fewer than {r} members with {m} mistakes")

    def members_with(self, m: int) -> list[tuple]:
        """All members with exactly m mistakes, found through ``locate`` (tests only: can be huge)."""
        return [self.locate(m, r) for r in range(int(self.histogram()[m]))]

    def members(self):
        """Yield (descriptor, mistakes) for every g in G (small classes only: audits and tests)."""
        for seg in self.segments:
            yield from seg.members()


def score_class(
    G: ClassG,
    X: np.ndarray,
    y: np.ndarray,
    *,
    block: int = DEFAULT_BLOCK,
    allow_sorted_d1: bool = True,
    workers: int | None = None,
) -> ScoredClass:
    """Set up the exact streaming scorer of G on (X, y). Histograms are computed on first use.

    ``workers`` threads share the j = 2 tiles (default: min(2, cpu count)); the result does not
    depend on it.
    """
    data = ScoringData(G.family, X, y, block=block, allow_sorted_d1=allow_sorted_d1, workers=workers)
    segments: list[Segment] = [ConstantSegment("ones", ONES, data.n0, data.n)]
    if G.has_public:
        segments.append(ConstantSegment("aff0", AFF0, data.n0 + data.Sf, data.n))
        if data.W:
            segments.append(SinglesSegment(data))
            if G.max_j >= 2:
                segments.append(PairsSegment(data))
            for j in range(3, G.max_j + 1):
                segments.append(HigherSegment(data, j))
    return ScoredClass(G, data, segments)


def brute_force_mistakes(G: ClassG, X: np.ndarray, y: np.ndarray) -> tuple[list[tuple], np.ndarray]:
    """(descriptors, mistakes) for every g in G by calling ``predict``: the slow reference."""
    y = np.asarray(y)
    descs, mistakes = [], []
    for desc in G.descriptors():
        descs.append(desc)
        mistakes.append(int(np.sum(G.hypothesis(desc).predict(X) != y)))
    return descs, np.array(mistakes, dtype=np.int64)
