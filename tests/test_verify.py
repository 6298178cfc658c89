"""``oraclepriv verify``: exact privacy loss of RRSPM / RSPM on small instances, near-miss controls,
the cost computation against brute force, RSPM and its identification sets, and bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner
from verify_results import verify_result

from oraclepriv.audit.controls import RRSPMProjectionSeesPrivatePoint, laplace_scaled
from oraclepriv.audit.scenarios import tight_construction
from oraclepriv.cli import app
from oraclepriv.identification import check_identification_set, grid_members, identification_set
from oraclepriv.io import write_csv_problem
from oraclepriv.learners import RRSPM, RSPM
from oraclepriv.noisy_argmin.costs import brute_force_costs, labeling_costs, realisable_labelings
from oraclepriv.oracle import make_oracle
from oraclepriv.verify.suite import natural_halfspace, tight_halfspace
from oraclepriv.verify.verifier import VERDICTS, neighbour_family, verify_learner

runner = CliRunner()


@pytest.mark.parametrize("m", [1, 2, 3])
def test_tight_construction_has_loss_exactly_epsilon(m):
    sc = tight_construction(m)
    result = verify_learner(RRSPM(epsilon=0.7, hypothesis_class=sc.hypothesis_class), sc.X, sc.y, sc.X_public)
    assert result.verdict == "verified"
    assert abs(result.loss - 0.7) <= 1e-12 + result.loss_high - result.loss_low
    assert "label flip" in result.worst_neighbour and result.numerical_error < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["enumerate", "scip-bc"])
def test_tight_halfspace_construction_through_the_exact_backends(backend):
    X, y, Z = tight_halfspace(2)
    result = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="halfspace", backend=backend), X, y, Z, backend=backend)
    assert result.backend == backend and result.n_labelings == 8  # three points in the plane are shattered
    assert abs(result.loss - 1.0) < 1e-9 and result.verdict == "verified"


@pytest.mark.parametrize("factor, loss", [(0.9, 1 / 0.9), (0.99, 1 / 0.99)])
def test_near_miss_laplace_scales_are_caught_with_their_loss(factor, loss):
    sc = tight_construction(1)
    result = verify_learner(laplace_scaled(factor)(epsilon=1.0, hypothesis_class="threshold"), sc.X, sc.y, sc.X_public)
    assert result.verdict == "exceeds" and result.loss == pytest.approx(loss, abs=1e-9)


def test_a_projection_that_sees_a_private_record_is_caught():
    sc = tight_construction(1)
    result = verify_learner(
        RRSPMProjectionSeesPrivatePoint(epsilon=1.0, hypothesis_class="threshold"), sc.X, sc.y, sc.X_public
    )
    assert result.release_reads_private_data and result.verdict == "exceeds" and result.loss == float("inf")
    correct = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="threshold"), sc.X, sc.y, sc.X_public)
    assert not correct.release_reads_private_data


def test_sampled_mode_agrees_with_exact_mode():
    sc = tight_construction(2)
    exact = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), sc.X, sc.y, sc.X_public)
    sampled = verify_learner(
        RRSPM(epsilon=1.0, hypothesis_class="stump"), sc.X, sc.y, sc.X_public, mode="sampled", draws=400_000
    )
    assert sampled.loss_low <= exact.loss <= sampled.loss_high


@pytest.mark.slow
def test_costs_agree_with_brute_force_on_random_halfspace_instances():
    oracle = make_oracle("halfspace", backend="scip-bc")
    for seed in range(5):
        X, y, Z = natural_halfspace(n=8, m=3, seed=seed)
        labelings = realisable_labelings(Z, oracle)
        assert len(labelings) == 8  # three random points in the plane: every labeling
        costs = labeling_costs(X, y, Z, labelings, oracle)
        np.testing.assert_array_equal(costs, brute_force_costs(X, y, Z, labelings, "halfspace"))


def test_neighbour_family_is_every_replacement():
    X, y, Z = np.array([[0.0], [1.0]]), np.array([0, 1]), np.array([[0.0], [5.0]])
    family = neighbour_family(X, y, Z)
    # record 0 = (0, 0): its flip, (0; y=1) is that flip again (dropped), (5; 0), (5; 1) -> 3; record 1: 1 + 4 -> 5
    assert len(family) == 8 and all(nb.apply(X, y)[0].shape == X.shape for nb in family)


# ------------------------------------------------------------------------------------------------ RSPM
def test_identification_sets_separate_the_class_on_the_grid():
    for hypothesis, grid in (("threshold", [[0.0, 1.5, 3.0, 7.0]]), ("stump", [[0, 1, 2], [0, 5], [1, 2, 3, 4]])):
        U = identification_set(hypothesis, grid)
        check_identification_set(U, hypothesis, grid)
        members = grid_members([np.unique(np.asarray(g, float)) for g in grid], hypothesis)
        assert len({m.predict(U).tobytes() for m in members}) == len(members)
    assert identification_set("stump", [[0, 1, 2], [0, 5]]).shape == (1 + 2 + 1, 2)
    with pytest.raises(ValueError, match="does not separate"):
        check_identification_set(np.array([[0.0, 0.0], [1.0, 0.0]]), "stump", [[0, 1], [0, 1]])


def test_rspm_makes_one_call_and_releases_a_grid_function():
    rng = np.random.default_rng(1)
    grid = [np.arange(5.0), np.arange(3.0)]
    X = np.c_[rng.integers(0, 5, 80), rng.integers(0, 3, 80)].astype(float)
    y = (X[:, 0] >= 2).astype(int)
    clf = RSPM(epsilon=2.0, grid=grid, random_state=0).fit(X, y)
    assert len(clf.ledger_) == 1 and clf.privacy_["oracle_calls_by_design"] == 1
    assert clf.hypothesis_ in grid_members([np.asarray(g) for g in grid], "stump")
    assert clf.privacy_["noise_scale"] == 2 * len(clf.identification_set_) / 2.0
    again = RSPM(epsilon=2.0, grid=grid, random_state=0).fit(X, y)
    assert again.release_.to_json() == clf.release_.to_json()


@pytest.mark.slow
def test_rspm_verifies_and_bad_input_is_named():
    grid = [np.arange(4.0)]
    X, y = np.array([[1.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 1, 1])
    assert verify_learner(RSPM(epsilon=1.0, hypothesis_class="threshold", grid=grid), X, y).verdict == "verified"
    with pytest.raises(ValueError, match="row 0 feature 0 is not a grid value"):  # the value itself is private
        RSPM(hypothesis_class="threshold", grid=grid).fit(X + 0.5, y)
    with pytest.raises(ValueError, match="takes no public data"):
        RSPM(hypothesis_class="threshold", grid=grid).fit(X, y, X_public=X)
    with pytest.raises(ValueError, match="halfspace"):
        RSPM(hypothesis_class="halfspace", grid=grid).fit(X, y)


# ------------------------------------------------------------------------------------------------ bad input
def test_verifier_bad_input_is_named():
    X, y, Z = natural_halfspace(n=4, m=6)
    with pytest.raises(ValueError, match="m = 6 noisy points is too large for exact mode"):
        verify_learner(RRSPM(epsilon=1.0), X, y, Z)
    with pytest.raises(ValueError, match="exact mode integrates Laplace noise"):
        verify_learner(RRSPM(epsilon=1.0, delta=0.1, noise="gaussian"), X, y, Z[:2])
    with pytest.raises(ValueError, match="does not support hypothesis class 'stump'"):
        verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z[:2], backend="enumerate")
    with pytest.raises(ValueError, match="naive-highs"):
        verify_learner(
            RRSPM(epsilon=1.0, backend="naive-highs", on_uncertified="fallback"), X, y, Z[:2], backend="naive-highs"
        )
    with pytest.raises(ValueError, match="neighbour family is empty"):
        neighbour_family(np.zeros((0, 2)), np.zeros(0), Z)
    with pytest.raises(ValueError, match="mode must be one of"):
        verify_learner(RRSPM(epsilon=1.0), X, y, Z[:2], mode="fast")


def test_cli_verify_instance(tmp_path):
    sc = tight_construction(1)
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, sc.X, sc.y)
    write_csv_problem(public, sc.X_public, None)
    args = [
        "verify",
        "instance",
        str(private),
        "--public",
        str(public),
        "--algorithm",
        "rrspm",
        "--hypothesis-class",
        "threshold",
        "--epsilon",
        "1",
    ]
    result = runner.invoke(app, args + ["--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["verdict"] == "verified" and abs(row["loss"] - 1.0) < 1e-9 and row["n_neighbours"] == 9
    bad = runner.invoke(app, args[:-2] + ["--epsilon", "1", "--algorithm", "rspm"])
    assert bad.exit_code == 2 and "do not pass --public" in bad.stderr
    too_many = tmp_path / "many.csv"
    write_csv_problem(too_many, np.arange(7.0)[:, None], None)
    bad = runner.invoke(
        app,
        [
            "verify",
            "instance",
            str(private),
            "--public",
            str(too_many),
            "--algorithm",
            "rrspm",
            "--hypothesis-class",
            "threshold",
        ],
    )
    assert bad.exit_code == 2 and "too large for exact mode" in bad.stderr


def test_subsample_aggregate_verifies_per_split_and_its_control_is_caught():
    from oraclepriv.audit.controls import SubsampleAggregateSharedData
    from oraclepriv.audit.scenarios import teacher_flip_scenario
    from oraclepriv.learners import SubsampleAggregate

    sc = teacher_flip_scenario()
    params = dict(n_teachers=9, noise="laplace", delta=0.0, epsilon=1.0, hypothesis_class="threshold", random_state=3)
    good = verify_learner(SubsampleAggregate(**params), sc.X, sc.y, sc.X_public)
    assert good.verdict == "verified" and abs(good.loss - 1.0) < 1e-9  # the Laplace mechanism is tight here
    bad = verify_learner(SubsampleAggregateSharedData(**params), sc.X, sc.y, sc.X_public)
    assert bad.verdict == "exceeds" and bad.loss > 4


def test_learners_without_a_noisy_argmin_release_are_refused():
    from oraclepriv.learners import PublicCoverEM

    X, y, Z = natural_halfspace(n=5, m=2)
    with pytest.raises(ValueError, match="does not release a noisy argmin"):
        verify_learner(PublicCoverEM(epsilon=1.0), X, y, Z)


# ------------------------------------------------------------------------------------------------ sampled verdicts
#: three 1-d records and two public points (thresholds): RRSPM at eps = 1 has loss 0.464 here (exact mode), well
#: inside its claim, so a sampled run can support the claim with enough draws
SMALL = (np.array([[0.1], [0.5], [0.9]]), np.array([0, 1, 1]), np.array([[0.3], [0.7]]))


def _in_range(result):
    """The intervals lie in the quantities' ranges and contain the point estimates."""
    assert 0.0 <= result.loss_low <= result.loss <= result.loss_high
    assert 0.0 <= result.delta_low <= result.delta_at_epsilon <= result.delta_high <= 1.0


