"""PPMHalfspaces / A_LearnHalf (Algorithm 2 of R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of
Private and Public Populations"): Lemma 4.5 against the exact ERM oracle, corner cases, conventions and
bad input (test cases 2-6 and 8-13 of ``docs/theory/ppm.md``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oraclepriv import make_oracle
from oraclepriv.learners._base import NotFittedError
from oraclepriv.learners.ppm import PPMHalfspaces
from oraclepriv.ppm import ClassG, a_constr_half, score_class
from oraclepriv.ppm.constr_half import SUPPORT_MODES, project


def _min_mistakes_over_G(X, y, public, **kw) -> int:
    hist = score_class(ClassG(a_constr_half(X[public], **kw)), X, y).histogram()
    return int(np.flatnonzero(hist)[0])


def _erm_mistakes(X, y) -> int:
    """Exact 0-1 ERM over halfspaces (the oracle protocol; 'enumerate' for d <= 3)."""
    res = make_oracle("halfspace").solve(X, y, caller="test", step="lemma-4.5")
    assert res.certified
    return int(round(res.objective))


def _halfspace_data(rng, n, d, noise=0.0):
    X = rng.uniform(-1, 1, size=(n, d))
    w = rng.normal(size=d)
    b = rng.uniform(-0.5, 0.5)
    y = (X @ w >= b).astype(np.int8)
    if noise:
        y[rng.random(n) < noise] ^= 1
    return X, y


# ------------------------------------------------------------------------------------ Lemma 4.5
def test_lemma_4_5_realizable_d2():
    """Case 2 (docs/theory/ppm.md#case-2): min_G m = 0 on every realizable run (30 runs, n = 25)."""
    rng = np.random.default_rng(20)
    for _ in range(30):
        X, y = _halfspace_data(rng, 25, 2)
        assert _min_mistakes_over_G(X, y, y == 0) == 0


def test_lemma_4_5_agnostic_d2():
    """Case 3 (docs/theory/ppm.md#case-3): 20% label flips, p from the noisy y; min_G m <= exact ERM mistakes."""
    rng = np.random.default_rng(21)
    strict = 0
    for _ in range(30):
        X, y = _halfspace_data(rng, 25, 2, noise=0.2)
        g_min, erm = _min_mistakes_over_G(X, y, y == 0), _erm_mistakes(X, y)
        assert g_min <= erm
        strict += g_min < erm
    assert strict > 0  # the improper class can beat the best halfspace; seen on some runs


@pytest.mark.parametrize("support", SUPPORT_MODES)
def test_lemma_4_5_degenerate_aff_line(support):
    """Case 4 (docs/theory/ppm.md#case-4): all points on x_1 = 1 in R^2, realizable threshold on x_2
    (a non-Aff-aware choice of supporting hyperplanes fails here); for the paper's support rule and the
    reduction of docs/theory/ppm.md#affine-basis, which must keep Lemma 4.5's guarantee."""
    rng = np.random.default_rng(22)
    for _ in range(30):
        X = np.column_stack([np.ones(20), rng.uniform(-1, 1, 20)])
        y = (X[:, 1] >= rng.uniform(-0.5, 0.5)).astype(np.int8)
        assert _min_mistakes_over_G(X, y, y == 0, support=support) == 0
        noisy = y.copy()
        noisy[rng.random(20) < 0.2] ^= 1
        assert _min_mistakes_over_G(X, noisy, noisy == 0, support=support) <= _erm_mistakes(X, noisy)


def test_lemma_4_5_d1_and_d3():
    rng = np.random.default_rng(23)
    for _ in range(10):
        X, y = _halfspace_data(rng, 40, 1, noise=0.15)
        assert _min_mistakes_over_G(X, y, y == 0) <= _erm_mistakes(X, y)
    for _ in range(4):
        X, y = _halfspace_data(rng, 12, 3, noise=0.15)  # small n: |G| grows like n_pub^9
        assert _min_mistakes_over_G(X, y, y == 0) <= _erm_mistakes(X, y)


def test_lemma_4_5_relaxation_ii():
    """Case 11 (docs/theory/ppm.md#case-11): public points of both labels, private points all labelled 1."""
    rng = np.random.default_rng(24)
    for _ in range(20):
        X, y = _halfspace_data(rng, 24, 2, noise=0.15)
        public = np.zeros(24, dtype=bool)
        public[:12] = True
        y[~public] = 1
        assert _min_mistakes_over_G(X, y, public) <= _erm_mistakes(X, y)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 16),
    collinear=st.booleans(),
    support=st.sampled_from(SUPPORT_MODES),
)
def test_lemma_4_5_property_integer_grid(seed, n, collinear, support):
    """Integer grid data (ties, duplicates, points on public hyperplanes): Lemma 4.5 holds exactly, for
    both support rules."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, 2)).astype(float)
    if collinear:
        X[:, 1] = 2 * X[:, 0] + 1
    y = (rng.random(n) < 0.5).astype(np.int8)
    assert _min_mistakes_over_G(X, y, y == 0, support=support) <= _erm_mistakes(X, y)


def test_large_epsilon_training_error():
    """Case 6 (docs/theory/ppm.md#case-6): ε = inf (argmin) has 0 training mistakes when realizable,
    <= ERM otherwise."""
    rng = np.random.default_rng(25)
    X, y = _halfspace_data(rng, 60, 2)
    clf = PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X, y, y == 0)
    assert np.sum(clf.predict(X) != y) == 0
    assert clf.privacy_["private"] is False
    Xn, yn = _halfspace_data(rng, 60, 2, noise=0.15)
    clf = PPMHalfspaces(epsilon=math.inf, random_state=0).fit(Xn, yn, yn == 0)
    assert np.sum(clf.predict(Xn) != yn) <= _erm_mistakes(Xn, yn)


# ------------------------------------------------------------------------------------ corner cases
def test_no_public_points_outputs_ones():
    rng = np.random.default_rng(26)
    X = rng.normal(size=(12, 2))
    y = rng.integers(0, 2, 12)
    clf = PPMHalfspaces(epsilon=1.0, random_state=1).fit(X, y, np.zeros(12, dtype=bool))
    assert clf.class_size_ == 1 and clf.hypothesis_.form == "ones"
    assert np.all(clf.predict(rng.normal(size=(30, 2))) == 1)


def test_no_private_points_large_epsilon_labels_all_zero():
    rng = np.random.default_rng(27)
    X = rng.normal(size=(15, 2))
    y = np.zeros(15, dtype=int)
    clf = PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X, y, np.ones(15, dtype=bool))
    assert np.all(clf.predict(X) == 0)


def test_identical_public_points_aff_is_a_point():
    rng = np.random.default_rng(28)
    p = np.array([0.3, -0.2])
    X = np.vstack([np.tile(p, (5, 1)), rng.uniform(-1, 1, size=(10, 2))])
    y = np.r_[np.zeros(5), np.ones(10)].astype(int)
    clf = PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X, y, y == 0)
    assert clf.selection_["aff_dim"] == 0
    assert np.all(clf.predict(X) == y)
    near = p + np.array([[1e-6, 0.0], [0.0, -1e-6], [0.5, 0.5]])
    np.testing.assert_array_equal(clf.predict(np.vstack([p, near])), [0, 1, 1, 1])


def test_few_public_points_n_pub_le_d():
    """n_pub <= d: Aff is a line in R^2 / a plane in R^3; off-Aff test points are predicted 1."""
    rng = np.random.default_rng(29)
    X = rng.uniform(-1, 1, size=(12, 2))
    y = np.ones(12, dtype=int)
    y[:2] = 0
    public = y == 0
    assert _min_mistakes_over_G(X, y, public) <= _erm_mistakes(X, y)
    clf = PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X, y, public)
    assert clf.selection_["aff_dim"] == 1
    off = X[:2].mean(axis=0) + 0.3 * np.array([-(X[1, 1] - X[0, 1]), X[1, 0] - X[0, 0]])
    assert clf.predict(off[None, :])[0] == 1
    # coplanar public points in R^3 (docs/theory/ppm.md#case-4, second bullet)
    X3 = rng.uniform(-1, 1, size=(16, 3))
    X3[:6, 2] = X3[:6, 0] + X3[:6, 1]
    y3 = np.r_[np.zeros(6), np.ones(10)].astype(int)
    clf3 = PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X3, y3, y3 == 0)
    assert clf3.selection_["aff_dim"] == 2
    off3 = X3[:6].copy()
    off3[:, 2] += 0.05
    assert np.all(clf3.predict(off3) == 1)
    assert np.all(clf3.predict(X3[:6]) == 0)


def test_duplicates_keep_multiplicities_in_scoring():
    rng = np.random.default_rng(30)
    X, y = _halfspace_data(rng, 14, 2, noise=0.2)
    Xd = np.vstack([X, X[:5], X[:5]])
    yd = np.r_[y, y[:5], y[:5]]
    fam, fam_d = a_constr_half(X[y == 0]), a_constr_half(Xd[yd == 0])
    assert fam.fingerprint() == fam_d.fingerprint()  # public duplicates do not change G
    G = ClassG(fam)
    h, hd = score_class(G, X, y).histogram(), score_class(G, Xd, yd).histogram()
    assert hd.sum() == h.sum() and not np.array_equal(hd[: len(h)], h)  # counts do change


def test_permutation_invariance():
    """Case 12 (docs/theory/ppm.md#case-12): shuffling S leaves G and the multiset of scores unchanged."""
    rng = np.random.default_rng(31)
    X, y = _halfspace_data(rng, 30, 2, noise=0.1)
    perm = rng.permutation(30)
    fam, fam_p = a_constr_half(X[y == 0]), a_constr_half(X[perm][y[perm] == 0])
    assert fam.fingerprint() == fam_p.fingerprint()
    np.testing.assert_array_equal(
        score_class(ClassG(fam), X, y).histogram(), score_class(ClassG(fam_p), X[perm], y[perm]).histogram()
    )


def test_flipped_convention_mirrors_the_paper_convention():
    """Case 10 (docs/theory/ppm.md#case-10): public <=> y = 1, private_label=0 == run on 1 - y and flip
    predictions."""
    rng = np.random.default_rng(32)
    X, y = _halfspace_data(rng, 40, 2, noise=0.1)
    public = y == 1
    Xt = rng.uniform(-1, 1, size=(500, 2))
    a = PPMHalfspaces(epsilon=1.0, private_label=0, random_state=7).fit(X, y, public)
    b = PPMHalfspaces(epsilon=1.0, random_state=7).fit(X, 1 - y, public)
    np.testing.assert_array_equal(a.predict(Xt), 1 - b.predict(Xt))
    assert a.hypothesis_.inverted and not b.hypothesis_.inverted


def test_compression_and_boundary_structure():
    """Cases 9 and 13 (docs/theory/ppm.md#case-9, #case-13): ĝ uses <= d halfspaces, each reconstructed
    by <= d public points on its boundary; on integer data every such point lying in the other halfspaces
    is predicted 0."""
    rng = np.random.default_rng(33)
    for seed in range(8):
        X = rng.integers(-5, 6, size=(30, 2)).astype(float)
        y = (X[:, 0] + 2 * X[:, 1] >= 1).astype(int)
        clf = PPMHalfspaces(epsilon=2.0, random_state=seed).fit(X, y, y == 0)
        h = clf.hypothesis_
        assert h.n_halfspaces <= 2 and len(h.support) == h.n_halfspaces
        public_pts = {tuple(p) for p in X[y == 0]}
        for i, pts in enumerate(h.support):
            assert 1 <= len(pts) <= 2 and all(tuple(p) in public_pts for p in pts)
            P = np.array(pts)
            proj = project(P, h.normals[i : i + 1])[0]
            assert np.all(np.abs(proj - h.lower[i]) <= 2 * clf.selection_["membership_tol"])
            others = [k for k in range(h.n_halfspaces) if k != i]
            inside_others = (
                np.all([project(P, h.normals[k : k + 1])[0] >= h.lower[k] for k in others], axis=0)
                if others
                else np.ones(len(P), bool)
            )
            assert np.all(h.predict(P)[inside_others] == 0)


# ------------------------------------------------------------------------------------ estimator API
def test_fit_records_no_oracle_call_and_json_summary():
    rng = np.random.default_rng(34)
    X, y = _halfspace_data(rng, 40, 2)
    clf = PPMHalfspaces(epsilon=1.0, random_state=3)
    assert clf.fit(X, y, y == 0) is clf
    assert len(clf.ledger_) == 0 and clf.selection_["oracle_calls"] == 0
    s = clf.summary()
    json.dumps(s)
    assert s["privacy"]["class_size"] == clf.class_size_ == clf.selection_["class_size"]
    assert s["privacy"]["epsilon"] == 1.0 and s["privacy"]["delta"] == 0.0
    assert "mistakes" not in json.dumps(clf.selection_).replace("mistakes(g)", "")  # no score is released
    assert clf.diagnostics_["selected_mistakes"] >= 0 and "seconds" not in clf.selection_
    # same seed, same output; the estimator is reusable
    again = PPMHalfspaces(epsilon=1.0, random_state=3).fit(X, y, y == 0)
    assert again.selection_["selected"] == clf.selection_["selected"]
    json.dumps(PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X, y, y == 0).summary())


@pytest.mark.parametrize("d", [1, 2, 3, 6])
def test_largest_public_sample_is_the_largest_that_fits(d):
    """largest_public_sample(d): any that many distinct public points fit under max_hypotheses, and points in
    general position (the largest candidate family) one more do not; the learner's error carries the numbers."""
    from oraclepriv.learners.ppm import ClassTooLargeError, a_constr_half, largest_public_sample
    from oraclepriv.ppm.class_g import ClassG

    limit = 10**5
    fits = largest_public_sample(d, limit)
    rng = np.random.default_rng(d)  # general position; in d = 1, points further apart than the merge tolerance
    P = rng.permutation(fits + 1)[:, None] * 1.0 if d == 1 else rng.normal(size=(fits + 1, d))
    assert ClassG(a_constr_half(P[:fits])).size <= limit < ClassG(a_constr_half(P)).size
    y = np.zeros(fits + 1, dtype=int)
    with pytest.raises(ClassTooLargeError, match="max_hypotheses") as caught:
        PPMHalfspaces(epsilon=1.0, max_hypotheses=limit, random_state=0).fit(P, y, y == 0)
    error = caught.value
    assert (error.limit, error.d, error.n_public) == (limit, d, fits + 1) and error.size > limit
    assert isinstance(error, ValueError)  # what the Python API raised before


def test_max_public_caps_the_candidate_family():
    rng = np.random.default_rng(35)
    X, y = _halfspace_data(rng, 80, 2)
    clf = PPMHalfspaces(epsilon=1.0, max_public=10, random_state=0).fit(X, y, y == 0)
    assert clf.selection_["n_distinct_public"] == 10
    with pytest.raises(ValueError, match="max_hypotheses"):
        PPMHalfspaces(epsilon=1.0, max_hypotheses=1000, random_state=0).fit(X, y, y == 0)


def test_d1_scales_to_a_million_points():
    rng = np.random.default_rng(36)
    x = rng.uniform(0, 1, size=(10**6, 1))
    y = (x[:, 0] >= 0.3).astype(np.int8)
    clf = PPMHalfspaces(epsilon=1.0, random_state=0).fit(x, y, y == 0)
    xt = rng.uniform(0, 1, size=(10**5, 1))
    assert np.mean(clf.predict(xt) != (xt[:, 0] >= 0.3)) < 1e-3


# ------------------------------------------------------------------------------------ bad input
@pytest.fixture
def data():
    rng = np.random.default_rng(37)
    X, y = _halfspace_data(rng, 20, 2)
    return X, y, y == 0


def test_missing_privacy_bits(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="public_mask is required"):
        PPMHalfspaces().fit(X, y, None)


@pytest.mark.parametrize(
    "convert", [lambda m: m.astype(int), lambda m: m.astype(float), lambda m: np.where(m, "pub", "priv")]
)
def test_privacy_bits_not_boolean(data, convert):
    X, y, public = data
    with pytest.raises(ValueError, match="public_mask must be boolean"):
        PPMHalfspaces().fit(X, y, convert(public))


def test_privacy_bits_wrong_length(data):
    X, y, public = data
    with pytest.raises(ValueError, match="shape mismatch"):
        PPMHalfspaces().fit(X, y, public[:-1])


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), "one", None])
def test_bad_epsilon(data, eps):
    X, y, public = data
    with pytest.raises(ValueError, match="epsilon"):
        PPMHalfspaces(epsilon=eps).fit(X, y, public)


