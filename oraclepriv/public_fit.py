"""Preprocessing ahead of a private learner: transformers fitted on the public points, applied to both sets.

A scikit-learn ``Pipeline`` fits each transformer on the rows it is given. Ahead of a private learner
those rows are the private records, so ``make_pipeline(StandardScaler(), RRSPM(...))`` fits the scaler
on private data: its mean and scale ship with the fitted pipeline, and no privacy proof covers them.
And the public points (``X_public``, a fit parameter of the last step) never pass through the steps,
so the learner compares scaled private rows with unscaled public points.

:class:`PublicFit` wraps a transformer so that it is fitted on the **public points only** and applied
to the private rows and the public points alike:

    make_pipeline(PublicFit(StandardScaler()), RRSPM(...)).fit(X, y, rrspm__X_public=PublicData(Z))

fits ``StandardScaler`` on ``Z`` and hands RRSPM ``scaler.transform(X)`` and ``scaler.transform(Z)``: the
same fit as transforming both sets by hand. In the pipeline, ``PublicFit`` sees the private rows
first, and must not learn from them; so its ``fit`` learns nothing, and its ``fit_transform`` passes
the rows on untouched, marked as awaiting the public points (:class:`PendingPublicFit`). The private
learner that receives them (:func:`public_fit_inputs`, called at the start of its ``fit``) fits every
pending step on its public points, in order, and transforms both sets through them. A transformer
fitted beforehand on public information (bounds known in advance) is wrapped frozen:
``PublicFit(FrozenEstimator(MinMaxScaler().fit(bounds)))`` (scikit-learn's
:class:`~sklearn.frozen.FrozenEstimator`); it is not refitted, and both sets still pass through it.

The learner also looks for the pipeline it is the last step of (the calling frames of its ``fit``) and
warns with :class:`~oraclepriv.release.PrivacyLeakWarning` about every step before it that is not a
``PublicFit`` ("passthrough" excepted): a step fitted on the private rows, and one the public points
bypassed. The check sees scikit-learn ``Pipeline`` objects (nested ones too), not other meta-estimators.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils import Tags, get_tags

from oraclepriv.public_data import PublicData, public_points
from oraclepriv.release import warn_privacy_leak

__all__ = ["PendingPublicFit", "PublicFit", "pipeline_steps_before", "public_fit_inputs"]

#: how many calling frames the pipeline check looks through (a Pipeline's fit calls its last step directly)
_FRAMES = 64


class PendingPublicFit:
    """Private rows on their way from :class:`PublicFit` steps to a private learner, not yet transformed.

    ``rows`` is what the first ``PublicFit`` received; ``steps`` the ``PublicFit`` steps, in pipeline
    order, still to be fitted on the public points and applied. It converts to an array (``__array__``)
    so that a step that is not a ``PublicFit`` still runs, but then the mark is lost (the pipeline
    check warns about that step).
    """

    __slots__ = ("rows", "steps")

    def __init__(self, rows: Any, steps: tuple[PublicFit, ...]) -> None:
        self.rows = rows
        self.steps = steps

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.rows, dtype=dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.rows))

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"PendingPublicFit({self.shape[0]} rows, {len(self.steps)} step(s) awaiting the public points)"


class PublicFit(TransformerMixin, BaseEstimator):
    """A transformer fitted on public points only; the private rows and the public points pass through it alike.

    Parameters
    ----------
    transformer : scikit-learn transformer
        Cloned and fitted on the public points by :meth:`fit_public` (which the private learner after this
        step calls), or a :class:`~sklearn.frozen.FrozenEstimator` of one fitted on public information,
        which is used as it is.

    Attributes
    ----------
    transformer_ : the fitted transformer (after :meth:`fit_public`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import StandardScaler
    >>> from oraclepriv.public_fit import PublicFit
    >>> step = PublicFit(StandardScaler()).fit_public(np.array([[0.0], [2.0]]))
    >>> step.transform(np.array([[1.0], [3.0]])).ravel().tolist()
    [0.0, 2.0]
    """

    def __init__(self, transformer: Any) -> None:
        self.transformer = transformer

    def fit(self, X: Any, y: Any = None, **params: Any) -> PublicFit:
        """Learn nothing from ``X`` (ahead of a private learner, the private rows); forget an earlier fit.

        The transformer is fitted on the public points by :meth:`fit_public`, which the private learner
        after this step calls with its ``X_public``.
        """
        if params:
            raise TypeError(f"PublicFit.fit takes no fit parameters (it learns nothing from X); got {sorted(params)}")
        if hasattr(self, "transformer_"):
            del self.transformer_
        return self

    def fit_transform(self, X: Any, y: Any = None, **params: Any) -> PendingPublicFit:
        """:meth:`fit`, then ``X`` passed on untouched, marked to be fitted and transformed by the private learner."""
        self.fit(X, y, **params)
        if isinstance(X, PendingPublicFit):
            return PendingPublicFit(X.rows, (*X.steps, self))
        return PendingPublicFit(X, (self,))

    def fit_public(self, X_public: Any) -> PublicFit:
        """Fit the transformer on the public points ``X_public`` (array-like or :class:`PublicData`); returns self."""
        points = X_public.points if isinstance(X_public, PublicData) else X_public
        if isinstance(self.transformer, FrozenEstimator):
            self.transformer_ = self.transformer
        else:
            self.transformer_ = clone(self.transformer).fit(points)
        return self

    def transform(self, X: Any) -> Any:
        """Transform ``X`` with the transformer fitted on the public points."""
        if not hasattr(self, "transformer_"):
            raise NotFittedError(
                "This PublicFit is not fitted: it is fitted on the public points by the private learner that follows "
                "it in a Pipeline (pipeline.fit(X, y, <learner>__X_public=PublicData(Z))), or by fit_public(Z)"
            )
        return self.transformer_.transform(X)

    def get_feature_names_out(self, input_features: Any = None) -> Any:
        """The fitted transformer's output feature names."""
        if not hasattr(self, "transformer_"):
            raise NotFittedError("This PublicFit is not fitted (see transform)")
        return self.transformer_.get_feature_names_out(input_features)

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags = get_tags(self.transformer).input_tags
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "transformer_")


