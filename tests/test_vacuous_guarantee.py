"""No vacuous or unstated guarantee, and near-ties that cost nothing where the comparison is exact.

* A fit whose total delta (design + numerical) is >= 1/n is refused before any oracle call, naming the
  levers; the threshold is exactly 1/n (the largest m below it fits, the next one is refused). Asked for
  explicitly (``allow_weak_guarantee=True``, ``learn --allow-weak-guarantee``) it releases with a
  PrivacyLeakWarning and a guarantee that says it is vacuous. ``learn`` on n = 30 private rows and 20,000
  public rows never prints a (1, 1)-DP guarantee as a success.
* Thresholds and stumps are compared exactly (oraclepriv.exact_comparison): every certified answer the
  learner uses is an exact minimiser, checked against a brute force in rational arithmetic on instances
  whose weights span many scales; the control is an instance on which the float sweep certifies a
  near-minimiser (so the check can fail). Their numerical delta is 0, also at n = 50,000 and m = 8.
"""

from __future__ import annotations

import itertools
import json
import warnings
from fractions import Fraction

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv import make_oracle
from oraclepriv.cli import app
from oraclepriv.hypotheses import Stump, Threshold
from oraclepriv.io import write_csv_problem
from oraclepriv.learners import RRSPM, Perturbation
from oraclepriv.ledger import Ledger
from oraclepriv.near_ties import gaussian_near_tie_probability, laplace_near_tie_probability, numerical_delta
from oraclepriv.public_data import PublicData
from oraclepriv.release import PrivacyLeakWarning

N = 30
RNG = np.random.default_rng(0)
X30 = RNG.normal(size=(N, 2))  # halfspaces in the plane: no exhaustive backend compares them exactly
Y30 = (X30[:, 0] > 0).astype(int)
Z20K = PublicData(RNG.normal(size=(20_000, 2)))


def _total_delta(learner, m: int) -> float:
    """delta + numerical delta of a halfspace fit on N records and m public points (docs/release-boundary.md)."""
    if isinstance(learner, RRSPM):  # Laplace weights of scale 2m/eps
        near_tie = laplace_near_tie_probability(m, 2.0 * m / learner.epsilon, float(N))  # rrspm.py
    else:  # J calls with Gaussian weights of std 2 n eta / sqrt(m)
        near_tie = learner.J * gaussian_near_tie_probability(m, 2.0 * N * learner.eta / np.sqrt(m), float(N))
    return learner.delta + numerical_delta(learner.epsilon, near_tie)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: RRSPM(epsilon=1.0, hypothesis_class="halfspace", random_state=0, **kw),
        lambda **kw: Perturbation(epsilon=1.0, delta=1e-3, J=2, hypothesis_class="halfspace", random_state=0, **kw),
    ],
    ids=["rrspm", "perturbation"],
)
def test_a_vacuous_fit_is_refused_before_any_oracle_call(make):
    assert _total_delta(make(), 20_000) >= 1.0 / N  # the numerical delta grows with m: here it is vacuous
    with Ledger() as ledger, pytest.raises(ValueError, match="vacuous") as info:
        make().fit(X30, Y30, X_public=Z20K)
    assert len(ledger) == 0  # refused before the work
    message = str(info.value)
    for lever in (
        "vacuous",
        "1/n = 0.0333",
        "m=20000",
        "public_size",
        "'threshold' or 'stump'",
        "allow_weak_guarantee",
    ):
        assert lever in message, lever
    from oraclepriv.near_ties import VacuousGuaranteeError

    assert isinstance(info.value, VacuousGuaranteeError) and info.value.n == N and info.value.m == 20_000


