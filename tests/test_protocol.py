"""The oracle protocol: sign reduction, re-scoring, the certificate, and boundary validation.

The certificate tests are negative controls: fake backends registered temporarily in
backends return a suboptimal hypothesis or a bound that does not match it; the protocol must
then report ``certified=False`` — if it trusted the backend's numbers, these tests would fail.
"""

from __future__ import annotations

import contextlib
import math
import re

import numpy as np
import pytest
from brute_force import brute_stump, labeling_loss
from hypothesis import given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem, UnsupportedProblemError
from strategies import signed_weights

from oraclepriv import Halfspace, Stump, make_oracle
from oraclepriv.backends import registered_backend
from oraclepriv.hypotheses import weighted_zero_one_loss
from oraclepriv.oracle import certification_tolerance, reduce_signed_weights

# ---------------------------------------------------------------- the sign reduction


@st.composite
def labelled_signed(draw):
    n = draw(st.integers(1, 12))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8)
    w = draw(signed_weights(n))
    predictions = [np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8) for _ in range(4)]
    return y, w, predictions


@settings(max_examples=150, deadline=None)
@given(labelled_signed())
def test_sign_reduction_identity(data):
    """loss_signed(h) == offset + loss_reduced(h) for every labeling h, with reduced weights >= 0."""
    y, w, predictions = data
    y_red, w_red, offset = reduce_signed_weights(y, w)
    assert np.all(w_red >= 0)
    assert set(np.unique(y_red)) <= {0, 1}
    np.testing.assert_array_equal(y_red, np.where(w < 0, 1 - y, y))  # only negative weights flip
    assert offset == pytest.approx(math.fsum(w[w < 0]), abs=1e-12 * max(1.0, np.abs(w).sum()))
    for h in predictions + [np.zeros_like(y), np.ones_like(y)]:
        signed = labeling_loss(h, y, w)
        reduced = labeling_loss(h, y_red, w_red)
        assert signed == pytest.approx(offset + reduced, abs=certification_tolerance(w))


# ---------------------------------------------------------------- fake backends (negative controls)


SEEN: list[ReducedProblem] = []  # every problem a fake backend received


class _FakeBase(Backend):
    classes = frozenset({"stump"})
    certificate = "fake: for protocol tests only"

    def best(self, problem: ReducedProblem) -> tuple[Stump, float]:
        """Exact best stump on the reduced problem, by brute force over the reduced data."""
        best = None
        for j in range(problem.d):
            for t in [-math.inf, math.inf] + sorted(set(problem.X[:, j].tolist())):
                for s in (1, -1):
                    h = Stump(j, t, s)
                    loss = labeling_loss(h.predict(problem.X), problem.y, problem.w)
                    if best is None or loss < best[1]:
                        best = (h, loss)
        return best

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        SEEN.append(problem)
        return self.answer(problem)


class HonestBackend(_FakeBase):
    """Positive control: optimal hypothesis, bound = reduced optimum."""

    name = "fake-honest"

    def answer(self, problem):
        h, loss = self.best(problem)
        return BackendAnswer(h, bound=loss)


class SuboptimalBackend(_FakeBase):
    """Returns the all-ones stump while claiming the true optimum as bound ("I found the optimum")."""

    name = "fake-suboptimal"

    def answer(self, problem):
        _, loss = self.best(problem)
        return BackendAnswer(Stump(0, -math.inf, 1), bound=loss)


class LowBoundBackend(_FakeBase):
    """Optimal hypothesis, but a proved bound that is too weak (optimum - 1)."""

    name = "fake-low-bound"

    def answer(self, problem):
        h, loss = self.best(problem)
        return BackendAnswer(h, bound=loss - 1.0, status="time_limit")


class NoBoundBackend(_FakeBase):
    """Optimal hypothesis, nothing proved (bound = -inf)."""

    name = "fake-no-bound"

    def answer(self, problem):
        h, _ = self.best(problem)
        return BackendAnswer(h, bound=-math.inf, status="time_limit")


class ShortBackend(_FakeBase):
    """Optimal hypothesis, bound = optimum - ``short`` (set by the test)."""

    name = "fake-short"
    short = 0.0

    def answer(self, problem):
        h, loss = self.best(problem)
        return BackendAnswer(h, bound=loss - type(self).short)


