"""PublicCoverEM (Wang, Lei, Fienberg, "Learning with Differential Privacy: Stability, Learnability and the
Sufficiency and Necessity of ERM Principle", Algorithm 1 with Examples 3 and 7; Bassily, Mohri, Suresh,
"Differentially Private Learning with Margin Guarantees", Algorithm 5; docs/theory/public-cover-em.md):
the public cover, the exponential mechanism, and its exact audit.

What is tested:
* the cover is complete: its labelings equal Cover's count on points in general position and the
  set of ALL realisable labelings found by brute force (an LP feasibility check of every one of
  the 2^m labelings, tests/brute_force.py); thresholds and stumps against their cut enumeration;
* on degenerate public points every labeling the cover claims is realised by its representative;
* mistake counts equal each representative's own re-scoring (property test);
* the cover depends on the public points only (fingerprint unchanged by the private data; the
  learner passes exactly Z to the cover builder);
* with eps -> inf and the private x's as public points, the release is an exact ERM (checked
  against the sweep / enumerate oracles);
* the sampler draws from the exact law (chi-square test over many fits);
* the exact audit passes the learner (with eps_hat close to eps: the audit is sharp) and catches
  both broken controls; bad input names the argument.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oraclepriv import make_oracle
from oraclepriv.audit.controls import PublicCoverEMHalfSensitivity, PublicCoverEMPrivateCover
from oraclepriv.audit.exact import audit_exact_distribution, output_law, output_parameters
from oraclepriv.audit.suite import em_audit_data
from oraclepriv.cover import cover_count, public_cover
from oraclepriv.learners import PublicCoverEM
from oraclepriv.learners import public_cover_em as pce_module
from oraclepriv.privacy_loss import privacy_loss
from oraclepriv.public_data import PublicData
from tests.brute_force import halfspace_realizable


def _labeling_set(cover, Z):
    return {row.tobytes() for row in cover.labelings(Z)}


@pytest.mark.parametrize("m,d", [(12, 1), (20, 2), (40, 2), (11, 3), (9, 4)])
def test_halfspace_cover_matches_covers_count_in_general_position(m, d):
    Z = np.random.default_rng(m * 10 + d).normal(size=(m, d))
    cover = public_cover(Z, "halfspace")
    assert cover.complete
    assert cover.size == cover_count(m, d)
    assert len(_labeling_set(cover, Z)) == cover.size  # one representative per labeling


@pytest.mark.parametrize("m,d,seed", [(8, 2, 0), (9, 2, 1), (7, 3, 2), (8, 3, 3)])
def test_halfspace_cover_equals_brute_force_enumeration(m, d, seed):
    """Every one of the 2^m labelings is realisable (LP) iff the cover contains it."""
    Z = np.round(np.random.default_rng(seed).normal(size=(m, d)), 3)
    cover = public_cover(Z, "halfspace")
    found = _labeling_set(cover, Z)
    realisable = set()
    for bits in itertools.product((0, 1), repeat=m):
        labels = np.array(bits, dtype=bool)
        if halfspace_realizable(Z, labels):
            realisable.add(labels.tobytes())
    assert found == realisable


def test_degenerate_public_points_claim_only_realised_labelings():
    # duplicates and collinear points: not in general position
    Z = np.array([[0, 0], [1, 1], [2, 2], [0, 0], [1, 0], [3, 0], [0, 2]], dtype=float)
    cover = public_cover(Z, "halfspace")
    assert not cover.complete and cover.notes
    for h, labels in zip(cover.hypotheses(), cover.labelings(Z)):
        assert np.array_equal(h.predict(Z).astype(bool), labels)
        assert halfspace_realizable(Z, labels)


def test_threshold_and_stump_covers_are_the_cuts():
    rng = np.random.default_rng(4)
    Z = np.round(rng.normal(size=(25, 3)), 1)  # repeated values per feature
    thr = public_cover(Z[:, :1], "threshold")
    assert thr.size == np.unique(Z[:, 0]).size + 1 and thr.complete
    assert len(_labeling_set(thr, Z[:, :1])) == thr.size
    full = public_cover(Z, "stump", dedup=False)
    assert full.size == sum(2 * (np.unique(Z[:, j]).size + 1) for j in range(3))
    dedup = public_cover(Z, "stump")
    assert _labeling_set(dedup, Z) == _labeling_set(full, Z) and dedup.size == len(_labeling_set(full, Z))
    # every stump labeling of Z: all cut positions of every feature, both signs
    brute = set()
    for j in range(3):
        for theta in np.concatenate(([-np.inf], np.unique(Z[:, j]), [np.inf])):
            brute.add((Z[:, j] >= theta).tobytes())
            brute.add((Z[:, j] <= theta).tobytes())
            brute.add((Z[:, j] < theta).tobytes())
            brute.add((Z[:, j] > theta).tobytes())
    assert _labeling_set(dedup, Z) == brute


def test_adjacent_float_cuts_still_split():
    z = np.array([1.0, np.nextafter(1.0, 2.0), 3.0])[:, None]
    cover = public_cover(z, "stump", dedup=False)
    assert cover.size == 8  # 4 cuts x 2 signs; the two constants come twice
    expected = {
        np.array(b, dtype=bool).tobytes() for b in [(0, 0, 0), (0, 0, 1), (0, 1, 1), (1, 1, 1), (1, 0, 0), (1, 1, 0)]
    }
    assert _labeling_set(cover, z) == expected  # the cut between 1 and its next float separates them


@settings(max_examples=40, deadline=None)
@given(
    hyp=st.sampled_from(["threshold", "stump", "halfspace"]),
    seed=st.integers(0, 10_000),
    n=st.integers(1, 30),
    m=st.integers(1, 12),
)
def test_mistake_counts_equal_each_representatives_rescoring(hyp, seed, n, m):
    rng = np.random.default_rng(seed)
    d = 1 if hyp == "threshold" else int(rng.integers(1, 4))
    Z = np.round(rng.normal(size=(m, d)), int(rng.integers(0, 3)))
    X = np.round(rng.normal(size=(n, d)), int(rng.integers(0, 3)))
    y = rng.integers(0, 2, size=n)
    cover = public_cover(Z, hyp)
    expected = np.array([h.loss(X, y) for h in cover.hypotheses()])
    assert np.array_equal(cover.errors(X, y), expected)


def test_cover_depends_on_public_points_only(monkeypatch):
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(15, 2))
    fingerprints = set()
    for seed in range(3):
        X = np.random.default_rng(seed).normal(size=(40, 2))
        y = np.random.default_rng(seed + 10).integers(0, 2, size=40)
        clf = PublicCoverEM(epsilon=1.0, random_state=seed).fit(X, y, X_public=Z)
        fingerprints.add(clf.cover_.fingerprint())
    assert fingerprints == {public_cover(Z, "halfspace").fingerprint()}
    # and the learner hands the cover builder exactly the public points, nothing else
    seen = []
    real = pce_module.public_cover

    def spy(points, *args, **kwargs):
        seen.append(np.array(points, copy=True))
        return real(points, *args, **kwargs)

    monkeypatch.setattr(pce_module, "public_cover", spy)
    PublicCoverEM(epsilon=1.0, random_state=0).fit(X, y, X_public=Z)
    assert len(seen) == 1 and np.array_equal(seen[0], Z)


@pytest.mark.parametrize(
    "hyp,d,backend", [("threshold", 1, "sweep"), ("stump", 3, "sweep"), ("halfspace", 2, "enumerate")]
)
def test_large_epsilon_on_private_cover_is_an_exact_erm(hyp, d, backend):
    """With Z = the private x's, the cover holds every labeling of the private points, so the EM with
    eps -> inf releases an ERM: its loss equals the exact oracle's optimum (independent method)."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, d))
    y = ((X[:, 0] > 0) ^ (rng.random(30) < 0.2)).astype(np.int8)
    clf = PublicCoverEM(epsilon=700.0, hypothesis_class=hyp, random_state=0).fit(X, y, X_public=PublicData(X))
    exact = make_oracle(hyp, backend=backend).solve(X, y)
    assert exact.certified
    assert clf.hypothesis_.loss(X, y) == exact.objective == clf.diagnostics_["errors"].min()


