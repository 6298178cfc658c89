"""The private learners as scikit-learn estimators (docs/sklearn.md).

1. scikit-learn's own estimator checks (``parametrize_with_checks``) on every learner. The checks
   call ``fit(X, y)`` with no side data, so each learner runs behind a thin module-level adapter
   that supplies what the algorithm needs and the checks cannot: public points (a fixed Gaussian
   sample with the data's feature count, wrapped in :class:`PublicData`), PPM's privacy bits (the
   first rows public), RSPM's grid (the data rounded onto {-1, 0, 1}, the same per-row map in fit
   and predict), Regularization's bounded domain (the data divided by a constant, ||x||_1 <= 1).
   Everything else — validation, label encoding, ``classes_``, pickling, cloning, tags,
   determinism, feature-name bookkeeping — is the learner's own code.
2. The public-data convention survives cross-validation: ``GridSearchCV`` over epsilon and
   ``cross_val_score`` on RRSPM (public points intact in every fold) and on PPM (privacy bits sliced
   with their rows), and both failure modes refused: a plain public array that scikit-learn would
   slice, and public points left out.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError as SklearnNotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import _num_samples

from oraclepriv.learners import (
    RRSPM,
    RSPM,
    Perturbation,
    PPMHalfspaces,
    PublicCoverEM,
    Regularization,
    SubsampleAggregate,
)
from oraclepriv.public_data import PublicData
from oraclepriv.release import PrivacyLeakWarning


def _checks_public_points(X):
    """Six fixed public points with X's feature count (None when X has no usable shape)."""
    try:
        d = np.asarray(X, dtype=np.float64).shape[1]
    except (TypeError, ValueError, IndexError):
        return None
    return PublicData(np.random.default_rng(0).normal(size=(6, d))) if d > 0 else None


def _with_checks_public_points(cls):
    """``cls`` whose fit supplies :func:`_checks_public_points` when no X_public is given (module-level
    name, so the checks can pickle it)."""

    def fit(self, X, y, X_public=None, **fit_params):
        return cls.fit(
            self, X, y, X_public=X_public if X_public is not None else _checks_public_points(X), **fit_params
        )

    name = f"Checked{cls.__name__}"
    return type(name, (cls,), {"fit": fit, "__module__": __name__, "__qualname__": name})


CheckedRRSPM = _with_checks_public_points(RRSPM)
CheckedPerturbation = _with_checks_public_points(Perturbation)
CheckedSubsampleAggregate = _with_checks_public_points(SubsampleAggregate)
CheckedPublicCoverEM = _with_checks_public_points(PublicCoverEM)


_L1_SCALE = 1e4  # the checks' features have l1 norms below this


def _real(X):
    """X as a real array, or None when it is not one (the learner's own validation then refuses X)."""
    try:
        arr = np.asarray(X)
        return np.asarray(arr, dtype=np.float64) if arr.dtype.kind in "iufO" else None
    except (TypeError, ValueError):
        return None


def _shrink(X):
    arr = _real(X)
    return X if arr is None else arr / _L1_SCALE


class CheckedRegularization(Regularization):
    def fit(self, X, y, X_public=None, **fit_params):
        Z = X_public if X_public is not None else _checks_public_points(X)
        Z = PublicData(Z.points / _L1_SCALE) if isinstance(Z, PublicData) else Z
        return super().fit(_shrink(X), y, X_public=Z, **fit_params)

    def predict(self, X):
        return super().predict(_shrink(X))

    def decision_function(self, X):
        return super().decision_function(_shrink(X))


def _on_grid(X):
    arr = _real(X)
    return X if arr is None or not np.all(np.isfinite(arr)) else np.clip(np.round(arr), -1, 1)


class CheckedRSPM(RSPM):
    def fit(self, X, y, X_public=None, **fit_params):
        return super().fit(_on_grid(X), y, X_public, **fit_params)

    def predict(self, X):
        return super().predict(_on_grid(X))


