"""PrivateGridSearch (oraclepriv/selection.py; docs/theory/private-selection.md): the exponential mechanism over
held-out correct counts, with the candidates' fits composed on the training part.

What is tested:
* its privacy exactly, on small instances whose output law is computable
  (:meth:`PrivateGridSearch.output_log_probabilities` and :func:`oraclepriv.audit.exact.audit_exact_distribution`):
  candidates that read no private data, where the selection's loss is close to its eps (the check is sharp),
  with a control whose selection spends 10% more than its release says, which the check catches; and
  PublicCoverEM candidates, where the loss of training positions is within the fits' composed eps and that of
  held-out positions within eps_sel;
* that ``fit`` draws from that law (a z-test over many seeds);
* the accounting: one charge of the stated total to the active accountant, none by the candidates; a search past
  the budget publishes nothing;
* the release (the total guarantee, the selected candidate), scikit-learn conventions and the refusals.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from oraclepriv import PrivacyAccountant, PrivateGridSearch, PublicData
from oraclepriv.accountant import BASIC, BudgetExceededError, Spend
from oraclepriv.audit.exact import audit_exact_distribution
from oraclepriv.hypotheses import Threshold
from oraclepriv.learners import RRSPM, PublicCoverEM
from oraclepriv.learners._base import NEIGHBOURING, PublicDataEstimator
from oraclepriv.release import NotFittedError, PrivacyLeakWarning


class FixedThreshold(PublicDataEstimator):
    """A candidate chosen without the private data: it releases Threshold(threshold) whatever the records, so
    any epsilon it claims holds; its output law is a point mass."""

    algorithm = "fixed-threshold"
    reference = "a hypothesis fixed in advance (reads no private record)"
    hypothesis_class = "threshold"
    delta = 0.0

    def __init__(self, *, threshold: float = 0.0, epsilon: float = 0.01, random_state: Any = None) -> None:
        self.threshold = threshold
        self.epsilon = epsilon
        self.random_state = random_state

    def _fit(self, X, y, Z, rng, public_labels=None):
        self._privacy = {"mechanism": "a fixed threshold", "oracle_calls_by_design": 0}
        return Threshold(float(self.threshold))

    def output_log_probabilities(self, X_private, y_private, X_public=None):
        return np.array([[float(self.threshold)]]), np.array([0.0])


class OverspendingSearch(PrivateGridSearch):
    """Control: its selection uses eps_sel 1.1 times the one its release states."""

    def _selection_log_weights(self, correct):
        return 1.1 * super()._selection_log_weights(correct)


@pytest.fixture(autouse=True)
def fresh_default():
    previous = PrivacyAccountant.set_default(PrivacyAccountant())
    yield
    PrivacyAccountant.set_default(previous)


# the two extreme candidates: all ones and all zeros
EXTREMES = {"threshold": [-math.inf, math.inf]}
Z_FIXED = np.array([[0.0], [1.0]])


def _fixed_search(cls=PrivateGridSearch, **kw):
    return cls(FixedThreshold(), EXTREMES, selection_epsilon=1.0, validation_fraction=0.5, random_state=5, **kw)


def test_the_selection_is_private_exactly_and_the_overspending_control_is_caught():
    """Twenty records, ten held out, labels all 0: the all-zeros candidate scores 10, the all-ones one 0, and a
    label flip moves both counts in opposite directions, so the selection's loss is within 2% of eps_sel: the
    exact check is sharp, and a selection 10% hotter than stated exceeds its claim."""
    X = np.linspace(-1, 1, 20)[:, None]
    y = np.zeros(20, dtype=np.int64)
    search = _fixed_search().fit(X, y, Z_FIXED)
    claim = search.release_.privacy["epsilon"]
    assert claim == 1.0 and search.release_.privacy["fits_epsilon"] == pytest.approx(0.02)
    honest = audit_exact_distribution(_fixed_search, X, y, Z_FIXED, epsilon=claim, n_others=1)
    assert honest.passed and 0.98 * claim <= honest.epsilon_hat <= claim, honest.to_dict()
    # the worst neighbour flips a held-out label: counts (0, 10) -> (1, 9), so the loss is log((1+e^5)/(1+e^4))
    assert honest.epsilon_hat == pytest.approx(math.log((1 + math.exp(5)) / (1 + math.exp(4))), rel=1e-9)
    control = audit_exact_distribution(
        lambda: _fixed_search(OverspendingSearch), X, y, Z_FIXED, epsilon=claim, n_others=1
    )
    assert not control.passed and control.epsilon_hat > 1.05 * claim, control.to_dict()
    assert control.epsilon_hat == pytest.approx(math.log((1 + math.exp(5.5)) / (1 + math.exp(4.4))), rel=1e-9)
    assert control.worst["position"] in set(search.holdout_indices_.tolist())


def _cover_search():
    return PrivateGridSearch(
        PublicCoverEM(hypothesis_class="threshold"),
        {"epsilon": [0.5, 1.0]},
        selection_epsilon=1.0,
        validation_fraction=0.4,
        random_state=3,
    )


def test_a_search_over_public_cover_em_is_private_exactly_part_by_part():
    """Real candidates (PublicCoverEM's law is explicit), every audited neighbour at every position: the training
    positions against the fits' composed eps (the total), the held-out ones against eps_sel."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(10, 1)), 2)
    y = (X[:, 0] > 0.1).astype(np.int64)
    Z = np.array([[-1.0], [0.0], [1.0]])
    search = _cover_search().fit(X, y, Z)
    privacy = search.release_.privacy
    assert (privacy["epsilon"], privacy["fits_epsilon"], privacy["selection_epsilon"]) == (1.5, 1.5, 1.0)
    train = audit_exact_distribution(
        _cover_search, X, y, Z, epsilon=1.5, positions=search.train_indices_.tolist(), n_others=2
    )
    held = audit_exact_distribution(
        _cover_search, X, y, Z, epsilon=1.0, positions=search.holdout_indices_.tolist(), n_others=2
    )
    assert train.passed and held.passed, (train.to_dict(), held.to_dict())  # every position: within the total 1.5
    assert held.epsilon_hat > 0 and train.epsilon_hat > held.epsilon_hat  # both parts move the law


def test_the_exact_law_is_a_distribution_over_the_candidates_outputs():
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(10, 1)), 2)
    y = (X[:, 0] > 0).astype(np.int64)
    Z = np.array([[-1.0], [0.0], [1.0]])
    rows, logp = _cover_search().output_log_probabilities(X, y, Z)
    assert math.isclose(float(np.exp(logp).sum()), 1.0, rel_tol=1e-12)
    assert set(rows[:, 0].tolist()) == {0.0, 1.0} and len({r.tobytes() for r in rows}) == len(rows)


