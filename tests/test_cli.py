"""The command line: `oraclepriv erm` output contract and its errors, and the instance library."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.instances import (
    INSTANCE_SPECS,
    build_library,
    check_library,
    instance_milp,
    instances_dir,
    load_instance,
)
from oraclepriv.io import write_csv_problem

runner = CliRunner()


def _strict_json(text: str) -> dict:
    def reject(token: str):
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=reject)


@pytest.fixture
def csv_file(tmp_path):
    def make(X, y, weights=None, name="data.csv"):
        path = tmp_path / name
        write_csv_problem(path, np.asarray(X, float), None if y is None else np.asarray(y), weights)
        return path

    return make


def test_erm_json_halfspace_default_instance():
    result = runner.invoke(
        app, ["erm", str(instances_dir() / "rrspm-2d-n300.csv"), "--hypothesis-class", "halfspace", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = _strict_json(result.stdout)
    for key in ("class", "backend", "n", "d", "objective", "bound", "certified", "status", "seconds", "hypothesis"):
        assert key in out
    assert out["class"] == "halfspace" and out["backend"] == "portfolio"
    assert (out["n"], out["d"]) == (300, 2)
    assert out["certified"] is True and out["status"] == "optimal"
    assert set(out["hypothesis"]) == {"hypothesis_class", "w", "b"} and len(out["hypothesis"]["w"]) == 2
    manifest = json.loads((instances_dir() / "manifest.json").read_text())
    best = next(e for e in manifest if e["name"] == "rrspm-2d-n300")["best_objective"]
    assert out["objective"] == pytest.approx(best, abs=1e-9)


def test_erm_uses_weight_column_and_serialises_infinite_threshold(csv_file):
    # all weights favour predicting 1 everywhere: the optimum is the threshold -inf
    path = csv_file([[0.0], [1.0], [2.0]], [1, 1, 0], weights=[5.0, 5.0, -5.0])
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "threshold", "--json"])
    assert result.exit_code == 0, result.output
    out = _strict_json(result.stdout)
    assert out["hypothesis"] == {"hypothesis_class": "threshold", "threshold": "-inf"}
    assert out["objective"] == pytest.approx(-5.0)
    assert out["signed_weights"] is True


def test_erm_stump_human_output(csv_file):
    path = csv_file([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0]], [0, 0, 1])
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "stump"])
    assert result.exit_code == 0, result.output
    assert "certified=True" in result.stdout


def test_erm_human_output_says_what_a_restricted_bound_covers_and_why_a_backend_failed(csv_file):
    """A restricted-class answer names its class; a backend's own error reaches the user (here E01Loss, which
    fails on duplicated points: a singular matrix), not only the word "error", and the exit code is 1."""
    path = csv_file([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 2.0], [2.0, 0.0]], [0, 0, 1, 1, 1, 0])
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "halfspace", "--backend", "naive-highs"])
    assert result.exit_code == 0, result.output
    assert "certified=False" in result.stdout
    assert "restricted  the bound holds over halfspaces with w in [-1,1]^d" in result.stdout
    pytest.importorskip("e01loss")
    dup = csv_file([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [2.0, 0.0]], [0, 1, 1, 0, 1], name="dup.csv")
    result = runner.invoke(app, ["erm", str(dup), "--hypothesis-class", "halfspace", "--backend", "e01loss"])
    assert result.exit_code == 1, result.output  # a backend error is not a success
    assert "status      error" in result.stdout
    assert "reason      E01Loss failed: LinAlgError" in result.stdout
    as_json = runner.invoke(app, ["erm", str(dup), "--hypothesis-class", "halfspace", "--backend", "e01loss", "--json"])
    assert as_json.exit_code == 1 and json.loads(as_json.stdout)["status"] == "error"


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("x0,y\n1,0\n,1\n", "column 'x0' row 2"),
        ("x0,y\n1,0\nabc,1\n", "column 'x0' row 2"),
        ("x0,y\n1,0\n2,2\n", "row 2 has value '2'"),
        ("x0,weight\n1,0.5\n", "no label column 'y'"),
        ("x0,y,weight\n1,0,inf\n", "column 'weight' row 1"),
        ("x0,y\n", "no rows"),
        ("y\n1\n", "no feature columns"),
        ('x0,y\n1,0\n"2,1\n', "not a valid CSV"),
    ],
)
def test_erm_bad_csv_is_a_clear_error(tmp_path, content, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "stump"])
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_erm_bad_options_are_clear_errors(csv_file, tmp_path):
    path = csv_file(np.arange(12.0).reshape(3, 4), [0, 1, 0])
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "halfspace", "--backend", "enumerate"])
    assert result.exit_code == 2 and "d <= 3" in result.stderr and "d=4" in result.stderr
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "stump", "--backend", "nope"])
    assert result.exit_code == 2 and "unknown backend 'nope'" in result.stderr
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "circle"])
    assert result.exit_code == 2 and "circle" in result.output
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "stump", "--time-limit", "-1"])
    assert result.exit_code == 2 and "--time-limit" in result.stderr and "got -1" in result.stderr
    result = runner.invoke(app, ["erm", str(tmp_path / "missing.csv"), "--hypothesis-class", "stump"])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    wide = csv_file(np.arange(6.0).reshape(3, 2), [0, 1, 0], name="wide.csv")
    result = runner.invoke(app, ["erm", str(wide), "--hypothesis-class", "threshold"])
    assert result.exit_code == 2 and "one feature" in result.stderr
    result = runner.invoke(app, ["erm", str(path), "--hypothesis-class", "halfspace", "--backend", "scip-bc:workers=0"])
    assert result.exit_code == 2 and "workers must be a positive integer" in result.stderr


def test_erm_backend_spec_passes_options(csv_file):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    path = csv_file(X, (X[:, 0] > 0).astype(int))
    result = runner.invoke(
        app, ["erm", str(path), "--hypothesis-class", "halfspace", "--backend", "scip-bc:workers=1,threads=1", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["backend"] == "scip-bc" and out["certified"]


def test_bundled_instances_match_manifest_and_generators(tmp_path):
    assert check_library() == []
    manifest = {e["name"]: e for e in json.loads((instances_dir() / "manifest.json").read_text())}
    assert set(manifest) == {spec.name for spec in INSTANCE_SPECS}
    rebuilt = {e["name"]: e for e in build_library(tmp_path, solve=False)}
    for name, entry in manifest.items():
        assert rebuilt[name]["sha256"] == entry["sha256"], f"{name}: generator output differs from the shipped file"
        assert entry["best_objective"] is not None and entry["solved_by"] is not None
        if entry["solved_by"] in ("sweep", "enumerate"):  # exact combinatorial oracles always prove
            assert entry["proved_optimal"] is True, name
        # best known objective and best proved bound are consistent; proved means they meet
        assert entry["best_bound"] <= entry["best_objective"] + 1e-9 * max(1.0, abs(entry["best_objective"]))
        if entry["proved_optimal"]:
            assert entry["best_objective"] - entry["best_bound"] <= 1e-6 * max(1.0, abs(entry["best_objective"]))


def test_library_families_are_present():
    manifest = {e["name"]: e for e in json.loads((instances_dir() / "manifest.json").read_text())}
    mip_sized = [
        e for e in manifest.values() if e["generator"] == "rrspm_signed" and e["d"] == 5 and e["class"] == "halfspace"
    ]
    assert mip_sized and all(e["signed_weights"] for e in mip_sized)
    real = {e["params"]["dataset"] for e in manifest.values() if e["generator"] == "sklearn"}
    assert real >= {"breast_cancer", "wine", "iris_versicolor_virginica"}  # + the real tier's
    for e in manifest.values():
        if e["generator"] == "sklearn":
            assert e["source"].startswith("scikit-learn") and len(e["features"]) == e["d"] == len(e["feature_units"])
            assert {"stump", "halfspace"} >= {e["class"]}


def test_real_data_instances_are_exact_integer_copies_of_scikit_learn():
    from sklearn.datasets import load_breast_cancer, load_iris, load_wine

    _, X, y, w = load_instance("iris-vv-2f")
    iris = load_iris()
    keep = iris.target > 0
    np.testing.assert_array_equal(X, np.round(iris.data[keep][:, 2:4] * 10))  # petal length/width in mm
    np.testing.assert_array_equal(y, (iris.target[keep] == 2).astype(int))
    assert np.all(w == 1.0) and y.sum() == 50
    entry = next(e for e in json.loads((instances_dir() / "manifest.json").read_text()) if e["name"] == "iris-vv-2f")
    assert entry["best_objective"] == 3.0 and entry["proved_optimal"]  # not separable
    _, X, y, _ = load_instance("wine-class0-stump")
    wine = load_wine()
    assert X.shape == wine.data.shape and y.sum() == 59 and np.all(X == np.round(X))
    np.testing.assert_allclose(X[:, 0] / 100, wine.data[:, 0])  # alcohol, 2 decimals
    _, X, y, _ = load_instance("breast-cancer-5f")
    assert X.shape == (569, 5) and y.sum() == (load_breast_cancer().target == 1).sum() == 357


@pytest.mark.parametrize("backend", ["highs", "scip", "pyomo"])
@pytest.mark.parametrize("name", ["iris-vv-stump", "iris-vv-2f"])
def test_export_mps_rereads_with_the_expected_size_and_optimum(tmp_path, backend, name):
    import highspy

    path = tmp_path / f"{name}.mps"
    result = runner.invoke(app, ["instances", "export-mps", name, "--backend", backend, "--out", str(path)])
    assert result.exit_code == 0, result.output
    milp, offset, details = instance_milp(name)
    assert f"{milp.num_cols} columns" in result.stdout and f"{milp.num_rows} rows" in result.stdout
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    lp = h.getLp()
    # Pyomo's writer represents a nonzero objective constant as one extra fixed column and row
    extra = 1 if (backend == "pyomo" and offset != 0) else 0
    assert (h.getNumCol(), h.getNumRow()) == (milp.num_cols + extra, milp.num_rows + extra)
    assert sum(int(t) == 1 for t in lp.integrality_) == int(milp.integer.sum())
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.5)
    h.run()
    entry = next(e for e in json.loads((instances_dir() / "manifest.json").read_text()) if e["name"] == name)
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(entry["best_objective"], abs=1e-6)


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["no-such-instance"], "unknown instance 'no-such-instance'"),
        (
            ["iris-vv-2f", "--backend", "gurobi"],
            "--backend must be one of ['highs', 'scip', 'pyomo'] for MPS export; got 'gurobi'",
        ),
        (["iris-vv-2f", "--formulation", "staircase"], "--formulation must be one of ['relaxed', 'margin']"),
        (["iris-vv-stump", "--formulation", "margin"], "--formulation must be one of ['staircase']"),
        (["iris-vv-2f", "--out", "model.lp"], "must end in .mps"),
    ],
)
def test_export_mps_bad_input(tmp_path, args, fragment):
    if "--out" not in args:
        args = [*args, "--out", str(tmp_path / "m.mps")]
    result = runner.invoke(app, ["instances", "export-mps", *args])
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_instances_check_detects_a_modified_file(tmp_path):
    build_library(tmp_path, solve=False)
    victim = tmp_path / INSTANCE_SPECS[0].filename
    victim.write_text(victim.read_text().replace("1", "2", 1))
    problems = check_library(tmp_path)
    assert len(problems) == 1 and "checksum mismatch" in problems[0]


def test_bundled_learning_tasks_match_their_generator(tmp_path):
    from oraclepriv.instances import LEARNING_TASKS, build_learning_tasks, load_learning_task

    shipped = {e["name"]: e for e in json.loads((instances_dir() / "learning_tasks.json").read_text())}
    rebuilt = {e["name"]: e for e in build_learning_tasks(tmp_path)}
    assert set(shipped) == set(rebuilt) == {spec.name for spec in LEARNING_TASKS}
    for name in shipped:
        assert rebuilt[name]["sha256"] == shipped[name]["sha256"], (
            f"{name}: generator output differs from the shipped files"
        )
    X, y, Z = load_learning_task("task-l1-3d-n300")
    assert X.shape == (300, 3) and Z.shape == (50, 3) and set(np.unique(y)) <= {0, 1}
    assert np.abs(X).sum(axis=1).max() <= 1.0 + 1e-12  # Algorithm 3's input domain
    with pytest.raises(ValueError, match="unknown learning task 'nope'"):
        load_learning_task("nope")


# -- the execution switch, progress and logs of the parallel commands -------------------------------------------

#: every parallel command, with arguments that would make it cheap if it ran
PARALLEL_COMMANDS = [
    ["audit", "rrspm", "--runs", "5", "--draws", "100"],
    ["audit", "subsample", "--runs", "5"],
    ["verify", "suite", "--quick"],
    ["experiment", "rrspm-tradeoff", "--quick"],
    ["experiment", "robust-tradeoff", "--quick"],
    ["experiment", "cover-baseline", "--quick"],
    ["bench", "mip", "--quick"],
    ["bench", "learners", "--repeats", "1", "--min-seconds", "0"],
]


@pytest.mark.parametrize("command", PARALLEL_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(
    "options,fragment",
    [
        (["--parallel-backend", "spark"], "--parallel-backend must be one of ['loky', 'dask']; got 'spark'"),
        (["--jobs", "0"], "--jobs must be a positive integer or -1 (every CPU); got 0"),
        (["--parallel-backend", "loky", "--scheduler", "local"], "--scheduler 'local' needs --parallel-backend dask"),
        (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:9"], "--jobs 2 does not apply with --scheduler"),
    ],
    ids=["backend", "jobs", "loky-scheduler", "jobs-remote"],
)
def test_parallel_commands_refuse_bad_execution_options_before_any_work(tmp_path, command, options, fragment):
    out = ["--out", str(tmp_path / "never")] if command[0] in ("experiment", "bench") else []
    result = runner.invoke(app, [*command, *out, *options])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0]
    assert result.stdout == "" and not (tmp_path / "never").exists()  # nothing ran, nothing written


def test_dask_missing_or_unreachable_is_one_line(monkeypatch):
    import sys

    import oraclepriv.execution

    monkeypatch.setattr(oraclepriv.execution, "CONNECT_TIMEOUT", 0.5)
    result = runner.invoke(app, ["audit", "subsample", "--runs", "5", "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2 and result.stdout == ""
    import importlib.util

    if importlib.util.find_spec("distributed") is not None:  # unreachable: named as such
        assert result.stderr.startswith("error: --scheduler 'tcp://127.0.0.1:9': cannot reach a dask scheduler")
    else:  # the extra is missing: named as such (the test extra alone, as the Quick start installs it)
        assert "oraclepriv[distributed]" in result.stderr and result.stderr.count("\n") == 1
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were not installed
    result = runner.invoke(app, ["bench", "mip", "--quick", "--parallel-backend", "dask"])
    assert result.exit_code == 2 and "oraclepriv[distributed]" in result.stderr and result.stdout == ""


def test_progress_goes_to_stderr_in_a_terminal_only_and_quiet_turns_it_off(monkeypatch):
    import oraclepriv.cli.common as common

    args = ["audit", "subsample", "--runs", "5"]
    piped = runner.invoke(app, args)  # CliRunner's streams are not terminals
    assert piped.stdout.count("teacher-flip") == 7 and "audit cases" not in piped.stderr
    monkeypatch.setattr(common, "_terminal", lambda: True)
    shown = runner.invoke(app, args)
    assert "audit cases" in shown.stderr and "7/7" in shown.stderr
    assert "elapsed" in shown.stderr and shown.stdout == piped.stdout  # stdout: the rows, unchanged
    quiet = runner.invoke(app, [*args, "--quiet"])
    assert quiet.stderr == piped.stderr and quiet.stdout == piped.stdout  # the verdict summary, no bar


def test_verbose_logs_the_library_on_stderr(tmp_path):
    args = ["bench", "mip", "--quick", "--backends", "highs", "--out", str(tmp_path / "b")]
    plain = runner.invoke(app, args)
    loud = runner.invoke(app, ["-v", *args])
    assert plain.exit_code == loud.exit_code == 0 and "DEBUG" not in plain.stderr
    assert "oraclepriv.execution DEBUG: run_one: 4 tasks in this process" in loud.stderr
    assert "oraclepriv.bench.mip DEBUG: sepnoise-n30-d2-s0 / highs ran on" in loud.stderr
    assert "DEBUG" not in runner.invoke(app, args).stderr  # the switch does not stick to the next command


def test_a_real_terminal_shows_the_bar_above_clean_result_lines():
    """A pseudo-terminal: the bar is drawn on it, every result line arrives whole."""
    import os
    import pty
    import select
    import subprocess
    import sys

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "oraclepriv", "audit", "subsample", "--runs", "5"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(follower)
    output = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    process.wait(timeout=60)
    text = output.decode(errors="replace")
    assert "audit cases" in text and "7/7" in text and "elapsed" in text
    lines = [line.split("\x1b[2K")[-1] for line in text.replace("\r\n", "\n").split("\n")]
    rows = [line for line in lines if line.startswith("teacher-flip")]
    assert len(rows) == 7 and all(line.rstrip().endswith(("ok", "UNEXPECTED")) for line in rows)
