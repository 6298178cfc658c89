"""The release boundary: a fit publishes exactly what its privacy proof covers.

The adversary is the targeting solver (honestly uncertified exactly on instances that hold the
differing record of D, exact elsewhere): it makes every private-data call on D fail and none on D'.
With the same seed, whenever the released hypothesis is the same on D and D', the whole release
must be byte-identical (so nothing the release carries besides the hypothesis tells D from D'),
while the diagnostics, which depend on the private data, do differ (so the test can fail).
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import pytest
from robust_learners import ROBUST_LEARNERS
from typer.testing import CliRunner

from oraclepriv import make_oracle
from oraclepriv.audit.controls import targeting_backend
from oraclepriv.backends import registered_backend
from oraclepriv.cli import app
from oraclepriv.io import write_csv_problem
from oraclepriv.learners import (
    RRSPM,
    Perturbation,
    PPMHalfspaces,
    PublicCoverEM,
    Regularization,
    UncertifiedOracleError,
)
from oraclepriv.learners._base import NotFittedError
from oraclepriv.release import PrivacyLeakWarning, Release

SEEDS = range(12)


def _neighbours(n: int = 40, seed: int = 0):
    """1-D private data, D' = D with record 0's label flipped; 6 public points."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, 1)), 3)
    y = (X[:, 0] > 0.5).astype(np.int8) ^ (rng.random(n) < 0.1)
    y_prime = y.copy()
    y_prime[0] = 1 - y[0]
    Z = np.linspace(0.05, 0.95, 6).reshape(-1, 1)
    return X, y.astype(np.int8), y_prime.astype(np.int8), Z


X, Y, Y_PRIME, Z = _neighbours()
#: fails (uncertified, no bound) on every call whose data hold D's record 0 with its label and weight 1
TARGETING = targeting_backend(X[0], int(Y[0]))

# learners whose guarantee holds under this solver: (id, factory(backend, seed))
ORACLE_LEARNERS = ROBUST_LEARNERS


def _diagnostics(learner) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        diag = learner.diagnostics_.to_dict()
    for call in diag["oracle_calls"]:
        call.pop("seconds")  # timings differ run to run; everything else is deterministic
    diag.pop("seconds", None)
    return json.dumps(diag, sort_keys=True)


def _check_pair(fit_d, fit_d_prime, require_difference: bool = True) -> tuple[int, int]:
    """(seeds with the same hypothesis, seeds whose diagnostics differ), asserting the release contract:
    the release minus its hypothesis is identical, byte-identical when the hypothesis is, and then the
    diagnostics differ (so the identity is not vacuous: the release hides a real difference)."""
    same_hypothesis = differing_diagnostics = 0
    for seed in SEEDS:
        a, b = fit_d(seed), fit_d_prime(seed)
        ra, rb = a.release_.to_dict(), b.release_.to_dict()
        # the release never carries anything but the hypothesis that depends on the data
        assert {k: v for k, v in ra.items() if k != "hypothesis"} == {k: v for k, v in rb.items() if k != "hypothesis"}
        differ = _diagnostics(a) != _diagnostics(b)
        differing_diagnostics += differ
        if ra["hypothesis"] == rb["hypothesis"]:
            same_hypothesis += 1
            assert a.release_.to_json() == b.release_.to_json()  # byte-identical
            assert differ or not require_difference, f"seed {seed}: same release and same diagnostics"
    return same_hypothesis, differing_diagnostics


@pytest.mark.parametrize("name", sorted(ORACLE_LEARNERS))
def test_release_is_byte_identical_under_the_targeting_solver(name):
    make = ORACLE_LEARNERS[name]
    with registered_backend("targeting", TARGETING) as backend:
        same, differ = _check_pair(
            lambda s: make(backend, s).fit(X, Y, X_public=Z), lambda s: make(backend, s).fit(X, Y_PRIME, X_public=Z)
        )
    assert same >= 3, f"only {same} seeds released the same hypothesis: the byte-identity check barely ran"
    assert differ == len(SEEDS)  # the solver failed on D only: the diagnostics tell D from D' every time


def test_the_diagnostics_hidden_by_the_release_do_tell_the_neighbours_apart():
    """What the release withholds would identify D: fallbacks on D only (RRSPM) and failed teachers."""
    with registered_backend("targeting", TARGETING) as backend:
        on_d = ORACLE_LEARNERS["rrspm-laplace-fallback"](backend, 0).fit(X, Y, X_public=Z)
        on_d_prime = ORACLE_LEARNERS["rrspm-laplace-fallback"](backend, 0).fit(X, Y_PRIME, X_public=Z)
        teachers = ORACLE_LEARNERS["subsample-abstain"](backend, 0).fit(X, Y, X_public=Z)
    assert on_d.diagnostics_["fallbacks"] == 1 and on_d_prime.diagnostics_["fallbacks"] == 0  # the private call
    assert len(teachers.diagnostics_["uncertified_teachers"]) == 1  # the block holding record 0


