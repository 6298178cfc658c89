"""Public points as a fit argument that scikit-learn never slices.

The learners of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning
with Public Data" (and PublicCoverEM) take unlabelled public points beside the private sample:
``fit(X_private, y_private, X_public=Z)``. scikit-learn's cross-validation and search tools
(``cross_val_score``, ``GridSearchCV``, ...) index every array-like fit parameter whose length
equals the number of samples, fold by fold. A public set with exactly as many rows as the private
sample would therefore be cut down, silently, to the fold's slice.

:class:`PublicData` wraps the points in an object that is not array-like (no ``__len__``,
``shape`` or ``__array__``), so such tools pass it to every fold intact. A plain array is still
accepted when its length differs from the private sample's (scikit-learn passes those through
unchanged); an ambiguous plain array of the same length is refused with an error naming the fix.
docs/sklearn.md explains the convention and why the semi-supervised one (public rows of ``X``
labelled -1) is not used: cross-validation would split the public points between folds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oraclepriv.validation import as_features

__all__ = ["PublicData", "public_points"]


class PublicData:
    """Public, unlabelled points of shape (m, d), passed intact through scikit-learn's CV tools.

    Parameters
    ----------
    points : array-like of shape (m, d)
        Finite public points; copied into a read-only float64 array.

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv.public_data import PublicData
    >>> Z = PublicData(np.zeros((3, 2)))
    >>> Z
    PublicData(3 points, 2 features)
    >>> Z.points.shape
    (3, 2)
    """

    __slots__ = ("_points",)

    def __init__(self, points: Any) -> None:
        if isinstance(points, PublicData):
            points = points.points
        arr = np.array(as_features(points, "X_public", allow_1d=False), dtype=np.float64, copy=True)
        arr.setflags(write=False)
        self._points = arr

    @property
    def points(self) -> np.ndarray:
        """The public points, a read-only float64 array of shape (m, d)."""
        return self._points

    def __repr__(self) -> str:
        m, d = self._points.shape
        return f"PublicData({m} points, {d} features)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicData) and np.array_equal(self._points, other._points)

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> np.ndarray:
        return self._points

    def __setstate__(self, state: np.ndarray) -> None:
        arr = np.array(state, dtype=np.float64, copy=True)
        arr.setflags(write=False)
        self._points = arr


def public_points(X_public: Any, n_private: int, n_features: int, name: str = "X_public") -> np.ndarray:
    """The public points of a fit, checked: present, finite, 2-D, with the private feature count.

    A plain array-like with exactly ``n_private`` rows is refused: scikit-learn's cross-validation
    would have sliced it per fold (module docstring), and a fit cannot tell whether it was.

    Parameters
    ----------
    X_public : PublicData or array-like of shape (m, d)
        The public points as the fit received them.
    n_private : int
        The number of private records.
    n_features : int
        The number of private features; the public points must have as many.
    name : str, default "X_public"
        The argument's name, for the error messages.

    Returns
    -------
    numpy.ndarray of shape (m, d)
        The public points, float64.

    Raises
    ------
    ValueError
        When the points are missing, not finite, not 2-D, of another feature count, or a plain array
        with ``n_private`` rows.
    """
    if X_public is None:
        raise ValueError(f"{name} is required: these learners need public (unlabelled) points; got None")
    if isinstance(X_public, PublicData):
        Z = X_public.points
    else:
        Z = as_features(X_public, name, allow_1d=False)
        if Z.shape[0] == n_private:
            raise ValueError(
                f"{name} is a plain array with as many rows as X_private ({n_private}); scikit-learn's "
                "cross-validation and search tools slice every fit parameter of that length per fold, so the public "
                f"points could have been cut down to a fold's slice. Pass {name}=PublicData(points) "
                "(oraclepriv.PublicData), which is never sliced"
            )
    if Z.shape[1] != n_features:
        raise ValueError(
            f"{name} has {Z.shape[1]} features but X_private has {n_features} (shape {Z.shape}); "
            "public and private points must live in the same feature space"
        )
    return Z
