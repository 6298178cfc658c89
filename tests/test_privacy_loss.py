"""The exact privacy loss between two output laws (oraclepriv.privacy_loss), the routine the exact audits and the
verifier share: its value on laws whose loss is known in closed form, its conventions at the edges of the supports,
and agreement with the definition on random laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oraclepriv.privacy_loss import PrivacyLoss, privacy_loss


def test_randomized_response_has_loss_epsilon_exactly():
    """Warner's randomized response, the answer kept with probability e^eps / (1 + e^eps): loss eps."""
    eps = 0.7
    keep = math.log(math.exp(eps) / (1 + math.exp(eps)))
    flip = math.log(1 / (1 + math.exp(eps)))
    found = privacy_loss({"yes": keep, "no": flip}, {"yes": flip, "no": keep})
    assert found.loss == pytest.approx(eps, abs=1e-15) and found.outcome == "yes"


def test_an_outcome_possible_under_one_law_only_is_an_infinite_loss_in_either_order():
    p = {"a": math.log(0.5), "b": math.log(0.5)}
    for q in ({"a": 0.0}, {"a": 0.0, "b": -math.inf}):
        assert privacy_loss(p, q) == PrivacyLoss(math.inf, "b")
        assert privacy_loss(q, p) == PrivacyLoss(math.inf, "b")


def test_an_outcome_impossible_under_both_laws_is_no_loss():
    p = {"never": -math.inf, "a": 0.0}
    assert privacy_loss(p, {"a": 0.0}) == PrivacyLoss(0.0, "a")
    assert privacy_loss({"never": -math.inf}, {}) == PrivacyLoss(0.0, None)
    assert privacy_loss({}, {}) == PrivacyLoss(0.0, None)


def test_the_first_outcome_attaining_the_loss_is_reported():
    p = {"a": math.log(0.5), "b": math.log(0.25), "c": math.log(0.25)}
    q = {"a": math.log(0.5), "c": math.log(0.5), "b": math.log(0.5)}  # b and c both at log 2
    assert privacy_loss(p, q).outcome == "b"
    assert privacy_loss({"a": 0.0}, {"z": -math.inf, "a": 0.0}).outcome == "a"  # a tie at 0: the first possible one


def test_outcomes_are_matched_by_equality_of_their_keys():
    p = {(0.0, 1.0): math.log(0.25), (1.0, 0.0): math.log(0.75)}
    q = {(1.0, 0.0): math.log(0.75), (0.0, 1.0): math.log(0.25)}
    assert privacy_loss(p, q).loss == 0.0


def test_a_nan_log_probability_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        privacy_loss({"a": math.nan}, {"a": 0.0})


laws = st.dictionaries(
    st.integers(0, 6),
    st.one_of(st.just(-math.inf), st.floats(-50.0, 0.0, allow_nan=False)),
    max_size=7,
)


@settings(max_examples=200, deadline=None)
@given(laws, laws)
def test_agrees_with_the_definition_and_is_symmetric(p, q):
    expected = 0.0
    for outcome in set(p) | set(q):
        a, b = p.get(outcome, -math.inf), q.get(outcome, -math.inf)
        if a == b == -math.inf:
            continue
        expected = max(expected, math.inf if -math.inf in (a, b) else abs(a - b))
    found = privacy_loss(p, q)
    assert found.loss == expected == privacy_loss(q, p).loss
    if found.outcome is not None:
        a, b = p.get(found.outcome, -math.inf), q.get(found.outcome, -math.inf)
        assert (math.inf if -math.inf in (a, b) else abs(a - b)) == found.loss
    assert (found.outcome is None) == all(v == -math.inf for v in (*p.values(), *q.values()))
    assert np.isfinite(found.loss) or found.loss == math.inf