def test_the_refusal_starts_exactly_at_one_over_n():
    """The largest m whose total delta is below 1/n fits without a warning; m + 1 is refused."""
    learner = RRSPM(epsilon=1.0, hypothesis_class="halfspace", random_state=0)
    low, high = 1, 20_000
    while high - low > 1:  # the total delta increases with m
        mid = (low + high) // 2
        low, high = (mid, high) if _total_delta(learner, mid) < 1.0 / N else (low, mid)
    assert _total_delta(learner, low) < 1.0 / N <= _total_delta(learner, high)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = RRSPM(epsilon=1.0, hypothesis_class="halfspace", m=low, random_state=0).fit(X30, Y30, X_public=Z20K)
    assert "vacuous" not in fitted.privacy_ and not fitted.privacy_["guarantee"].startswith("VACUOUS")
    assert fitted.privacy_["numerical_delta"] < 1.0 / N
    with pytest.raises(ValueError, match="vacuous"):
        RRSPM(epsilon=1.0, hypothesis_class="halfspace", m=high, random_state=0).fit(X30, Y30, X_public=Z20K)


def test_asked_for_explicitly_a_vacuous_fit_releases_with_a_warning_and_says_so():
    """At epsilon = 30 the factor 1 + e^eps makes even 5 public points vacuous (and the fit quick)."""
    learner = RRSPM(epsilon=30.0, hypothesis_class="halfspace", m=5, allow_weak_guarantee=True, random_state=0)
    assert _total_delta(learner, 5) >= 1.0 / N
    with pytest.warns(PrivacyLeakWarning, match="vacuous"):
        learner.fit(X30, Y30, X_public=Z20K)
    privacy = learner.privacy_
    assert privacy["vacuous"] is True and privacy["numerical_delta"] == 1.0
    assert privacy["guarantee"].startswith("VACUOUS: total delta 1 >= 1/n = 0.0333")
    assert "allow_weak_guarantee" in learner.get_params()
    with pytest.raises(ValueError, match="vacuous"):  # the control: the same fit, not asked for
        RRSPM(epsilon=30.0, hypothesis_class="halfspace", m=5, random_state=0).fit(X30, Y30, X_public=Z20K)


def _learn(tmp_path, *args: str):
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, X30, Y30)
    write_csv_problem(public, Z20K.points, None)
    return CliRunner().invoke(app, ["learn", str(private), "--public", str(public), "--algorithm", "rrspm", *args])


def test_learn_on_30_private_and_20000_public_rows_prints_no_vacuous_guarantee_as_a_success(tmp_path):
    default = _learn(tmp_path, "--epsilon", "1", "--json")  # the default public size stays below a vacuous delta
    assert default.exit_code == 0, default.output
    privacy = json.loads(default.stdout)["privacy"]
    assert privacy["delta"] + privacy["numerical_delta"] < 1.0 / N and "vacuous" not in privacy
    every = _learn(tmp_path, "--epsilon", "1", "--public-size", "all")
    assert every.exit_code == 2 and "Traceback" not in every.output
    assert "(1, 1)-DP" not in every.stdout and "vacuous" in every.stderr
    for flag in ("--public-size", "--hypothesis-class threshold or stump", "--allow-weak-guarantee"):
        assert flag in every.stderr, flag
    # asked for explicitly it releases, and says so (epsilon 30 and 5 public points: vacuous, and a quick fit)
    weak_args = ("--public-size", "5", "--public-seed", "1", "--epsilon", "30", "--allow-weak-guarantee")
    with warnings.catch_warnings():
        warnings.simplefilter("always", PrivacyLeakWarning)  # the test suite ignores it; the command line shows it
        weak = _learn(tmp_path, *weak_args, "--json")
    assert weak.exit_code == 0, weak.output
    privacy = json.loads(weak.stdout)["privacy"]
    assert privacy["vacuous"] is True and privacy["guarantee"].startswith("VACUOUS")
    assert "its guarantee is vacuous (PrivacyLeakWarning)" in weak.stderr
    text = _learn(tmp_path, *weak_args)
    assert "caveat: NO meaningful privacy guarantee" in text.stdout


def test_the_flag_is_refused_where_there_is_no_numerical_delta(tmp_path):
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, X30, Y30)
    write_csv_problem(public, Z20K.points[:10], None)
    result = CliRunner().invoke(
        app,
        ["learn", str(private), "--public", str(public), "--algorithm", "subsample", "--teachers", "4"]
        + ["--epsilon", "1", "--allow-weak-guarantee"],
    )
    assert result.exit_code == 2 and "--allow-weak-guarantee applies to --algorithm rrspm and perturbation" in (
        result.stderr
    )


