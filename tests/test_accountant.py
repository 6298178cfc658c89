"""PrivacyAccountant: the composition theorems against their closed forms (computed here independently), the
budget and its refusals, the JSON ledger, the learners' hook, and ``learn --budget``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from oraclepriv import PublicData
from oraclepriv.accountant import (
    ADVANCED,
    BASIC,
    KOV_HETEROGENEOUS,
    KOV_OPTIMAL,
    BudgetExceededError,
    PrivacyAccountant,
    Spend,
    advanced_composition,
    basic_composition,
    compose,
    kov_composition,
    optimal_homogeneous_composition,
)
from oraclepriv.cli import app
from oraclepriv.io import write_csv_problem
from oraclepriv.learners import RRSPM, PublicCoverEM
from oraclepriv.release import NotFittedError

runner = CliRunner()


@pytest.fixture(autouse=True)
def fresh_default():
    """Each test charges a default accountant of its own (the process-wide one is restored after)."""
    previous = PrivacyAccountant.set_default(PrivacyAccountant())
    yield
    PrivacyAccountant.set_default(previous)


# ---------------------------------------------------------------------- closed forms, written out here
def drv(epsilons, slack):
    """Dwork-Rothblum-Vadhan, heterogeneous: sqrt(2 ln(1/d') sum e^2) + sum e (e^e - 1)."""
    return math.sqrt(2 * math.log(1 / slack) * sum(e * e for e in epsilons)) + sum(
        e * (math.exp(e) - 1) for e in epsilons
    )


def kov_35(epsilons, d):
    """Kairouz-Oh-Viswanath Theorem 3.5's two closed forms (the third, sum e, is basic composition)."""
    s = sum(e * e for e in epsilons)
    t = sum(e * (math.exp(e) - 1) / (math.exp(e) + 1) for e in epsilons)
    return min(t + math.sqrt(2 * s * math.log(math.e + math.sqrt(s) / d)), t + math.sqrt(2 * s * math.log(1 / d)))


def kov_33_delta(k, eps, i):
    """Kairouz-Oh-Viswanath Theorem 3.3: delta_i of ((k - 2i) eps, delta_i) for k pure eps-DP mechanisms."""
    return (
        sum(math.comb(k, l) * (math.exp((k - l) * eps) - math.exp((k - 2 * i + l) * eps)) for l in range(i))
        / (1 + math.exp(eps)) ** k
    )


def rr_hockey_stick(k, eps, eps_g):
    """sum_j max(0, P(j) - e^eps_g Q(j)) for k-fold randomized response, by the definition."""
    q = 1 / (1 + math.exp(eps))
    total = 0.0
    for j in range(k + 1):
        p_j = math.comb(k, j) * q**j * (1 - q) ** (k - j)
        q_j = math.comb(k, j) * (1 - q) ** j * q ** (k - j)
        total += max(0.0, p_j - math.exp(eps_g) * q_j)
    return total


# ---------------------------------------------------------------------- the theorems
def test_basic_composition_is_exact_in_the_decimals():
    acc = PrivacyAccountant(1.0, 1e-6)
    for _ in range(10):
        acc.spend(0.1, 1e-7, "fit")
    total = acc.total()
    assert (total.epsilon, total.delta, total.theorem, total.spends) == (1.0, 1e-6, BASIC, 10)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-15)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.0, 1e-20)
    assert basic_composition([0.1, 0.2], [0.0, 0.0]).epsilon == 0.3  # the float sum would say 0.30000000000000004


@pytest.mark.parametrize(
    ("epsilons", "slack"),
    [([0.1] * 50, 1e-6), ([0.05, 0.3, 0.01, 1.0, 0.2] * 7, 1e-9), ([0.5], 0.01), ([2.0, 0.001, 0.7], 1e-5)],
)
def test_advanced_composition_is_the_drv_closed_form(epsilons, slack):
    deltas = [1e-8] * len(epsilons)
    bound = advanced_composition(epsilons, deltas, slack)
    exact = drv(epsilons, slack)
    assert bound.theorem == ADVANCED
    assert exact <= bound.epsilon <= exact * (1 + 1e-9)  # rounded up, never down
    assert bound.delta == pytest.approx(sum(deltas) + slack, rel=1e-12)