class CheckedPPMHalfspaces(PPMHalfspaces):
    def fit(self, X, y, public_mask=None):
        if public_mask is None:
            n = _num_samples(X)
            public_mask = np.arange(n) < min(3, n // 2)
        return super().fit(X, y, public_mask)


#: checks a private binary learner cannot pass, with the reason (docs/sklearn.md)
ONE_LABEL = {
    "check_classifiers_one_label": (
        "single-class data is fitted like any other (refusing it would publish that the labels are constant), and "
        "the noisy release need not predict the one class seen"
    )
}
EXPECTED_FAILURES = {
    "CheckedRRSPM": ONE_LABEL,
    "CheckedPerturbation": ONE_LABEL,
    "CheckedSubsampleAggregate": ONE_LABEL,
}

ESTIMATORS = [
    CheckedRRSPM(hypothesis_class="stump", random_state=0),
    CheckedPerturbation(hypothesis_class="stump", delta=1e-4, J=2, random_state=0),
    CheckedSubsampleAggregate(hypothesis_class="stump", n_teachers=2, delta=1e-4, random_state=0),
    CheckedPublicCoverEM(hypothesis_class="stump", random_state=0),
    CheckedRegularization(delta=1e-4, random_state=0),
    CheckedRSPM(hypothesis_class="stump", grid=[-1.0, 0.0, 1.0], random_state=0),
    CheckedPPMHalfspaces(label_determined=False, random_state=0),
]


@pytest.mark.filterwarnings("ignore::oraclepriv.release.PrivacyLeakWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILURES.get(type(est).__name__, {}))
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------- the public-data convention
@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    return X, y, rng.normal(size=(60, 2))  # as many public points as private records: the hazard


class RecordingRRSPM(RRSPM):
    """RRSPM that records the public points each fit received (class attribute: clones share it)."""

    seen: list = []

    def fit(self, X, y, X_public=None, **fit_params):
        RecordingRRSPM.seen.append((len(X), X_public))
        return super().fit(X, y, X_public=X_public, **fit_params)


def test_public_data_reaches_every_cv_fold_intact(task):
    X, y, Z = task
    RecordingRRSPM.seen = []
    scores = cross_val_score(
        RecordingRRSPM(hypothesis_class="stump", random_state=0), X, y, cv=KFold(3), params={"X_public": PublicData(Z)}
    )
    assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))
    assert [n for n, _ in RecordingRRSPM.seen] == [40, 40, 40]
    assert all(isinstance(P, PublicData) and np.array_equal(P.points, Z) for _, P in RecordingRRSPM.seen)


def test_grid_search_over_epsilon_keeps_the_public_data(task):
    X, y, Z = task
    RecordingRRSPM.seen = []
    search = GridSearchCV(
        RecordingRRSPM(hypothesis_class="stump", random_state=0), {"epsilon": [0.5, 2.0]}, cv=KFold(3)
    )
    search.fit(X, y, X_public=PublicData(Z))
    assert search.best_params_["epsilon"] in (0.5, 2.0)
    assert len(RecordingRRSPM.seen) == 2 * 3 + 1  # every fold of both values, then the refit on all of X
    assert all(np.array_equal(P.points, Z) for _, P in RecordingRRSPM.seen)
    assert search.best_estimator_.n_public_ == len(Z)


def test_a_plain_public_array_that_scikit_learn_would_slice_is_refused(task):
    X, y, Z = task
    with pytest.raises(ValueError, match="as many rows as X_private.*PublicData"):
        RRSPM(hypothesis_class="stump").fit(X, y, X_public=Z)
    # inside cross-validation the fold's slice has as many rows as the fold: refused there too
    with pytest.raises(ValueError, match="as many rows as X_private"):
        cross_val_score(RRSPM(hypothesis_class="stump"), X, y, cv=KFold(3), params={"X_public": Z}, error_score="raise")
    # a plain array of another length is never sliced by scikit-learn: accepted, intact
    RecordingRRSPM.seen = []
    cross_val_score(
        RecordingRRSPM(hypothesis_class="stump", random_state=0), X, y, cv=KFold(3), params={"X_public": Z[:25]}
    )
    assert all(np.array_equal(P, Z[:25]) for _, P in RecordingRRSPM.seen)