class OptionBackend(_FakeBase):
    name = "fake-options"
    options = frozenset({"gamma"})

    def answer(self, problem):
        h, loss = self.best(problem)
        return BackendAnswer(h, bound=loss, details={"gamma": self.config.get("gamma")})


FAKES = [HonestBackend, SuboptimalBackend, LowBoundBackend, NoBoundBackend, ShortBackend, OptionBackend]


@pytest.fixture
def fakes():
    """Register the fake backends for one test (through the public registry; removed afterwards)."""
    with contextlib.ExitStack() as stack:
        for cls in FAKES:
            stack.enter_context(registered_backend(cls.name, cls))
        SEEN.clear()
        yield SEEN


# three points, signed weights; all-ones is strictly suboptimal
X3 = np.array([[0.0, 5.0], [1.0, 4.0], [2.0, 3.0]])
Y3 = np.array([0, 1, 1])
W3 = np.array([2.0, -1.0, 3.0])
OPT3 = brute_stump(X3, Y3, W3)  # x_0 >= 0.5 errs only on the -1: -1


def test_honest_fake_is_certified_and_sees_reduced_problem(fakes):
    """Positive control, and the backend only ever sees the reduced (w >= 0) problem."""
    res = make_oracle("stump", backend="fake-honest").solve(X3, Y3, W3)
    assert OPT3 == -1.0
    assert res.certified and res.objective == OPT3 and res.bound == pytest.approx(OPT3)
    assert res.gap == 0.0 and res.signed_weights and res.backend == "fake-honest"
    (problem,) = fakes
    np.testing.assert_array_equal(problem.w, np.abs(W3))
    np.testing.assert_array_equal(problem.y, [0, 0, 1])  # the label under the negative weight flipped
    assert problem.y.dtype == np.int8 and problem.X.dtype == np.float64


def test_suboptimal_hypothesis_is_not_certified(fakes):
    """objective is re-scored from the hypothesis, not taken from the backend's claim."""
    res = make_oracle("stump", backend="fake-suboptimal").solve(X3, Y3, W3)
    assert res.objective == weighted_zero_one_loss(np.ones(3), Y3, W3) == 2.0
    assert res.objective == res.hypothesis.loss(X3, Y3, W3)
    assert res.bound == pytest.approx(OPT3)
    assert not res.certified
    assert res.gap > 0


def test_weak_bound_is_not_certified(fakes):
    res = make_oracle("stump", backend="fake-low-bound").solve(X3, Y3, W3)
    assert res.objective == OPT3 and res.bound == pytest.approx(OPT3 - 1.0)
    assert not res.certified and res.status == "time_limit"


def test_missing_bound_is_not_certified(fakes):
    res = make_oracle("stump", backend="fake-no-bound").solve(X3, Y3, W3)
    assert res.bound == -math.inf and not res.certified and res.gap == math.inf


def test_certificate_tolerance_is_tight(fakes, monkeypatch):
    """A bound short by more than the tolerance is refused; by less, accepted (float summation slack)."""
    tol = certification_tolerance(W3)
    assert tol == pytest.approx(6e-9)  # 1e-9 * sum |w|
    monkeypatch.setattr(ShortBackend, "short", 0.5 * tol)
    assert make_oracle("stump", backend="fake-short").solve(X3, Y3, W3).certified
    monkeypatch.setattr(ShortBackend, "short", 3.0 * tol)
    assert not make_oracle("stump", backend="fake-short").solve(X3, Y3, W3).certified


def test_backend_options_are_passed_and_unknown_ones_rejected(fakes):
    res = make_oracle("stump", backend="fake-options", gamma=0.25).solve(X3, Y3, W3)
    assert res.details["gamma"] == 0.25 and res.details["certificate"] == "fake: for protocol tests only"
    with pytest.raises(ValueError, match=r"fake-options.*unknown option.*'gamma2'"):
        make_oracle("stump", backend="fake-options", gamma2=0.25)


# ---------------------------------------------------------------- make_oracle errors


def test_unknown_hypothesis_class():
    with pytest.raises(ValueError, match=r"hypothesis class 'circle'"):
        make_oracle("circle")