@pytest.mark.parametrize(("epsilons", "slack"), [([0.1] * 50, 1e-6), ([0.05, 0.3, 0.01, 1.0, 0.2] * 7, 1e-9)])
def test_kov_heterogeneous_is_the_closed_form(epsilons, slack):
    pure = kov_composition(epsilons, [0.0] * len(epsilons), slack)
    assert pure.theorem == KOV_HETEROGENEOUS
    assert kov_35(epsilons, slack) <= pure.epsilon <= kov_35(epsilons, slack) * (1 + 1e-9)
    # with deltas, d-tilde is the largest keeping 1 - (1 - d) prod(1 - delta_i) <= sum delta_i + slack
    deltas = [1e-7 * (i % 3) for i in range(len(epsilons))]
    approx = kov_composition(epsilons, deltas, slack)
    d_max = 1 - (1 - sum(deltas) - slack) / math.prod(1 - d for d in deltas)
    assert kov_35(epsilons, d_max) <= approx.epsilon <= kov_35(epsilons, slack) * (1 + 1e-9)
    assert approx.delta == pytest.approx(sum(deltas) + slack, rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 5, 10, 25])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
def test_optimal_composition_meets_kov_33_at_its_points(k, eps):
    """At slack delta_i the exact computation gives (k - 2i) eps: Theorem 3.3's closed form, point by point."""
    for i in range(1, k // 2 + 1):
        delta_i = kov_33_delta(k, eps, i)
        if delta_i <= 0:
            continue
        got = optimal_homogeneous_composition(k, eps, 0.0, delta_i)
        assert (k - 2 * i) * eps <= got + 1e-12 and got <= (k - 2 * i) * eps + 1e-7, (i, delta_i, got)
    assert optimal_homogeneous_composition(k, eps, 0.0, 0.0) == pytest.approx(k * eps, abs=1e-7)


@pytest.mark.parametrize(("k", "eps"), [(3, 0.7), (12, 0.3), (40, 0.1)])
@pytest.mark.parametrize("target", [1e-1, 1e-3, 1e-6])
def test_optimal_composition_is_the_smallest_eps_of_the_hockey_stick(k, eps, target):
    got = optimal_homogeneous_composition(k, eps, 0.0, target)
    assert rr_hockey_stick(k, eps, got) <= target * (1 + 1e-9)
    if got > 1e-6:  # and not more than needed
        assert rr_hockey_stick(k, eps, got - 1e-6) > target


def test_optimal_composition_with_a_delta_per_spend():
    k, eps, delta, target = 20, 0.2, 1e-7, 1e-5
    got = optimal_homogeneous_composition(k, eps, delta, target)
    assert 1 - (1 - delta) ** k * (1 - rr_hockey_stick(k, eps, got)) <= target
    assert got < optimal_homogeneous_composition(k, eps, 0.0, target - k * delta) + 1e-7
    assert optimal_homogeneous_composition(k, eps, delta, k * delta / 2) == math.inf  # below the spends' own delta


spend_lists = st.lists(
    st.tuples(st.floats(0.0, 3.0, allow_nan=False), st.sampled_from([0.0, 1e-9, 1e-7, 3e-6])),
    min_size=1,
    max_size=40,
)


@given(spend_lists, st.sampled_from([1e-9, 1e-6, 1e-3]))
def test_the_reported_total_never_exceeds_basic_composition(spends, slack):
    acc = PrivacyAccountant(slack=slack, spends=spends)
    basic = basic_composition([e for e, _ in spends], [d for _, d in spends])
    total = acc.total()
    assert total.epsilon <= basic.epsilon
    bounds = compose([e for e, _ in spends], [d for _, d in spends], slack)
    assert total.epsilon == min(b.epsilon for b in bounds)  # the smallest of the valid bounds
    if total.theorem != BASIC:
        assert total.delta == pytest.approx(basic.delta + slack, rel=1e-12)


def test_heterogeneous_spends_use_the_optimal_bound_on_the_largest_spend():
    epsilons, deltas = [0.1] * 60 + [0.12] * 40, [1e-8] * 50 + [2e-8] * 50
    bounds = {b.theorem: b for b in compose(epsilons, deltas, 1e-6)}
    target = sum(deltas) + 1e-6
    assert bounds[KOV_OPTIMAL].epsilon == pytest.approx(optimal_homogeneous_composition(100, 0.12, 2e-8, target))
    assert bounds[KOV_OPTIMAL].epsilon < bounds[BASIC].epsilon
    acc = PrivacyAccountant(20, 1e-5, slack=1e-6)
    for e, d in zip(epsilons, deltas, strict=True):
        acc.spend(e, d)
    assert acc.total().epsilon == min(b.epsilon for b in bounds.values()) < 6.1  # basic: 10.8


def test_a_pure_budget_is_met_by_basic_composition_when_the_slack_does_not_fit():
    acc = PrivacyAccountant(1.0, 0.0, slack=1e-6)
    for _ in range(10):
        acc.spend(0.1)
    assert acc.total().theorem == BASIC and acc.total().delta == 0.0
    with pytest.raises(BudgetExceededError):
        acc.spend(0.01)


def test_many_fits_fit_a_budget_only_the_tighter_theorem_allows():
    acc = PrivacyAccountant(6.0, 1e-5, slack=1e-6)
    for _ in range(140):  # basic composition: 14
        acc.spend(0.1)
    assert acc.total().epsilon < 6.0 and acc.total().theorem == KOV_OPTIMAL


# ---------------------------------------------------------------------- the budget
def test_a_refused_spend_names_budget_and_spend_and_changes_nothing():
    acc = PrivacyAccountant(1.0, 1e-6)
    acc.spend(0.7, 0.0, "first")
    before, total = acc.spends, acc.total()
    with pytest.raises(BudgetExceededError) as info:
        acc.spend(0.5, 0.0, "RRSPM")
    message = str(info.value)
    assert "(epsilon=1, delta=1e-06)" in message and "(epsilon=0.5, delta=0)" in message and "'RRSPM'" in message
    assert "(0.7, 0)-DP over 1 spends" in message
    assert acc.spends == before and acc.total() == total
    with pytest.raises(BudgetExceededError):
        acc.check(0.5)
    assert acc.spends == before


def test_remaining_is_what_one_more_spend_can_take():
    acc = PrivacyAccountant(1.0, 1e-6)
    acc.spend(0.3, 2e-7)
    acc.spend(0.4)
    left = acc.remaining()
    assert (left.epsilon, left.delta) == (0.3, 8e-7)
    acc.check(left.epsilon, left.delta)
    with pytest.raises(BudgetExceededError):
        acc.check(math.nextafter(left.epsilon, 1.0))
    tight = PrivacyAccountant(3.0, 1e-5, slack=1e-6, spends=[(0.1, 0.0)] * 40)
    room = tight.remaining(delta=0.0).epsilon
    assert 0 < room < 3.0 - tight.total().epsilon  # not a subtraction: one more spend changes the bound's shape
    with pytest.raises(BudgetExceededError):
        tight.check(3.0 - tight.total().epsilon)
    tight.check(room)
    with pytest.raises(BudgetExceededError):
        tight.check(room * 1.001)
    assert PrivacyAccountant().remaining() == PrivacyAccountant().remaining(0.0)
    assert math.isinf(PrivacyAccountant().remaining().epsilon)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [((-1.0,), "epsilon must be a real number in [0, inf]"), ((1.0, 2.0), "delta must be a real number in [0, 1]")],
)
def test_bad_budgets_and_spends_are_named(args, fragment):
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        PrivacyAccountant(*args)
    with pytest.raises(ValueError, match=r"epsilon must be a real number in \[0, inf\]; got nan"):
        PrivacyAccountant().spend(float("nan"))
    with pytest.raises(ValueError, match="slack must be in"):
        PrivacyAccountant(slack=1.0)


