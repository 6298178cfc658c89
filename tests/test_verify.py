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
    """A handful of draws bounds neither the loss nor delta(eps): the claim is neither refuted nor supported. It
    used to read "verified" with loss_low < 0 and delta_high ~ 3."""
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