def test_sampler_draws_from_the_exact_law():
    X, y, Z = em_audit_data("threshold", seed=3)
    Z = Z[:6]
    learner = PublicCoverEM(epsilon=0.3, hypothesis_class="threshold")
    params, logp = learner.output_log_probabilities(X, y, Z)
    draws = 2000
    counts = np.zeros(len(logp))
    for seed in range(draws):
        clf = PublicCoverEM(epsilon=0.3, hypothesis_class="threshold", random_state=seed).fit(X, y, X_public=Z)
        counts[clf.candidate_index_] += 1
    expected = np.exp(logp) * draws
    keep = expected >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    exp_ = np.append(expected[keep], expected[~keep].sum())
    if exp_[-1] == 0:
        observed, exp_ = observed[:-1], exp_[:-1]
    assert stats.chisquare(observed, exp_).pvalue > 1e-3
    # a wrong law is rejected by the same test (the test has power)
    wrong = np.exp(2 * logp - np.logaddexp.reduce(2 * logp)) * draws
    assert stats.chisquare(counts[keep], wrong[keep] * counts[keep].sum() / wrong[keep].sum()).pvalue < 1e-3


def test_exact_audit_passes_the_learner_sharply_and_catches_the_controls():
    X, y, Z = em_audit_data("halfspace", seed=0)
    run = lambda cls, **kw: audit_exact_distribution(  # noqa: E731
        lambda: cls(epsilon=1.0, hypothesis_class="halfspace", **kw), X, y, Z, epsilon=1.0, n_others=1
    )
    good = run(PublicCoverEM)
    assert good.passed and 0.9 < good.epsilon_hat <= 1.0 + 1e-9
    paper = run(PublicCoverEM, sensitivity="paper")
    assert paper.passed and paper.epsilon_hat <= 0.5 + 1e-9
    half = run(PublicCoverEMHalfSensitivity)
    assert not half.passed and half.epsilon_hat > 1.5
    leaky = run(PublicCoverEMPrivateCover)
    assert not leaky.passed and math.isinf(leaky.epsilon_hat)