@pytest.mark.parametrize("draws", [1, 10])
def test_sampled_run_with_too_few_draws_is_inconclusive_not_verified(draws):
    """A handful of draws bounds neither the loss nor delta(eps): the claim is neither refuted nor supported, so the
    verdict is inconclusive, never "verified" (a loss bound below 0 or a delta bound above 1 supports nothing)."""
    result = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="threshold"), *SMALL, mode="sampled", draws=draws)
    assert result.verdict == "inconclusive"
    assert result.loss_high > result.epsilon >= result.loss_low  # the interval contains the claim
    _in_range(result)
    row = result.to_dict()
    assert row["verdict"] == "inconclusive" and "more draws" in row["verdict_reason"]


@pytest.mark.parametrize("draws", [1, 3, 30, 1000])
@pytest.mark.parametrize("gaussian", [False, True])
def test_sampled_intervals_stay_in_range(draws, gaussian):
    """loss in [0, inf] (a maximum of absolute log ratios), delta(eps) in [0, 1] (a difference of probabilities),
    for Laplace and Gaussian noise, at every sample size (the loose ends are where a clip is needed)."""
    params = dict(epsilon=1.0, delta=0.01, noise="gaussian") if gaussian else dict(epsilon=1.0)
    result = verify_learner(
        RRSPM(hypothesis_class="threshold", **params), *SMALL, mode="sampled", draws=draws, seed=draws
    )
    _in_range(result)


