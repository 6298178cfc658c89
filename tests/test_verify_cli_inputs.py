"""``oraclepriv verify instance`` on the command line: its exit code per verdict (0 verified, 1 exceeds,
3 inconclusive, 2 bad input) and ``--backend NAME[:key=value,...]`` (the options reach every oracle the run
builds; a bad option or value is a one-line error naming --backend, the spec and the option, before any work)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from optional_backends import RESTRICTED
from oraclepriv.solvers.combinatorial.sweep import SweepBackend
from typer.testing import CliRunner
from verify_results import verify_result

from oraclepriv.backends import registered_backend
from oraclepriv.cli import app
from oraclepriv.io import write_csv_problem

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    """Three 1-d records and two public points (RRSPM's loss at eps = 1: 0.464), and a 2-d instance for halfspaces."""
    paths = {name: tmp_path / f"{name}.csv" for name in ("v3", "vpub", "h", "hpub")}
    write_csv_problem(paths["v3"], np.array([[0.1], [0.5], [0.9]]), np.array([0, 1, 1]))
    write_csv_problem(paths["vpub"], np.array([[0.3], [0.7]]), None)
    write_csv_problem(paths["h"], np.array([[0.1, 0.2], [0.5, 0.1], [0.9, 0.7], [-0.3, 0.4]]), np.array([0, 1, 1, 0]))
    write_csv_problem(paths["hpub"], np.array([[0.3, 0.3], [0.7, -0.2]]), None)
    return {name: str(path) for name, path in paths.items()}


def _threshold(files, *args: str) -> list[str]:
    return [
        "verify",
        "instance",
        files["v3"],
        "--public",
        files["vpub"],
        "--algorithm",
        "rrspm",
        "--hypothesis-class",
        "threshold",
        *args,
    ]


@pytest.fixture
def no_work(monkeypatch):
    """The verifier replaced by a function that fails the test: a refusal must come before any work."""
    import oraclepriv.verify.verifier as verifier

    def started(*args, **kwargs):
        raise AssertionError("the verification started before the input was checked")

    monkeypatch.setattr(verifier, "verify_learner", started)


def _refused(args: list[str], *fragments: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# ------------------------------------------------------------------------------------------------ verdicts


@pytest.mark.parametrize("draws", ["1", "10"])
def test_too_few_draws_is_inconclusive_with_exit_code_3(files, draws):
    """The reported bug: --draws 1 printed VERIFIED (exit 0) with loss_low < 0 and delta_high ~ 3."""
    shown = runner.invoke(app, _threshold(files, "--mode", "sampled", "--draws", draws))
    assert shown.exit_code == 3, shown.output
    assert "INCONCLUSIVE" in shown.stdout and "VERIFIED" not in shown.stdout
    assert "inconclusive: " in shown.stdout and "more draws" in shown.stdout  # what would decide it
    as_json = runner.invoke(app, _threshold(files, "--mode", "sampled", "--draws", draws, "--json"))
    assert as_json.exit_code == 3, as_json.output
    row = json.loads(as_json.stdout)
    assert row["verdict"] == "inconclusive"
    assert 0.0 <= row["loss_low"] and 0.0 <= row["delta_low"] <= row["delta_high"] <= 1.0


def test_enough_draws_verify_with_exit_code_0(files):
    result = runner.invoke(app, _threshold(files, "--mode", "sampled", "--draws", "100000", "--json"))
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["verdict"] == "verified" and row["loss_high"] <= row["epsilon"]


@pytest.mark.parametrize("verdict, code", [("verified", 0), ("exceeds", 1), ("inconclusive", 3)])
def test_each_verdict_has_its_exit_code(files, monkeypatch, verdict, code):
    """The CLI's learners are correct, so "exceeds" cannot be reached from the command line on honest data: the
    verifier is replaced by one returning a result with that verdict (a sampled run, the verdict set by its loss
    interval against eps = 1)."""
    import oraclepriv.verify.verifier as verifier

    low, high = {"verified": (0.2, 0.5), "exceeds": (1.5, 2.0), "inconclusive": (0.5, 1.5)}[verdict]

    def fake(learner, X, y, Z, **kwargs):
        return verify_result("sampled", low, high, learner="RRSPM", m=2)

    monkeypatch.setattr(verifier, "verify_learner", fake)
    result = runner.invoke(app, _threshold(files, "--mode", "sampled", "--draws", "10"))
    assert result.exit_code == code and verdict.upper() in result.stdout, result.output
    assert result.stderr == ""


def test_help_documents_the_exit_codes():
    result = runner.invoke(app, ["verify", "instance", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "0 verified; 1 exceeds" in text and "3 inconclusive" in text and "2 bad input" in text
    assert "scip-bc:workers=2" in text  # --backend takes options


# ------------------------------------------------------------------------------------------------ --backend specs


class RecordingSweep(SweepBackend):
    """The sweep backend with one option, ``tag``, that records the options of every instance built."""

    name = "recording-sweep"
    options = frozenset({"tag"})
    built: list[dict] = []

    def __init__(self, time_limit=None, **options):
        super().__init__(time_limit, **options)
        RecordingSweep.built.append(dict(options))


def test_a_backend_spec_with_options_reaches_every_oracle(files):
    """--backend NAME:key=value is split like ``oraclepriv erm`` does: the run succeeds, and every backend instance
    it builds (the verifier's oracles and the learner's own) carries the option; the answer is the plain sweep's."""
    RecordingSweep.built.clear()
    with registered_backend("recording-sweep", RecordingSweep):
        result = runner.invoke(app, _threshold(files, "--backend", "recording-sweep:tag=7", "--json"))
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["backend"] == "recording-sweep" and row["verdict"] == "verified"
    assert len(RecordingSweep.built) >= 2 and all(options == {"tag": 7} for options in RecordingSweep.built)
    plain = json.loads(runner.invoke(app, _threshold(files, "--backend", "sweep", "--json")).stdout)
    assert row["loss"] == plain["loss"] and row["n_labelings"] == plain["n_labelings"]


def test_scip_bc_with_workers(files):
    args = ["verify", "instance", files["h"], "--public", files["hpub"], "--algorithm", "rrspm"]
    result = runner.invoke(app, [*args, "--hypothesis-class", "halfspace", "--backend", "scip-bc:workers=2", "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["backend"] == "scip-bc" and row["verdict"] == "verified"


@pytest.mark.parametrize(
    "spec, fragments",
    [
        ("sweep:bogus=1", ["--backend 'sweep:bogus=1'", "unknown option(s) ['bogus']"]),  # a bad option name
        ("scip-bc:workers=abc", ["--backend 'scip-bc:workers=abc'", "workers", "'abc'"]),  # a bad value
        ("scip-bc:workers=0", ["--backend 'scip-bc:workers=0'", "workers", "got 0"]),
        ("sweep:x", ["--backend 'sweep:x'", "key=value", "'x'"]),  # not key=value
        ("nope:a=1", ["--backend 'nope:a=1'", "unknown backend 'nope'"]),
        ("sweep:time_limit=5", ["--backend 'sweep:time_limit=5'", "time_limit"]),  # verify takes no time limit
    ],
)
def test_bad_backend_specs_are_one_line_errors_before_any_work(files, no_work, spec, fragments):
    _refused(_threshold(files, "--backend", spec), *fragments)


# ------------------------------------------------------------------------------------------------ library names
# The learner and the verifier refuse bad grids and data by their Python names (X_private, mode=, backend=) and count
# rows and features from 0; the command names --grid, --public, --mode or --backend, the data file, its column and
# the data row counted from 1 after the header (as read_csv_problem counts them), before any verification.


def _no_python_names(line: str, *names: str) -> None:
    for name in names:
        assert name not in line, (name, line)


def _rspm(files, grid: str, data: str = "g2", *args: str) -> list[str]:
    return [
        "verify",
        "instance",
        files[data],
        "--algorithm",
        "rspm",
        "--hypothesis-class",
        "stump",
        "--grid",
        grid,
        *args,
    ]


@pytest.fixture
def grid_files(files, tmp_path):
    """2-d records on the grid {0, 1, 2} x {0, 1} but for row 3's x1 = 0.5; 1-d records on {0, 1, 2}; 6 public points."""
    paths = {name: tmp_path / f"{name}.csv" for name in ("g2", "g1", "pub6")}
    write_csv_problem(paths["g2"], np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]]), np.array([0, 1, 1]))
    write_csv_problem(paths["g1"], np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1]))
    write_csv_problem(paths["pub6"], np.linspace(0.05, 0.95, 6)[:, None], None)
    return {**files, **{name: str(path) for name, path in paths.items()}}


def test_a_record_off_the_grid_is_named_by_file_column_and_1_based_row(grid_files, no_work):
    """File, column and row counted from 1 after the header; the private value itself is not echoed."""
    line = _refused(
        _rspm(grid_files, "0,1,2;0,1"), f"data file {grid_files['g2']!r}: column 'x1' row 3 has a value that", "--grid"
    )
    _no_python_names(line, "X_private", "row 2", "feature 1 ", "0.5")


def test_a_grid_with_too_few_features_names_the_flag_and_the_file(grid_files, no_work):
    """It said "X_private has 2 features but the grid has 1"."""
    line = _refused(_rspm(grid_files, "0,1,2"), "--grid '0,1,2'", "for 1 feature", grid_files["g2"], "(x0, x1)")
    _no_python_names(line, "X_private")


@pytest.mark.parametrize(
    ("grid", "fragment"),
    [
        ("0,1,2;", "feature 2 has no values"),
        (";0,1", "feature 1 has no values"),
        ("0,nan;0,1", "feature 1 has the value 'nan'"),
    ],
)
def test_a_bad_grid_feature_is_counted_from_1(grid_files, no_work, grid, fragment):
    """It said "grid feature 1 must be a non-empty list of finite values; got []" for the second feature (0-based)."""
    line = _refused(_rspm(grid_files, grid), f"--grid {grid!r}", fragment)
    _no_python_names(line, "grid feature")


def test_too_many_noisy_points_for_exact_mode_name_the_flags(grid_files, no_work):
    """It said "m = 7 noisy points is too large for exact mode (at most 5): use mode='sampled'"."""
    args = ["verify", "instance", grid_files["g1"], "--algorithm", "rspm", "--hypothesis-class", "threshold"]
    line = _refused([*args, "--grid", "0,1,2,3,4,5,6"], "--grid '0,1,2,3,4,5,6' gives 7 noisy points", "--mode sampled")
    _no_python_names(line, "mode=")
    args = ["verify", "instance", grid_files["v3"], "--public", grid_files["pub6"], "--algorithm", "rrspm"]
    line = _refused(
        [*args, "--hypothesis-class", "threshold"], f"--public {grid_files['pub6']!r} has 6 rows", "--mode sampled"
    )
    _no_python_names(line, "mode=", "m = ")


def test_threshold_on_two_features_names_the_flag_and_the_file(grid_files, no_work):
    """It said "hypothesis_class='threshold' needs one feature; X_private has 2"."""
    args = ["verify", "instance", grid_files["h"], "--public", grid_files["hpub"], "--algorithm", "rrspm"]
    line = _refused([*args, "--hypothesis-class", "threshold"], "--hypothesis-class threshold", grid_files["h"])
    _no_python_names(line, "hypothesis_class=", "X_private")


@pytest.mark.parametrize("backend", RESTRICTED)
def test_a_restricted_backend_names_the_flag(files, no_work, backend):
    """It said "backend='gurobi' proves its bounds only over ...; Use an exact backend (e.g. backend=None), or
    on_uncertified='fallback'" (options verify does not have)."""
    line = _refused(_threshold(files, "--backend", backend), f"--backend '{backend}' proves its bounds only over")
    _no_python_names(line, "backend=", "on_uncertified")
