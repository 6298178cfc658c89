"""A solver that raises is a failed solver: the robustification modes release on D and D' alike.

The adversary raises ``RuntimeError`` (its message holding the private record) on exactly the
calls whose data hold the record in which D and D' differ, and answers exactly elsewhere. With
``on_uncertified="fallback"`` (RRSPM, Perturbation) every such call is re-solved by the exact
fallback; SubsampleAggregate's teacher on that record abstains. So with the same seed both
neighbours release, the release minus its hypothesis is identical, and it is byte-identical
whenever the hypothesis is (the release is a function of the noise and the public data); the
diagnostics record the failure on D only. What the exception said never reaches the release or the
message of an error the fit raises.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem
from robust_learners import ROBUST_LEARNERS
from test_release_boundary import SEEDS, _check_pair, _neighbours

from oraclepriv import make_oracle
from oraclepriv.backends import registered_backend
from oraclepriv.learners import RRSPM, SubsampleAggregate, UncertifiedOracleError
from oraclepriv.release import PrivacyLeakWarning
from oraclepriv.robust import FallbackOracle

X, Y, Y_PRIME, Z = _neighbours()
#: what the solver says when it raises: D's record 0, the kind of private value a message must not carry
SECRET = f"record x={X[0, 0]!r} with label {int(Y[0])}"


class RaisingBackend(Backend):
    """Exact sweep, but ``RuntimeError`` on every call holding D's record 0 (its x, label and weight 1)."""

    name = "raising-on-record"
    classes = frozenset({"threshold", "stump"})
    certificate = "exact (sort + prefix sums) unless it raises"
    raised = 0

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        from oraclepriv.solvers.combinatorial.sweep import SweepBackend

        hit = (problem.X[:, 0] == X[0, 0]) & (problem.y == Y[0]) & (problem.w == 1.0)
        if hit.any():
            RaisingBackend.raised += 1
            raise RuntimeError(f"solver crashed on {SECRET}")
        return SweepBackend().solve(problem)


LEARNERS = ROBUST_LEARNERS


def test_the_solver_raises_on_the_neighbour_holding_the_record_only():
    with registered_backend("raising", RaisingBackend) as name:
        oracle = make_oracle("threshold", backend=name)
        assert oracle.solve(X[1:], Y[1:]).certified
        with pytest.raises(RuntimeError, match="solver crashed"):
            oracle.solve(X, Y)
        assert oracle.solve(X, Y_PRIME).certified  # D' changes record 0's label: no call raises


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_release_on_both_neighbours_under_a_raising_solver(name):
    make = LEARNERS[name]
    RaisingBackend.raised = 0
    with registered_backend("raising", RaisingBackend) as backend:
        same, differ = _check_pair(
            lambda s: make(backend, s).fit(X, Y, X_public=Z), lambda s: make(backend, s).fit(X, Y_PRIME, X_public=Z)
        )
    assert RaisingBackend.raised >= len(SEEDS)  # the solver did raise on D, every seed
    assert same >= 3, f"only {same} seeds released the same hypothesis: the byte-identity check barely ran"
    assert differ == len(SEEDS)  # the failure shows in the diagnostics of D's fits only


