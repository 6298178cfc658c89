"""How many public points a fit uses: ``public_size`` on the learners and ``learn --public-size``.

The default's formulas are checked against their closed forms; the subsample against the points the
algorithm actually saw; the public randomness against the noise's (neither moves the other); and the
refusals name the argument and its value.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv import PublicData
from oraclepriv.cli import app
from oraclepriv.io import write_csv_problem
from oraclepriv.learners import RRSPM, Perturbation, PublicCoverEM, Regularization
from oraclepriv.learners._public_size import check_public_size, public_generator, vc_dimension
from oraclepriv.learners.perturbation import perturbation_public_size
from oraclepriv.learners.public_cover_em import cover_em_public_size
from oraclepriv.learners.regularization import regularization_public_size
from oraclepriv.learners.rrspm import log_projection_bound, rrspm_public_size
from oraclepriv.near_ties import numerical_delta

runner = CliRunner()


def _data(n: int = 200, m: int = 60, d: int = 1, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, d))
    y = (X[:, 0] >= 0.1).astype(int) ^ (rng.random(n) < 0.1)
    return X, y.astype(int), rng.uniform(-1.0, 1.0, (m, d))


# ------------------------------------------------------------------ the default's formulas


def _stump_vc_brute_force(k: int) -> int:
    """The largest number of points on a grid that stumps on k features (both signs) shatter, by brute force."""
    from itertools import combinations, product

    grid = np.array(list(product(range(4), repeat=k)), dtype=float)
    best = 0
    for size in range(1, 6):
        for points in combinations(range(len(grid)), size):
            P = grid[list(points)]
            labelings = set()
            for j in range(k):
                for cut in np.arange(-0.5, 4.0, 1.0):
                    above = tuple((P[:, j] > cut).astype(int))
                    labelings.add(above)
                    labelings.add(tuple(1 - np.array(above)))
            if len(labelings) == 2**size:
                best = size
                break
    return best


def test_vc_dimension_is_an_upper_bound_and_exact_where_known():
    assert vc_dimension("threshold", 1) == 1
    assert [vc_dimension("halfspace", k) for k in (1, 2, 4)] == [2, 3, 5]
    assert vc_dimension("linear", 3) == 3
    for k in (1, 2):
        assert vc_dimension("stump", k) >= _stump_vc_brute_force(k)
    with pytest.raises(ValueError, match="hypothesis_class"):
        vc_dimension("tree", 2)


@pytest.mark.parametrize("n,vc,epsilon", [(30, 1, 1.0), (300, 5, 1.0), (20000, 1, 0.5), (100000, 4, 2.0), (50, 3, 0.1)])
def test_rrspm_default_is_the_closed_form_for_laplace_weights(n, vc, epsilon):
    """m^2/(eps n) <= sqrt(d/m)  <=>  m^(5/2) <= eps n sqrt(d): the largest such integer m."""
    m = rrspm_public_size(n, vc, lambda m: 2.0 * m / epsilon)
    bound = epsilon * n * math.sqrt(vc)
    assert m == max(1, math.floor(bound**0.4 + 1e-9))
    assert m == 1 or m**2.5 <= bound * (1 + 1e-12)
    assert (m + 1) ** 2.5 > bound


def _theory(clf, n: int, n_features: int) -> int:
    """The learner's default as its fit computes it (after validation has set epsilon_ and delta_)."""
    clf.epsilon_, clf.delta_ = float(clf.epsilon), float(clf.delta)
    return clf.theory_public_size(n, n_features)


def test_rrspm_default_follows_the_learners_noise_law():
    laplace = [_theory(RRSPM(epsilon=e), n, 2) for e, n in [(1, 300), (1, 3000), (2, 3000)]]
    assert laplace[0] < laplace[1] < laplace[2]
    assert laplace[0] == math.floor((300 * math.sqrt(3)) ** 0.4)
    gaussian = _theory(RRSPM(epsilon=1, delta=1e-6, noise="gaussian"), 3000, 2)
    std = RRSPM(epsilon=1, delta=1e-6, noise="gaussian")
    std.epsilon_, std.delta_ = 1.0, 1e-6
    assert gaussian == rrspm_public_size(3000, 3, lambda m: std.noise_law(m, 2)[1]) != laplace[1]


def test_perturbation_and_regularization_defaults_are_theorem_6_and_7_at_the_private_resolution():
    # Theorem 6/7: m = lam^2 max(d, ln(1/beta)) / alpha^2 with alpha^2 = d / n, lam = 1/2, beta = 0.05
    for n, vc in [(300, 5), (1000, 2), (80, 1)]:
        expected = math.ceil(0.25 * max(vc, math.log(20.0)) * n / vc)
        assert perturbation_public_size(n, vc) == expected
    assert perturbation_public_size(3, 5) == math.ceil(0.25 * 5)  # alpha capped at 1 when n < d
    # Regularization with Laplace noise: also at most the largest m with gamma(m) = m rho / eps <= 1
    rho, eps = 0.2, 1.0
    assert regularization_public_size(1000, 3, lambda m: m * rho / eps, "laplace") == 5
    assert regularization_public_size(1000, 3, lambda m: m * rho / eps, "gaussian") == math.ceil(
        0.25 * math.log(20.0) * 1000 / 3
    )


