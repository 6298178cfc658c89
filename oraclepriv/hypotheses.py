"""Hypothesis classes: thresholds, decision stumps and halfspaces.

Each hypothesis predicts labels in {0, 1}, re-scores itself on a weighted 0-1 problem
(``loss``), and round-trips through a plain dict (``to_dict`` / ``hypothesis_from_dict``).
Backends only *search*; the number an :class:`~oraclepriv.oracle.OracleResult` reports as
``objective`` always comes from :meth:`Hypothesis.loss`, evaluated in float64 on the
original (signed) problem.

Conventions (docs/theory/conventions.md):

* ``Threshold``: h(x) = 1 iff x >= theta, theta may be -inf (all ones) or +inf (all zeros).
* ``Stump``:     h(x) = 1 iff sign * (x[feature] - theta) >= 0, sign in {+1, -1}.
* ``Halfspace``: h(x) = 1 iff w . x + b >= 0 (closed), decided in exact arithmetic
  (:mod:`oraclepriv.exact_affine`); w = 0 gives the constant hypotheses (b >= 0: all ones; b < 0: all
  zeros).
"""

from __future__ import annotations

import importlib
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from oraclepriv.exact_affine import affine_nonnegative

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
    """The weighted 0-1 loss ``sum_i weights[i] * 1[predictions[i] != y[i]]`` in float64.

    Parameters
    ----------
    predictions : numpy.ndarray
        Predicted labels.
    y : numpy.ndarray
        True labels, one per prediction.
    weights : numpy.ndarray
        Weights of either sign, one per prediction.

    Returns
    -------
    float
        The loss (numpy's pairwise summation).

    Examples
    --------
    >>> import numpy as np
    >>> weighted_zero_one_loss(np.array([1, 0, 1]), np.array([1, 1, 0]), np.array([5.0, 2.0, -0.5]))
    1.5
    """
    mistakes = np.asarray(predictions) != np.asarray(y)
    values = np.asarray(weights, dtype=np.float64)
    if mistakes.ndim == 1 and values.shape == mistakes.shape:  # the same values in the same order, a few times faster
        return float(np.compress(mistakes, values).sum())
    return float(values[mistakes].sum())  # other shapes: boolean indexing, which refuses a shape mismatch


def _float_or_inf(value: Any) -> float:
    """Parse a float that may have been serialized as the strings 'inf' / '-inf'."""
    return float(value)


def _check_threshold(value: Any, owner: str) -> None:
    """Thresholds may be +-inf, never NaN (x >= nan is False: a silent all-zeros predictor)."""
    if math.isnan(float(value)):
        raise ValueError(f"{owner}: threshold must be a number or +-inf, got {value!r}")


class Hypothesis(ABC):
    """Common interface of every hypothesis the oracles return.

    A hypothesis predicts labels in {0, 1}, re-scores itself on a weighted 0-1 problem (the
    ``objective`` of every oracle answer comes from :meth:`loss`) and round-trips through a plain dict
    (:meth:`to_dict`, :func:`hypothesis_from_dict`).
    """

    hypothesis_class: ClassVar[str] = ""

    @abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Labels in {0, 1} for the rows of X.

        Parameters
        ----------
        X : numpy.ndarray of shape (n, d)
            The points.

        Returns
        -------
        numpy.ndarray of shape (n,)
            The labels (int8).
        """

    def loss(self, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> float:
        """The weighted 0-1 loss ``sum_i w_i 1[h(x_i) != y_i]`` of this hypothesis, in float64.

        Parameters
        ----------
        X : numpy.ndarray of shape (n, d)
            The points.
        y : numpy.ndarray of shape (n,)
            Labels in {0, 1}.
        weights : numpy.ndarray of shape (n,) or None, default None
            Weights of either sign; None for weight 1 on every point.

        Returns
        -------
        float
            The loss.
        """
        y = np.asarray(y)
        if weights is None:
            weights = np.ones(len(y))
        return weighted_zero_one_loss(self.predict(X), y, weights)

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-friendly dict; :func:`hypothesis_from_dict` inverts it.

        Returns
        -------
        dict
            The class name under ``"hypothesis_class"`` and the parameters.
        """