# ---------------------------------------------------------------------- the JSON ledger
def test_the_ledger_round_trips_through_json(tmp_path):
    acc = PrivacyAccountant(math.inf, 1e-5, slack=1e-7)
    acc.spend(0.5, 1e-7, "RRSPM")
    acc.spend(0.25, 0.0, "PublicCoverEM")
    path = tmp_path / "ledger.json"
    acc.save(path)
    data = json.loads(path.read_text())
    assert data["budget"] == {"epsilon": None, "delta": 1e-5}
    loaded = PrivacyAccountant.load(path)
    assert loaded.spends == acc.spends and loaded.budget == acc.budget and loaded.slack == acc.slack
    assert loaded.total() == acc.total()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("not json", "is not valid JSON"),
        ('{"format": "other"}', "is not an oraclepriv privacy ledger"),
        (
            '{"format": "oraclepriv-privacy-ledger", "version": 1, "budget": {"epsilon": 1, "delta": 0}, '
            '"spends": [{"epsilon": -1, "delta": 0}]}',
            r"epsilon must be a real number in \[0, inf\]",
        ),
        (
            '{"format": "oraclepriv-privacy-ledger", "version": 1, "budget": {"epsilon": 1, "delta": 0}, '
            '"spends": [{"epsilon": 0.6, "delta": 0}, {"epsilon": 0.6, "delta": 0}]}',
            "past the budget",
        ),
        ('{"format": "oraclepriv-privacy-ledger", "version": 1, "spends": []}', "malformed ledger"),
    ],
)
def test_a_bad_ledger_file_is_refused_by_name(tmp_path, text, fragment):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=fragment) as info:
        PrivacyAccountant.load(path)
    assert "bad.json" in str(info.value)