def test_cover_em_default_balances_the_projection_against_the_mechanisms_slack():
    n, eps = 300, 1.0
    m = cover_em_public_size(n, "stump", 2, eps, 1.0)

    def slack(k):
        return 2.0 * log_projection_bound("stump", k, 2) / (eps * n)

    vc = vc_dimension("stump", 2)
    assert slack(m) <= math.sqrt(vc / m) and slack(m + 1) > math.sqrt(vc / (m + 1))
    clf = PublicCoverEM(epsilon=eps, hypothesis_class="halfspace", max_candidates=10_000)
    clf.epsilon_ = eps
    assert cover_em_public_size(n, "halfspace", 2, eps, 1.0) > 50
    assert clf.theory_public_size(n, 2) == 50  # C(50, 2) 2^3 + 2 = 9802 <= 10^4 < C(51, 2) 2^3 + 2


# ------------------------------------------------------------------ the subsample


def test_public_size_m_fits_exactly_the_published_subsample():
    X, y, Z = _data()
    sub = RRSPM(hypothesis_class="threshold", public_size=12, public_random_state=5, random_state=3).fit(
        X, y, PublicData(Z)
    )
    record = sub.privacy_
    chosen = np.array(record["public_subsample"])
    assert record["m"] == 12 and record["public_points_given"] == 60 and record["public_size_rule"] == "given"
    assert len(set(chosen.tolist())) == 12 and np.all(np.diff(chosen) > 0) and chosen.max() < 60
    assert sub.n_public_ == 12
    whole = RRSPM(hypothesis_class="threshold", random_state=3).fit(X, y, PublicData(Z[chosen]))
    assert whole.hypothesis_ == sub.hypothesis_
    assert np.array_equal(whole.noisy_points_, sub.noisy_points_)
    assert json.loads(whole.release_.to_json())["hypothesis"] == json.loads(sub.release_.to_json())["hypothesis"]


def test_the_subsample_and_the_noise_come_from_separate_generators():
    """The public seed moves the subsample and not the noise; the noise's seed moves the noise and not the subsample."""
    X, y, Z = _data()

    def fit(random_state, public_random_state):
        return RRSPM(
            hypothesis_class="threshold",
            public_size=15,
            random_state=random_state,
            public_random_state=public_random_state,
        ).fit(X, y, PublicData(Z))

    a, b, c = fit(1, 10), fit(1, 11), fit(2, 10)
    assert a.privacy_["public_subsample"] != b.privacy_["public_subsample"]
    assert np.array_equal(a.public_labels_, b.public_labels_)  # the noise's first draws: untouched by the public seed
    assert a.privacy_["public_subsample"] == c.privacy_["public_subsample"]
    assert not np.array_equal(a.public_labels_, c.public_labels_)
    # the same seeds give the same fit
    assert fit(1, 10).privacy_ == a.privacy_ and fit(1, 10).hypothesis_ == a.hypothesis_


def test_the_subsample_is_uniform():
    """Each of 10 points is in a size-3 subsample with probability 3/10 (binomial tolerance, 2000 draws)."""
    X, y, Z = _data(n=20, m=10)
    clf = PublicCoverEM(hypothesis_class="threshold", public_size=3, random_state=0)
    counts = np.zeros(10)
    rng = np.random.default_rng(0)
    draws = 2000
    for _ in range(draws):
        clf.public_random_state = rng
        counts[clf.fit(X, y, PublicData(Z)).privacy_["public_subsample"]] += 1
    expected = draws * 0.3
    assert np.all(np.abs(counts - expected) < 5 * math.sqrt(draws * 0.3 * 0.7))


def test_the_default_public_seed_comes_from_the_public_points_only():
    """public_random_state=None: the subsample is a function of the public points (a fit is reproducible from
    random_state and the data), and different public points give a different subsample."""
    X, y, Z = _data()

    def subsample(Z, y=y, random_state=0):
        clf = RRSPM(hypothesis_class="threshold", public_size=10, random_state=random_state)
        return clf.fit(X, y, PublicData(Z)).privacy_["public_subsample"]

    first = subsample(Z)
    assert subsample(Z) == first == subsample(Z, y=1 - y, random_state=5)  # neither labels nor noise seed move it
    assert subsample(Z + 1e-9) != first


