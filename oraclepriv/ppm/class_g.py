"""The finite class G of A_LearnHalf (R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of Private
and Public Populations", Alg. 2 step 8, plus the two members the analysis needs;
``docs/theory/ppm.md#class-g``).

    G = {ONES}                                   g ≡ 1 (the "empty set" hypothesis of the paper's §4)
      ∪ {AFF0}                                   j = 0: g = 1(x ∉ Aff)
      ∪ {g_J : J ⊆ C̃_pub, 1 <= |J| <= d}         g_J = 1(x ∉ Aff ∩ ∩_{h∈J} h), J unordered, distinct

and G = {ONES} when there are no public points (``docs/theory/ppm.md#g5``). So
|G| = 2 + Σ_{j=1}^{d} C(|C̃|, j). G is a function of the public points only (Lemma 4.1).

Members are named by *descriptors*: ``("ones",)``, ``("aff0",)`` or a sorted tuple of oriented
candidate indices (see :class:`~oraclepriv.ppm.constr_half.CandidateFamily`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations

import numpy as np

from oraclepriv.ppm.constr_half import CandidateFamily
from oraclepriv.ppm.hypothesis import PolytopeComplement

__all__ = ["ClassG", "ONES", "AFF0"]

ONES = ("ones",)
AFF0 = ("aff0",)


class ClassG:
    """G built from a candidate family (public-only). Enumeration is lazy; nothing is stored per g."""

    def __init__(self, family: CandidateFamily):
        self.family = family
        self.d = family.d
        self.n_oriented = family.size  # |C̃|

    @property
    def has_public(self) -> bool:
        return self.family.aff is not None

    @property
    def max_j(self) -> int:
        return min(self.d, self.n_oriented)

    def size_by_j(self) -> dict[str, int]:
        """Number of members per part of G (exact Python integers)."""
        if not self.has_public:
            return {"ones": 1}
        out = {"ones": 1, "aff0": 1}
        for j in range(1, self.max_j + 1):
            out[f"j={j}"] = math.comb(self.n_oriented, j)
        return out

    @property
    def size(self) -> int:
        """|G| (a Python int: it can exceed 2**31)."""
        return int(sum(self.size_by_j().values()))

    def descriptors(self) -> Iterator[tuple]:
        """Every member of G once, in lexicographic order (for brute-force checks on tiny instances)."""
        yield ONES
        if not self.has_public:
            return
        yield AFF0
        for j in range(1, self.max_j + 1):
            yield from combinations(range(self.n_oriented), j)

    def hypothesis(self, descriptor: tuple, *, inverted: bool = False) -> PolytopeComplement:
        """The predictor named by ``descriptor``."""
        fam = self.family
        if descriptor == ONES:
            return PolytopeComplement("ones", self.d, aff=fam.aff, inverted=inverted)
        if not self.has_public:
            raise ValueError(f"descriptor {descriptor!r} is not in G: there are no public points")
        if descriptor == AFF0:
            return PolytopeComplement("aff0", self.d, aff=fam.aff, inverted=inverted)
        idx = tuple(int(o) for o in descriptor)
        if not (1 <= len(idx) <= self.max_j) or len(set(idx)) != len(idx):
            raise ValueError(f"descriptor {descriptor!r}: need 1..{self.max_j} distinct oriented candidates")
        normals, lower, support = [], [], []
        W = fam.n_base
        for o in sorted(idx):
            a, lo = fam.oriented(o)
            normals.append(a)
            lower.append(lo)
            members = fam.support[o % W]
            support.append(tuple(tuple(float(v) for v in fam.points[i]) for i in members if i >= 0))
        return PolytopeComplement(
            "polytope",
            self.d,
            normals=np.array(normals),
            lower=np.array(lower),
            aff=fam.aff,
            inverted=inverted,
            support=tuple(support),
        )