def test_sampled_run_with_enough_draws_verifies_a_clearly_private_instance():
    exact = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="threshold"), *SMALL)
    sampled = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="threshold"), *SMALL, mode="sampled", draws=100_000)
    assert exact.loss == pytest.approx(0.4642, abs=1e-4)
    assert sampled.verdict == "verified" and sampled.loss_high <= sampled.epsilon
    assert sampled.loss_low <= exact.loss <= sampled.loss_high
    _in_range(sampled)


def test_sampled_mode_still_catches_broken_mechanisms():
    """Near-miss and gross controls in sampled mode: Laplace scale x 0.5 (true loss 2 eps), x 0.9 (1.111 eps) and a
    projection that reads a private record (loss inf) exceed with confidence; the Gaussian std x 0.35 exceeds its
    (eps, delta) claim, while the derived safe calibration verifies at the same number of draws."""
    sc = tight_construction(1)
    for learner, draws in (
        (laplace_scaled(0.5)(epsilon=1.0, hypothesis_class="threshold"), 20_000),
        (laplace_scaled(0.9)(epsilon=1.0, hypothesis_class="threshold"), 1_000_000),
        (RRSPMProjectionSeesPrivatePoint(epsilon=1.0, hypothesis_class="threshold"), 20_000),
    ):
        result = verify_learner(learner, sc.X, sc.y, sc.X_public, mode="sampled", draws=draws)
        assert result.verdict == "exceeds" and result.loss_low > 1.0, type(learner).__name__
        _in_range(result)
    from oraclepriv.verify.suite import _gaussian_scaled

    sc2 = tight_construction(2)
    gaussian = dict(epsilon=1.0, delta=1e-2, noise="gaussian", hypothesis_class=sc2.hypothesis_class)
    bad = verify_learner(_gaussian_scaled(0.35)(**gaussian), sc2.X, sc2.y, sc2.X_public, mode="sampled", draws=200_000)
    assert bad.verdict == "exceeds" and bad.delta_low > bad.delta
    good = verify_learner(RRSPM(**gaussian), sc2.X, sc2.y, sc2.X_public, mode="sampled", draws=200_000)
    assert good.verdict == "verified" and good.delta_high <= good.delta


