"""Privacy audits of RRSPM (Algorithm 4): correct learners pass, every negative control is caught.

Each scenario is audited twice with the same procedure: once on the correct learner (must pass)
and once on a deliberately broken variant (must fail), so every audit here is shown to be able
to fail. Seeds are fixed, so the verdicts are deterministic.
"""

import pytest

from oraclepriv.audit import audit_learner, flip_scenario, leak_scenario, quantile_scenario, tight_construction
from oraclepriv.audit.controls import (
    RRSPMGaussianVariance,
    RRSPMRateAsScale,
    RRSPMReturnsFhat,
    RRSPMScaleTwoOverEps,
)
from oraclepriv.audit.scenarios import tight_target_probabilities
from oraclepriv.backends import registered_backend
from oraclepriv.learners import RRSPM

EPS = 1.0


def run(cls, scenario, n_runs, seed=0, **params):
    return audit_learner(
        lambda s: cls(epsilon=EPS, hypothesis_class=scenario.hypothesis_class, random_state=s, **params),
        scenario,
        epsilon=EPS,
        delta=params.get("delta", 0.0),
        n_runs=n_runs,
        seed=seed,
    )


@pytest.mark.slow
def test_tight_construction_attains_epsilon_and_passes():
    """The tight construction (docs/theory/audits.md) with m = 1: log P(M(D)=h*)/P(M(D')=h*) = eps
    exactly; the audit sees ~eps and no more."""
    sc = tight_construction(1, EPS)
    res = run(RRSPM, sc, 2500)
    assert res.passed, res.to_dict()
    p_a, p_b = tight_target_probabilities(1, EPS)
    assert res.target_rates[0] == pytest.approx(p_a, abs=0.03)
    assert res.target_rates[1] == pytest.approx(p_b, abs=0.02)
    assert res.eps_lower > 0.6  # the audit is sharp enough to see the bound is attained
    assert res.eps_point == pytest.approx(EPS, abs=0.2)


@pytest.mark.slow  # 12,000 whole-learner fits; the default run's exact verifier sees this law exactly (test_verify.py)
def test_tight_construction_m2_catches_scale_two_over_eps():
    sc = tight_construction(2, EPS)
    good = run(RRSPM, sc, 3000)
    bad = run(RRSPMScaleTwoOverEps, sc, 3000)
    assert good.passed, good.to_dict()
    assert good.eps_point == pytest.approx(EPS, abs=0.3)
    assert not bad.passed, bad.to_dict()


@pytest.mark.slow
def test_flip_scenario_catches_rate_passed_as_scale():
    sc = flip_scenario()
    good = run(RRSPM, sc, 1000)
    bad = run(RRSPMRateAsScale, sc, 600)
    assert good.passed, good.to_dict()
    assert not bad.passed and bad.eps_lower > 3, bad.to_dict()


@pytest.mark.slow
def test_leak_scenario_catches_returning_fhat():
    sc = leak_scenario()
    good = run(RRSPM, sc, 1000)
    bad = run(RRSPMReturnsFhat, sc, 1000)
    assert good.passed, good.to_dict()
    assert not bad.passed and bad.eps_lower > 3, bad.to_dict()


@pytest.mark.slow
def test_quantile_scenario_catches_a_non_exact_oracle_that_claims_exactness():
    sc = quantile_scenario()
    good = run(RRSPM, sc, 1000)
    with registered_backend("quantile-claiming", "oraclepriv.audit.controls:ClaimingQuantileSplitBackend") as name:
        bad = run(RRSPM, sc, 300, backend=name)
    assert good.passed, good.to_dict()
    assert not bad.passed, bad.to_dict()


@pytest.mark.slow
def test_gaussian_variant_passes_and_variance_reading_is_caught():
    sc = tight_construction(2, EPS)
    good = run(RRSPM, sc, 1500, noise="gaussian", delta=1e-3)
    bad = run(RRSPMGaussianVariance, sc, 1000, noise="gaussian", delta=1e-3)
    assert good.passed, good.to_dict()
    assert not bad.passed, bad.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("m", [1, 2, 3])
def test_tight_construction_large(m):
    sc = tight_construction(m, EPS)
    res = run(RRSPM, sc, 30000, seed=m)
    assert res.passed and res.eps_point == pytest.approx(EPS, abs=0.1), res.to_dict()


# -- the reduced sampler and the audit's power ------------------------------------------------------


def test_reduced_sampler_catches_a_loss_of_one_point_two_eps_and_passes_rrspm():
    from oraclepriv.audit.controls import laplace_scaled
    from oraclepriv.audit.runner import audit_reduced

    sc = tight_construction(1)
    good = audit_reduced(
        lambda s: RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=s), sc, epsilon=1.0, n_runs=300_000
    )
    bad = audit_reduced(
        lambda s: laplace_scaled(1 / 1.2)(epsilon=1.0, hypothesis_class="threshold", random_state=s),
        sc,
        epsilon=1.0,
        n_runs=300_000,
    )
    assert good.passed and abs(good.eps_point - 1.0) < 0.03
    assert not bad.passed and 1.1 < bad.eps_lower < 1.2 < bad.eps_point + 0.03


def test_detectable_loss_is_the_loss_the_audit_catches():
    from oraclepriv.audit.runner import detectable_loss

    assert detectable_loss(4000, 2, 1.0) > 1.3  # the old default audit could not see 1.3 eps
    one_million = detectable_loss(1_000_000, 2, 1.0)
    assert 1.0 < one_million < 1.05
    assert detectable_loss(10_000_000, 2, 1.0) < one_million  # more runs, more power
    assert detectable_loss(10, 2, 1.0) == float("inf")


def test_default_rrspm_audit_rows_include_the_reduced_sampler_and_the_halfspace_mip_path():
    from oraclepriv.audit.suite import _reduced_cases

    cases = _reduced_cases()
    assert any("1.2 eps" in label and not must_pass for label, *_, must_pass in cases)
    assert any(
        params.get("backend") == "scip-bc" and sc.hypothesis_class == "halfspace" for _, sc, _, params, _ in cases
    )