def test_cli_learn_json_is_byte_identical_under_the_targeting_solver(tmp_path):
    runner = CliRunner()
    outputs = []
    with registered_backend("targeting", TARGETING) as backend:
        for labels in (Y, Y_PRIME):
            private, public = tmp_path / "private.csv", tmp_path / "public.csv"
            write_csv_problem(private, X, labels)
            write_csv_problem(public, Z, None)
            args = [
                "learn",
                str(private),
                "--public",
                str(public),
                "--algorithm",
                "rrspm",
                "--hypothesis-class",
                "threshold",
                "--epsilon",
                "1",
                "--backend",
                backend,
                "--on-uncertified",
                "fallback",
                "--seed",
                "3",
                "--json",
            ]
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            diag = runner.invoke(app, args + ["--diagnostics", "fallbacks"])
            outputs.append((result.stdout, json.loads(diag.stdout)["diagnostics"]["fallbacks"], diag.stderr))
    assert json.loads(outputs[0][0])["hypothesis"] == json.loads(outputs[1][0])["hypothesis"]
    assert outputs[0][0] == outputs[1][0]  # the default output: byte-identical
    assert (outputs[0][1], outputs[1][1]) == (1, 0)  # asked for by name, the diagnostics differ
    assert "NON-PRIVATE" in outputs[0][2]  # and come with a warning on stderr


def test_no_oracle_learners_and_regularization_publish_nothing_else():
    """PublicCoverEM, PPM (label-flip neighbour) and Regularization: release minus hypothesis identical;
    byte-identical when the hypothesis is; the diagnostics differ."""
    same, differ = _check_pair(
        lambda s: PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", random_state=s).fit(X, Y, X_public=Z),
        lambda s: PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", random_state=s).fit(X, Y_PRIME, X_public=Z),
    )
    assert same >= 3 and differ == len(SEEDS)  # every candidate's mistake count moves by one

    rng = np.random.default_rng(5)
    P = rng.normal(size=(30, 2))
    labels = (P[:, 0] > 0).astype(np.int8)
    public = labels == 0
    flipped = labels.copy()
    private_index = int(np.flatnonzero(~public)[0])
    flipped[private_index] = 0  # a private record's label changes (its privacy bit does not)

    def ppm(data, labels_):
        return lambda s: PPMHalfspaces(epsilon=1.0, label_determined=False, random_state=s).fit(data, labels_, public)

    # a label flip moves every member's mistake count, so the sampler's path and the hypothesis change
    # with it: the release minus its hypothesis must still be identical, and the diagnostics differ
    _, differ = _check_pair(ppm(P, labels), ppm(P, flipped))
    assert differ >= len(SEEDS) // 2
    # a record moved within its cell of the public arrangement: same mistakes, so the same member on
    # every seed, and then a byte-identical release
    moved = P.copy()
    moved[private_index] *= 1 + 1e-9
    same, _ = _check_pair(ppm(P, labels), ppm(moved, labels), require_difference=False)
    assert same == len(SEEDS)

    Xl = rng.uniform(-1, 1, size=(60, 2))
    Xl /= np.abs(Xl).sum(axis=1, keepdims=True)
    yl = (Xl[:, 0] > 0).astype(np.int8)
    Zl = Xl[:5] * 0.5
    Xl[0], yl[0] = 0.0, 1
    zero_flipped = yl.copy()
    zero_flipped[0] = 0  # a record at x = 0 costs |<w,0> - (2y-1)|/2 = 1/2 for every w, whatever its label
    same, _ = _check_pair(
        lambda s: Regularization(epsilon=1.0, random_state=s).fit(Xl, yl, X_public=Zl),
        lambda s: Regularization(epsilon=1.0, random_state=s).fit(Xl, zero_flipped, X_public=Zl),
        require_difference=False,
    )
    assert same >= 3
    flip_y = yl.copy()
    flip_y[1] = 1 - yl[1]
    _, differ = _check_pair(
        lambda s: Regularization(epsilon=1.0, random_state=s).fit(Xl, yl, X_public=Zl),
        lambda s: Regularization(epsilon=1.0, random_state=s).fit(Xl, flip_y, X_public=Zl),
    )
    assert differ == len(SEEDS)  # the regularized ERM's objective moves with the label