def test_public_size_none_uses_every_point_in_order_and_records_nothing_new():
    X, y, Z = _data()
    clf = RRSPM(hypothesis_class="threshold", random_state=0).fit(X, y, PublicData(Z))
    assert clf.privacy_["m"] == 60 and "public_subsample" not in clf.privacy_
    assert np.array_equal(clf.noisy_points_, Z)


def test_auto_uses_the_theory_and_all_points_when_fewer_are_given():
    X, y, Z = _data(n=300, m=200)
    clf = RRSPM(hypothesis_class="threshold", public_size="auto", public_random_state=1, random_state=0)
    record = clf.fit(X, y, PublicData(Z)).privacy_
    assert record["m"] == math.floor(300**0.4) == 9
    assert record["public_size_rule"].startswith("auto: RRSPM")
    few = clf.fit(X, y, PublicData(Z[:5])).privacy_
    assert few["m"] == 5 and few["public_subsample"] == [0, 1, 2, 3, 4]


def test_auto_keeps_the_total_delta_below_one_over_n():
    """Where the theory's m would make the guarantee vacuous, auto takes the largest m that does not."""
    clf = Perturbation(epsilon=1.0, delta=1e-6, hypothesis_class="halfspace", public_size="auto")
    n, k = 3000, 2
    theory = _theory(clf, n, k)
    m = clf._auto_public_size(n, k, available=10**6)
    assert m < theory
    assert clf._total_delta_at(m, n, k) < 1.0 / n <= clf._total_delta_at(m + 1, n, k)
    # the same total as the release would state
    near = clf._near_tie_probability_at(m, n, k)
    assert clf._total_delta_at(m, n, k) == pytest.approx(1e-6 + numerical_delta(1.0, near))


def test_auto_avoids_the_vacuous_guarantee_that_all_the_points_give():
    """n = 30 private rows and 20,000 public ones: every point gives total delta >= 1/n (refused); auto does not."""
    X, y, _ = _data(n=30, d=2)
    Z = np.random.default_rng(9).uniform(-1, 1, (20_000, 2))
    auto = RRSPM(public_size="auto", public_random_state=1, random_state=0).fit(X, y, PublicData(Z))
    record = auto.privacy_
    assert record["delta"] + record["numerical_delta"] < 1.0 / 30 and not record.get("vacuous", False)
    assert record["m"] == math.floor((30 * math.sqrt(3)) ** 0.4)
    with pytest.raises(ValueError, match="public_size"):
        RRSPM(random_state=0).fit(X, y, PublicData(Z))


@pytest.mark.parametrize("cls", [RRSPM, Perturbation, PublicCoverEM])
def test_every_learner_given_public_points_takes_public_size(cls):
    X, y, Z = _data(n=60, m=30)
    clf = cls(hypothesis_class="threshold", public_size=7, public_random_state=2, random_state=0)
    assert {"public_size", "public_random_state"} <= set(clf.get_params())
    record = clf.fit(X, y, PublicData(Z)).privacy_
    assert len(record["public_subsample"]) == 7 and clf.n_public_ == 7


def test_regularization_takes_public_size():
    rng = np.random.default_rng(4)
    X = rng.uniform(-0.5, 0.5, (80, 2))
    y = (X[:, 0] > 0).astype(int)
    Z = rng.uniform(-0.5, 0.5, (40, 2))
    clf = Regularization(noise="laplace", delta=0.0, public_size="auto", public_random_state=3, random_state=0)
    record = clf.fit(X, y, PublicData(Z)).privacy_
    assert record["m"] == len(record["public_subsample"]) == clf.public_targets_.shape[0]
    assert record["m"] == clf.theory_public_size(80, 2) <= 40


def test_public_cover_ems_max_public_draws_with_the_public_generator():
    """max_public is a cap drawn like public_size: the mechanism's seed does not move it."""
    X, y, Z = _data(n=50, m=40)
    a = PublicCoverEM(hypothesis_class="threshold", max_public=10, public_random_state=4, random_state=0).fit(
        X, y, PublicData(Z)
    )
    b = PublicCoverEM(hypothesis_class="threshold", max_public=10, public_random_state=4, random_state=1).fit(
        X, y, PublicData(Z)
    )
    assert a.privacy_["public_subsample"] == b.privacy_["public_subsample"] and a.cover_.n_public == 10
    assert "max_public=10" in a.privacy_["public_size_rule"]
    capped = PublicCoverEM(hypothesis_class="threshold", public_size=20, max_public=10, random_state=0)
    assert capped.fit(X, y, PublicData(Z)).cover_.n_public == 10
    with pytest.raises(ValueError, match="public_size"):
        PublicCoverEM(public_size=5).output_log_probabilities(X, y, PublicData(Z))


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize("value", [0, -3, True, 2.5, "big", "AUTO", [3]])
def test_bad_public_size_is_named(value):
    with pytest.raises(ValueError, match="public_size"):
        check_public_size(value)
    X, y, Z = _data()
    with pytest.raises(ValueError, match="public_size"):
        RRSPM(hypothesis_class="threshold", public_size=value).fit(X, y, PublicData(Z))


