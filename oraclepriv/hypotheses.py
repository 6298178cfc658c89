"""Hypothesis classes: thresholds, decision stumps and halfspaces.

Each hypothesis predicts labels in {0, 1}, re-scores itself on a weighted 0-1 problem
(``loss``), and round-trips through a plain dict (``to_dict`` / ``hypothesis_from_dict``).
Backends only *search*; the number an :class:`~oraclepriv.oracle.OracleResult` reports as
``objective`` always comes from :meth:`Hypothesis.loss`, evaluated in float64 on the
original (signed) problem.

Conventions (docs/theory/conventions.md):

* ``Threshold``: h(x) = 1 iff x >= theta, theta may be -inf (all ones) or +inf (all zeros).
* ``Stump``:     h(x) = 1 iff sign * (x[feature] - theta) >= 0, sign in {+1, -1}.
* ``Halfspace``: h(x) = 1 iff w . x + b >= 0 (closed). w = 0 gives the constant
  hypotheses (b >= 0: all ones; b < 0: all zeros).
"""

from __future__ import annotations

import importlib
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "Hypothesis",
    "LinearPredictor",
    "Threshold",
    "Stump",
    "Halfspace",
    "hypothesis_from_dict",
    "weighted_zero_one_loss",
]


def weighted_zero_one_loss(predictions: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    """Sum of ``weights[i] * 1[predictions[i] != y[i]]`` in float64 (numpy pairwise summation)."""
    mistakes = np.asarray(predictions) != np.asarray(y)
    return float(np.asarray(weights, dtype=np.float64)[mistakes].sum())


def _float_or_inf(value: Any) -> float:
    """Parse a float that may have been serialized as the strings 'inf' / '-inf'."""
    return float(value)


def _check_threshold(value: Any, owner: str) -> None:
    """Thresholds may be +-inf, never NaN (x >= nan is False: a silent all-zeros predictor)."""
    if math.isnan(float(value)):
        raise ValueError(f"{owner}: threshold must be a number or +-inf, got {value!r}")


class Hypothesis(ABC):
    """Common interface of every hypothesis the oracles return."""

    hypothesis_class: ClassVar[str] = ""

    @abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Labels in {0, 1} (int8) for the rows of X."""

    def loss(self, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> float:
        """Weighted 0-1 loss sum_i w_i 1[h(x_i) != y_i] (weights of any sign; default 1)."""
        y = np.asarray(y)
        if weights is None:
            weights = np.ones(len(y))
        return weighted_zero_one_loss(self.predict(X), y, weights)

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-friendly dict; ``hypothesis_from_dict`` inverts it."""


@dataclass(frozen=True)
class Threshold(Hypothesis):
    """h(x) = 1 iff x >= threshold, on one-dimensional data."""

    threshold: float
    hypothesis_class: ClassVar[str] = "threshold"

    def __post_init__(self) -> None:
        _check_threshold(self.threshold, "Threshold")

    def predict(self, X: np.ndarray) -> np.ndarray:
        x = np.asarray(X, dtype=np.float64)
        if x.ndim == 2:
            if x.shape[1] != 1:
                raise ValueError(f"Threshold.predict: X must have one feature, got shape {x.shape}")
            x = x[:, 0]
        return (x >= self.threshold).astype(np.int8)

    def to_dict(self) -> dict[str, Any]:
        return {"hypothesis_class": self.hypothesis_class, "threshold": float(self.threshold)}


@dataclass(frozen=True)
class Stump(Hypothesis):
    """h(x) = 1 iff sign * (x[feature] - threshold) >= 0."""

    feature: int
    threshold: float
    sign: int = 1
    hypothesis_class: ClassVar[str] = "stump"

    def __post_init__(self) -> None:
        if self.sign not in (1, -1):
            raise ValueError(f"Stump: sign must be +1 or -1, got {self.sign!r}")
        if isinstance(self.feature, bool) or not isinstance(self.feature, (int, np.integer)) or self.feature < 0:
            raise ValueError(f"Stump: feature must be an integer >= 0, got {self.feature!r}")
        _check_threshold(self.threshold, "Stump")

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] <= self.feature:
            raise ValueError(f"Stump.predict: X of shape {X.shape} has no feature {self.feature}")
        column = X[:, self.feature]
        if self.sign == 1:
            return (column >= self.threshold).astype(np.int8)
        return (column <= self.threshold).astype(np.int8)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hypothesis_class": self.hypothesis_class,
            "feature": int(self.feature),
            "threshold": float(self.threshold),
            "sign": int(self.sign),
        }


