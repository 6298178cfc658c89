"""The verifier's size check (:mod:`oraclepriv.verify.budget`): a run too large for the machine is refused before
the verifier's work starts, naming the limit and the levers; the estimate against measured runs; the count bounds
against the labelings found; and progress on the command line, never in ``--json`` output."""

from __future__ import annotations

import json
import math
import tracemalloc

import numpy as np
import pytest
from typer.testing import CliRunner

import oraclepriv.cli.common as common
from oraclepriv.cli import app
from oraclepriv.io import write_csv_problem
from oraclepriv.learners import RRSPM
from oraclepriv.noisy_argmin.costs import realisable_labelings
from oraclepriv.oracle import make_oracle
from oraclepriv.verify import verifier
from oraclepriv.verify.budget import (
    DEFAULT_MAX_SECONDS,
    TooLargeError,
    format_bytes,
    labeling_count_bound,
    parse_bytes,
    realisability_calls,
)
from oraclepriv.verify.verifier import verify_learner

runner = CliRunner()


def _stumps(n: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n private records and m public points in the unit square, coordinates with two decimals."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (n, 2)), 2)
    return X, (X[:, 0] > 0.5).astype(int), np.round(rng.uniform(0, 1, (m, 2)), 2)


@pytest.fixture
def no_verifier_work(monkeypatch):
    """Every step of the verifier after its first estimate fails the test: a refusal must come before them (no
    labeling, cost or law is computed), so it takes the time of the learner's fit and a few probes, whatever the
    size of the problem."""

    def started(*args, **kwargs):
        raise AssertionError("the verifier started its work before refusing")

    for name in ("realisable_labelings", "neighbour_family", "parallel_map", "_law"):
        monkeypatch.setattr(verifier, name, started)


@pytest.fixture
def no_probe(monkeypatch):
    """The probes of the time estimate fail the test: a refusal on memory comes from the counts alone."""

    def probed(*args, **kwargs):
        raise AssertionError("a probe ran before the memory refusal")

    monkeypatch.setattr(verifier, "typical_seconds", probed)
    monkeypatch.setattr(verifier, "calibrate_draw_seconds", probed)


# ------------------------------------------------------------------------------------------------ refusals


def test_many_public_points_and_draws_are_refused_on_time_before_any_labeling(no_verifier_work):
    """25 public points (stumps) and 10^8 draws per cost vector: 409 cost vectors x 10^8 draws cannot run in a
    minute on any machine; the refusal names the time limit and every lever, with how many draws would fit."""
    X, y, Z = _stumps(8, 25)
    with pytest.raises(TooLargeError) as caught:
        verify_learner(
            RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, mode="sampled", draws=10**8, max_seconds=60
        )
    error = caught.value
    assert error.over_time and not error.over_memory
    assert error.estimate.n_datasets == 1 + 8 * (1 + 2 * 25) and error.estimate.n_labelings == 2 + 2 * 2 * 24
    message = str(error)
    for fragment in (
        "was not started",
        "over the limit of 60 s (max_seconds=)",
        "fewer draws (draws=100,000,000 now",
        "fewer noisy points",
        "m = 25 now",
        "409 datasets",
        "n_jobs=",
        "or a larger max_seconds=",
    ):
        assert fragment in message, (fragment, message)


def test_a_problem_too_large_for_the_machine_is_refused_on_memory_from_its_counts(no_verifier_work, no_probe):
    """20,000 records and 1,000 public points: 4 x 10^7 neighbours with up to 6,000 labelings each, terabytes of
    costs. Refused against the default limit, half of the memory available, before any probe or oracle call of the
    verifier."""
    X, y, Z = _stumps(20_000, 1_000)
    with pytest.raises(TooLargeError) as caught:
        verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, mode="sampled", draws=1000)
    error = caught.value
    assert error.over_memory and error.memory_default
    message = str(error)
    assert "(max_memory=, half the memory this machine has available)" in message
    assert format_bytes(error.max_memory) in message and "or a larger max_memory=" in message
    assert error.estimate.memory_bytes > 2**40


def test_an_explicit_memory_limit_is_named(no_verifier_work, no_probe):
    X, y, Z = _stumps(8, 25)
    with pytest.raises(TooLargeError, match=r"over the limit of 64 KiB \(max_memory=\)"):
        verify_learner(
            RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, mode="sampled", draws=1000, max_memory=65536
        )


def test_limits_are_checked():
    X, y, Z = _stumps(4, 2)
    for bad in (0, -1.0, math.nan):
        with pytest.raises(ValueError, match="max_seconds must be a number > 0"):
            verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, max_seconds=bad)
    with pytest.raises(ValueError, match="max_memory must be a positive number of bytes"):
        verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, max_memory=0)


def test_sizes_parse_as_people_write_them():
    assert parse_bytes("512M") == 512 * 2**20 and parse_bytes("4G") == parse_bytes("4GiB") == 4 * 2**30
    assert parse_bytes("1.5gb") == int(1.5 * 2**30) and parse_bytes("2048") == 2048
    for bad in ("", "G", "4X", "-1G", "nanG", "inf"):
        with pytest.raises(ValueError, match="size"):
            parse_bytes(bad)


# ------------------------------------------------------------------------------------------------ the estimate


def test_the_memory_estimate_is_within_a_factor_two_of_the_measured_peak():
    """A sampled run on 4 public points (stumps): the peak of what it allocates (tracemalloc, after a warm-up run
    that loads every module) against the estimate the run reports."""
    X, y, Z = _stumps(4, 4)
    verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, mode="sampled", draws=100)
    tracemalloc.start()
    try:
        result = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, mode="sampled", draws=20_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimated = result.estimate["estimated_memory_bytes"]
    assert 0.5 <= estimated / peak <= 2.0, (estimated, peak)
    assert result.estimate["estimated_labelings"] == result.n_labelings