def test_unknown_backend():
    with pytest.raises(ValueError, match=r"backend 'cplex'.*available"):
        make_oracle("stump", backend="cplex")


def test_unknown_option_with_explicit_backend():
    with pytest.raises(ValueError, match=r"'sweep'.*unknown option.*'max_nodes'"):
        make_oracle("stump", backend="sweep", max_nodes=5)


def test_backend_options_without_a_backend_are_rejected_at_construction():
    with pytest.raises(ValueError, match=r"option\(s\) \['max_nodes'\] need an explicit backend"):
        make_oracle("stump", max_nodes=5)
    assert make_oracle("stump", time_limit=5).solve(X3, Y3, W3).certified


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "soon"])
def test_time_limit_must_be_positive(bad):
    with pytest.raises(ValueError, match=r"time_limit.*" + re.escape(repr(bad))):
        make_oracle("stump", time_limit=bad)
    with pytest.raises(ValueError, match=r"time_limit.*" + re.escape(repr(bad))):
        make_oracle("stump", backend="sweep", time_limit=bad)


def test_backend_that_does_not_support_the_class():
    oracle = make_oracle("halfspace", backend="sweep")
    with pytest.raises(UnsupportedProblemError, match=r"'sweep'.*'halfspace'"):
        oracle.solve(X3, Y3, W3)


# ---------------------------------------------------------------- solve errors


ORACLE = make_oracle("stump")


