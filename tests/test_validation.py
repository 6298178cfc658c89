"""One epsilon/delta rule for the library and the command line, the learners' declarative parameter
constraints (scikit-learn's ``_parameter_constraints`` style, :mod:`oraclepriv.validation`), and one registry
mechanism for the 0-1 and the convex backends (:class:`oraclepriv.backends.BackendRegistry`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oraclepriv.backends import CONVEX_BACKENDS, ZERO_ONE_BACKENDS, BackendRegistry, backend_class
from oraclepriv.convex_oracle import ConvexOracle
from oraclepriv.learners import (
    RRSPM,
    RSPM,
    OutputPerturbationLogistic,
    Perturbation,
    PPMHalfspaces,
    PublicCoverEM,
    Regularization,
    SubsampleAggregate,
)
from oraclepriv.learners.registry import learner_entries
from oraclepriv.ppm.exp_mech import sample_from_histogram
from oraclepriv.public_data import PublicData
from oraclepriv.validation import (
    BOOLEAN,
    MAX_EPSILON,
    NO_VALIDATION,
    Interval,
    StrOptions,
    check_delta,
    check_delta_for_n,
    check_epsilon,
    check_param,
    validate_params,
)

LEARNERS = [
    RRSPM,
    RSPM,
    Perturbation,
    PPMHalfspaces,
    PublicCoverEM,
    Regularization,
    SubsampleAggregate,
    OutputPerturbationLogistic,
]

# ------------------------------------------------------------------------------------------ epsilon and delta


@pytest.mark.parametrize("value", [1, 0.5, np.float64(2.0), np.float32(0.25), np.int64(3), MAX_EPSILON])
def test_epsilon_takes_positive_reals_up_to_the_maximum(value):
    assert check_epsilon(value) == float(value) and isinstance(check_epsilon(value), float)


@pytest.mark.parametrize(
    "value", [0, -1.0, math.nan, math.inf, MAX_EPSILON + 0.5, 1e6, True, "1", None, np.array(1.0), [1.0]]
)
def test_epsilon_refuses_everything_else_naming_the_argument_and_the_value(value):
    with pytest.raises(ValueError, match=r"^--epsilon must be a real number in \(0, 700\]") as error:
        check_epsilon(value, "--epsilon")
    assert str(error.value).endswith(f"got {value!r}" if not isinstance(value, np.ndarray) else "got array(1.)")


def test_inf_is_taken_only_where_the_mechanism_defines_it():
    assert check_epsilon(math.inf, allow_inf=True) == math.inf
    with pytest.raises(ValueError, match=r"\(0, 700\] .* or inf; got 701"):
        check_epsilon(701, allow_inf=True)
    assert sample_from_histogram(np.array([0, 3, 1]), math.inf, np.random.default_rng(0))[0] == 1
    with pytest.raises(ValueError, match="epsilon"):
        sample_from_histogram(np.array([1, 2]), True, np.random.default_rng(0))


@pytest.mark.parametrize("value", [0, 0.0, 1e-9, 0.999, np.float64(0.5)])
def test_delta_takes_reals_in_zero_one(value):
    assert check_delta(value) == float(value)


@pytest.mark.parametrize("value", [1, 1.0, -1e-12, math.nan, True, "0.1", None])
def test_delta_refuses_everything_else(value):
    with pytest.raises(ValueError, match=r"^--delta must be a real number in \[0, 1\); got"):
        check_delta(value, "--delta")


def test_delta_below_one_over_n():
    assert check_delta_for_n(0.009, 100) == 0.009 and check_delta_for_n(0.0, 1) == 0.0
    with pytest.raises(ValueError, match=r"delta 0.01 is >= 1/n = 0.01 for n=100 private records"):
        check_delta_for_n(0.01, 100)


@pytest.mark.parametrize("cls", [RRSPM, PublicCoverEM, Perturbation, SubsampleAggregate])
@pytest.mark.parametrize("epsilon", [True, "1.0", 701.0, math.inf])
def test_every_learner_applies_the_same_epsilon_rule(cls, epsilon):
    rng = np.random.default_rng(0)
    X, y, Z = rng.normal(size=(20, 1)), rng.integers(0, 2, 20), PublicData(rng.normal(size=(4, 1)))
    with pytest.raises(ValueError, match=rf"^{cls.__name__}: epsilon must be a real number in \(0, 700\]"):
        cls(epsilon=epsilon, hypothesis_class="threshold").fit(X, y, X_public=Z)


def test_ppm_takes_inf_but_not_a_finite_epsilon_above_the_maximum():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [3.0, 1.0]])
    y, public = np.array([0, 0, 0, 1, 1]), np.array([True, True, True, False, False])
    with pytest.warns(UserWarning, match="epsilon=inf"):
        PPMHalfspaces(epsilon=math.inf, random_state=0).fit(X, y, public)
    with pytest.raises(ValueError, match=r"PPMHalfspaces: epsilon must be .* or inf; got 800"):
        PPMHalfspaces(epsilon=800).fit(X, y, public)


# ------------------------------------------------------------------------------------------ declarative constraints


def test_constraints_describe_themselves():
    assert Interval("real", 0.0, 1.0, "left").describe() == "a real number in [0, 1)"
    assert Interval("integer", 2, None, "left").describe() == "an integer >= 2"
    assert Interval("real", 0.0, math.inf, "neither").describe() == "a real number in (0, inf)"
    assert Interval("real", math.inf, math.inf, "both").describe() == "inf"
    assert StrOptions("a", "b").describe() == "one of ['a', 'b']"
    with pytest.raises(ValueError, match=r"^X: k must be None, one of \['auto'\] or an integer >= 1; got 2.5$"):
        check_param(2.5, "k", (None, StrOptions("auto"), Interval("integer", 1, None, "left")), "X")


@pytest.mark.parametrize(
    ("constraint", "good", "bad"),
    [
        (Interval("integer", 1, None, "left"), [1, np.int64(7)], [0, 4.0, True, np.bool_(True), "3"]),
        (Interval("real", 0.0, 1.0, "neither"), [0.5, np.float32(0.1)], [0, 1, math.nan, "0.5", None]),
        (StrOptions("raise", "flag"), ["raise"], ["RAISE", 1, None]),
        (BOOLEAN, [True, np.bool_(False)], [1, 0, "yes", None]),
    ],
)
def test_constraints_accept_exactly_their_values(constraint, good, bad):
    assert all(constraint.accepts(v) for v in good)
    assert not any(constraint.accepts(v) for v in bad)


def test_the_validator_checks_the_declared_parameters_only():
    validate_params({"a": object(), "b": "anything"}, {"a": NO_VALIDATION}, "Toy")  # b: a subclass's, undeclared
    with pytest.raises(ValueError, match=r"^Toy: a must be an integer >= 1; got 0$"):
        validate_params({"a": 0}, {"a": (Interval("integer", 1, None, "left"),), "c": NO_VALIDATION}, "Toy")


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_every_learner_declares_a_constraint_for_each_parameter(cls):
    assert set(cls._parameter_constraints) == set(cls().get_params(deep=False))
    declared = cls._parameter_constraints.get("hypothesis_class")
    if declared is not None:  # the classes the learner supports, said once
        assert declared == (StrOptions(*cls.supported_classes),)


@pytest.mark.parametrize(
    ("cls", "params", "message"),
    [
        (RRSPM, {"allow_weak_guarantee": "yes"}, "RRSPM: allow_weak_guarantee must be True or False; got 'yes'"),
        (RRSPM, {"time_limit": math.inf}, "RRSPM: time_limit must be None or a real number in (0, inf); got inf"),
        (Perturbation, {"J": 4.0}, "Perturbation: J must be an integer >= 1; got 4.0"),
        (SubsampleAggregate, {"n_teachers": 1}, "SubsampleAggregate: n_teachers must be an integer >= 2; got 1"),
        (PublicCoverEM, {"max_candidates": 0}, "PublicCoverEM: max_candidates must be an integer >= 1; got 0"),
        (RSPM, {"hypothesis_class": "halfspace"}, "RSPM: hypothesis_class must be one of ['threshold', 'stump']"),
    ],
)
def test_learners_name_themselves_the_parameter_and_the_value(cls, params, message):
    rng = np.random.default_rng(1)
    X, y = rng.integers(-1, 2, size=(20, 1)).astype(float), rng.integers(0, 2, 20)
    public = None if cls is RSPM else PublicData(rng.normal(size=(4, 1)))
    with pytest.raises(ValueError) as error:
        cls(**{"hypothesis_class": "threshold", **params}).fit(X, y, X_public=public)
    assert str(error.value).startswith(message)


def test_ppm_and_output_perturbation_validate_through_the_same_layer():
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"^PPMHalfspaces: private_label must be an integer in \[0, 1\]; got True"):
        PPMHalfspaces(private_label=True).fit(X, y, np.array([True, False, False, False]))
    with pytest.raises(ValueError, match=r"^OutputPerturbationLogistic: opt_tol must be a real number in \(0, 1\)"):
        OutputPerturbationLogistic(opt_tol=1.0).fit(X, y)


# ------------------------------------------------------------------------------------------ one registry mechanism


class _FakeConvexBackend:
    """A convex backend whose solver package is absent (``requires``), for the registry's checks."""

    requires = ("oraclepriv_no_such_solver_package",)

    def __init__(self, opt_tol: float = 1e-6) -> None:
        self.opt_tol = opt_tol


