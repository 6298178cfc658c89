"""Robustification modes (``on_uncertified``, :mod:`oraclepriv.robust`) against an adversarial solver.

The solver is a *certifiable* heuristic that fails exactly where it hurts (the targeting solver of
docs/theory/robustification.md, after Neel, Roth, Wu, "How to Use Heuristics for Differential
Privacy"): on instances containing the record that differs between the neighbours. The exact
fallback must make the learner behave exactly like the perfect-oracle learner; the "Las Vegas" retry and keeping flagged answers must be caught by the audit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oraclepriv import make_oracle
from oraclepriv.audit import audit_learner, leak_scenario
from oraclepriv.audit.controls import RRSPMRetryOnFailure, targeting_backend
from oraclepriv.backends import registered_backend
from oraclepriv.learners import RRSPM, Perturbation, Regularization
from oraclepriv.learners._base import UncertifiedOracleError
from oraclepriv.robust import FallbackOracle, conditional_privacy

EPS = 1.0
SC = leak_scenario()  # thresholds; D = {(1, 1)}, D' = {(1, 0)}; Z = {0, 3}
ALWAYS = targeting_backend([1.0], 0)  # fails on every instance containing D''s record
WHEN_ALL_ZERO = targeting_backend([1.0], 0, when_points=[[0.0], [3.0]], when_labels=[0, 0])


def audit(cls, backend_cls, mode, n_runs=1000):
    with registered_backend("targeting", backend_cls) as name:
        return audit_learner(
            lambda s: cls(epsilon=EPS, hypothesis_class="threshold", backend=name, on_uncertified=mode, random_state=s),
            SC,
            epsilon=EPS,
            n_runs=n_runs,
        )


def test_targeting_heuristic_really_fails_on_the_neighbour_only():
    with registered_backend("targeting", ALWAYS) as name:
        oracle = make_oracle("threshold", backend=name)
        assert oracle.solve(SC.X, SC.y).certified
        bad = oracle.solve(SC.X_prime, SC.y_prime)
        assert not bad.certified and bad.status == "time_limit"
        with pytest.raises(UncertifiedOracleError):
            RRSPM(epsilon=EPS, hypothesis_class="threshold", backend=name, random_state=0).fit(
                SC.X_prime, SC.y_prime, X_public=SC.X_public
            )


@pytest.mark.parametrize("backend_cls", [ALWAYS, WHEN_ALL_ZERO])
def test_fallback_makes_the_learner_identical_to_the_exact_one(backend_cls):
    """Same seed -> same released hypothesis as with the exact sweep, on both neighbours."""
    fallbacks = 0
    with registered_backend("targeting", backend_cls) as name:
        for seed in range(60):
            for X, y in ((SC.X, SC.y), (SC.X_prime, SC.y_prime)):
                robust = RRSPM(
                    epsilon=EPS,
                    hypothesis_class="threshold",
                    backend=name,
                    on_uncertified="fallback",
                    random_state=seed,
                )
                robust.fit(X, y, X_public=SC.X_public, public_labels=SC.public_labels)
                exact = RRSPM(epsilon=EPS, hypothesis_class="threshold", backend="sweep", random_state=seed)
                exact.fit(X, y, X_public=SC.X_public, public_labels=SC.public_labels)
                assert robust.hypothesis_.to_dict() == exact.hypothesis_.to_dict()
                steps = [r["step"] for r in robust.ledger_.records]
                if "private-erm/fallback" in steps:
                    fallbacks += 1
                    assert steps == ["private-erm", "private-erm/fallback", "perturb"]
                    assert [r["certified"] for r in robust.ledger_.records] == [False, True, True]
                else:
                    assert steps == ["private-erm", "perturb"]
                assert robust.diagnostics_["proof_applies"] is True and robust.privacy_["on_uncertified"] == "fallback"
    assert fallbacks >= 20  # the heuristic did fail, so the fallback path was exercised


def test_fallback_that_also_fails_raises(monkeypatch):
    """If the fallback cannot certify either, the fit must abort, never release a flagged answer."""
    import oraclepriv.learners._base as base

    with registered_backend("targeting", ALWAYS) as name:
        monkeypatch.setattr(
            base,
            "fallback_oracle",
            lambda cls, backend, time_limit: FallbackOracle(
                make_oracle(cls, backend=name), make_oracle(cls, backend=name)
            ),
        )
        learner = RRSPM(
            epsilon=EPS, hypothesis_class="threshold", backend=name, on_uncertified="fallback", random_state=0
        )
        with pytest.raises(UncertifiedOracleError, match="private-erm"):
            learner.fit(SC.X_prime, SC.y_prime, X_public=SC.X_public)


@pytest.mark.slow
def test_fallback_passes_the_audit():
    res = audit(RRSPM, ALWAYS, "fallback")
    assert res.passed, res.to_dict()


@pytest.mark.slow
def test_retrying_with_fresh_noise_after_a_failure_is_caught():
    """The solver fails on D' exactly when the answer would label Z (0, 0); retrying until success
    means D' never releases that labeling, while D releases it often (docs/theory/robustification.md,
    section "Why retry with fresh noise is not private")."""
    res = audit(RRSPMRetryOnFailure, WHEN_ALL_ZERO, "raise")
    assert not res.passed and res.eps_lower > 2, res.to_dict()
    assert audit(RRSPM, WHEN_ALL_ZERO, "fallback").passed  # the same solver, made safe


@pytest.mark.slow
def test_flag_mode_is_not_private_under_a_targeting_heuristic():
    res = audit(RRSPM, ALWAYS, "flag")
    assert not res.passed and res.eps_lower > 2, res.to_dict()


def test_fallback_oracle_with_a_time_limited_mip():
    """A real solver out of time: highs with a tiny limit, then the exact default (enumerate, d=2)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(np.int8)
    w = rng.laplace(0, 3, 120)
    oracle = FallbackOracle(make_oracle("halfspace", backend="highs", time_limit=1e-3), make_oracle("halfspace"))
    res = oracle.solve(X, y, w, caller="test", step="s")
    exact = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    assert res.certified and res.objective == pytest.approx(exact.objective, abs=1e-9)
    assert oracle.fallbacks == 1  # 1 ms is far too little for highs to prove this optimum
    assert res.details["fallback_from"]["backend"] == "highs" and res.details["fallback_from"]["status"] == "time_limit"
    assert res.backend == "portfolio"