def test_public_data_left_out_is_refused(task):
    X, y, _ = task
    with pytest.raises(ValueError, match="X_public is required"):
        cross_val_score(RRSPM(hypothesis_class="stump"), X, y, cv=KFold(3), error_score="raise")


class RecordingPPM(PPMHalfspaces):
    seen: list = []

    def fit(self, X, y, public_mask):
        RecordingPPM.seen.append((np.asarray(X).copy(), np.asarray(public_mask).copy()))
        return super().fit(X, y, public_mask)


def test_ppm_privacy_bits_follow_their_rows_through_cv_and_grid_search():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(45, 2))
    public = np.arange(45) % 5 == 0  # the public examples are rows of X, labelled 0 (private label 1)
    y = np.where(public, 0, (X[:, 0] > 0).astype(int))
    RecordingPPM.seen = []
    scores = cross_val_score(RecordingPPM(random_state=0), X, y, cv=KFold(3), params={"public_mask": public})
    assert scores.shape == (3,)
    for Xf, mask in RecordingPPM.seen:  # each fold's bits are the bits of the fold's own rows
        rows = [int(np.flatnonzero((X == x).all(axis=1))[0]) for x in Xf]
        assert np.array_equal(mask, public[rows])
    search = GridSearchCV(PPMHalfspaces(random_state=0), {"epsilon": [0.5, 4.0]}, cv=KFold(3))
    search.fit(X, y, public_mask=public)
    assert search.best_estimator_.n_public_ == int(public.sum())


# ---------------------------------------------------------------------- estimator conventions
def test_string_labels_classes_and_score(task):
    X, y, Z = task
    labels = np.where(y == 1, "spam", "ham")
    with pytest.warns(PrivacyLeakWarning, match="read off y_private"):
        clf = RRSPM(hypothesis_class="stump", random_state=0).fit(X, labels, X_public=Z[:20])
    assert list(clf.classes_) == ["ham", "spam"] and set(clf.predict(X)) <= {"ham", "spam"}
    assert clf.release_.to_dict()["classes"] == ["ham", "spam"]
    assert clf.score(X, labels) == np.mean(clf.predict(X) == labels)
    # 0/1 labels: the label set is fixed in advance, nothing read off the data, no "classes" in the release
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf01 = RRSPM(hypothesis_class="stump", random_state=0).fit(X, y, X_public=Z[:20])
    assert list(clf01.classes_) == [0, 1] and "classes" not in clf01.release_.to_dict()
    assert np.array_equal(clf01.predict(X) == 1, clf.predict(X) == "spam")  # same fit, labels renamed


def test_classifier_identity_clone_pickle_and_not_fitted(task):
    X, y, Z = task
    for est in (
        RRSPM(),
        PPMHalfspaces(),
        PublicCoverEM(),
        Regularization(),
        RSPM(),
        SubsampleAggregate(),
        Perturbation(),
    ):
        assert is_classifier(est)
        with pytest.raises(SklearnNotFittedError):
            est.predict(X)
    clf = RRSPM(hypothesis_class="stump", random_state=1).fit(X, y, X_public=Z[:20])
    again = pickle.loads(pickle.dumps(clf))
    assert again.release_.to_json() == clf.release_.to_json() and np.array_equal(again.predict(X), clf.predict(X))
    pipe = make_pipeline(StandardScaler(), RRSPM(hypothesis_class="stump", random_state=0))
    pipe.fit(X, y, rrspm__X_public=PublicData(StandardScaler().fit(X).transform(Z)))
    assert 0 <= pipe.score(X, y) <= 1 and pipe.named_steps["rrspm"].n_public_ == len(Z)


def test_theory_survives_clone():
    clf = RRSPM.from_theory(0.2, 0.1, 1.0, 2, epsilon=1.0, hypothesis_class="stump")
    copy = clone(clf)
    assert copy.theory == clf.theory and copy.theory is not clf.theory and copy.m == clf.m
    assert "theory" not in clf.get_params()