def test_exact_mode_reads_a_loss_at_the_claim_within_its_error_as_verified():
    """Exact mode keeps its verdicts: on the tight construction the loss is eps to within float error, so the upper
    end is above eps, and the verdict is still "verified" (never "inconclusive")."""
    sc = tight_construction(2)
    result = verify_learner(RRSPM(epsilon=0.7, hypothesis_class="stump"), sc.X, sc.y, sc.X_public)
    assert result.loss_low <= 0.7 < result.loss_high and result.verdict == "verified"


@pytest.mark.parametrize(
    "mode, loss_low, loss_high, delta, delta_low, delta_high, verdict",
    [
        ("sampled", 1.2, 1.5, 0.0, 0.0, 0.0, "exceeds"),  # lower end above eps
        ("sampled", 0.5, 1.5, 0.0, 0.0, 0.0, "inconclusive"),  # the interval contains eps
        ("sampled", 0.0, math.inf, 0.0, 0.0, 0.0, "inconclusive"),
        ("sampled", 0.5, 0.9, 0.0, 0.0, 0.0, "verified"),  # upper end within eps
        ("exact", 0.5, 1.5, 0.0, 0.0, 0.0, "verified"),  # exact mode: not refuted = verified
        ("exact", 1.2, 1.5, 0.0, 0.0, 0.0, "exceeds"),
        # an (eps, delta) claim is judged on delta(eps), whatever the loss
        ("sampled", 2.0, 3.0, 0.01, 0.0, 0.005, "verified"),
        ("sampled", 0.1, 0.2, 0.01, 0.0, 0.02, "inconclusive"),
        ("sampled", 0.1, 0.2, 0.01, 0.02, 0.03, "exceeds"),
        ("exact", 0.1, 0.2, 0.01, 0.0, 0.02, "verified"),
    ],
)
def test_verdict_table(mode, loss_low, loss_high, delta, delta_low, delta_high, verdict):
    result = verify_result(mode, loss_low, loss_high, delta=delta, delta_low=delta_low, delta_high=delta_high)
    assert result.verdict == verdict and verdict in VERDICTS
    reason = result.verdict_reason
    assert ("more draws" in reason) == (verdict == "inconclusive")
    assert ("eps = 1" if delta == 0 else "delta = 0.01") in reason