def test_fallback_oracle_rejects_mismatched_classes():
    with pytest.raises(ValueError, match="same class"):
        FallbackOracle(make_oracle("stump"), make_oracle("threshold"))


def test_regularization_refuses_fallback_and_bad_modes_are_rejected():
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, (50, 2))
    y = (X[:, 0] > 0).astype(np.int8)
    Z = rng.uniform(-0.5, 0.5, (5, 2))
    with pytest.raises(ValueError, match="fallback"):
        Regularization(epsilon=1.0, delta=1e-3, on_uncertified="fallback").fit(X, y, X_public=Z)
    with pytest.raises(ValueError, match="on_uncertified"):
        Perturbation(epsilon=1.0, delta=1e-3, hypothesis_class="stump", on_uncertified="retry").fit(X, y, X_public=Z)


def test_conditional_privacy_formula_and_bad_input():
    eps, delta = conditional_privacy(1.0, 1e-6, 1e-4)
    assert eps == 1.0 and delta == pytest.approx(1e-6 + (1 + math.e) * 1e-4)
    assert conditional_privacy(0.5, 0.0, 0.0) == (0.5, 0.0)
    assert conditional_privacy(1.0, 0.5, 0.9)[1] == 1.0  # capped: vacuous
    for args, match in (
        ((0.0, 0.0, 0.1), "epsilon"),
        ((1.0, 1.0, 0.1), "delta"),
        ((1.0, 0.0, 1.5), "gamma"),
        ((1.0, 0.0, float("nan")), "gamma"),
    ):
        with pytest.raises(ValueError, match=match):
            conditional_privacy(*args)