def test_public_size_above_the_points_given_is_refused():
    X, y, Z = _data()
    with pytest.raises(ValueError, match=r"public_size=61 but X_public has only 60"):
        RRSPM(hypothesis_class="threshold", public_size=61).fit(X, y, PublicData(Z))


def test_m_and_public_size_together_are_refused():
    X, y, Z = _data()
    with pytest.raises(ValueError, match="m=5.*public_size=10"):
        RRSPM(hypothesis_class="threshold", m=5, public_size=10).fit(X, y, PublicData(Z))


def test_the_noise_generator_or_seed_is_refused_as_the_public_one():
    X, y, Z = _data()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="same Generator"):
        public_generator(rng, rng, Z)
    with pytest.raises(ValueError, match="public_random_state=7 is random_state's seed"):
        public_generator(7, 7, Z)
    for bad in (-1, True, "seed", 1.5):
        with pytest.raises(ValueError, match="public_random_state"):
            public_generator(bad, None, Z)
    assert isinstance(public_generator(np.random.SeedSequence(3), 3, Z), np.random.Generator)
    with pytest.raises(ValueError, match="public_random_state"):
        RRSPM(hypothesis_class="threshold", public_size=5, public_random_state=4, random_state=4).fit(
            X, y, PublicData(Z)
        )


# ------------------------------------------------------------------ the command line


@pytest.fixture
def files(tmp_path):
    X, y, Z = _data(n=300, m=200)
    write_csv_problem(tmp_path / "private.csv", X, y)
    write_csv_problem(tmp_path / "public.csv", Z, None)
    return str(tmp_path / "private.csv"), str(tmp_path / "public.csv")


def _learn(files, *extra):
    private, public = files
    args = ["learn", private, "--public", public, "--algorithm", "rrspm", "--epsilon", "1"]
    return runner.invoke(app, [*args, "--hypothesis-class", "threshold", "--seed", "0", *extra])


def test_learn_defaults_to_the_theorys_public_size(files):
    result = _learn(files, "--json", "--public-seed", "1")
    assert result.exit_code == 0, result.output
    privacy = json.loads(result.stdout)["privacy"]
    assert privacy["m"] == 9 == len(privacy["public_subsample"]) and privacy["public_points_given"] == 200
    text = _learn(files)
    assert text.exit_code == 0 and "public points: 9 of the 200 given (auto: RRSPM" in text.stdout


def test_learn_with_a_seed_alone_is_reproducible(files):
    """Without --public-seed the subsample's seed comes from the public file: --seed reproduces the release."""
    first, second = _learn(files, "--json"), _learn(files, "--json")
    assert first.exit_code == 0 and first.stdout == second.stdout
    assert len(json.loads(first.stdout)["privacy"]["public_subsample"]) == 9


def test_learn_public_size_all_and_a_number(files):
    everything = _learn(files, "--json", "--public-size", "all")
    assert json.loads(everything.stdout)["privacy"]["m"] == 200
    some = json.loads(_learn(files, "--json", "--public-size", "25", "--public-seed", "2").stdout)["privacy"]
    assert some["m"] == 25 and some["public_size_rule"] == "given"


@pytest.mark.parametrize(
    "extra,fragment",
    [
        (("--public-size", "0"), "--public-size must be auto, all or a positive integer; got '0'"),
        (("--public-size", "lots"), "--public-size must be auto, all or a positive integer; got 'lots'"),
        (("--public-size", "201"), "--public-size 201 is more than the 200 rows of --public"),
        (("--public-seed", "0"), "--public-seed 0 equals --seed"),
        (("--public-seed", "-1"), "--public-seed must be >= 0"),
    ],
)
def test_learn_refuses_bad_public_size_options_by_their_flags(files, extra, fragment):
    result = _learn(files, *extra)
    assert result.exit_code != 0 and fragment in result.output and "Traceback" not in result.output


def test_learn_public_size_does_not_apply_to_subsample(files):
    private, public = files
    result = runner.invoke(
        app,
        ["learn", private, "--public", public, "--algorithm", "subsample", "--epsilon", "1", "--public-size", "5"],
    )
    assert result.exit_code != 0 and "--public-size 5 does not apply" in result.output


def test_a_learner_without_a_theory_rule_is_told_so_instead_of_getting_a_default():
    from oraclepriv.learners._public_size import PublicSizeMixin

    class NoRule(PublicSizeMixin):
        pass

    with pytest.raises(TypeError, match="NoRule takes public_size but defines no theory_public_size"):
        NoRule().theory_public_size(100, 2)
