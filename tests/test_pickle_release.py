"""What leaves a process is what the proof covers: pickles, saved releases and error messages.

* Pickling a fitted learner (``pickle``, ``joblib``) drops its non-private diagnostics: the ledger
  (whose private-call objective reuses the noise), SubsampleAggregate's un-noised centre, the record
  of uncertified calls. The check looks for their bytes in the pickle, and a control that keeps them
  (``keep_diagnostics_on_pickle = True``, which warns) shows the check finds them when they are there.
* A fitted learner with a given ``random_state`` warns when pickled, and its release when saved: the
  seed replays the noise. Without a seed nothing warns.
* A release saved alone (``Release.save`` / ``oraclepriv.load_release``) predicts exactly as the
  fitted learner, for every hypothesis class a learner releases, class labels included.
* Error messages about private inputs name rows and counts, never the private values.
"""

from __future__ import annotations

import io
import pickle
import struct
import warnings

import joblib
import numpy as np
import pytest

from oraclepriv.learners import RRSPM, RSPM, PPMHalfspaces, PublicCoverEM, Regularization, SubsampleAggregate
from oraclepriv.public_data import PublicData
from oraclepriv.release import PrivacyLeakWarning, Release, reading_diagnostics


def _data(n: int = 60, d: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.3 * X[:, -1] > 0).astype(int)
    return X, y, PublicData(rng.normal(size=(8, d)))


def _float_bytes(value: float) -> bytes:
    """How pickle writes a Python float (BINFLOAT: 8 bytes, big-endian)."""
    return struct.pack(">d", value)


def _pickled(learner, how: str) -> bytes:
    if how == "pickle":
        return pickle.dumps(learner)
    buffer = io.BytesIO()
    joblib.dump(learner, buffer)
    return buffer.getvalue()


def _loaded(data: bytes, how: str):
    return pickle.loads(data) if how == "pickle" else joblib.load(io.BytesIO(data))


@pytest.mark.parametrize("how", ["pickle", "joblib"])
def test_a_pickled_learner_leaves_its_diagnostics_behind(how):
    X, y, Z = _data()
    rrspm = RRSPM(epsilon=1.0, hypothesis_class="stump").fit(X, y, X_public=Z)
    teachers = SubsampleAggregate(n_teachers=6, noise="laplace", delta=0.0, hypothesis_class="stump").fit(
        X, y, X_public=Z
    )
    with reading_diagnostics():
        objective = next(r["objective"] for r in rrspm.ledger_.records if r["step"] == "private-erm")
        center = np.asarray(teachers.diagnostics_["center"], dtype=np.float64)
    secrets = {rrspm: [_float_bytes(objective)], teachers: [center.tobytes()]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # no seed, no kept diagnostics: nothing to warn about
        pickles = {learner: _pickled(learner, how) for learner in secrets}
    for learner, blobs in secrets.items():
        data = pickles[learner]
        assert not any(blob in data for blob in blobs), f"{type(learner).__name__}: a diagnostic is in the pickle"
        again = _loaded(data, how)
        assert not {"_diagnostics", "_diagnostic_values", "_uncertified_steps"} & set(vars(again))
        assert again.release_.to_json() == learner.release_.to_json()
        assert np.array_equal(again.predict(X), learner.predict(X))
        with pytest.raises(AttributeError, match="dropped when it was pickled.*keep_diagnostics_on_pickle"):
            again.diagnostics_
        with pytest.raises(AttributeError, match="keep_diagnostics_on_pickle"):
            again.ledger_
        # the control: asked for explicitly, the diagnostics stay (with a warning), and the check finds them
        learner.keep_diagnostics_on_pickle = True
        with pytest.warns(PrivacyLeakWarning, match="keep_diagnostics_on_pickle=True"):
            kept = _pickled(learner, how)
        assert all(blob in kept for blob in blobs)
        with reading_diagnostics():
            assert len(_loaded(kept, how).ledger_) == len(learner.ledger_)


def test_a_seeded_learner_warns_when_pickled_and_its_release_when_saved(tmp_path):
    X, y, Z = _data()
    for seed in (3, np.random.SeedSequence(3), np.random.default_rng(3)):
        seeded = RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            pickle.dumps(seeded)  # not fitted: nothing was drawn from the seed yet
        seeded.fit(X, y, X_public=Z)
        with pytest.warns(PrivacyLeakWarning, match="replay the noise"):
            pickle.dumps(seeded)
        with pytest.warns(PrivacyLeakWarning, match="replay the noise"):
            seeded.release_.save(tmp_path / "seeded.json")
    unseeded = RRSPM(epsilon=1.0, hypothesis_class="stump").fit(X, y, X_public=Z)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        unseeded.release_.save(tmp_path / "unseeded.json")
        pickle.dumps(unseeded)
    with pytest.warns(PrivacyLeakWarning, match="random_state=3"):
        pickle.dumps(RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=3).fit(X, y, X_public=Z))