def test_release_holds_only_data_independent_facts():
    clf = RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=4).fit(X, Y, X_public=Z)
    release = clf.release_
    assert isinstance(release, Release)
    assert set(release.to_dict()) == {"algorithm", "hypothesis", "privacy", "n_features"}
    assert release.n_features == X.shape[1]  # the data's width, public like the hypothesis class
    assert "random_state" not in release.to_json()  # the seed would reveal the noise
    for key in release.privacy:
        for leak in ("objective", "bound", "seconds", "proof", "certified", "fallback", "agreement", "teacher_votes"):
            assert leak not in key or key == "on_uncertified", key
    assert clf.summary() == release.to_dict() and clf.privacy_ is release.privacy
    with pytest.raises(TypeError):
        release.privacy["epsilon"] = 2.0  # read-only


def test_a_release_refuses_rows_of_another_width_after_a_round_trip():
    """A stump or threshold reads one column, so without the fitted width it would predict on any wider table;
    the release records the width, keeps it through JSON and pickle, and refuses other widths, naming both."""
    import pickle

    X2 = np.column_stack([X, X[:, 0] * 2.0])
    clf = RRSPM(epsilon=1.0, hypothesis_class="stump").fit(X2, Y, X_public=np.column_stack([Z, Z[:, 0]]))
    for release in (clf.release_, Release.from_json(clf.release_.to_json()), pickle.loads(pickle.dumps(clf.release_))):
        assert release.n_features == 2
        assert release.predict(X2).shape == (len(X2),)
        with pytest.raises(ValueError, match=r"X has 3 feature\(s\), but this RRSPM release was fitted on 2"):
            release.predict(np.column_stack([X2, X2[:, 0]]))
    with pytest.raises(ValueError, match="n_features must be a positive integer"):
        Release("x", clf.release_.hypothesis, {}, n_features=0)


# ------------------------------------------------------------------------------ restricted certificates
FOUR_POINTS = (np.array([[0.0, 0.0], [1e-5, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([0, 1, 0, 1]))


def test_naive_highs_four_point_instance_is_not_certified():
    """Regression: naive-highs proves objective 1 over its unit-box, margin-1e-4 class; the optimum is 0."""
    Xf, yf = FOUR_POINTS
    naive = make_oracle("halfspace", backend="naive-highs").solve(Xf, yf)
    exact = make_oracle("halfspace", backend="enumerate").solve(Xf, yf)
    assert exact.certified and exact.objective == 0.0 and exact.restriction is None
    assert naive.objective == 1.0 and naive.bound == 1.0 and naive.meets_bound
    assert not naive.certified and "margin" in naive.restriction
    assert naive.to_dict()["restriction"] == naive.restriction


def test_margin_mode_certificates_are_restricted_for_halfspaces_only():
    Xf, yf = FOUR_POINTS
    margin = make_oracle("halfspace", backend="highs", certify="margin").solve(Xf, yf)
    assert not margin.certified and margin.restriction is not None
    stump = make_oracle("stump", backend="highs", certify="margin").solve(Xf, yf)
    assert stump.certified and stump.restriction is None  # the staircase model is exact in either mode


def test_learners_refuse_a_restricted_backend_and_route_it_to_the_fallback():
    Xf, yf = FOUR_POINTS
    Zf = np.array([[0.5, 0.5], [0.2, 0.9]])
    with pytest.raises(ValueError, match="backend='naive-highs' proves its bounds only over halfspaces with"):
        RRSPM(epsilon=1.0, backend="naive-highs", random_state=0).fit(Xf, yf, X_public=Zf)
    routed = RRSPM(epsilon=1.0, backend="naive-highs", on_uncertified="fallback", random_state=0).fit(
        Xf, yf, X_public=Zf
    )
    assert routed.diagnostics_["fallbacks"] == 2 and routed.diagnostics_["proof_applies"]
    assert all(r["certified"] == (r["backend"] != "naive-highs") for r in routed.ledger_.records)
    with pytest.warns(PrivacyLeakWarning, match="flag"):
        flagged = RRSPM(epsilon=1.0, backend="naive-highs", on_uncertified="flag", random_state=0).fit(
            Xf, yf, X_public=Zf
        )
    assert flagged.diagnostics_["proof_applies"] is False and flagged.privacy_["guarantee"].startswith("none")


def test_uncertified_error_names_the_step_and_backend_but_not_the_numbers():
    with registered_backend("targeting", TARGETING) as backend:
        with pytest.raises(UncertifiedOracleError) as info:
            RRSPM(epsilon=1.0, hypothesis_class="threshold", backend=backend, random_state=0).fit(X, Y, X_public=Z)
    message = str(info.value)
    assert "'private-erm'" in message and backend in message
    assert "objective=" not in message and "bound=" not in message
    assert info.value.result is not None and not info.value.result.certified


# ------------------------------------------------------------------------------ no private data left behind
def _arrays_holding(value: float, roots) -> list[str]:
    """Paths (from module globals and this thread's thread-locals) to numpy arrays containing ``value``."""
    import gc
    import threading

    seen: set[int] = set()
    found: list[str] = []
    stack = list(roots)
    while stack:
        path, obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type(None))):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind == "f" and np.any(obj == value):
                found.append(path)
            continue
        if isinstance(obj, type(sys)) and not obj.__name__.startswith(("oraclepriv", "solvers")):
            continue
        if isinstance(obj, threading.local):
            stack.append((f"{path}.<thread-local>", dict(vars(obj))))
        for i, child in enumerate(gc.get_referents(obj)):
            stack.append((f"{path}/{type(child).__name__}[{i}]", child))
    return found


@pytest.mark.slow
def test_no_private_record_stays_in_module_or_thread_state_after_fit():
    sentinel = 7777.123456
    Xs = X.copy()
    Xs[3, 0] = sentinel
    for learner in (
        RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=0),
        Perturbation(epsilon=1.0, delta=1e-3, J=2, hypothesis_class="threshold", random_state=0),
    ):
        learner.fit(Xs, Y, X_public=Z)
    del learner
    roots = [
        (name, module)
        for name, module in list(sys.modules.items())
        if name.startswith(("oraclepriv", "solvers")) and module is not None
    ]
    assert _arrays_holding(sentinel, roots) == []
    # the scan does find a private record where one is held (a control for the check itself)
    import oraclepriv.learners._workspace as workspace

    workspace._local.leak_for_the_test = np.array([sentinel])
    try:
        assert _arrays_holding(sentinel, roots)
    finally:
        del workspace._local.leak_for_the_test