def test_the_failed_call_is_a_diagnostic_and_its_message_stays_out_of_the_release():
    with registered_backend("raising", RaisingBackend) as backend:
        on_d = LEARNERS["rrspm-laplace-fallback"](backend, 0).fit(X, Y, X_public=Z)
        teachers = LEARNERS["subsample-keep"](backend, 0).fit(X, Y, X_public=Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        records = on_d.ledger_.records
        assert [(r["step"], r["status"]) for r in records][:2] == [
            ("private-erm", "error"),
            ("private-erm/fallback", "optimal"),
        ]
        assert on_d.diagnostics_["fallbacks"] == 1 and on_d.diagnostics_["proof_applies"]
        # a teacher whose call raised has no answer to keep: it abstains (votes 1/2 on every public point)
        failed = teachers.diagnostics_["uncertified_teachers"]
        assert len(failed) == 1 and np.all(teachers.diagnostics_["teacher_votes"][failed[0]] == 0.5)
    for fitted in (on_d, teachers):
        assert SECRET not in fitted.release_.to_json() and "crashed" not in fitted.release_.to_json()
        assert "raise" in fitted.privacy_["robustness"]  # the record says exceptions are covered
    assert "primary backend" in on_d.privacy_["guarantee"] and "exact fallback itself" in on_d.privacy_["guarantee"]


def test_raise_mode_aborts_with_a_message_that_does_not_echo_the_exception():
    with registered_backend("raising", RaisingBackend) as backend:
        learner = SubsampleAggregate(
            n_teachers=4, noise="laplace", delta=0.0, hypothesis_class="threshold", backend=backend, random_state=0
        )
        learner.set_params(on_uncertified="raise")
        with pytest.raises(UncertifiedOracleError) as info:
            learner.fit(X, Y, X_public=Z)
    assert "raised an exception" in str(info.value) and SECRET not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained traceback shows it
    with pytest.warns(PrivacyLeakWarning, match="non-private"):
        error = info.value.error
    assert isinstance(error, RuntimeError) and SECRET in str(error)


def test_a_fallback_that_raises_aborts_without_echoing_it():
    """The one path left outside the guarantee (the exact fallback itself raising): the fit stops with
    UncertifiedOracleError naming the step and the backend, the exception a warned diagnostic."""
    with registered_backend("raising", RaisingBackend) as name:
        oracle = FallbackOracle(make_oracle("threshold", backend=name), make_oracle("threshold", backend=name))
        with pytest.raises(UncertifiedOracleError) as info:
            oracle.solve(X, Y, caller="test", step="private-erm")
    message = str(info.value)
    assert "'private-erm'" in message and "fallback" in message and SECRET not in message
    with pytest.warns(PrivacyLeakWarning):
        assert SECRET in str(info.value.error)
    # a parallel run hands exceptions back between processes: the message goes, the diagnostic stays behind
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == message and type(again) is UncertifiedOracleError
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert again.error is None and again.result is None


def test_uncertified_oracle_error_result_warns_when_read():
    from oraclepriv.audit.controls import targeting_backend

    with registered_backend("targeting", targeting_backend(X[0], int(Y[0]))) as backend:
        with pytest.raises(UncertifiedOracleError) as info:
            RRSPM(epsilon=1.0, hypothesis_class="threshold", backend=backend, random_state=0).fit(X, Y, X_public=Z)
    with pytest.warns(PrivacyLeakWarning, match="result"):
        result = info.value.result
    assert result is not None and not result.certified
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert info.value.error is None  # nothing raised, nothing to warn about


def test_interrupts_are_not_failures():
    """KeyboardInterrupt and SystemExit from a teacher's solver end the fit; no teacher abstains on them."""
    for exc in (KeyboardInterrupt, SystemExit):

        class Interrupted(RaisingBackend):
            name = "interrupted"

            def solve(self, problem: ReducedProblem) -> BackendAnswer:
                raise exc()

        with registered_backend("interrupted", Interrupted) as backend:
            with pytest.raises(exc):
                LEARNERS["subsample-abstain"](backend, 0).fit(X, Y, X_public=Z)
            with pytest.raises(exc):
                LEARNERS["rrspm-laplace-fallback"](backend, 0).fit(X, Y, X_public=Z)


def test_learn_names_a_failed_fallback_in_its_flags_without_the_exception(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import oraclepriv.learners._base as base
    from oraclepriv.cli import app
    from oraclepriv.io import write_csv_problem

    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, X, Y)
    write_csv_problem(public, Z, None)
    with registered_backend("raising", RaisingBackend) as name:
        # the exact fallback raises too: the one path the guarantee leaves out
        monkeypatch.setattr(
            base,
            "fallback_oracle",
            lambda cls, backend, time_limit, **options: FallbackOracle(
                make_oracle(cls, backend=name), make_oracle(cls, backend=name)
            ),
        )
        result = CliRunner().invoke(
            app,
            ["learn", str(private), "--public", str(public), "--algorithm", "rrspm", "--hypothesis-class"]
            + ["threshold", "--epsilon", "1", "--backend", name, "--on-uncertified", "fallback"],
        )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "exact fallback backend" in result.stderr and "--on-uncertified raise stops" not in result.stderr
    assert SECRET not in result.output and "crashed" not in result.output