def test_d_mismatch_and_not_fitted(data):
    X, y, public = data
    with pytest.raises(NotFittedError):
        PPMHalfspaces().predict(X)
    clf = PPMHalfspaces(random_state=0).fit(X, y, public)
    with pytest.raises(ValueError, match="expecting 2 features"):
        clf.predict(np.zeros((3, 3)))


def test_label_model_violations_and_bad_options(data):
    X, y, public = data
    wrong = public.copy()
    wrong[np.flatnonzero(~public)[0]] = True  # a label-1 example marked public
    with pytest.raises(ValueError, match="label_determined=False"):
        PPMHalfspaces().fit(X, y, wrong)
    PPMHalfspaces(label_determined=False, random_state=0).fit(X, y, wrong)  # relaxation (ii) accepts it
    for kw, match in [
        ({"private_label": 2}, "private_label"),
        ({"support": "all"}, "support"),
        ({"max_public": 0}, "max_public"),
        ({"tol": 0.0}, "tol"),
    ]:
        with pytest.raises(ValueError, match=match):
            PPMHalfspaces(**kw).fit(X, y, public)
    with pytest.raises(ValueError, match="y has 3 distinct class labels"):
        PPMHalfspaces().fit(X, np.where(np.arange(len(y)) == 0, 5, np.where(y == 1, 2, 0)), public)
    Xbad = X.copy()
    Xbad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        PPMHalfspaces().fit(Xbad, y, public)
    with pytest.raises(ValueError, match="Invalid parameter .alpha."):
        PPMHalfspaces().set_params(alpha=0.1)