def test_fit_draws_the_selection_from_the_exact_law():
    """Labels all 0: every split gives the all-ones candidate 0 held-out correct and the all-zeros one 6, so the
    law is the same for every seed: Pr[all-ones] = 1 / (1 + e^(0.3 * 6 / 2)) = 0.289. Over 300 seeds the count
    of that choice is within 4 standard deviations of 300 times it (a sampler using eps instead of eps/2, with
    0.142, lands 5.6 standard deviations away)."""
    X = np.linspace(-1, 1, 12)[:, None]
    y = np.zeros(12, dtype=np.int64)

    def search(seed):
        return PrivateGridSearch(
            FixedThreshold(), EXTREMES, selection_epsilon=0.3, validation_fraction=0.5, random_state=seed
        )

    rows, logp = search(0).output_log_probabilities(X, y, Z_FIXED)
    p = float(np.exp(logp[rows[:, 0] == 0]).sum())
    assert p == pytest.approx(1 / (1 + math.exp(0.9)), rel=1e-12)
    n = 300
    hits = sum(search(seed).fit(X, y, Z_FIXED).best_index_ == 0 for seed in range(n))
    assert abs(hits - n * p) / math.sqrt(n * p * (1 - p)) <= 4, hits


# ---------------------------------------------------------------------- accounting
def test_the_search_charges_its_total_once_and_the_candidates_charge_nothing_outside():
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    budget = PrivacyAccountant(2.0)
    with budget:
        search = PrivateGridSearch(
            PublicCoverEM(hypothesis_class="threshold"), {"epsilon": [0.25, 0.5, 1.0]}, random_state=0
        ).fit(X, y, Z_FIXED)
    assert budget.spends == (Spend(1.75, 0.0, "PrivateGridSearch"),)
    assert PrivacyAccountant.default().spends == ()
    assert search.release_.privacy["fits_composition"] == BASIC
    with pytest.warns(PrivacyLeakWarning):
        spends = search.diagnostics_["candidate_spends"]
    assert spends == [(0.25, 0.0), (0.5, 0.0), (1.0, 0.0)]


def test_a_search_past_the_budget_publishes_nothing():
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    budget = PrivacyAccountant(1.0)
    search = PrivateGridSearch(PublicCoverEM(hypothesis_class="threshold"), {"epsilon": [0.5, 1.0]}, random_state=0)
    with budget, pytest.raises(BudgetExceededError, match="'PrivateGridSearch'"):
        search.fit(X, y, Z_FIXED)
    assert budget.spends == () and not hasattr(search, "release_") and not hasattr(search, "best_estimator_")
    with pytest.raises(NotFittedError):
        search.predict(X)


def test_a_composition_slack_counts_many_candidates_by_the_tighter_theorem():
    X = np.linspace(-1, 1, 30)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    grid = {"threshold": list(np.linspace(-1, 1, 40))}
    search = PrivateGridSearch(
        FixedThreshold(epsilon=0.1), grid, selection_epsilon=0.5, composition_slack=1e-6, random_state=0
    ).fit(X, y, Z_FIXED)
    privacy = search.release_.privacy
    assert privacy["fits_composition"] != BASIC and privacy["fits_epsilon"] < 4.0 * 0.7  # basic: 4.0
    assert privacy["epsilon"] == privacy["fits_epsilon"] and privacy["delta"] == pytest.approx(1e-6)