def _releasing_learners():
    """(name, fitted learner, test points) for every hypothesis class a learner releases."""
    X, y, Z = _data(d=2, seed=1)
    X1, y1, Z1 = _data(d=1, seed=2)
    words = np.where(y == 1, "spam", "ham")
    rng = np.random.default_rng(5)
    P = rng.normal(size=(30, 2))
    labels = (P[:, 0] > 0).astype(np.int8)
    L1 = X / (np.abs(X).sum(axis=1, keepdims=True) * 1.5)
    Zl = PublicData(Z.points[:5] / 10.0)
    grid = [np.round(np.linspace(-2, 2, 9), 2)]
    Xg = np.asarray(grid[0])[np.random.default_rng(3).integers(0, 9, 40)][:, None]
    fits = [
        ("threshold", RRSPM(epsilon=1.0, hypothesis_class="threshold").fit(X1, y1, X_public=Z1), X1),
        ("stump, string labels", RRSPM(epsilon=1.0, hypothesis_class="stump").fit(X, words, X_public=Z), X),
        ("halfspace", RRSPM(epsilon=1.0, hypothesis_class="halfspace").fit(X, y, X_public=Z), X),
        ("halfspace cover", PublicCoverEM(epsilon=1.0, hypothesis_class="halfspace").fit(X, y, X_public=Z), X),
        ("linear predictor", Regularization(epsilon=1.0, delta=1e-3).fit(L1, y, X_public=Zl), L1),
        ("ppm polytope complement", PPMHalfspaces(epsilon=1.0, label_determined=False).fit(P, labels, labels == 0), P),
        ("grid stump (RSPM)", RSPM(epsilon=1.0, grid=grid).fit(Xg, (Xg[:, 0] > 0).astype(int)), Xg),
    ]
    return fits


def test_the_release_names_are_importable_from_the_package():
    import oraclepriv
    import oraclepriv.release

    for name in ("PrivacyLeakWarning", "Release", "load_release"):
        assert getattr(oraclepriv, name) is getattr(oraclepriv.release, name) and name in oraclepriv.__all__


def test_a_saved_release_predicts_as_the_learner_for_every_hypothesis_class(tmp_path):
    from oraclepriv import load_release

    seen = set()
    for name, learner, points in _releasing_learners():
        path = tmp_path / f"{name}.json"
        learner.release_.save(path)
        loaded = load_release(path)
        seen.add(loaded.hypothesis.to_dict()["hypothesis_class"])
        assert loaded.to_json() == learner.release_.to_json(), name
        assert loaded.algorithm == learner.release_.algorithm and dict(loaded.privacy) == dict(learner.privacy_)
        test = np.vstack([points, points * 1.7 + 0.1])
        assert np.array_equal(loaded.predict(test), learner.predict(test)), name
        assert loaded.predict(test).dtype.kind == learner.predict(test).dtype.kind, name
        assert Release.from_json(learner.release_.to_json()).to_json() == learner.release_.to_json()
    assert seen == {"threshold", "stump", "halfspace", "linear", "ppm_polytope_complement"}
    words = next(learner for name, learner, _ in _releasing_learners() if "string" in name)
    assert set(words.release_.predict(_data(d=2, seed=1)[0])) <= {"ham", "spam"}


def test_a_release_that_is_not_one_is_refused_by_name(tmp_path):
    from oraclepriv import load_release

    good = RRSPM(epsilon=1.0, hypothesis_class="stump").fit(*_data()[:2], X_public=_data()[2]).release_.to_dict()
    cases = {
        "not json": ("{", "not JSON"),
        "a list": ("[]", "JSON object"),
        "no hypothesis": ('{"algorithm": "RRSPM", "privacy": {}}', "missing \\['hypothesis'\\]"),
        "unknown key": (
            Release.from_dict(good).to_json()[:-1] + ', "objective": 1.0}',
            "got also \\['objective'\\]",
        ),
        "unknown class": (
            '{"algorithm": "x", "hypothesis": {"hypothesis_class": "tree"}, "privacy": {}}',
            "unknown hypothesis class 'tree'",
        ),
    }
    for name, (text, match) in cases.items():
        with pytest.raises(ValueError, match=match):
            Release.from_json(text)
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        with pytest.raises(ValueError, match=str(path.name).replace(" ", ".")):
            load_release(path)
    with pytest.raises(ValueError, match="cannot read a release"):
        load_release(tmp_path / "absent.json")


# ------------------------------------------------------------------------------ error messages
PRIVATE_VALUE = 0.123456789


def test_error_messages_name_rows_and_counts_not_private_values():
    X, y, _ = _data(n=20, d=1)
    grid = [np.arange(4.0)]
    Xg = np.array([[1.0], [PRIVATE_VALUE], [2.0], [3.0], [PRIVATE_VALUE]])
    with pytest.raises(ValueError) as info:
        RSPM(hypothesis_class="threshold", grid=grid).fit(Xg, [0, 1, 1, 1, 0])
    message = str(info.value)
    assert "row 1 feature 0 is not a grid value" in message and "2 of the 5 rows" in message
    assert "0.123" not in message

    Xl = np.array([[0.2, 0.3], [PRIVATE_VALUE * 10, 0.5], [0.1, 0.1]])
    with pytest.raises(ValueError) as info:
        Regularization(epsilon=1.0, delta=1e-3).fit(Xl, [0, 1, 1], X_public=PublicData(np.zeros((2, 2))))
    assert "X_private row 1 has l1 norm > 1 (1 of its 3 rows do)" in str(info.value)
    assert "1.73" not in str(info.value) and "1.7345" not in str(info.value)

    Z = PublicData(np.linspace(-1, 1, 4)[:, None])
    for labels, match in (
        (np.r_[np.zeros(18), [7.25, PRIVATE_VALUE]], "has 3 distinct class labels"),
        (np.full(20, 7.25), "single class label, outside"),
        (np.r_[np.zeros(19), [np.inf]], "index 19 is NaN or infinite"),
    ):
        with pytest.raises(ValueError, match=match) as info:
            RRSPM(epsilon=1.0, hypothesis_class="threshold").fit(X, labels, X_public=Z)
        assert "7.25" not in str(info.value) and "0.123" not in str(info.value) and "inf," not in str(info.value)