# ------------------------------------------------------------------------------ warnings and bad input
def test_reading_diagnostics_warns_and_the_release_does_not():
    clf = RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=0)
    with pytest.raises(NotFittedError):
        clf.diagnostics_
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf.fit(X, Y, X_public=Z)
        clf.release_.to_json(), clf.summary(), clf.predict(X)
    with pytest.warns(PrivacyLeakWarning, match="diagnostics_"):
        diag = clf.diagnostics_
    with pytest.warns(PrivacyLeakWarning, match="ledger_"):
        assert len(clf.ledger_) == 2
    with pytest.raises(KeyError, match="'teacher_votes' was not recorded by this RRSPM fit"):
        diag["teacher_votes"]
    assert "NON-PRIVATE" in repr(diag)


def test_release_accessors_before_fit_raise_not_fitted():
    from oraclepriv.release import NotFittedError as ReleaseNotFitted
    from oraclepriv.release import ReleaseMixin

    class Bare(ReleaseMixin):  # the mixin's own check, without a learner's override
        pass

    for read in (lambda o: o.summary(), lambda o: o.diagnostics_, lambda o: o.ledger_, lambda o: o.privacy_):
        with pytest.raises(ReleaseNotFitted, match="Bare is not fitted yet"):
            read(Bare())
    assert ReleaseNotFitted is NotFittedError  # one exception, wherever it is imported from


def test_weakened_guarantees_warn():
    with pytest.warns(PrivacyLeakWarning, match="label-DP"):
        em = PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", cover="private-features", random_state=0).fit(
            X, Y
        )
    assert "label-DP" in em.privacy_["guarantee"] and "NOT record-level" in em.privacy_["guarantee"]
    P = np.random.default_rng(1).normal(size=(20, 2))
    with pytest.warns(PrivacyLeakWarning, match="epsilon=inf"):
        ppm = PPMHalfspaces(epsilon=float("inf"), random_state=0).fit(P, (P[:, 0] > 0).astype(int), P[:, 0] <= 0)
    assert ppm.privacy_["guarantee"].startswith("none")
    with pytest.warns(PrivacyLeakWarning, match="on_uncertified='flag'"):
        RRSPM(epsilon=1.0, hypothesis_class="threshold", on_uncertified="flag", random_state=0).fit(X, Y, X_public=Z)


def test_cli_refuses_diagnostics_the_learner_does_not_record(tmp_path):
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, X, Y)
    write_csv_problem(public, Z, None)
    result = CliRunner().invoke(
        app,
        [
            "learn",
            str(private),
            "--public",
            str(public),
            "--algorithm",
            "rrspm",
            "--hypothesis-class",
            "threshold",
            "--epsilon",
            "1",
            "--diagnostics",
            "teacher_votes",
        ],
    )
    assert result.exit_code == 2 and "'teacher_votes'" in result.stderr and "projection_agreement" in result.stderr