# ------------------------------------------------------------------------------ exact comparison
#: instances on which the float prefix sums round 1e16 + 1 to 1e16, so the exhaustive backend certifies a labeling
#: that costs exactly 1 more than the optimum (within the tolerance, 2e7): for thresholds the all-ones threshold
#: (1e16 + 1; the threshold at 2.5 costs 1e16)
NEAR_TIES = {
    "threshold": (np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([1, 0, 0, 1]), np.array([1e16, 1.0, 1e16, 0.5])),
    "halfspace": (np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 1, 0]), np.array([3.0, 2.0, 1e16, 2.0])),
}


def _brute_force(hypothesis_class: str, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> Fraction:
    """The exact minimum over every threshold / stump cut, in rational arithmetic (halfspaces on one feature
    label the points as the stumps on that feature do)."""
    values = np.unique(X)
    cuts = [-np.inf, np.inf, *((values[:-1] + values[1:]) / 2)]
    signs = (1,) if hypothesis_class == "threshold" else (1, -1)
    best = None
    for feature, cut, sign in itertools.product(range(X.shape[1]), cuts, signs):
        h = Threshold(cut) if hypothesis_class == "threshold" else Stump(feature, cut, sign)
        cost = sum((Fraction(float(v)) for v, p, t in zip(w, h.predict(X), y, strict=True) if p != t), Fraction(0))
        best = cost if best is None else min(best, cost)
    return best


def _exact_value(cost_and_exponent: tuple[int, int]) -> Fraction:
    cost, e0 = cost_and_exponent
    return Fraction(cost) * Fraction(2) ** e0


@pytest.mark.parametrize("hypothesis_class, backend", [("threshold", "sweep"), ("halfspace", "enumerate")])
def test_the_float_sweep_certifies_a_near_minimiser_and_exact_comparison_replaces_it(hypothesis_class, backend):
    from oraclepriv.exact_comparison import ExactComparisonOracle, exact_cost

    X, y, w = NEAR_TIES[hypothesis_class]
    plain = make_oracle(hypothesis_class, backend=backend).solve(X, y, w)
    exact = _brute_force(hypothesis_class, X, y, w)
    assert plain.certified and _exact_value(exact_cost(plain.hypothesis, X, y, w)) == exact + 1  # the control
    compared = ExactComparisonOracle(make_oracle(hypothesis_class, backend=backend)).solve(X, y, w)
    assert compared.certified and _exact_value(exact_cost(compared.hypothesis, X, y, w)) == exact
    assert compared.details["exact_comparison"].startswith("replaced")
    assert compared.hypothesis.hypothesis_class == hypothesis_class


@pytest.mark.parametrize("hypothesis_class", ["threshold", "stump", "halfspace"])
def test_exactly_compared_answers_are_exact_minimisers_on_weights_of_many_scales(hypothesis_class):
    from oraclepriv.exact_comparison import ExactComparisonOracle, exact_cost, exact_minimiser

    rng = np.random.default_rng(11)
    scales = np.array([1e-20, 1e-8, 1.0, 3.0, 1e8, 1e16, 1e20])
    for _ in range(150):
        n, d = int(rng.integers(1, 9)), 1 if hypothesis_class != "stump" else int(rng.integers(1, 3))
        X = rng.integers(0, 4, size=(n, d)).astype(float)
        y = rng.integers(0, 2, size=n)
        w = rng.choice(scales, size=n) * rng.choice([-1.0, 1.0], size=n) * rng.uniform(0.5, 2.0, size=n)
        optimum = exact_minimiser(hypothesis_class, X, y, w)
        assert _exact_value((optimum.cost, optimum.e0)) == _brute_force(hypothesis_class, X, y, w)
        backend = "enumerate" if hypothesis_class == "halfspace" else "sweep"
        result = ExactComparisonOracle(make_oracle(hypothesis_class, backend=backend)).solve(X, y, w)
        assert result.certified and result.hypothesis.hypothesis_class == hypothesis_class
        assert _exact_value(exact_cost(result.hypothesis, X, y, w)) == _brute_force(hypothesis_class, X, y, w)


def test_the_float_filter_and_the_integer_pass_both_decide_exactly():
    """Continuous weights: the filter's window is one candidate. Unit weights on alternating labels: every
    other cut ties exactly, the window overflows and the integer pass decides. Both against the brute force."""
    from oraclepriv.exact_comparison import ExactComparisonOracle, exact_cost

    rng = np.random.default_rng(2)
    X = np.arange(40.0)[:, None]
    cases = {
        "float filter": (rng.integers(0, 2, 40), rng.normal(size=40)),
        "integer arithmetic": (np.arange(40) % 2, np.ones(40)),
    }
    for how, (y, w) in cases.items():
        result = ExactComparisonOracle(make_oracle("stump", backend="sweep")).solve(X, y, w)
        assert how in result.details["exact_comparison"], result.details["exact_comparison"]
        assert _exact_value(exact_cost(result.hypothesis, X, y, w)) == _brute_force("stump", X, y, w)


def test_the_learners_compare_exactly_where_the_backend_is_exhaustive():
    from oraclepriv.exact_comparison import ExactComparisonOracle, compared_exactly

    for hypothesis_class, backend, wrapped in (
        ("threshold", None, True),
        ("stump", "sweep", True),
        ("halfspace", None, True),  # its calls on one feature (enumerate) are compared, others passed through
        ("stump", "highs", False),  # a MIP model: its bound is trusted up to the tolerance
    ):
        for mode in ("raise", "fallback"):
            learner = RRSPM(hypothesis_class=hypothesis_class, backend=backend, on_uncertified=mode)
            assert isinstance(learner._oracle(), ExactComparisonOracle) == wrapped, (hypothesis_class, backend)
    assert compared_exactly("halfspace", 1) and not compared_exactly("halfspace", 2)
    assert not compared_exactly("threshold", 1, "quantile-heuristic-claiming")
    # numerical delta 0 exactly where the answers are compared exactly
    X1 = RNG.normal(size=(40, 1))
    y1 = (X1[:, 0] > 0).astype(int)
    Z1 = PublicData(RNG.normal(size=(6, 1)))
    for hypothesis_class, backend, X, Z, zero in (
        ("threshold", None, X1, Z1, True),
        ("halfspace", None, X1, Z1, True),
        ("halfspace", None, X30, PublicData(Z20K.points[:6]), False),
        ("stump", "highs", X1, Z1, False),
    ):
        privacy = (
            RRSPM(hypothesis_class=hypothesis_class, backend=backend, random_state=0)
            .fit(X, y1 if X is X1 else Y30, X_public=Z)
            .privacy_
        )
        assert (privacy["numerical_delta"] == 0.0) == zero, (hypothesis_class, backend)
        assert ("comparison" in privacy) == zero


def test_no_numerical_delta_for_thresholds_at_n_50000_and_m_8():
    rng = np.random.default_rng(4)
    X = rng.random((50_000, 1))
    y = ((X[:, 0] > 0.4) ^ (rng.random(50_000) < 0.1)).astype(int)
    Z = PublicData(np.linspace(0.05, 0.95, 8)[:, None])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = RRSPM(epsilon=1.0, hypothesis_class="threshold").fit(X, y, X_public=Z)
    privacy = fitted.privacy_
    assert privacy["numerical_delta"] == 0.0 and privacy["near_tie_probability"] == 0.0
    assert privacy["guarantee"].startswith("pure 1-DP") and privacy["comparison"].startswith("exact")
    # what the tolerance would have cost without the exact comparison: 4.7/n, the vacuous side of 1/n
    assert numerical_delta(1.0, laplace_near_tie_probability(8, 16.0, 50_000.0)) * 50_000 == pytest.approx(4.7, abs=0.1)