@dataclass(frozen=True)
class Threshold(Hypothesis):
    """A threshold on one-dimensional data: h(x) = 1 iff x >= threshold.

    Parameters
    ----------
    threshold : float
        The threshold; ``-inf`` labels every point 1, ``inf`` every point 0 (never NaN).

    Examples
    --------
    >>> Threshold(1.5).predict([0.0, 2.0])
    array([0, 1], dtype=int8)
    """

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
    """A decision stump: h(x) = 1 iff sign * (x[feature] - threshold) >= 0.

    Parameters
    ----------
    feature : int
        The index of the feature it reads (>= 0).
    threshold : float
        The threshold, possibly infinite (never NaN).
    sign : {1, -1}, default 1
        1 labels the points at or above the threshold 1, -1 those at or below it.

    Examples
    --------
    >>> import numpy as np
    >>> Stump(feature=1, threshold=0.0, sign=-1).predict(np.array([[5.0, -1.0], [5.0, 1.0]]))
    array([1, 0], dtype=int8)
    """

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
    """A closed halfspace: h(x) = 1 iff w . x + b >= 0, decided exactly (w = 0 gives a constant).

    Parameters
    ----------
    w : tuple of float
        The normal, finite float64 values.
    b : float
        The offset, finite.
    exact : tuple of fractions.Fraction or None, default None
        Exact rational coefficients (w_0, ..., w_(d-1), b), when the halfspace needs more precision
        than float64 has (a labeling whose margin is below float64 resolution, as on points typed with
        decimals that lie on a common line); ``w`` and ``b`` are then their float64 approximations,
        scaled so that ``max(|w_j|, |b|) = 1``, for display and speed. None: the coefficients are the
        float64 values themselves.

    Notes
    -----
    :meth:`predict` is exact either way: the sign of the exact value of w . x + b at the float64 point
    x (:mod:`oraclepriv.exact_affine`: a float filter, exact rational arithmetic for the rows within
    its error bound). The oracles' bounds are proved over all real halfspaces with exact predictions,
    so this is the prediction their certificates speak about. :meth:`decision_function` is the float64
    value, for ranking and plotting; its sign can differ from :meth:`predict` within rounding error.

    Examples
    --------
    >>> import numpy as np
    >>> Halfspace(w=(1.0, -1.0), b=0.0).predict(np.array([[2.0, 1.0], [1.0, 2.0]]))
    array([1, 0], dtype=int8)
    """

    w: tuple[float, ...]
    b: float
    exact: tuple[Fraction, ...] | None = None
    hypothesis_class: ClassVar[str] = "halfspace"
    _w_array: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        w = tuple(float(v) for v in np.ravel(np.asarray(self.w, dtype=np.float64)))
        if not all(math.isfinite(v) for v in w) or not math.isfinite(float(self.b)):
            raise ValueError(f"Halfspace: w and b must be finite, got w={w}, b={self.b}")
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "b", float(self.b))
        object.__setattr__(self, "_w_array", np.asarray(w, dtype=np.float64))
        if self.exact is not None:
            exact = tuple(Fraction(c) for c in self.exact)
            if len(exact) != len(w) + 1:
                raise ValueError(
                    f"Halfspace: exact must hold d + 1 = {len(w) + 1} coefficients (w then b), got {len(exact)}"
                )
            object.__setattr__(self, "exact", exact)

    @classmethod
    def from_exact(cls, w: Sequence[Fraction | int], b: Fraction | int) -> Halfspace:
        """The halfspace {x : w . x + b >= 0} with exact rational coefficients.

        Coefficients that are all float64 values give a plain float halfspace; otherwise the exact
        ones are kept and ``w``, ``b`` are their float64 approximations after scaling by
        ``1 / max(|w_j|, |b|)`` (a positive scaling: the same halfspace).

        Parameters
        ----------
        w : sequence of fractions.Fraction or int
            The normal.
        b : fractions.Fraction or int
            The offset.

        Returns
        -------
        Halfspace
            The halfspace, with ``exact`` set when float64 cannot hold the coefficients.

        Examples
        --------
        >>> from fractions import Fraction
        >>> Halfspace.from_exact([Fraction(1, 3), 1], 0).exact
        (Fraction(1, 1), Fraction(3, 1), Fraction(0, 1))
        """
        coefficients = tuple(Fraction(c) for c in (*w, b))
        if all(float(c) == c for c in coefficients):
            return cls(tuple(float(c) for c in coefficients[:-1]), float(coefficients[-1]))
        top = max(abs(c) for c in coefficients)
        approx = [float(c / top) for c in coefficients]  # correctly rounded (int / int true division)
        common = math.lcm(*(c.denominator for c in coefficients))
        numerators = [c.numerator * (common // c.denominator) for c in coefficients]
        divisor = math.gcd(*numerators)
        exact = tuple(Fraction(v // divisor) for v in numerators)
        return cls(tuple(approx[:-1]), approx[-1], exact=exact)

    @property
    def dim(self) -> int:
        return len(self.w)

    def coefficients(self) -> tuple[Fraction, ...]:
        """The exact coefficients (w_0, ..., w_(d-1), b) as rationals."""
        if self.exact is not None:
            return self.exact
        return tuple(Fraction(v) for v in (*self.w, self.b))

    def _checked(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1 and self.dim == 1:
            X = X[:, None]
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise ValueError(f"Halfspace.predict: X must have shape (n, {self.dim}), got {X.shape}")
        return X

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The float64 value of w . x + b for every row of X (for ranking and plots).

        :meth:`predict` is exact; the sign of this value can differ from it within rounding error.

        Parameters
        ----------
        X : numpy.ndarray of shape (n, d)
            The points.

        Returns
        -------
        numpy.ndarray of shape (n,)
            The values.
        """
        return self._checked(X) @ self._w_array + self.b

    def predict(self, X: np.ndarray) -> np.ndarray:
        """1[w . x + b >= 0], decided exactly for every float64 row (class docstring)."""
        return affine_nonnegative(self._checked(X), self._w_array, self.b, self.exact).astype(np.int8)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hypothesis_class": self.hypothesis_class, "w": list(self.w), "b": float(self.b)}
        if self.exact is not None:  # exact rationals as "p/q" strings (JSON numbers would round them)
            out["exact"] = [str(c) for c in self.exact]
        return out


@dataclass(frozen=True)
class LinearPredictor(Hypothesis):
    """A linear predictor f(x) = <w, x>; ``predict`` is 1[f(x) >= 0].

    The real-valued convex class of Algorithm 3 (Regularization) of Block, Bun, Desai, Shetty, Wu,
    "Oracle-Efficient Differentially Private Learning with Public Data".

    Parameters
    ----------
    w : tuple of float
        The coefficients.
    """

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
    """The hypothesis a :meth:`Hypothesis.to_dict` dict describes.

    Parameters
    ----------
    data : dict
        The dict, with its ``"hypothesis_class"``.

    Returns
    -------
    Hypothesis
        The hypothesis.

    Raises
    ------
    ValueError
        For an unknown hypothesis class.

    Examples
    --------
    >>> hypothesis_from_dict(Stump(feature=0, threshold=2.0).to_dict())
    Stump(feature=0, threshold=2.0, sign=1)
    """
    hypothesis_class = data.get("hypothesis_class")
    if hypothesis_class == "threshold":
        return Threshold(_float_or_inf(data["threshold"]))
    if hypothesis_class == "stump":
        return Stump(int(data["feature"]), _float_or_inf(data["threshold"]), int(data["sign"]))
    if hypothesis_class == "halfspace":
        exact = data.get("exact")
        return Halfspace(
            tuple(data["w"]), float(data["b"]), exact=None if exact is None else tuple(Fraction(c) for c in exact)
        )
    if hypothesis_class == "linear":
        return LinearPredictor(tuple(float(v) for v in data["w"]))
    if (
        hypothesis_class in EXTERNAL_DECODERS
    ):  # hypotheses defined outside the core, e.g. the PPM learner's improper output
        module_name, function = EXTERNAL_DECODERS[hypothesis_class].split(":")
        return getattr(importlib.import_module(module_name), function)(data)
    known = sorted(_CLASSES_BY_NAME) + sorted(EXTERNAL_DECODERS)
    raise ValueError(f"hypothesis_from_dict: unknown hypothesis class {hypothesis_class!r}; expected one of {known}")
