"""Adding a learner touches one place: a toy learner, defined here, registered with one
:func:`~oraclepriv.learners.registry.register_learner` call, is offered and fitted by ``oraclepriv learn``
(its name among --algorithm's choices and in --help, the common flags mapped to its parameters, the ones it
does not take refused), and its saved release is used by ``predict``; unregistered, it is gone."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.hypotheses import Halfspace
from oraclepriv.io import write_csv_problem
from oraclepriv.learners._base import PublicDataEstimator
from oraclepriv.learners.registry import (
    LearnerEntry,
    learner_entries,
    register_learner,
    registered_learner,
    unregister_learner,
)
from oraclepriv.validation import Alternatives

runner = CliRunner()


class NoisyMajority(PublicDataEstimator):
    """A toy private learner: the constant classifier of the noisy majority label (report-noisy-max over the two
    label counts with Laplace(2/epsilon) noise, pure epsilon-DP: Dwork and Roth, "The Algorithmic Foundations of
    Differential Privacy", Claim 3.9). It reads no public point; the base class still takes them."""

    algorithm = "noisy-majority"
    reference = "report-noisy-max (Dwork, Roth: The Algorithmic Foundations of Differential Privacy, Claim 3.9)"
    delta = 0.0
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = dict(PublicDataEstimator._parameter_constraints)

    def __init__(self, *, epsilon: float = 1.0, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.random_state = random_state

    def _fit(self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None):
        ones, zeros = (float(np.sum(y == c)) + rng.laplace(scale=2.0 / self.epsilon_) for c in (1, 0))
        self._privacy.update(mechanism="report-noisy-max over the two label counts", oracle_calls_by_design=0)
        return Halfspace(tuple(0.0 for _ in range(X.shape[1])), 1.0 if ones >= zeros else -1.0)


ENTRY = LearnerEntry("noisy-majority", NoisyMajority, "toy: the noisy majority label", oracle=None, delta="pure")


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    write_csv_problem(tmp_path / "private.csv", X, (X[:, 0] > -1).astype(int))  # mostly 1
    write_csv_problem(tmp_path / "public.csv", rng.normal(size=(4, 2)), None)
    return tmp_path


def _learn(files, *args: str):
    private, public = str(files / "private.csv"), str(files / "public.csv")
    return runner.invoke(app, ["learn", private, "--public", public, "--algorithm", "noisy-majority", *args])


def test_a_registered_learner_is_offered_fitted_and_its_release_used(files):
    register_learner(ENTRY)
    try:
        help_text = runner.invoke(app, ["learn", "--help"]).output
        assert "noisy-majority" in help_text and "toy: the noisy majority label" in help_text
        model = files / "models" / "majority.json"
        fitted = _learn(files, "--epsilon", "2", "--seed", "0", "--json", "--out", str(model))
        assert fitted.exit_code == 0, fitted.output
        release = json.loads(fitted.stdout)
        assert release["algorithm"] == "noisy-majority" and release["privacy"]["epsilon"] == 2.0
        assert release["hypothesis"] == {"hypothesis_class": "halfspace", "w": [0.0, 0.0], "b": 1.0}
        assert json.loads(model.read_text()) == release  # --out saved the release printed
        predicted = runner.invoke(app, ["predict", str(model), str(files / "public.csv")])
        assert predicted.exit_code == 0 and predicted.stdout.split() == ["y", "1", "1", "1", "1"]
        for flag, value in (("--backend", "sweep"), ("--delta", "0.01"), ("--teachers", "4")):
            refused = _learn(files, "--epsilon", "1", flag, value)
            assert refused.exit_code == 2 and "Traceback" not in refused.output
            assert "--algorithm noisy-majority" in refused.stderr and f"{flag} " in refused.stderr
            assert "does not apply" in refused.stderr
        wrong_class = _learn(files, "--epsilon", "1", "--hypothesis-class", "stump")
        assert wrong_class.exit_code == 2 and "expected one of ['halfspace']" in wrong_class.stderr
    finally:
        unregister_learner("noisy-majority")
    gone = _learn(files, "--epsilon", "1")
    assert gone.exit_code == 2 and "'noisy-majority' is not one of" in gone.stderr
    assert "noisy-majority" not in runner.invoke(app, ["learn", "--help"]).output


def test_the_command_maps_its_flags_to_the_parameters_the_estimator_takes():
    with registered_learner(ENTRY) as entry:
        assert entry in learner_entries()
        assert entry.takes("--epsilon") and entry.takes("--seed")
        assert not entry.takes("--backend") and not entry.takes("--public-size") and not entry.takes("--delta")
        assert entry.classes() == ("halfspace",)
    assert ENTRY not in learner_entries()


def test_registrations_are_checked():
    with pytest.raises(ValueError, match="already registered"):
        register_learner(LearnerEntry("rrspm", NoisyMajority, "a second rrspm"))
    with pytest.raises(ValueError, match="estimator must be a class or a 'module:Class' string"):
        LearnerEntry("toy", "no-colon", "toy")
    with pytest.raises(ValueError, match=r"why_not names flags the command does not have: \['--bogus'\]"):
        LearnerEntry("toy", NoisyMajority, "toy", why_not={"--bogus": "no"})
    with pytest.raises(ValueError, match="no learner named 'toy'"):
        unregister_learner("toy")