# ---------------------------------------------------------------------- the active accountant
def test_with_blocks_nest_and_the_default_is_charged_otherwise():
    default = PrivacyAccountant.default()
    assert PrivacyAccountant.active() is default is PrivacyAccountant.default()
    outer, inner = PrivacyAccountant(), PrivacyAccountant()
    with outer:
        assert PrivacyAccountant.active() is outer
        with inner:
            assert PrivacyAccountant.active() is inner
        assert PrivacyAccountant.active() is outer
    assert PrivacyAccountant.active() is default
    replacement = PrivacyAccountant(5.0)
    assert PrivacyAccountant.set_default(replacement) is default
    assert PrivacyAccountant.active() is replacement


def test_a_thread_charges_the_block_only_when_it_runs_in_a_copy_of_the_context():
    """As documented: Python's threads start with an empty context, so a bare thread started inside a `with` block
    charges the default; one run in contextvars.copy_context() charges the block's accountant."""
    import contextvars
    import threading

    block = PrivacyAccountant()
    with block:
        bare = threading.Thread(target=lambda: PrivacyAccountant.active().spend(0.1, label="bare"))
        bare.start()
        bare.join()
        context = contextvars.copy_context()
        copied = threading.Thread(
            target=context.run, args=(lambda: PrivacyAccountant.active().spend(0.2, label="copied"),)
        )
        copied.start()
        copied.join()
    assert [s.label for s in block.spends] == ["copied"]
    assert [s.label for s in PrivacyAccountant.default().spends] == ["bare"]


@pytest.fixture
def small_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 1))
    y = (X[:, 0] > 0).astype(int)
    return X, y, PublicData(rng.normal(size=(6, 1)))


def test_every_fit_charges_the_active_accountant(small_problem):
    X, y, Z = small_problem
    acc = PrivacyAccountant()
    with acc:
        PublicCoverEM(epsilon=0.5, hypothesis_class="threshold", random_state=0).fit(X, y, Z)
    PublicCoverEM(epsilon=0.25, hypothesis_class="threshold", random_state=0).fit(X, y, Z)
    assert acc.spends == (Spend(0.5, 0.0, "PublicCoverEM"),)
    assert PrivacyAccountant.default().spends == (Spend(0.25, 0.0, "PublicCoverEM"),)


def test_a_fit_charges_its_total_delta(small_problem):
    X, y, Z = small_problem
    acc = PrivacyAccountant()
    with acc:
        learner = RRSPM(epsilon=1.0, delta=1e-3, noise="gaussian", hypothesis_class="threshold", random_state=0)
        learner.fit(X, y, Z)
    privacy = learner.release_.privacy
    assert acc.spends == (Spend(1.0, privacy["delta"] + privacy["numerical_delta"], "RRSPM"),)


def test_a_fit_past_the_budget_publishes_nothing(small_problem):
    X, y, Z = small_problem
    acc = PrivacyAccountant(1.5)
    learner = PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", random_state=0)
    with acc:
        learner.fit(X, y, Z)
        first = learner.release_
        with pytest.raises(BudgetExceededError, match="'PublicCoverEM'"):
            learner.fit(X, y, Z)
    assert len(acc) == 1
    fitted = [name for name in vars(learner) if name.endswith("_") and not name.startswith("_")]
    assert fitted == []  # neither the refused fit's hypothesis nor the earlier release stays readable
    with pytest.raises(NotFittedError):
        learner.predict(X)
    assert first.privacy["epsilon"] == 1.0