def test_a_vacuous_total_delta_is_refused_and_nothing_is_released():
    """Each candidate's delta is below 1/n_train, but 40 of them compose to 40 * 1e-3 >= 1/50."""
    X = np.linspace(-1, 1, 50)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)

    class ApproximateFixed(FixedThreshold):
        delta = 1e-3

    grid = {"threshold": list(np.linspace(-1, 1, 40))}
    search = PrivateGridSearch(ApproximateFixed(), grid, random_state=0)
    with pytest.raises(ValueError, match=r"compose to 0.04, >= 1/n = 0.02 for n=50 private records"):
        search.fit(X, y, Z_FIXED)
    assert not hasattr(search, "release_") and PrivacyAccountant.default().spends == ()


# ---------------------------------------------------------------------- the release and conventions
def test_the_release_states_the_total_and_predicts_with_the_selected_candidate():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 1))
    y = np.where(X[:, 0] > 0, "yes", "no")
    with pytest.warns(PrivacyLeakWarning, match="class labels"):
        search = PrivateGridSearch(
            PublicCoverEM(hypothesis_class="threshold"), {"epsilon": [0.5, 2.0]}, random_state=1
        ).fit(X, y, PublicData(rng.normal(size=(8, 1))))
    privacy = search.release_.privacy
    assert privacy["neighbouring"] == NEIGHBOURING
    assert privacy["guarantee"].startswith("pure 2.5-DP: the 2 candidate fits on the same 42 training records")
    assert (privacy["n_train"], privacy["n_holdout"], privacy["candidates"]) == (42, 18, 2)
    assert privacy["selected_params"] == search.best_params_ and privacy["selected_index"] == search.best_index_
    assert search.release_.hypothesis == search.best_estimator_.release_.hypothesis
    assert np.array_equal(search.predict(X), search.best_estimator_.predict(X))
    assert set(search.predict(X)) <= {"yes", "no"} and list(search.classes_) == ["no", "yes"]
    assert "holdout_correct" not in search.release_.to_json()
    assert sorted(np.concatenate([search.train_indices_, search.holdout_indices_]).tolist()) == list(range(60))


def test_scikit_learn_conventions():
    search = PrivateGridSearch(PublicCoverEM(hypothesis_class="threshold"), {"epsilon": [0.5, 1.0]}, random_state=0)
    params = search.get_params()
    assert params["estimator__epsilon"] == 1.0 and params["selection_epsilon"] == 1.0
    copy = clone(search)
    assert copy.get_params()["param_grid"] == {"epsilon": [0.5, 1.0]}
    with pytest.raises(NotFittedError):
        search.predict(np.zeros((2, 1)))
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    fitted = search.fit(X, y, Z_FIXED)
    assert fitted is search and search.score(X, y) >= 0.0 and search.n_features_in_ == 1


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"selection_epsilon": 0.0}, "selection_epsilon must be a finite number > 0; got 0.0"),
        ({"selection_epsilon": math.inf}, "selection_epsilon must be a finite number > 0; got inf"),
        ({"validation_fraction": 1.0}, r"validation_fraction must be a number in \(0, 1\); got 1.0"),
        ({"composition_slack": -0.1}, r"composition_slack must be a number in \[0, 1\); got -0.1"),
        ({"param_grid": {"epsilon": [1.0], "random_state": [0, 1]}}, "param_grid may not set random_state"),
        ({"random_state": -3}, "random_state must be None, a non-negative int"),
    ],
)
def test_bad_parameters_are_named(kwargs, fragment):
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    args = {"estimator": PublicCoverEM(hypothesis_class="threshold"), "param_grid": {"epsilon": [1.0]}, **kwargs}
    with pytest.raises(ValueError, match=fragment):
        PrivateGridSearch(**args).fit(X, y, Z_FIXED)


def test_a_non_private_estimator_is_refused_and_nothing_is_released():
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    search = PrivateGridSearch(LogisticRegression(), {"C": [0.1, 1.0]})
    with pytest.raises(ValueError, match="estimator must be an oraclepriv private learner .*; got LogisticRegression"):
        search.fit(X, y)
    assert not hasattr(search, "release_")


def test_per_sample_side_data_are_refused():
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    search = PrivateGridSearch(PublicCoverEM(hypothesis_class="threshold"), {"epsilon": [1.0]})
    with pytest.raises(ValueError, match="fit parameter 'public_mask' has one entry per sample"):
        search.fit(X, y, Z_FIXED, public_mask=np.zeros(20, dtype=bool))


def test_the_exact_law_needs_a_fixed_split_and_explicit_candidates():
    X = np.linspace(-1, 1, 20)[:, None]
    y = (X[:, 0] > 0).astype(np.int64)
    with pytest.raises(ValueError, match="needs random_state fixed"):
        PrivateGridSearch(FixedThreshold(), EXTREMES).output_log_probabilities(X, y, Z_FIXED)
    with pytest.raises(ValueError, match="RRSPM has no explicit output law"):
        PrivateGridSearch(
            RRSPM(hypothesis_class="threshold"), {"epsilon": [1.0]}, random_state=0
        ).output_log_probabilities(X, y, Z_FIXED)