@pytest.mark.slow
def test_the_time_estimate_is_within_a_factor_two_of_the_measured_run():
    """A wall-clock comparison (a loaded machine moves both ends, so it is kept out of the default run): 4 public
    points (stumps), 2 x 10^5 draws per cost vector, the laws most of the time."""
    X, y, Z = _stumps(8, 4)
    result = verify_learner(RRSPM(epsilon=1.0, hypothesis_class="stump"), X, y, Z, mode="sampled", draws=200_000)
    assert 0.5 <= result.estimate["estimated_seconds"] / result.seconds <= 2.0, (result.estimate, result.seconds)


def _counting(oracle):
    calls = [0]
    solve = oracle.solve

    def counted(*args, **kwargs):
        calls[0] += 1
        return solve(*args, **kwargs)

    oracle.solve = counted
    return calls


@pytest.mark.parametrize(
    "hypothesis_class, d, sizes",
    [("threshold", 1, range(1, 9)), ("stump", 2, range(1, 9)), ("halfspace", 2, range(1, 7))],
)
def test_the_count_bound_is_attained_in_general_position_and_never_exceeded(hypothesis_class, d, sizes):
    """Points with continuous coordinates (general position) have exactly :func:`labeling_count_bound` realisable
    labelings for thresholds and halfspaces (stumps: at most, as two features can order a few points alike);
    gridded points with repeats have no more; the oracle calls made to find them are within
    :func:`realisability_calls`."""
    rng = np.random.default_rng(3)
    oracle = make_oracle(hypothesis_class)
    for m in sizes:
        for points, general in ((rng.normal(size=(m, d)), True), (rng.integers(0, 2, (m, d)).astype(float), False)):
            calls = _counting(oracle)
            found = realisable_labelings(points, oracle)
            bound = labeling_count_bound(hypothesis_class, m, d)
            attained = general and hypothesis_class != "stump"
            assert (len(found) == bound) if attained else (len(found) <= bound), (m, points.tolist(), len(found))
            assert calls[0] <= realisability_calls(hypothesis_class, m, d)
            oracle = make_oracle(hypothesis_class)


def test_count_bounds_by_hand():
    assert [labeling_count_bound("halfspace", m, 2) for m in (1, 2, 3, 4, 10)] == [2, 4, 8, 14, 92]
    assert labeling_count_bound("halfspace", 5, 3) == 2 * (1 + 4 + 6 + 4) == 30
    assert labeling_count_bound("stump", 25, 2) == 98 and labeling_count_bound("threshold", 25, 1) == 26
    assert labeling_count_bound("stump", 3, 10) == 8  # capped at 2^m
    assert realisability_calls("threshold", 3, 1) == 8 and realisability_calls("threshold", 7, 1) == 32 + 2 * 6 + 2 * 7


# ------------------------------------------------------------------------------------------------ command line


@pytest.fixture
def files(tmp_path):
    X, y, Z = _stumps(8, 25)
    write_csv_problem(tmp_path / "private.csv", X, y)
    write_csv_problem(tmp_path / "public.csv", Z, None)
    write_csv_problem(tmp_path / "public3.csv", Z[:3], None)
    return tmp_path


def _args(files, public: str, *more: str) -> list[str]:
    return [
        "verify",
        "instance",
        str(files / "private.csv"),
        "--public",
        str(files / public),
        "--algorithm",
        "rrspm",
        "--hypothesis-class",
        "stump",
        "--mode",
        "sampled",
        *more,
    ]


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    return lines[0]


def test_the_command_line_refuses_with_its_own_flags(files, no_verifier_work):
    line = _one_line_error(
        runner.invoke(app, _args(files, "public.csv", "--draws", "100000000", "--max-seconds", "60"))
    )
    for fragment in ("over the limit of 60 s (--max-seconds)", "--draws 100,000,000 now", "--public rows", "--jobs"):
        assert fragment in line, (fragment, line)
    assert "max_seconds=" not in line and "draws=" not in line


@pytest.mark.parametrize(
    "flags, fragment",
    [
        (["--max-seconds", "0"], "--max-seconds must be a number > 0"),
        (["--max-seconds", "nan"], "--max-seconds must be a number > 0"),
        (["--max-memory", "4X"], "--max-memory '4X'"),
        (["--max-memory", "0G"], "--max-memory '0G'"),
    ],
)
def test_bad_limits_are_one_line_errors_before_any_work(files, no_verifier_work, flags, fragment):
    assert fragment in _one_line_error(runner.invoke(app, _args(files, "public3.csv", *flags)))


def test_the_default_time_limit_is_the_one_the_help_states():
    result = runner.invoke(app, ["verify", "instance", "--help"], env={"COLUMNS": "200"})
    assert DEFAULT_MAX_SECONDS == 3600 and "default one hour" in " ".join(result.stdout.split())


def test_progress_shows_on_a_terminal_and_never_with_json(files, monkeypatch):
    """On a terminal (stdout and stderr both) each phase has a bar on stderr; with --json, stdout is the one JSON
    object and nothing else is printed."""
    monkeypatch.setattr(common, "_terminal", lambda: True)
    phases = ("realisable labelings", "costs c_D(L) per dataset", "laws")
    shown = runner.invoke(app, _args(files, "public3.csv", "--draws", "2000"))
    assert shown.exit_code in (0, 3), shown.output
    assert all(phase in shown.stderr for phase in phases), shown.stderr
    as_json = runner.invoke(app, _args(files, "public3.csv", "--draws", "2000", "--json"))
    assert as_json.exit_code in (0, 3), as_json.output
    assert json.loads(as_json.stdout)["m"] == 3 and as_json.stderr == ""
