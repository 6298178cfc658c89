"""Preprocessing ahead of a private learner (oraclepriv.public_fit).

A transformer fitted on the private rows ahead of a learner warns PrivacyLeakWarning; PublicFit
fits it on the public points and passes both sets through it, which gives exactly the fit of
transforming both sets by hand.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler

from oraclepriv import PublicData
from oraclepriv.learners import RRSPM, PublicCoverEM
from oraclepriv.public_fit import PendingPublicFit, PublicFit, pipeline_steps_before
from oraclepriv.release import PrivacyLeakWarning


@pytest.fixture
def data():
    """Features far from standard scale (mean 50, spread 10), label by the first feature."""
    rng = np.random.default_rng(0)
    X = rng.normal(50.0, 10.0, (80, 2))
    y = (X[:, 0] > 50.0).astype(int)
    Z = rng.normal(50.0, 10.0, (9, 2))
    return X, y, Z


def _pipeline_warnings(record) -> list[str]:
    return [
        str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning) and "Pipeline" in str(w.message)
    ]


def test_a_scaler_fitted_on_the_private_rows_warns(data):
    X, y, Z = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        make_pipeline(StandardScaler(), RRSPM(hypothesis_class="stump", random_state=0)).fit(
            X, y, rrspm__X_public=PublicData(Z)
        )
    messages = _pipeline_warnings(record)
    assert len(messages) == 1
    assert "'standardscaler' (StandardScaler)" in messages[0] and "fitted on the private rows" in messages[0]
    assert "did not pass through" in messages[0] and "PublicFit(step)" in messages[0]


def test_a_stateless_step_warns_only_that_the_public_points_bypassed_it(data):
    X, y, Z = data
    with pytest.warns(PrivacyLeakWarning, match="did not pass through") as record:
        make_pipeline(FunctionTransformer(np.log), RRSPM(hypothesis_class="stump", random_state=0)).fit(
            X, y, rrspm__X_public=PublicData(Z)
        )
    assert not any("fitted on the private rows" in m for m in _pipeline_warnings(record))


def test_a_step_of_an_outer_pipeline_warns(data):
    X, y, Z = data
    inner = make_pipeline(PublicFit(StandardScaler()), RRSPM(hypothesis_class="stump", random_state=0))
    outer = Pipeline([("pre", MinMaxScaler()), ("model", inner)])
    with pytest.warns(PrivacyLeakWarning, match="'pre' \\(MinMaxScaler\\)"):
        outer.fit(X, y, model__rrspm__X_public=PublicData(Z))


def test_public_fit_gives_the_fit_of_transforming_both_sets_by_hand(data):
    X, y, Z = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe = make_pipeline(PublicFit(StandardScaler()), RRSPM(hypothesis_class="halfspace", random_state=4))
        pipe.fit(X, y, rrspm__X_public=PublicData(Z))
    assert _pipeline_warnings(record) == []
    scaler = StandardScaler().fit(Z)
    by_hand = RRSPM(hypothesis_class="halfspace", random_state=4).fit(
        scaler.transform(X), y, PublicData(scaler.transform(Z))
    )
    learner = pipe[-1]
    assert learner.hypothesis_ == by_hand.hypothesis_
    assert learner.release_.to_json() == by_hand.release_.to_json()
    assert np.array_equal(learner.noisy_points_, scaler.transform(Z))
    assert np.array_equal(pipe[0].transformer_.mean_, Z.mean(axis=0))  # fitted on the public points only
    X_test = np.random.default_rng(1).normal(50.0, 10.0, (30, 2))
    assert np.array_equal(pipe.predict(X_test), by_hand.predict(scaler.transform(X_test)))


def test_a_chain_of_public_fits_equals_the_chain_by_hand(data):
    X, y, Z = data
    pipe = make_pipeline(
        PublicFit(StandardScaler()), PublicFit(PCA(n_components=2)), RRSPM(hypothesis_class="stump", random_state=2)
    ).fit(X, y, rrspm__X_public=PublicData(Z))
    scaler = StandardScaler().fit(Z)
    pca = PCA(n_components=2).fit(scaler.transform(Z))
    by_hand = RRSPM(hypothesis_class="stump", random_state=2).fit(
        pca.transform(scaler.transform(X)), y, PublicData(pca.transform(scaler.transform(Z)))
    )
    assert pipe[-1].hypothesis_ == by_hand.hypothesis_
    assert np.array_equal(pipe[1].transformer_.components_, pca.components_)


def test_a_frozen_transformer_from_known_bounds_is_not_refitted(data):
    X, y, Z = data
    bounds = np.array([[0.0, 0.0], [100.0, 100.0]])
    frozen = FrozenEstimator(MinMaxScaler().fit(bounds))
    pipe = make_pipeline(PublicFit(frozen), RRSPM(hypothesis_class="stump", random_state=0))
    pipe.fit(X, y, rrspm__X_public=PublicData(Z))
    assert pipe[0].transformer_ is frozen and np.array_equal(frozen.data_max_, [100.0, 100.0])
    by_hand = RRSPM(hypothesis_class="stump", random_state=0).fit(X / 100.0, y, PublicData(Z / 100.0))
    assert pipe[-1].hypothesis_ == by_hand.hypothesis_


def test_public_fit_learns_nothing_from_the_rows_it_is_fitted_on(data):
    X, _, Z = data
    step = PublicFit(StandardScaler())
    assert step.fit(X) is step and not hasattr(step, "transformer_")
    with pytest.raises(NotFittedError, match="fitted on the public points"):
        step.transform(X)
    pending = step.fit_transform(X)
    assert isinstance(pending, PendingPublicFit) and pending.rows is X and pending.steps == (step,)
    assert np.array_equal(np.asarray(pending), X)
    fitted = step.fit_public(PublicData(Z))
    assert np.allclose(fitted.transform(Z).mean(axis=0), 0.0)
    step.fit(X)  # a new pipeline fit forgets the earlier public fit
    assert not hasattr(step, "transformer_")


def test_public_fit_without_public_points_is_refused(data):
    X, y, _ = data
    pipe = make_pipeline(PublicFit(StandardScaler()), RRSPM(hypothesis_class="stump"))
    with pytest.raises(ValueError, match="PublicFit step.*X_public"):
        pipe.fit(X, y)


def test_public_fit_keeps_the_slicing_guard(data):
    """A plain public array as long as the private sample is refused before any step is fitted on it."""
    X, y, _ = data
    pipe = make_pipeline(PublicFit(StandardScaler()), RRSPM(hypothesis_class="stump"))
    with pytest.raises(ValueError, match="PublicData"):
        pipe.fit(X, y, rrspm__X_public=np.zeros_like(X))
    assert not hasattr(pipe[0], "transformer_")


def test_public_fit_pipelines_cross_validate_with_the_public_points_intact(data):
    X, y, Z = data
    pipe = make_pipeline(PublicFit(StandardScaler()), RRSPM(hypothesis_class="stump", random_state=0))
    scores = cross_val_score(pipe, X, y, cv=3, params={"rrspm__X_public": PublicData(Z)})
    assert scores.shape == (3,)
    search = GridSearchCV(pipe, {"rrspm__epsilon": [0.5, 1.0]}, cv=2).fit(X, y, rrspm__X_public=PublicData(Z))
    assert np.array_equal(search.best_estimator_[0].transformer_.mean_, Z.mean(axis=0))


def test_passthrough_and_public_fit_steps_do_not_warn(data):
    X, y, Z = data
    pipe = Pipeline([("skip", "passthrough"), ("scale", PublicFit(StandardScaler())), ("em", PublicCoverEM())])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.fit(X, y, em__X_public=PublicData(Z))
    assert _pipeline_warnings(record) == []


def test_a_plain_step_after_a_public_fit_warns_and_leaves_it_unfitted(data):
    X, y, Z = data
    pipe = make_pipeline(PublicFit(StandardScaler()), MinMaxScaler(), RRSPM(hypothesis_class="stump"))
    with pytest.warns(PrivacyLeakWarning, match="'minmaxscaler' \\(MinMaxScaler\\)"):
        pipe.fit(X, y, rrspm__X_public=PublicData(Z))
    with pytest.raises(NotFittedError):
        pipe.predict(X)


def test_outside_a_pipeline_there_is_nothing_before_the_learner(data):
    X, y, Z = data
    learner = RRSPM(hypothesis_class="stump", random_state=0)
    assert pipeline_steps_before(learner) == []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        learner.fit(X, y, PublicData(Z))
    assert _pipeline_warnings(record) == []