def pipeline_steps_before(estimator: Any) -> list[tuple[str, Any]]:
    """The steps ahead of ``estimator`` in the scikit-learn Pipelines it is the last step of, outermost first,
    found among the calling frames (a Pipeline's ``fit`` calls its last step's ``fit`` directly)."""
    found: list[list[tuple[str, Any]]] = []
    target = estimator
    frame: FrameType | None = sys._getframe(1)
    for _ in range(_FRAMES):
        if frame is None:
            break
        owner = frame.f_locals.get("self")
        if isinstance(owner, Pipeline) and owner.steps and owner.steps[-1][1] is target:
            found.append(list(owner.steps[:-1]))
            target = owner
        frame = frame.f_back
    return [step for steps in reversed(found) for step in steps]


def _learns_from_data(step: Any) -> bool:
    if isinstance(step, FrozenEstimator):
        return False
    try:
        return bool(get_tags(step).requires_fit)
    except (AttributeError, TypeError, ValueError):  # not a scikit-learn estimator: assume it does
        return True


def warn_private_steps(estimator: Any) -> None:
    """Warn (:class:`~oraclepriv.release.PrivacyLeakWarning`) about every pipeline step ahead of a private
    learner that is not a :class:`PublicFit` (module docstring)."""
    flagged = [
        (name, step)
        for name, step in pipeline_steps_before(estimator)
        if step is not None
        and not (isinstance(step, str) and step == "passthrough")
        and not isinstance(step, PublicFit)
    ]
    if not flagged:
        return
    fitted = [name for name, step in flagged if _learns_from_data(step)]
    names = ", ".join(f"{name!r} ({type(step).__name__})" for name, step in flagged)
    leak = (
        f" Step(s) {', '.join(map(repr, fitted))} were fitted on the private rows: their fitted statistics ship with "
        "the pipeline, and no privacy proof covers them."
        if fitted
        else ""
    )
    warn_privacy_leak(
        f"{type(estimator).__name__} is fitted in a Pipeline after step(s) {names} that are not PublicFit.{leak} The "
        "public points (X_public) did not pass through them, so the learner compares transformed private rows with "
        "untransformed public points. Wrap each step as oraclepriv.public_fit.PublicFit(step): it is fitted on the "
        "public points, and both sets pass through it",
        stacklevel=5,
    )


def public_fit_inputs(estimator: Any, X_private: Any, X_public: Any) -> tuple[Any, Any]:
    """What a private learner's ``fit`` works on: the pipeline check, then the pending :class:`PublicFit` steps
    fitted on the public points and applied to both sets (module docstring).

    Returns ``(X_private, X_public)``, transformed when ``X_private`` is a :class:`PendingPublicFit`
    (``X_public`` then comes back as a :class:`PublicData`), unchanged otherwise.
    """
    warn_private_steps(estimator)
    if not isinstance(X_private, PendingPublicFit):
        return X_private, X_public
    if X_public is None:
        raise ValueError(
            f"X_private comes through {len(X_private.steps)} PublicFit step(s), which are fitted on the public points, "
            f"but {type(estimator).__name__}.fit got no X_public; pass X_public=PublicData(Z) to the learner's step"
        )
    X = X_private.rows
    Z = public_points(X_public, len(X), int(np.shape(X)[1]))
    for step in X_private.steps:
        step.fit_public(Z)
        X, Z = step.transform(X), step.transform(Z)
    return X, PublicData(Z)