@pytest.mark.parametrize("bad, shown", [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_non_finite_X(bad, shown):
    X = X3.copy()
    X[1, 1] = bad
    with pytest.raises(ValueError, match=rf"X must be finite.*\(1, 1\).*{shown}"):
        ORACLE.solve(X, Y3, W3)


@pytest.mark.parametrize("bad, shown", [(math.nan, "nan"), (math.inf, "inf")])
def test_non_finite_weights(bad, shown):
    w = W3.copy()
    w[2] = bad
    with pytest.raises(ValueError, match=rf"weights must be finite.*index 2.*{shown}"):
        ORACLE.solve(X3, Y3, w)


@pytest.mark.parametrize("bad", [2, -1, 0.5, math.nan])
def test_labels_outside_zero_one(bad):
    y = np.array([0, 1, bad], dtype=float if isinstance(bad, float) else int)
    with pytest.raises(ValueError, match=rf"y must contain labels in \{{0, 1\}}.*index 2.*{bad}"):
        ORACLE.solve(X3, y, W3)


def test_non_numeric_labels():
    with pytest.raises(ValueError, match=r"y must contain labels.*'cat'"):
        ORACLE.solve(X3, np.array(["cat", "dog", "cat"]), W3)


@pytest.mark.parametrize(
    "X, y, w, pattern",
    [
        (X3, Y3[:2], W3, r"y has 2 entries but X has 3 rows"),
        (X3, Y3, W3[:2], r"weights has 2 entries but X has 3 rows"),
        (X3, np.array([0, 1, 1, 0]), W3, r"y has 4 entries but X has 3 rows"),
        (X3, Y3, np.ones((3, 2)), r"weights must be 1-D.*\(3, 2\)"),
        (X3, Y3, 1.0, r"weights must be a 1-D array of length 3.*scalar"),
        (X3, np.zeros((3, 2)), W3, r"y must be 1-D.*\(3, 2\)"),
        (np.zeros((3, 2, 1)), Y3, W3, r"X must be a 2-D array.*\(3, 2, 1\)"),
    ],
)
def test_shape_mismatch(X, y, w, pattern):
    with pytest.raises(ValueError, match=pattern):
        ORACLE.solve(X, y, w)


@pytest.mark.parametrize("X", [np.zeros((0, 2)), [], np.zeros((3, 0))])
def test_empty_X(X):
    with pytest.raises(ValueError, match=r"X (is empty|has no features)"):
        ORACLE.solve(X, [], [])


def test_threshold_with_more_than_one_feature():
    with pytest.raises(ValueError, match=r"X must have exactly one feature.*'threshold'.*d=2"):
        make_oracle("threshold").solve(X3, Y3, W3)


def test_inputs_are_not_mutated_and_lists_accepted():
    X, y, w = X3.copy(), Y3.copy(), W3.copy()
    res = ORACLE.solve(X.tolist(), y.tolist(), w.tolist())
    np.testing.assert_array_equal(X, X3)
    np.testing.assert_array_equal(w, W3)
    assert res.objective == OPT3 and res.certified


def test_result_fields_and_to_dict():
    res = ORACLE.solve(X3, Y3, W3, caller="test", step="one")
    assert (res.n, res.d, res.hypothesis_class, res.backend) == (3, 2, "stump", "sweep")
    assert res.status == "optimal" and res.nodes == 0 and res.seconds >= 0
    assert res.tolerance == certification_tolerance(W3)
    data = res.to_dict()
    assert data["hypothesis"] == res.hypothesis.to_dict() and data["certified"] is True
    assert isinstance(res.hypothesis, Stump) and not isinstance(res.hypothesis, Halfspace)


@pytest.mark.parametrize(
    "module",
    [
        "oraclepriv.solvers.base",
        "oraclepriv.solvers.combinatorial.sweep",
        "oraclepriv.solvers.mip.mipbackend",
        "oraclepriv.solvers.branch_and_cut.scip_bc",
        "oraclepriv.solvers.mip.cpsat",
    ],
)
def test_a_solver_module_imports_on_its_own(module):
    """Each solver module imports on its own, in a fresh interpreter: no import cycle through the package (e.g.
    base -> oraclepriv -> oracle -> base)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- logging


def test_library_events_are_logged_at_debug_on_the_oraclepriv_loggers(caplog):
    """Backend choice, uncertified answers, cores added by the cut loop, deadlines reached and
    fallbacks are DEBUG records on children of the ``oraclepriv`` logger (the library never prints)."""
    import logging

    from oraclepriv.robust import fallback_oracle

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4))
    y = (X @ rng.normal(size=4) + 0.8 * rng.normal(size=120) > 0).astype(int)
    with caplog.at_level(logging.DEBUG, logger="oraclepriv"):
        make_oracle("halfspace", backend="scip-bc").solve(X, y)  # scip-bc adds cores
        fallback_oracle("halfspace", backend="naive-highs", time_limit=0.3).solve(X, y)
        make_oracle("halfspace", backend="highs", time_limit=0.01).solve(X, y)
    events = {(r.name, r.getMessage().split(" ")[0]) for r in caplog.records if r.levelno == logging.DEBUG}
    assert ("oraclepriv.oracle", "default") in events  # "default backend for halfspace ...: ..."
    assert ("oraclepriv.solvers.branch_and_cut.scip_bc_handler", "core") in events  # "core added ..."
    assert ("oraclepriv.oracle", "uncertified") in events  # naive-highs never certifies
    assert ("oraclepriv.robust", "fallback:") in events
    assert ("oraclepriv.solvers.runtime.deadline", "deadline") in events  # highs at 10 ms
    assert all(r.name.startswith("oraclepriv.") for r in caplog.records if r.name.startswith("oraclepriv"))


def test_optimal_only_when_the_answer_meets_its_bound():
    """A backend that says "optimal" about an answer that does not meet its bound
    is reported "feasible" (its word kept in details["backend_status"]); an answer that meets a bound
    over a restricted class stays "optimal" with the restriction stated; time_limit stays."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1, 0, 1, 0])  # the stump below makes 3 mistakes

    def backend_class(status, bound, restricted=False):
        class Claims(Backend):
            name = "claims"
            classes = frozenset({"stump"})

            def restriction(self, hypothesis_class):
                return "a smaller class" if restricted else None

            def solve(self, problem):
                return BackendAnswer(Stump(0, 0.5, 1), bound=bound, status=status)

        return Claims

    with registered_backend("claims", backend_class("optimal", 0.0)):
        res = make_oracle("stump", backend="claims").solve(X, y)
    assert res.objective == 3.0 and not res.certified
    assert res.status == "feasible" and res.details["backend_status"] == "optimal"
    with registered_backend("claims", backend_class("optimal", 3.0, restricted=True)):
        res = make_oracle("stump", backend="claims").solve(X, y)
    assert res.status == "optimal" and res.meets_bound and not res.certified and res.restriction
    with registered_backend("claims", backend_class("time_limit", 0.0)):
        res = make_oracle("stump", backend="claims").solve(X, y)
    assert res.status == "time_limit" and "backend_status" not in res.details
