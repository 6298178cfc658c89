"""MarginERM and AdaptiveMarginERM (Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees",
Algorithms 2, 4 and 6; docs/theory/margin-learners.md).

1. The calibration: Lemma 3.1's constants and the two inequalities of its proof; the resampling-Gaussian accounting
   against a brute-force law of the copies and against the exact profile of a one-round mixture; the direct-Gaussian
   accounting recomputed from a fit's record; every calibration meets its delta and a 10%-short noise does not; one
   round spends all of epsilon on the rounds and records no selection.
2. The two private selections verified EXACTLY: their output laws are explicit given the scores, so the privacy loss
   between neighbouring datasets is computed (:func:`oraclepriv.privacy_loss`), on tight instances where a
   temperature 10% too high exceeds the claim.
3. Sampled audits: the stand-in solver on its tight instance (a 10%-short noise caught), Algorithm 2's direct path
   on its tight instance (a 10%-short calibration caught), and the whole learner
   (:func:`oraclepriv.audit.audit_learner`, a control without the solver's noise caught).
4. The estimator: fit, predict, pickle, Pipeline, scikit-learn's checks, the release, bad inputs.
"""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import binom, norm
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

import oraclepriv.learners.margin_algorithms as margin_algorithms
from oraclepriv.audit import Neighbours, audit_learner
from oraclepriv.audit.stats import estimate_epsilon
from oraclepriv.learners.margin import AdaptiveMarginERM, MarginERM
from oraclepriv.learners.margin_algorithms import (
    FeatureMap,
    margin_errors,
    selection_sensitivity,
    solver_schedule,
)
from oraclepriv.learners.margin_privacy import (
    ACCOUNTINGS,
    RoundCalibration,
    direct_gaussian_delta,
    direct_gaussian_mu,
    gaussian_delta,
    gaussian_mu,
    paper_budget,
    resampling_gaussian_delta,
    resampling_gaussian_mu,
    squared_copies_law,
)
from oraclepriv.learners.margin_selection import (
    exponential_mechanism_log_probabilities,
    generalized_exponential_mechanism_log_probabilities,
    normalised_scores,
)
from oraclepriv.learners.margin_solver import mean_hinge_loss, minimum_hinge_loss, noisy_projected_descent
from oraclepriv.privacy_loss import privacy_loss
from oraclepriv.release import PrivacyLeakWarning, reading_diagnostics


def _law(log_p: np.ndarray) -> dict[int, float]:
    return {i: float(v) for i, v in enumerate(log_p)}