@dataclass(frozen=True)
class Halfspace(Hypothesis):
    """h(x) = 1 iff w . x + b >= 0 (closed halfspace; w = 0 gives a constant)."""

    w: tuple[float, ...]
    b: float
    hypothesis_class: ClassVar[str] = "halfspace"
    _w_array: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        w = tuple(float(v) for v in np.ravel(np.asarray(self.w, dtype=np.float64)))
        if not all(math.isfinite(v) for v in w) or not math.isfinite(float(self.b)):
            raise ValueError(f"Halfspace: w and b must be finite, got w={w}, b={self.b}")
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "b", float(self.b))
        object.__setattr__(self, "_w_array", np.asarray(w, dtype=np.float64))

    @property
    def dim(self) -> int:
        return len(self.w)

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """w . x + b for every row of X (float64)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1 and self.dim == 1:
            X = X[:, None]
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise ValueError(f"Halfspace.predict: X must have shape (n, {self.dim}), got {X.shape}")
        return X @ self._w_array + self.b

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (self.decision_function(X) >= 0).astype(np.int8)

    def to_dict(self) -> dict[str, Any]:
        return {"hypothesis_class": self.hypothesis_class, "w": list(self.w), "b": float(self.b)}


@dataclass(frozen=True)
class LinearPredictor(Hypothesis):
    """f(x) = <w, x> (real-valued; the convex class of Algorithm 3 of Block, Bun, Desai, Shetty, Wu,
    "Oracle-Efficient Differentially Private Learning with Public Data"); ``predict`` is 1[f(x) >= 0]."""

    w: tuple[float, ...]
    hypothesis_class: ClassVar[str] = "linear"

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
        if X.shape[1] != len(self.w):
            raise ValueError(f"LinearPredictor: X must have shape (n, {len(self.w)}), got {X.shape}")
        return X @ np.asarray(self.w, dtype=np.float64)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (self.decision_function(X) >= 0).astype(np.int8)

    def to_dict(self) -> dict[str, Any]:
        return {"hypothesis_class": self.hypothesis_class, "w": [float(v) for v in self.w]}


_CLASSES_BY_NAME: dict[str, type[Hypothesis]] = {
    Threshold.hypothesis_class: Threshold,
    Stump.hypothesis_class: Stump,
    Halfspace.hypothesis_class: Halfspace,
    LinearPredictor.hypothesis_class: LinearPredictor,
}


#: hypothesis classes defined outside this module -> "module:function" that decodes their dict. Loaded
#: lazily, so the core hypotheses never import a learner package (which imports them).
EXTERNAL_DECODERS: dict[str, str] = {
    "ppm_polytope_complement": "oraclepriv.ppm.hypothesis:polytope_complement_from_dict",
}


def hypothesis_from_dict(data: dict[str, Any]) -> Hypothesis:
    """Inverse of ``Hypothesis.to_dict``."""
    hypothesis_class = data.get("hypothesis_class")
    if hypothesis_class == "threshold":
        return Threshold(_float_or_inf(data["threshold"]))
    if hypothesis_class == "stump":
        return Stump(int(data["feature"]), _float_or_inf(data["threshold"]), int(data["sign"]))
    if hypothesis_class == "halfspace":
        return Halfspace(tuple(data["w"]), float(data["b"]))
    if hypothesis_class == "linear":
        return LinearPredictor(tuple(float(v) for v in data["w"]))
    if (
        hypothesis_class in EXTERNAL_DECODERS
    ):  # hypotheses defined outside the core, e.g. the PPM learner's improper output
        module_name, function = EXTERNAL_DECODERS[hypothesis_class].split(":")
        return getattr(importlib.import_module(module_name), function)(data)
    known = sorted(_CLASSES_BY_NAME) + sorted(EXTERNAL_DECODERS)
    raise ValueError(f"hypothesis_from_dict: unknown hypothesis class {hypothesis_class!r}; expected one of {known}")