def test_the_0_1_and_the_convex_backends_share_one_registry_mechanism():
    assert isinstance(ZERO_ONE_BACKENDS, BackendRegistry) and isinstance(CONVEX_BACKENDS, BackendRegistry)
    assert backend_class("sweep") is ZERO_ONE_BACKENDS.get("sweep")
    assert CONVEX_BACKENDS.names() == ["highs-qp+kkt"] and CONVEX_BACKENDS.canonical("scipy") == "highs-qp+kkt"
    assert CONVEX_BACKENDS.is_installed("highs-qp+kkt") and ZERO_ONE_BACKENDS.is_installed("sweep")
    with CONVEX_BACKENDS.registered("fake-convex", _FakeConvexBackend):
        assert "fake-convex" in CONVEX_BACKENDS and not CONVEX_BACKENDS.is_installed("fake-convex")
        assert CONVEX_BACKENDS.installed() == ["highs-qp+kkt"]
        oracle = ConvexOracle("fake-convex", opt_tol=1e-3)  # the convex oracle looks its backend up in the registry
        assert isinstance(oracle.solver, _FakeConvexBackend) and oracle.solver.opt_tol == 1e-3
    assert "fake-convex" not in CONVEX_BACKENDS
    with pytest.raises(ValueError, match="backend must be None or one of"):
        ConvexOracle("fake-convex")


def test_registry_lookups_are_lazy_and_errors_name_the_backend():
    registry = BackendRegistry("test", {"lazy": "oraclepriv.solvers.combinatorial.sweep:SweepBackend"})
    assert registry.names() == ["lazy"] and registry.get("lazy").__name__ == "SweepBackend"
    with pytest.raises(ValueError, match=r"unknown backend 'nope'; available backends: \['lazy'\]"):
        registry.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("lazy", "a.b:C")


def test_the_learner_registry_names_every_learner_of_the_package():
    assert [e.name for e in learner_entries()][:6] == [
        "rrspm",
        "perturbation",
        "regularization",
        "subsample",
        "public-cover-em",
        "ppm",
    ]
    assert {e.estimator_class() for e in learner_entries()} >= {RRSPM, Perturbation, PPMHalfspaces}