def test_the_exact_audit_matches_outputs_by_parameters():
    a = output_law((np.array([[0.0, 1.0], [1.0, 0.0]]), np.log([0.5, 0.5])))
    b = output_law((np.array([[1.0, 0.0], [0.0, 1.0]]), np.log([0.25, 0.75])))
    found = privacy_loss(a, b)
    assert found.loss == pytest.approx(math.log(2)) and found.outcome is not None
    assert output_parameters(found.outcome) == [1.0, 0.0]
    c = output_law((np.array([[1.0, 0.0], [2.0, 2.0]]), np.log([0.5, 0.5])))
    assert math.isinf(privacy_loss(a, c).loss)
    zero = output_law((np.array([[1.0, 0.0], [2.0, 2.0], [0.0, 1.0]]), np.array([np.log(0.5), -np.inf, np.log(0.5)])))
    assert privacy_loss(a, zero).loss == 0.0  # an impossible output in both laws is no privacy loss
    assert output_law((np.array([[-0.0, 1.0]]), np.zeros(1))) == output_law((np.array([[0.0, 1.0]]), np.zeros(1)))


def test_max_public_subsamples_with_the_public_generator():
    rng = np.random.default_rng(7)
    X, y, Z = rng.normal(size=(50, 2)), rng.integers(0, 2, 50), rng.normal(size=(40, 2))
    clf = PublicCoverEM(max_public=10, random_state=1).fit(X, y, X_public=Z)
    assert clf.cover_.n_public == 10 and clf.privacy_["cover_size"] == cover_count(10, 2)
    with pytest.raises(ValueError, match="whole public set"):
        PublicCoverEM(max_public=10).output_log_probabilities(X, y, Z)


def test_estimator_contract_and_privacy_record():
    rng = np.random.default_rng(8)
    X, y, Z = rng.normal(size=(60, 2)), rng.integers(0, 2, 60), rng.normal(size=(12, 2))
    clf = PublicCoverEM(epsilon=0.5, random_state=0)
    assert set(clf.get_params()) == {
        "epsilon",
        "hypothesis_class",
        "cover",
        "sensitivity",
        "dedup",
        "max_public",
        "max_candidates",
        "random_state",
        "public_size",
        "public_random_state",
    }
    assert clf.fit(X, y, X_public=Z) is clf
    assert len(clf.ledger_) == 0 and clf.privacy_["oracle_calls_by_design"] == 0
    assert (
        clf.privacy_["epsilon"] == 0.5
        and clf.privacy_["delta"] == 0.0
        and clf.privacy_["guarantee"].startswith("pure 0.5-DP")
    )
    assert clf.privacy_["cover_built_from"] == "public points only" and clf.diagnostics_["proof_applies"]
    assert "no oracle call" in clf.privacy_["robustness"]
    assert clf.predict(X).shape == (60,)
    assert clf.summary()["algorithm"] == "public-cover-em"
    clf.set_params(sensitivity="paper")
    assert clf.fit(X, y, X_public=Z).privacy_["mistake_count_sensitivity"] == 2.0


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"sensitivity": "loose"}, "sensitivity"),
        ({"max_public": 0}, "max_public"),
        ({"hypothesis_class": "tree"}, "hypothesis_class"),
        ({"max_candidates": 10}, "max_candidates=10"),
        ({"dedup": "yes", "hypothesis_class": "stump"}, "dedup"),
    ],
)
def test_bad_input_names_the_argument(params, fragment):
    rng = np.random.default_rng(9)
    X, y, Z = rng.normal(size=(20, 2)), rng.integers(0, 2, 20), rng.normal(size=(12, 2))
    with pytest.raises(ValueError, match=fragment):
        PublicCoverEM(**params).fit(X, y, X_public=Z)