def test_a_release_without_a_record_level_guarantee_is_charged_as_unbounded(small_problem):
    X, y, _ = small_problem
    with pytest.warns(UserWarning, match="label-DP"):
        with pytest.raises(BudgetExceededError, match="charged as epsilon = inf"), PrivacyAccountant(100.0):
            PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", cover="private-features").fit(X, y)
    unlimited = PrivacyAccountant()
    with pytest.warns(UserWarning, match="label-DP"), unlimited:
        PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", cover="private-features").fit(X, y)
    assert math.isinf(unlimited.total().epsilon)


# ---------------------------------------------------------------------- learn --budget
@pytest.fixture
def csv_problem(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1))
    write_csv_problem(tmp_path / "private.csv", X, (X[:, 0] > 0).astype(int))
    write_csv_problem(tmp_path / "public.csv", rng.normal(size=(6, 1)), None)
    return tmp_path


def _learn(folder, *extra):
    args = [
        "learn",
        str(folder / "private.csv"),
        "--public",
        str(folder / "public.csv"),
        "--algorithm",
        "public-cover-em",
        "--epsilon",
        "0.6",
        "--hypothesis-class",
        "threshold",
        "--seed",
        "1",
        "--json",
        *extra,
    ]
    return runner.invoke(app, args)


def test_learn_budget_charges_one_ledger_across_runs(csv_problem):
    ledger = csv_problem / "ledger.json"
    absent = _learn(csv_problem, "--budget", str(ledger))
    assert absent.exit_code == 2 and "does not exist: give --budget-epsilon" in absent.stderr
    assert not ledger.exists()
    first = _learn(csv_problem, "--budget", str(ledger), "--budget-epsilon", "1.0")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["privacy"]["epsilon"] == 0.6
    assert "this run spent (0.6, 0) for PublicCoverEM" in first.stderr
    saved = ledger.read_bytes()
    assert [s["epsilon"] for s in json.loads(saved)["spends"]] == [0.6]
    second = _learn(csv_problem, "--budget", str(ledger))  # 1.2 > 1: refused before the data are read
    assert second.exit_code == 2 and second.stdout == ""
    assert "privacy budget exceeded" in second.stderr and "(epsilon=1, delta=0)" in second.stderr
    assert ledger.read_bytes() == saved
    other = _learn(csv_problem, "--budget", str(ledger), "--budget-epsilon", "2")
    assert other.exit_code == 2 and "fixed when it is created" in other.stderr
    assert PrivacyAccountant.active() is PrivacyAccountant.default()  # the command's `with` ended with it


def test_learn_budget_refuses_a_release_the_fit_itself_takes_past_the_budget(csv_problem):
    """The design epsilon fits, but --on-uncertified flag leaves no guarantee: the fit's charge (inf) is refused,
    nothing is printed and the ledger is unchanged."""
    ledger = csv_problem / "ledger.json"
    ok = _learn(csv_problem, "--budget", str(ledger), "--budget-epsilon", "5")
    assert ok.exit_code == 0
    saved = ledger.read_bytes()
    args = [
        "learn",
        str(csv_problem / "private.csv"),
        "--public",
        str(csv_problem / "public.csv"),
        "--algorithm",
        "rrspm",
        "--epsilon",
        "1",
        "--hypothesis-class",
        "threshold",
        "--on-uncertified",
        "flag",
        "--seed",
        "2",
        "--json",
        "--budget",
        str(ledger),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.stdout == ""
    assert "charged as epsilon = inf" in result.stderr
    assert ledger.read_bytes() == saved


def test_learn_budget_options_need_the_file(csv_problem):
    result = _learn(csv_problem, "--budget-epsilon", "1")
    assert result.exit_code == 2 and "give the ledger file with --budget FILE" in result.stderr
    bad = _learn(csv_problem, "--budget", str(csv_problem / "l.json"), "--budget-epsilon", "1", "--budget-delta", "2")
    assert bad.exit_code == 2 and "--budget-delta must be a number in [0, 1)" in bad.stderr
