"""The improper hypotheses of A_LearnHalf (R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of Private
and Public Populations", Alg. 2 step 8; ``docs/theory/ppm.md#class-g``).

    g(x) = 1( x ∉ Aff ∩ h_1 ∩ ... ∩ h_j ),   j <= d,  h_i ∈ C̃_pub closed halfspaces.

So the 0-region (the public class under the paper's convention) is a polyhedron with at most d
facets inside Aff, and the 1-region is a union of at most d open halfspaces plus everything off
Aff. Two special members: ``form="ones"`` (the empty intersection's complement: g ≡ 1, required by
the analysis though missing from Alg. 2 step 8; ``docs/theory/ppm.md#g3``) and ``form="aff0"``
(j = 0: g = 1(x ∉ Aff), the constant 0 when Aff = R^d; ``docs/theory/ppm.md#g4``).

Membership uses exactly the arithmetic of :mod:`oraclepriv.ppm.constr_half` (``project`` and the
stored lower thresholds), so ``predict`` agrees bit for bit with the fast scorer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from oraclepriv.hypotheses import Hypothesis
from oraclepriv.ppm.constr_half import AffineHull, project

__all__ = ["PolytopeComplement", "polytope_complement_from_dict", "FORMS"]

FORMS = ("ones", "aff0", "polytope")


@dataclass(frozen=True, eq=False)
class PolytopeComplement(Hypothesis):
    """g(x) = 1 unless x ∈ Aff and project(x, normals[i]) >= lower[i] for every i (then 0).

    ``inverted=True`` returns 1 - g(x) (the flipped convention public <=> label 1; docs/theory/ppm.md#m3).
    ``support`` holds, per halfspace, the public points that generated it (compression set).
    """

    form: str
    d: int
    normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aff: AffineHull | None = None
    inverted: bool = False
    support: tuple = ()
    hypothesis_class: ClassVar[str] = "ppm_polytope_complement"

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"PolytopeComplement: form must be one of {FORMS}; got {self.form!r}")
        normals = np.asarray(self.normals, dtype=np.float64).reshape(-1, self.d)
        lower = np.asarray(self.lower, dtype=np.float64).reshape(-1)
        if normals.shape[0] != lower.shape[0]:
            raise ValueError(f"PolytopeComplement: {normals.shape[0]} normals but {lower.shape[0]} thresholds")
        if self.form != "polytope" and normals.shape[0]:
            raise ValueError(f"PolytopeComplement: form {self.form!r} takes no halfspaces")
        if self.form != "ones" and self.aff is None:
            raise ValueError(f"PolytopeComplement: form {self.form!r} needs the affine hull 'aff'")
        object.__setattr__(self, "normals", normals)
        object.__setattr__(self, "lower", lower)

    @property
    def n_halfspaces(self) -> int:
        return int(self.normals.shape[0])

    def zero_region(self, X: np.ndarray) -> np.ndarray:
        """Boolean mask: x ∈ Aff ∩ h_1 ∩ ... ∩ h_j (where g predicts 0 before any inversion)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1 and self.d == 1:
            X = X[:, None]
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(f"X must have shape (n, {self.d}) for this hypothesis; got {X.shape}")
        if self.form == "ones":
            return np.zeros(X.shape[0], dtype=bool)
        assert self.aff is not None  # every form but "ones" carries its hull (__post_init__)
        inside = self.aff.contains(X)
        if self.n_halfspaces:
            inside &= (project(X, self.normals) >= self.lower[:, None]).all(axis=0)
        return inside

    def predict(self, X: np.ndarray) -> np.ndarray:
        g = (~self.zero_region(X)).astype(np.int8)
        return (1 - g).astype(np.int8) if self.inverted else g

    def to_dict(self) -> dict[str, Any]:
        return {
            "hypothesis_class": self.hypothesis_class,
            "form": self.form,
            "d": int(self.d),
            "halfspaces": [
                {"w": self.normals[i].tolist(), "lower": float(self.lower[i])} for i in range(self.n_halfspaces)
            ],
            "rule": "predict 0 iff x in aff and w.x >= lower for every halfspace (1 - that if inverted)",
            "aff": None if self.aff is None else self.aff.to_dict(),
            "inverted": bool(self.inverted),
            "support": [[list(map(float, p)) for p in pts] for pts in self.support],
        }


def polytope_complement_from_dict(data: dict[str, Any]) -> PolytopeComplement:
    """Inverse of :meth:`PolytopeComplement.to_dict`."""
    if data.get("hypothesis_class") != PolytopeComplement.hypothesis_class:
        raise ValueError(
            f"not a {PolytopeComplement.hypothesis_class!r} dict: hypothesis_class={data.get('hypothesis_class')!r}"
        )
    d = int(data["d"])
    aff = None
    if data.get("aff") is not None:
        a = data["aff"]
        aff = AffineHull(
            center=np.asarray(a["center"], dtype=np.float64),
            basis=_matrix(a["basis"], d),
            complement=_matrix(a["complement"], d),
            tol=float(a["tol"]),
        )
    hs = data.get("halfspaces", [])
    return PolytopeComplement(
        form=data["form"],
        d=d,
        normals=np.array([h["w"] for h in hs], dtype=np.float64).reshape(-1, d),
        lower=np.array([h["lower"] for h in hs], dtype=np.float64),
        aff=aff,
        inverted=bool(data.get("inverted", False)),
        support=tuple(tuple(tuple(p) for p in pts) for pts in data.get("support", [])),
    )


def _matrix(rows: list, d: int) -> np.ndarray:
    """A d x k matrix from nested lists (k may be 0)."""
    arr = np.asarray(rows, dtype=np.float64)
    return arr.reshape(d, 0) if arr.size == 0 else arr.reshape(d, -1)