# ------------------------------------------------------------------------------------------------ labelings and intervals
@pytest.mark.parametrize("hypothesis_class, d, m", [("threshold", 1, 9), ("stump", 2, 8), ("halfspace", 2, 6)])
def test_labelings_grown_point_by_point_are_every_realisable_one(hypothesis_class, d, m):
    """realisable_labelings adds the points one at a time; the reference asks the oracle about each of the 2^m
    labelings of all the points. Gridded points with repeats (conflicting labels on a repeat are unrealisable) and
    points in general position."""
    oracle = make_oracle(hypothesis_class)
    rng = np.random.default_rng(11)
    for points in (rng.integers(0, 3, (m, d)).astype(float), rng.normal(size=(m, d))):
        reference = []
        for k in range(2**m):
            labels = np.array([(k >> j) & 1 for j in range(m)], dtype=np.int8)
            result = oracle.solve(points, labels, np.ones(m))
            assert result.certified
            if result.objective <= result.tolerance:
                reference.append(labels)
        np.testing.assert_array_equal(realisable_labelings(points, oracle), np.array(reference))


def test_clopper_pearson_is_the_exact_binomial_interval():
    """The vectorised beta quantiles against scipy's binomtest (a root finder, to 2e-12), and, where the lower end
    is tiny (an outcome drawn once in 10^7, at a Bonferroni level), against its defining equation
    P(Bin(N, low) >= k) = alpha / 2, which the root finder misses."""
    from scipy import stats

    from oraclepriv.verify.verifier import clopper_pearson

    for total in (1, 7, 100, 10_000, 10_000_000):
        hits = np.unique(np.clip([0, 1, 2, total // 3, total // 2, total - 1, total], 0, total))
        for alpha in (0.01, 1e-6):
            low, high = clopper_pearson(hits, total, alpha)
            for k, lo, hi in zip(hits, low, high):
                ci = stats.binomtest(int(k), total).proportion_ci(1 - alpha, method="exact")
                assert abs(lo - ci.low) < 1e-11 and abs(hi - ci.high) < 1e-11, (k, total, alpha)
    low, _ = clopper_pearson(np.array([1, 2]), 10_000_000, 1e-6)
    for k, lo in zip((1, 2), low):
        assert stats.binom.sf(k - 1, 10_000_000, lo) == pytest.approx(0.5e-6, rel=1e-9)


# ------------------------------------------------------------------------------------------------ uncertified costs
def _uncertifying(status: str, reason: str | None, time_limit: float | None = None):
    """The enumerate backend, answering every c_D(L) question (records and points: weights 1 and n + 1) with
    ``status`` and no bound; realisability questions and the learner's own calls are answered as usual."""
    from oraclepriv.solvers.base import BackendAnswer

    from oraclepriv.backends import backend_class

    base = backend_class("enumerate")

    class Uncertifying(base):
        name = "uncertifying"

        def solve(self, problem):
            answer = super().solve(problem)
            weights = np.unique(problem.w)
            if len(weights) == 2 and weights[1] / weights[0] == int(weights[1] / weights[0]) > 1:
                details = {} if reason is None else {"error": reason}
                return BackendAnswer(answer.hypothesis, bound=-math.inf, status=status, details=details)
            return answer

    return Uncertifying(time_limit=time_limit) if time_limit is not None else Uncertifying


#: eight private records with one or two decimals and three public points on the decimal line through
#: (0.2, 0.3), (0.5, 0.4), (0.8, 0.5): the kind of toy instance a user types
DECIMAL = (
    np.array([[0.1, 0.2], [0.3, 0.7], [0.5, 0.45], [0.7, 0.1], [0.9, 0.8], [0.25, 0.3], [0.6, 0.6], [0.4, 0.9]]),
    np.array([0, 1, 1, 0, 1, 1, 0, 1]),
    np.array([[0.2, 0.3], [0.5, 0.4], [0.8, 0.5]]),
)


def test_an_uncertified_cost_names_the_labeling_the_points_the_status_and_the_ways_out():
    from oraclepriv.backends import registered_backend
    from oraclepriv.noisy_argmin.costs import VerificationError

    X, y, Z = DECIMAL
    reason = "the optimal labeling's margin is below float64 resolution"
    with registered_backend("uncertifying", _uncertifying("error", reason)):
        with pytest.raises(VerificationError) as caught:
            verify_learner(RRSPM(epsilon=1.0, hypothesis_class="halfspace"), X, y, Z, backend="uncertifying")
    message = str(caught.value)
    assert "\n" not in message
    for fragment in (
        "backend 'uncertifying' did not certify c_D(L) (the fewest private mistakes of a hypothesis labelling the "
        "points as L) for L = [",
        "status 'error'",
        f"the backend says: {reason}",
        "the 8 private records of D (rows 0 to 7, weight 1, coordinates not shown) with labels 0: y=0, 1: y=1, 2: y=1",
        "z0 = (0.2, 0.3) -> ",
        "z2 = (0.8, 0.5) -> ",
        "weight 9 each): z0",
        "another exact backend (enumerate, direction-bb, scip-bc",
        "near-degenerate decimal coordinates",
    ):
        assert fragment in message, (fragment, message)
    for private in ("0.45", "0.25", "0.9)"):  # coordinates of private records only
        assert private not in message


def test_an_uncertified_cost_under_a_time_limit_says_to_lift_it():
    from oraclepriv.noisy_argmin.costs import VerificationError

    X, y, Z = DECIMAL
    oracle = make_oracle("halfspace", backend=_uncertifying("time_limit", None, time_limit=0.5))
    labelings = np.array([[0, 1, 0]], dtype=np.int8)
    with pytest.raises(VerificationError) as caught:
        labeling_costs(X, y, Z, labelings, oracle, dataset="the neighbour of D whose record 2 has its label flipped")
    message = str(caught.value)
    assert "as L) for L = [0, 1, 0]" in message and "status 'time_limit'" in message
    assert "z1 = (0.5, 0.4) -> 1" in message and "the neighbour of D whose record 2 has its label flipped" in message
    assert "give the backend no time limit (it had 0.5 s) or a larger one" in message


def test_the_command_line_prints_an_uncertified_cost_as_one_line(tmp_path):
    from oraclepriv.backends import registered_backend

    X, y, Z = DECIMAL
    write_csv_problem(tmp_path / "private.csv", X, y)
    write_csv_problem(tmp_path / "public.csv", Z, None)
    args = ["verify", "instance", str(tmp_path / "private.csv"), "--public", str(tmp_path / "public.csv")]
    args += ["--algorithm", "rrspm", "--hypothesis-class", "halfspace", "--backend", "uncertifying"]
    with registered_backend("uncertifying", _uncertifying("error", None)):
        result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    assert lines[0].startswith("error: backend 'uncertifying' did not certify c_D(L) (the fewest")
    assert "--backend on the command line" in lines[0] and "near-degenerate" in lines[0]