def _task(n: int = 60, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Records in the unit ball with labels of a margin halfspace."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= 0.99 / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, (X[:, 0] + 0.2 > 0).astype(np.int8)


# ---------------------------------------------------------------------------------------------- 1. calibration
@pytest.mark.parametrize("epsilon, delta, rounds, n", [(1.0, 1e-6, 4, 400), (0.3, 1e-9, 2, 50), (5.0, 1e-4, 6, 3)])
def test_paper_budget_is_lemma_3_1_and_its_inequalities_hold(epsilon, delta, rounds, n):
    budget = paper_budget(epsilon, delta, rounds, n)
    log_term = math.log(2 * rounds / delta)
    assert budget.solver_epsilon == pytest.approx(epsilon / (4 * rounds * log_term), rel=1e-12)
    assert budget.solver_delta == pytest.approx(delta**2 / (4 * rounds * log_term), rel=1e-12)
    assert budget.group_size == math.floor(2 * log_term)
    assert budget.group_size * budget.solver_epsilon <= epsilon / (2 * rounds) * (1 + 1e-12)
    assert budget.copies_tail == pytest.approx(float(binom.sf(budget.group_size, n, 1 / n)), abs=1e-300)
    assert budget.copies_tail <= delta / (2 * rounds) and budget.group_delta <= delta / (2 * rounds)
    assert budget.spent_delta <= delta


def test_group_privacy_bound_covers_the_gaussian_groups_exact_profile():
    """Group privacy is a bound for every (eps', delta')-DP solver; for the Gaussian stand-in the exact profile of
    G copies (G mu)-GDP at G eps' must lie below it."""
    budget = paper_budget(1.0, 1e-6, 4, 400)
    mu = gaussian_mu(budget.solver_epsilon, budget.solver_delta)
    G = budget.group_size
    assert gaussian_delta(G * mu, G * budget.solver_epsilon) <= budget.group_delta


def test_paper_budget_without_selection_gives_the_rounds_all_of_epsilon():
    """One round and no selection: the rounds' epsilon is epsilon, not epsilon/2 (the proof's inequalities still
    checked); with the selection it is the paper's split."""
    alone, split = paper_budget(1.0, 1e-6, 1, 400, selection=False), paper_budget(2.0, 1e-6, 1, 400)
    assert alone.round_epsilon == 1.0 and alone.solver_epsilon == pytest.approx(1.0 / (2 * math.log(2 / 1e-6)))
    assert alone == split
    assert alone.group_size * alone.solver_epsilon <= 1.0 and alone.spent_delta <= 1e-6


def test_paper_budget_refuses_where_the_group_privacy_step_fails():
    with pytest.raises(ValueError, match=r"epsilon=200.*epsilon <= log\(1/delta\).*resampling-gaussian"):
        paper_budget(200.0, 1e-6, 4, 400)


def test_gaussian_profile_is_the_closed_form_and_the_calibration_is_tight():
    for mu, eps in [(0.7, 0.5), (2.0, 1.0), (0.1, 0.01)]:
        direct = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        assert gaussian_delta(mu, eps) == pytest.approx(direct, rel=1e-9, abs=1e-15)
    for eps, delta in [(1.0, 1e-6), (0.004, 4e-15), (3.0, 0.05)]:
        mu = gaussian_mu(eps, delta)
        assert gaussian_delta(mu, eps) <= delta < gaussian_delta(mu / 0.9, eps)  # 10% less noise: over delta


def test_squared_copies_law_matches_brute_force_enumeration():
    n, rounds = 3, 2
    law, beyond = squared_copies_law(n, rounds)
    brute = np.zeros(len(law))
    for draws in itertools.product(range(n), repeat=n * rounds):  # the resampled indices of both rounds
        q = sum(draws[t * n : (t + 1) * n].count(0) ** 2 for t in range(rounds))  # copies of record 0
        brute[q] += n ** -(n * rounds)
    np.testing.assert_allclose(law, brute, atol=1e-15)
    assert beyond == 0.0


def _mixture_delta(eps: float, means_p: np.ndarray, means_q: np.ndarray, weights: np.ndarray, std: float) -> float:
    """sup_E P(E) - e^eps Q(E) for two Gaussian mixtures on the line (common weights and std), by quadrature."""
    x = np.linspace(min(means_p.min(), means_q.min()) - 12 * std, max(means_p.max(), means_q.max()) + 12 * std, 400_001)
    p = (weights[:, None] * norm.pdf(x[None, :], means_p[:, None], std)).sum(axis=0)
    q = (weights[:, None] * norm.pdf(x[None, :], means_q[:, None], std)).sum(axis=0)
    return float(np.maximum(0.0, p - math.exp(eps) * q).sum() * (x[1] - x[0]))


def test_resampling_gaussian_delta_bounds_the_exact_profile_of_a_resampled_round():
    """One round, T = 1, n = 2 records at z = 1: D has labels (+1, +1), D' (-1, +1). Given J copies of record 0,
    the mean gradient is -1 on D and -(1 - J) on D': the output -eta (g + sigma xi) is a mixture over
    J ~ Binomial(2, 1/2). Its exact profile (by quadrature, both directions) lies below the bound."""
    n, eps, sigma, eta = 2, 0.5, 1.3, 1.0
    J = np.arange(n + 1)
    weights = binom.pmf(J, n, 1 / n)
    means_d = np.full(n + 1, eta * 1.0)
    means_d2 = eta * (1.0 - J)
    exact = max(
        _mixture_delta(eps, means_d, means_d2, weights, eta * sigma),
        _mixture_delta(eps, means_d2, means_d, weights, eta * sigma),
    )
    mu = (2.0 / n) / sigma  # gradient sensitivity 2 r / (rho n) over sigma, r = rho = 1
    bound = resampling_gaussian_delta(mu, eps, n, rounds=1)
    assert exact <= bound
    assert exact > 0.5 * bound  # the bound is not loose here: the mixture is the worst case of its own proof


def test_resampling_calibration_meets_delta_and_a_10_percent_short_noise_does_not():
    mu = resampling_gaussian_mu(0.5, 1e-6, 400, 4)
    assert resampling_gaussian_delta(mu, 0.5, 400, 4) <= 1e-6 < resampling_gaussian_delta(mu / 0.9, 0.5, 400, 4)
    paper_mu = gaussian_mu(paper_budget(1.0, 1e-6, 4, 400).solver_epsilon, paper_budget(1.0, 1e-6, 4, 400).solver_delta)
    assert 30 < mu / paper_mu < 60  # the gain the docs state ("about 40 times less noise")


def test_direct_calibration_meets_delta_and_a_10_percent_short_noise_does_not():
    """M rounds on the same records, each mu_r-GDP: together exactly mu_r sqrt(M)-GDP, calibrated on the exact
    profile at the rounds' epsilon."""
    for epsilon, delta, rounds in [(0.5, 1e-6, 4), (1.0, 1e-6, 1), (2.0, 1e-9, 7)]:
        mu = direct_gaussian_mu(epsilon, delta, rounds)
        assert direct_gaussian_delta(mu, epsilon, rounds) == gaussian_delta(mu * math.sqrt(rounds), epsilon)
        assert direct_gaussian_delta(mu, epsilon, rounds) <= delta < direct_gaussian_delta(mu / 0.9, epsilon, rounds)
    with pytest.raises(ValueError, match="rounds=0"):
        direct_gaussian_mu(1.0, 1e-6, 0)


@pytest.mark.parametrize("rounds", [1, 3])
def test_a_direct_fit_record_composes_to_its_delta_exactly(rounds):
    """From the released record alone (sigma, steps, the gradient sensitivity, M): the M T Gaussian steps compose to
    mu = sqrt(M T) sensitivity / sigma, whose exact profile meets delta at the rounds' epsilon and exceeds it with a
    noise 10% short. The rounds' epsilon is epsilon with one round, epsilon/2 beside the selection otherwise."""
    X, y = _task(n=80, d=4)
    clf = MarginERM(epsilon=1.0, margin=0.3, accounting="direct-gaussian", rounds=rounds, n_steps=20, random_state=0)
    record = clf.fit(X, y).release_.privacy
    assert record["rounds"] == rounds and record["resampling"] == "none"
    assert record["rounds_epsilon"] == (1.0 if rounds == 1 else 0.5)
    assert record["selection_epsilon"] == 1.0 - record["rounds_epsilon"]
    mu = math.sqrt(rounds * record["solver_steps"]) * record["solver_gradient_sensitivity"] / record["solver_sigma"]
    assert mu == pytest.approx(record["rounds_mu"], rel=1e-9)
    assert gaussian_delta(mu, record["rounds_epsilon"]) <= 1e-6 * (1 + 1e-9)
    assert gaussian_delta(mu / 0.9, record["rounds_epsilon"]) > 1e-6
    assert record["guarantee"].startswith("(1, 1e-06)-DP") and "not the paper's" in record["composition"]


@pytest.mark.parametrize("accounting", ACCOUNTINGS)
def test_one_round_records_no_selection_and_spends_epsilon_on_the_rounds(accounting):
    X, y = _task(n=80, d=4)
    clf = MarginERM(epsilon=1.0, margin=0.3, accounting=accounting, rounds=1, n_steps=20, random_state=0).fit(X, y)
    record = clf.release_.privacy
    assert record["rounds"] == 1 and record["rounds_rule"] == "given: rounds=1"
    assert record["rounds_epsilon"] == 1.0 and record["rounds_delta"] <= 1e-6
    assert record["selection_epsilon"] == 0.0 and record["selection"].startswith("none: one round")
    assert "no selection" in record["mechanism"]
    if accounting == "paper":
        assert record["solver_epsilon"] == pytest.approx(1.0 / (2 * math.log(2 / 1e-6)))
    with reading_diagnostics():
        assert clf.diagnostics_["selection_probabilities"] == [1.0] and clf.diagnostics_["chosen_round"] == 0


def test_the_direct_rounds_run_on_the_records_themselves(monkeypatch):
    """No resampling: every round's solver gets the mapped records, all of them, in order."""
    seen = []
    original = margin_algorithms.noisy_projected_descent

    def spy(Z, s, *args):
        seen.append((Z.copy(), s.copy()))
        return original(Z, s, *args)

    monkeypatch.setattr(margin_algorithms, "noisy_projected_descent", spy)
    X, y = _task(n=50, d=3)
    MarginERM(margin=0.3, accounting="direct-gaussian", rounds=3, jl_dim=None, n_steps=5, random_state=0).fit(X, y)
    Z = FeatureMap(None, 1.0, 1.0).apply(X)
    assert len(seen) == 3
    for Z_round, s_round in seen:
        assert np.array_equal(Z_round, Z) and np.array_equal(s_round, 2.0 * y - 1)


# ------------------------------------------------------------------------------------ 2. exact selections
def _tight_selection_instance(n: int = 40, rho: float = 0.5):
    """Candidates +Lambda and -Lambda on n records at x = r = 1; record 0 has label +1 on D and -1 on D', the rest
    -1. Each candidate's loss moves by exactly the sensitivity, in opposite directions, and -Lambda is far better."""
    Z = np.ones((n, 1))
    s = -np.ones(n)
    s_prime = s.copy()
    s[0] = 1.0
    W = np.array([[1.0], [-1.0]])
    return mean_hinge_loss(W, Z, s, rho), mean_hinge_loss(W, Z, s_prime, rho), selection_sensitivity(1.0, 1.0, rho, n)


def test_algorithm_4_selection_exact_loss_is_at_most_epsilon_half_and_tight():
    epsilon = 1.0
    losses, losses_prime, sensitivity = _tight_selection_instance()
    assert np.allclose(np.abs(losses - losses_prime), sensitivity)
    law = exponential_mechanism_log_probabilities(losses, epsilon / 2, sensitivity)
    law_prime = exponential_mechanism_log_probabilities(losses_prime, epsilon / 2, sensitivity)
    found = privacy_loss(_law(law), _law(law_prime)).loss
    assert 0.99 * epsilon / 2 <= found <= epsilon / 2 + 1e-12
    hot = [exponential_mechanism_log_probabilities(v, 1.1 * epsilon / 2, sensitivity) for v in (losses, losses_prime)]
    assert privacy_loss(_law(hot[0]), _law(hot[1])).loss > epsilon / 2  # the 10%-hot control exceeds the claim


def test_algorithm_4_selection_on_random_neighbours_stays_within_epsilon_half():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n, p, rho = int(rng.integers(2, 30)), int(rng.integers(1, 4)), float(rng.uniform(0.05, 2))
        Z = rng.normal(size=(n, p))
        Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
        s = rng.choice([-1.0, 1.0], n)
        Z2, s2 = Z.copy(), s.copy()
        Z2[0] = rng.normal(size=p) / math.sqrt(p) / 2
        s2[0] = rng.choice([-1.0, 1.0])
        W = rng.normal(size=(int(rng.integers(2, 8)), p))
        W /= np.maximum(1.0, np.linalg.norm(W, axis=1))[:, None]
        sens = selection_sensitivity(1.0, 1.0, rho, n)
        a = exponential_mechanism_log_probabilities(mean_hinge_loss(W, Z, s, rho), 0.5, sens)
        b = exponential_mechanism_log_probabilities(mean_hinge_loss(W, Z2, s2, rho), 0.5, sens)
        assert privacy_loss(_law(a), _law(b)).loss <= 0.5 + 1e-12


def _tight_gem_scores(K: int = 1000, a: float = 0.5, b: float = 3.0, huge: float = 1e6):
    """Option 0 is best and its sensitivity huge; option 1 (the target) sits a normalised a above it; K - 2 options
    sit a normalised b above option 1. D -> D': option 1 up by its Delta, option 0 down by its Delta, the others
    down by theirs: s_1 rises by 1 while every other s_k falls by 1, so the loss tends to epsilon as K grows."""
    sens = np.ones(K)
    sens[0] = huge
    shift = 2 * math.log(K / 0.05) / 1.0
    pen = np.empty(K)
    pen[0] = 0.0
    pen[1] = a * (1 + huge)
    pen[2:] = pen[1] + 2 * b
    errors = pen - shift * sens
    moved = errors.copy()
    moved[1] += sens[1]
    moved[0] -= sens[0]
    moved[2:] -= sens[2:]
    return errors, moved, sens


def test_algorithm_6_selection_exact_loss_is_at_most_epsilon_and_tight():
    epsilon = 1.0
    errors, moved, sens = _tight_gem_scores()
    assert np.all(np.abs(errors - moved) <= sens)
    law = generalized_exponential_mechanism_log_probabilities(errors, sens, epsilon, 0.05)
    law_prime = generalized_exponential_mechanism_log_probabilities(moved, sens, epsilon, 0.05)
    found = privacy_loss(_law(law), _law(law_prime)).loss
    assert 0.95 * epsilon <= found <= epsilon + 1e-12
    shift = 2 * math.log(len(sens) / 0.05) / epsilon  # the control changes the temperature only
    hot = [-1.1 * epsilon * normalised_scores(v, sens, shift) / 2 for v in (errors, moved)]
    hot = [h - logsumexp(h) for h in hot]
    assert privacy_loss(_law(hot[0]), _law(hot[1])).loss > epsilon


def test_algorithm_6_selection_on_random_score_pairs_stays_within_epsilon():
    rng = np.random.default_rng(4)
    for _ in range(300):
        K = int(rng.integers(1, 8))
        sens = 10 ** rng.uniform(-3, 0, K)
        errors = rng.normal(size=K) * 10 ** rng.uniform(-3, 1)
        moved = errors + sens * rng.uniform(-1, 1, K)
        a = generalized_exponential_mechanism_log_probabilities(errors, sens, 0.7, 0.1)
        b = generalized_exponential_mechanism_log_probabilities(moved, sens, 0.7, 0.1)
        assert privacy_loss(_law(a), _law(b)).loss <= 0.7 + 1e-12


def test_algorithm_6_scores_of_real_neighbours_move_within_their_sensitivities():
    """The learner's own scores (minimum hinge losses within a certified gap, plus the bound) on neighbouring
    datasets: each F_j moves by at most Delta_j, and the exact loss of the selection is at most its epsilon."""
    X, y = _task(n=24, d=2, seed=5)
    s = 2.0 * y - 1
    fmap = FeatureMap(None, 1.0, 1.0)
    rng = np.random.default_rng(6)
    for trial in range(3):
        X2, s2 = X.copy(), s.copy()
        X2[trial] = rng.normal(size=2) / 2
        s2[trial] = -s2[trial]
        scores = [
            margin_errors(
                fmap.apply(A),
                t,
                inner_epsilon=0.5,
                delta=1e-6,
                norm_bound=1.0,
                feature_radius=fmap.feature_radius,
                confidence=0.025,
                opt_tol=0.1,
            )
            for A, t in ((X, s), (X2, s2))
        ]
        assert np.all(np.abs(scores[0].errors - scores[1].errors) <= scores[0].sensitivities)
        laws = [
            generalized_exponential_mechanism_log_probabilities(sc.errors, sc.sensitivities, 0.5, 0.025)
            for sc in scores
        ]
        assert privacy_loss(_law(laws[0]), _law(laws[1])).loss <= 0.5 + 1e-12


def test_minimum_hinge_loss_brackets_the_minimum():
    X, y = _task(n=80, d=3, seed=7)
    Z, s = FeatureMap(None, 1.0, 1.0).apply(X), 2.0 * y - 1
    for rho in (0.7, 0.2, 0.05):
        result = minimum_hinge_loss(Z, s, rho, 1.0, gap=1e-5)
        assert 0 <= result.gap <= 1e-5 and np.linalg.norm(result.w) <= 1.0 + 1e-12
        assert mean_hinge_loss(result.w, Z, s, rho)[0] == pytest.approx(result.upper)
        rng = np.random.default_rng(8)  # no point of the ball does better than the lower bound
        W = rng.normal(size=(2000, Z.shape[1]))
        W /= np.linalg.norm(W, axis=1)[:, None] / rng.uniform(0, 1, (2000, 1))
        assert mean_hinge_loss(W, Z, s, rho).min() >= result.lower - 1e-12


# ------------------------------------------------------------------------------------------- 3. sampled audits
def _solver_audit(n_runs: int, short: bool, seed: int = 11) -> float:
    """The stand-in on its tight instance: one record at z = 1, label +1 on D and -1 on D', T = 1, no projection.
    The output is -eta (g + sigma xi) with g = -s: a Gaussian mechanism of exactly mu = sensitivity / sigma, the
    solver calibrated to (1, 0.05). The event is the Neyman-Pearson threshold; returns the audit's lower bound."""
    epsilon, delta = 1.0, 0.05
    mu = gaussian_mu(epsilon, delta) / (0.9 if short else 1.0)  # 10% less noise: mu 1/0.9 larger
    steps, sigma, _, _ = solver_schedule(mu, 1, 1, 1.0, 1.0, 1e9, 1)
    eta = 1.0  # any step: the privacy is in sigma; the ball (radius 1e9) never binds
    threshold = -eta + eta * sigma * (epsilon / mu + mu / 2)
    rng = np.random.default_rng(seed)
    Z = np.ones((1, 1))
    outcomes = []
    for label in (1.0, -1.0):
        s = np.array([label])
        outcomes.append(
            [int(noisy_projected_descent(Z, s, 1.0, 1e9, sigma, steps, eta, rng)[0] > threshold) for _ in range(n_runs)]
        )
    return estimate_epsilon(outcomes[0], outcomes[1], delta=delta).eps_lower


@pytest.mark.slow
def test_solver_audit_passes_and_catches_a_10_percent_noise_shortfall():
    assert _solver_audit(10_000, short=False) <= 1.0
    assert _solver_audit(40_000, short=True) > 1.0


def _direct_audit(n_runs: int, seed: int = 12) -> float:
    """Algorithm 2's direct path (accounting="direct-gaussian", rounds=1, jl_dim=None) on its tight instance: eight
    records at x = 1, record 0 labelled +1 on D and -1 on D', the others alternating, T = 1, no intercept,
    rho = r = 1. At w_0 = 0 every record is active, so the mean gradient is 0 on D and 2/8 on D', exactly the
    sensitivity 2 r / (rho n): the released weight is a Gaussian mechanism of exactly the calibrated mu, calibrated to
    (1, 0.05) with no selection. The event is the Neyman-Pearson threshold for that mu, inside the parameter ball
    (so the projection leaves it alone); returns the audit's lower bound."""
    epsilon, delta, n = 1.0, 0.05, 8
    X = np.ones((n, 1))
    rng = np.random.default_rng(seed)
    mu = gaussian_mu(epsilon, delta)
    sigma = (2.0 / n) / mu  # the calibrated noise, against which the threshold is set
    on_d = np.array([1.0, -1.0] * (n // 2))
    on_d_prime = np.r_[-1.0, on_d[1:]]
    outcomes = []
    for labels in (on_d, on_d_prime):
        runs = []
        for _ in range(n_runs):
            fit = margin_algorithms.efficient_private_margin(
                X,
                labels,
                epsilon=epsilon,
                delta=delta,
                margin=1.0,
                radius=1.0,
                norm_bound=1.0,
                jl_dim=None,
                confidence=0.05,
                accounting="direct-gaussian",
                fit_intercept=False,
                n_steps=1,
                rng=rng,
                rounds=1,
            )
            threshold = fit.privacy["solver_step_size"] * sigma * (epsilon / mu + mu / 2)
            runs.append(int(fit.coef[0] < -threshold))
        outcomes.append(runs)
    assert threshold < 1.0  # inside the ball of radius Lambda = 1
    return estimate_epsilon(outcomes[1], outcomes[0], delta=delta).eps_lower


def _short_direct_calibration(monkeypatch):
    """The control: the direct calibration's mu 1/0.9 too large (the noise 10% short), everything else as is."""
    original = margin_algorithms.round_calibration

    def short(*args):
        calibration = original(*args)
        return RoundCalibration(calibration.mu / 0.9, calibration.resample, calibration.record)

    monkeypatch.setattr(margin_algorithms, "round_calibration", short)


@pytest.mark.slow
def test_direct_path_audit_passes_and_catches_a_10_percent_noise_shortfall(monkeypatch):
    assert _direct_audit(10_000) <= 1.0
    _short_direct_calibration(monkeypatch)
    assert _direct_audit(40_000) > 1.0


@pytest.mark.slow
def test_solver_audit_powered():
    assert _solver_audit(200_000, short=False) <= 1.0
    assert _solver_audit(200_000, short=True) > 1.05


class _ProbeRelease:
    """The labels of a release at the probe points, as the audit's outcome (post-processing keeps the guarantee)."""

    def __init__(self, labels: tuple[int, ...]) -> None:
        self.labels = labels

    def to_json(self) -> str:
        return repr(self.labels)


class _Audited:
    """A margin learner as :func:`audit_learner` runs it: fit(X, y, X_public) ignores the public points (the
    learner takes none); the outcome is the prediction at x = 1."""

    def __init__(self, learner) -> None:
        self.learner = learner

    def fit(self, X, y, X_public=None):
        self.learner.fit(X, y)
        self.hypothesis_ = self.learner.hypothesis_
        self.release_ = _ProbeRelease(tuple(int(v) for v in self.learner.predict(np.ones((1, 1)))))
        return self


def _learner_audit(cls, n_runs: int, **params):
    """Two records at x = 1: labels (+1, -1) on D, (-1, -1) on D'. The outcome is the sign of the released w."""
    X = np.ones((2, 1))
    sc = Neighbours("two records", X, np.array([1, 0]), X, np.array([0, 0]), np.ones((1, 1)), "halfspace")
    params = {"fit_intercept": False, "n_steps": 10, **params}
    return audit_learner(
        lambda seed: _Audited(cls(epsilon=1.0, delta=1e-6, random_state=seed, **params)),
        sc,
        epsilon=1.0,
        delta=1e-6,
        n_runs=n_runs,
    )


def _noise_free(monkeypatch):
    """The control: the solver's Gaussian noise forgotten (sigma = 0), everything else as calibrated."""
    original = margin_algorithms.solver_schedule

    def without_noise(*args):
        steps, _, eta, sensitivity = original(*args)
        return steps, 0.0, eta, sensitivity

    monkeypatch.setattr(margin_algorithms, "solver_schedule", without_noise)


@pytest.mark.slow
def test_learner_audit_passes_and_catches_a_solver_without_noise(monkeypatch):
    assert _learner_audit(MarginERM, 150, margin=0.5).passed
    _noise_free(monkeypatch)
    bad = _learner_audit(MarginERM, 150, margin=0.5)
    assert not bad.passed and bad.eps_lower > 1.5


@pytest.mark.slow
def test_learner_audit_powered(monkeypatch):
    for accounting in ACCOUNTINGS:
        assert _learner_audit(MarginERM, 2000, margin=0.5, accounting=accounting).passed
    assert _learner_audit(MarginERM, 2000, margin=0.5, accounting="direct-gaussian", rounds=1, jl_dim=None).passed
    assert _learner_audit(AdaptiveMarginERM, 800).passed
    _noise_free(monkeypatch)
    assert _learner_audit(MarginERM, 2000, margin=0.5, accounting="resampling-gaussian").eps_lower > 3.0


# ------------------------------------------------------------------------------------------------ 4. estimator
def test_fit_predict_and_the_release_record():
    X, y = _task(n=120, d=40, seed=1)
    clf = MarginERM(epsilon=2.0, margin=0.2, random_state=0).fit(X, y)
    record = clf.release_.privacy
    assert clf.predict(X).shape == (120,) and set(np.unique(clf.predict(X))) <= {0, 1}
    assert "STAND-IN" in record["solver"] and record["accounting"] == "paper"
    assert record["projected"] and record["jl_dim"] < 40 and record["projection"].startswith("Rademacher")
    assert record["solver_epsilon"] == pytest.approx(
        2.0 / (4 * record["rounds"] * math.log(2 * record["rounds"] / 1e-6))
    )
    assert record["selection_epsilon"] == 1.0 and record["oracle_calls_by_design"] == 0
    assert record["guarantee"].startswith("(2, 1e-06)-DP")
    assert np.allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0])
    with pytest.warns(PrivacyLeakWarning):
        assert len(clf.diagnostics_.ledger.records) == 0  # no oracle call
    with reading_diagnostics():
        probabilities = clf.diagnostics_["selection_probabilities"]
    assert len(probabilities) == record["rounds"] and sum(probabilities) == pytest.approx(1.0)


def test_identity_projection_when_the_dimension_is_at_most_k():
    X, y = _task(n=60, d=3)
    record = MarginERM(margin=0.3, jl_dim=3, random_state=0).fit(X, y).release_.privacy
    assert not record["projected"] and record["projection"] == "identity: d=3 <= k=3"
    assert record["parameter_radius"] == 1.0 and record["clip_radius"] == 1.0


def test_no_projection_when_jl_dim_is_none():
    X, y = _task(n=60, d=40)
    record = MarginERM(margin=0.3, jl_dim=None, random_state=0).fit(X, y).release_.privacy
    assert not record["projected"] and record["projection"] == "identity: jl_dim=None" and record["jl_dim"] is None
    assert record["parameter_radius"] == 1.0 and record["clip_radius"] == 1.0


def test_the_adaptive_learner_passes_rounds_jl_dim_and_accounting_through():
    X, y = _task(n=100, d=3)
    params = {"accounting": "direct-gaussian", "rounds": 1, "jl_dim": None}
    record = AdaptiveMarginERM(epsilon=2.0, random_state=0, **params).fit(X, y).release_.privacy["erm"]
    assert record["accounting"] == "direct-gaussian" and record["rounds"] == 1
    assert record["projection"] == "identity: jl_dim=None" and record["rounds_epsilon"] == 1.0  # the inner eps/2


def test_the_map_back_gives_the_same_scores_as_the_projected_halfspace():
    rng = np.random.default_rng(2)
    fmap, _ = margin_algorithms.draw_feature_map(30, 8, 1.0, True, rng)
    X = rng.normal(size=(50, 30)) / 30
    w = rng.normal(size=9)
    coef, intercept = fmap.back(w)
    assert np.allclose(X @ coef + intercept, fmap.apply(X) @ w)


def test_seeded_fits_repeat_and_pickle_round_trips():
    X, y = _task(n=80, d=4)
    a = MarginERM(margin=0.3, accounting="resampling-gaussian", random_state=7).fit(X, y)
    b = MarginERM(margin=0.3, accounting="resampling-gaussian", random_state=7).fit(X, y)
    assert a.release_ == b.release_
    again = pickle.loads(pickle.dumps(a))
    assert np.array_equal(again.predict(X), a.predict(X)) and again.release_ == a.release_


def _into_unit_ball(X):
    """A per-record, data-independent map into the unit ball (x / (1 + ||x||))."""
    X = np.asarray(X, dtype=np.float64)
    return X / (1.0 + np.linalg.norm(X, axis=1))[:, None]


def test_pipeline_with_a_fixed_map_into_the_ball():
    rng = np.random.default_rng(9)
    X = 5 * rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_pipeline(FunctionTransformer(_into_unit_ball), AdaptiveMarginERM(random_state=0)).fit(X, y)
    assert pipe.predict(X).shape == (100,)
    assert pipe[-1].release_.privacy["selected_margin"] in pipe[-1].release_.privacy["margin_grid"]


def test_adaptive_learner_records_both_selections():
    X, y = _task(n=100, d=3)
    record = AdaptiveMarginERM(epsilon=2.0, random_state=0).fit(X, y).release_.privacy
    assert record["margin_selection_epsilon"] == 1.0 and record["erm"]["selection_epsilon"] == 0.5
    assert record["erm"]["margin"] == record["selected_margin"] and record["erm"]["confidence"] == 0.025
    assert len(record["margin_grid"]) == math.ceil(0.5 * math.log2(100))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"delta": 0.0}, "delta must be a real number in \\(0, 1\\)"),
        ({"delta": 0.05}, "delta 0.05 is >= 1/n"),
        ({"margin": 0.0}, "margin must be"),
        ({"radius": -1.0}, "radius must be"),
        ({"norm_bound": 0}, "norm_bound must be"),
        ({"jl_dim": 0}, "jl_dim must be"),
        ({"jl_dim": "big"}, "jl_dim must be"),
        ({"rounds": 0}, "rounds must be one of \\['auto'\\] or an integer >= 1; got 0"),
        ({"rounds": "many"}, "rounds must be"),
        ({"rounds": 2.0}, "rounds must be"),
        ({"confidence": 1.0}, "confidence must be"),
        ({"accounting": "rdp"}, "accounting must be one of \\['paper', 'resampling-gaussian', 'direct-gaussian'\\]"),
        ({"loss": "logistic"}, "loss must be"),
        ({"fit_intercept": 1}, "fit_intercept must be"),
        ({"n_steps": 2.5}, "n_steps must be"),
        ({"epsilon": 0}, "epsilon must be"),
    ],
)
def test_bad_parameters_name_the_argument(params, match):
    X, y = _task(n=40, d=2)
    with pytest.raises(ValueError, match=match):
        MarginERM(**params).fit(X, y)