def test_bad_data_names_the_argument():
    rng = np.random.default_rng(10)
    X, y, Z = rng.normal(size=(20, 2)), rng.integers(0, 2, 20), rng.normal(size=(12, 2))
    with pytest.raises(ValueError, match="X_public"):
        PublicCoverEM().fit(X, y, X_public=np.full((3, 2), np.nan))
    with pytest.raises(ValueError, match="X_public"):
        PublicCoverEM().fit(X, y, X_public=Z[:, :1])
    with pytest.raises(ValueError, match="y_private has 3 distinct class labels"):
        PublicCoverEM().fit(X, np.where(np.arange(len(y)) == 0, 5, y + 2), X_public=Z)
    with pytest.raises(ValueError, match="one feature"):
        PublicCoverEM(hypothesis_class="threshold").fit(X, y, X_public=Z)
    with pytest.raises(ValueError, match="hypothesis"):
        public_cover(Z, "tree")


def test_label_dp_variant_covers_the_private_features_and_says_label_dp():
    X, y, _ = em_audit_data("halfspace", seed=1)
    clf = PublicCoverEM(cover="private-features", random_state=0).fit(X, y)
    assert clf.cover_.fingerprint() == public_cover(X, "halfspace").fingerprint()
    assert "label-DP" in clf.privacy_["neighbouring"] and "label-DP" in clf.privacy_["cover_built_from"]
    assert clf.n_public_ == 0
    assert (
        "replace one private record" in PublicCoverEM(random_state=0).fit(X, y, X_public=X[:5]).privacy_["neighbouring"]
    )
    with pytest.raises(ValueError, match="do not pass X_public"):
        PublicCoverEM(cover="private-features").fit(X, y, X_public=X)
    with pytest.raises(ValueError, match="cover"):
        PublicCoverEM(cover="everything").fit(X, y, X_public=X)
    # exact audit: eps-DP for label flips, not for replacing a record (its features move the cover)
    make = lambda: PublicCoverEM(epsilon=1.0, cover="private-features")  # noqa: E731
    labels = audit_exact_distribution(make, X, y, None, epsilon=1.0, n_others=0)
    assert labels.passed and labels.n_neighbours == X.shape[0] and labels.epsilon_hat > 0.9
    records = audit_exact_distribution(make, X, y, None, epsilon=1.0, n_others=1)
    assert not records.passed and math.isinf(records.epsilon_hat)


@pytest.mark.parametrize("scale,shift", [(1e-8, 0.0), (1e8, 0.0), (1e-3, 1e4)])
def test_halfspace_cover_is_complete_in_any_units(scale, shift):
    Z = np.random.default_rng(11).normal(size=(15, 2)) * scale + shift
    cover = public_cover(Z, "halfspace")
    assert cover.complete and cover.size == len(_labeling_set(cover, Z)) == cover_count(15, 2)


def test_stump_dedup_by_hash_never_merges_different_labelings():
    """The stump dedup hashes labelings; equal hashes are re-checked on the labelings themselves.
    Force every hash to collide: the result must still be the exact de-duplication."""
    from oraclepriv.cover import _dedup_by_hash, _pack

    Z = np.round(np.random.default_rng(12).normal(size=(20, 3)), 1)
    full = public_cover(Z, "stump", dedup=False)
    _, first = np.unique(_pack(full.labelings(Z)), return_index=True)
    forced = _dedup_by_hash(np.zeros(full.size, dtype=np.uint64), full.params, Z)
    assert np.array_equal(forced, np.sort(first))
    assert np.array_equal(public_cover(Z, "stump").params, full.params[np.sort(first)])