def test_rows_outside_the_ball_are_refused_naming_radius():
    X, y = _task(n=40, d=2)
    X[7] = [3.0, 0.0]
    with pytest.raises(ValueError, match=r"X row 7 lies outside the ball of radius=1.0 \(1 of its 40 rows do\)") as err:
        MarginERM().fit(X, y)
    assert "3" not in str(err.value).replace("40", "")  # the row's norm, 3, is private
    with pytest.raises(ValueError, match=r"radius=2.0"):
        AdaptiveMarginERM(radius=2.0).fit(X, y)
    MarginERM(radius=3.0, random_state=0).fit(X, y)  # declared large enough: accepted


def test_an_epsilon_beyond_lemma_3_1_is_refused_with_the_way_out():
    X, y = _task(n=40, d=2)
    with pytest.raises(ValueError, match="resampling-gaussian"):
        MarginERM(epsilon=300.0).fit(X, y)
    MarginERM(epsilon=300.0, accounting="resampling-gaussian", random_state=0).fit(X, y)


# ------------------------------------------------------------------------------ scikit-learn's estimator checks
_CHECKS_SCALE = 1e4  # the checks' features have norms below this


def _shrunk(X):
    try:
        arr = np.asarray(X)
        return np.asarray(arr, dtype=np.float64) / _CHECKS_SCALE if arr.dtype.kind in "iufO" else X
    except (TypeError, ValueError):
        return X


class _ShrunkInputs:
    """The checks' data divided by a fixed constant, so every row lies in the unit ball (fit and predict alike)."""

    def fit(self, X, y):
        return super().fit(_shrunk(X), y)  # type: ignore[misc]

    def predict(self, X):
        return super().predict(_shrunk(X))  # type: ignore[misc]

    def decision_function(self, X):
        return super().decision_function(_shrunk(X))  # type: ignore[misc]


class CheckedMarginERM(_ShrunkInputs, MarginERM):
    pass


class CheckedAdaptiveMarginERM(_ShrunkInputs, AdaptiveMarginERM):
    pass


@pytest.mark.filterwarnings("ignore::oraclepriv.release.PrivacyLeakWarning")
@parametrize_with_checks(
    [
        CheckedMarginERM(margin=1e-4, n_steps=50, random_state=0),
        # epsilon = 10: check_classifiers_one_label asks ten one-class records to be learnt outright, which the
        # direct path does for every seed at this epsilon (at epsilon = 1 the noise decides the bias's sign)
        CheckedMarginERM(
            epsilon=10.0, margin=1e-4, n_steps=50, accounting="direct-gaussian", rounds=1, jl_dim=None, random_state=0
        ),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.slow  # Algorithm 6 runs Algorithm 2 once per check: about a minute in all
@pytest.mark.filterwarnings("ignore::oraclepriv.release.PrivacyLeakWarning")
@parametrize_with_checks([CheckedAdaptiveMarginERM(n_steps=50, random_state=0)])
def test_sklearn_estimator_checks_adaptive(estimator, check):
    check(estimator)


def test_learn_runs_the_margin_learners_on_private_data_alone(tmp_path):
    """``oraclepriv learn --algorithm margin-erm``: fit on the private file alone (the learner takes no public
    data), the release saved and scored; ``--public`` is refused, not ignored."""
    import pandas as pd
    from typer.testing import CliRunner

    from oraclepriv.cli import app

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    X = 0.9 * X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    data = tmp_path / "ball.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": (X[:, 0] > 0).astype(int)}).to_csv(data, index=False)
    model = tmp_path / "model.json"
    runner = CliRunner()
    args = ["learn", str(data), "--algorithm", "margin-erm", "--epsilon", "1", "--delta", "1e-6"]
    done = runner.invoke(app, [*args, "--hypothesis-class", "halfspace", "--out", str(model)])
    assert done.exit_code == 0, done.output
    assert "(1, 1e-06)-DP" in done.output and model.exists()
    scored = runner.invoke(app, ["score", str(model), str(data), "--json"])
    assert scored.exit_code == 0, scored.output
    refused = runner.invoke(app, [*args, "--public", str(data)])
    assert refused.exit_code == 2 and "uses no public data" in refused.output
