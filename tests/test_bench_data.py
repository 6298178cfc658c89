"""A user's own CSV instances: ``bench mip --data PATH`` (the benchmark instead of a bundled suite) and
``instances export-mps FILE.csv`` (their MIP model for other solvers)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv import make_oracle
from oraclepriv.bench.mip import load_files
from oraclepriv.cli import app
from oraclepriv.cli.bench import _backends_for

runner = CliRunner()


def write_csv(path, X, y, w=None):
    columns = [f"x{j}" for j in range(X.shape[1])] + ["y"] + ([] if w is None else ["weight"])
    lines = [",".join(columns)]
    for i in range(X.shape[0]):
        cells = [f"{v:.6f}" for v in X[i]] + [str(int(y[i]))] + ([] if w is None else [f"{w[i]:g}"])
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def noisy(seed, n, d, signed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    y[rng.random(n) < 0.15] ^= 1
    w = rng.integers(-2, 4, size=n).astype(float) if signed else None
    return X, y, w


@pytest.fixture
def folder(tmp_path):
    data = tmp_path / "mine"
    data.mkdir()
    write_csv(data / "beta.csv", *noisy(1, 40, 3, signed=True))
    write_csv(data / "alpha.csv", *noisy(0, 30, 2, signed=False))
    (data / "notes.txt").write_text("not an instance")
    return data


def test_a_folder_of_csv_files_is_benchmarked_and_each_answer_is_the_true_optimum(folder, tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["bench", "mip", "--data", str(folder), "--backends", "direction-bb,scip-bc", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "rows.json").read_text())
    assert [(r["instance"], r["backend"]) for r in rows] == [
        (name, b) for name in ("alpha", "beta") for b in ("direction-bb", "scip-bc")
    ]
    for name in ("alpha", "beta"):  # an independent exact method on the same file
        X, y, w = noisy(0, 30, 2, False) if name == "alpha" else noisy(1, 40, 3, True)
        reference = make_oracle("halfspace", backend="enumerate").solve(X.round(6), y, w)
        for r in rows:
            if r["instance"] == name:
                assert r["certified"] and r["objective"] == pytest.approx(reference.objective, abs=1e-9)
    meta = json.loads((out / "summary.json").read_text())
    assert meta["command"].startswith(f"oraclepriv bench mip --data {folder}")
    assert (out / "summary.md").read_text().startswith("# MIP oracle benchmark: your own instances (`--data`)")


def test_one_file_and_another_class(folder, tmp_path):
    [instance] = load_files(folder / "alpha.csv", "stump")
    assert instance.name == "alpha" and instance.hypothesis_class == "stump" and np.all(instance.w == 1)
    out = tmp_path / "stump"
    args = ["bench", "mip", "--data", str(folder / "alpha.csv"), "--hypothesis-class", "stump", "--backends", "highs"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    [row] = json.loads((out / "rows.json").read_text())
    X, y, _ = noisy(0, 30, 2, False)
    reference = make_oracle("stump", backend="sweep").solve(X.round(6), y)
    assert row["class"] == "stump" and row["certified"] and row["objective"] == reference.objective


def test_the_default_backends_are_narrowed_to_the_class(folder):
    stumps = load_files(folder, "stump")
    assert _backends_for(["direction-bb", "scip-bc", "highs"], stumps) == ["highs"]
    assert _backends_for(["direction-bb", "highs"], load_files(folder)) == ["direction-bb", "highs"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "{folder}", "--suite", "real"], "--data and --suite exclude each other"),
        (["--data", "{empty}"], "holds no .csv file"),
        (["--data", "{folder}/nope"], "does not exist"),
        (["--data", "{bad}"], "column 'x0' row 2"),
        (["--hypothesis-class", "stump"], "--hypothesis-class stump applies to --data instances only"),
        (
            ["--data", "{folder}", "--hypothesis-class", "ball"],
            "'ball' is not one of 'threshold', 'stump', 'halfspace'",
        ),
        (["--data", "{folder}", "--backends", "scip-bc", "--hypothesis-class", "stump"], "none of the --data"),
    ],
)
def test_bad_data_options_are_named(folder, tmp_path, args, message):
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = tmp_path / "bad.csv"
    bad.write_text("x0,y\n1,0\nabc,1\n")
    filled = [a.format(folder=folder, empty=empty, bad=bad) for a in args]
    result = runner.invoke(app, ["bench", "mip", *filled, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2, result.output
    assert message in result.stderr


@pytest.mark.parametrize(("hypothesis_class", "reference_backend"), [("halfspace", "enumerate"), ("stump", "sweep")])
def test_export_mps_of_your_own_file_solves_to_its_optimum(folder, tmp_path, hypothesis_class, reference_backend):
    """A user's CSV (signed weights) exported as MPS, read back and solved by HiGHS, gives the signed optimum
    an exact oracle finds on the same file (objective offset included)."""
    import highspy

    path = tmp_path / "beta.mps"
    args = ["instances", "export-mps", str(folder / "beta.csv"), "--out", str(path)]
    if hypothesis_class != "halfspace":
        args += ["--hypothesis-class", hypothesis_class]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.5)
    h.run()
    X, y, w = noisy(1, 40, 3, True)
    reference = make_oracle(hypothesis_class, backend=reference_backend).solve(X.round(6), y, w)
    assert reference.certified
    assert h.getInfo().objective_function_value == pytest.approx(reference.objective, abs=1e-6)
    library = runner.invoke(app, ["instances", "export-mps", "iris-vv-2f", "--hypothesis-class", "stump"])
    assert library.exit_code == 2 and "applies to your own CSV file only" in library.stderr


def test_a_resumed_run_takes_no_cell_of_other_data_with_the_same_name(folder, tmp_path):
    """An interrupted run's cells.jsonl may come from another folder holding a file of the same name: those
    rows are computed again (the cell key holds a digest of the data), not mixed into this run."""
    out = tmp_path / "run"
    out.mkdir()
    stale = {
        "instance": "alpha",
        "data_key": "digest of other data",
        "class": "halfspace",
        "n": 30,
        "d": 2,
        "backend": "direction-bb",
        "time_limit": 60.0,
        "repeat": 1,
        "status": "optimal",
        "certified": True,
        "meets_bound": True,
        "objective": -123.0,
        "bound": -123.0,
        "seconds": 0.1,
    }
    (out / "cells.jsonl").write_text(json.dumps(stale) + "\n")
    args = ["bench", "mip", "--data", str(folder), "--instances", "alpha", "--backends", "direction-bb"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "resuming" not in result.stdout
    [row] = json.loads((out / "rows.json").read_text())
    X, y, _ = noisy(0, 30, 2, False)
    assert row["objective"] == make_oracle("halfspace", backend="enumerate").solve(X.round(6), y).objective


def test_export_mps_tells_a_library_name_from_your_own_file(folder, tmp_path, monkeypatch):
    """A bare NAME.csv that the library holds is the library's instance even beside a file of that name; a path
    with a folder part is always your own file, and a missing one is named."""
    monkeypatch.chdir(tmp_path)
    X, y, _ = noisy(3, 20, 2, False)
    write_csv(tmp_path / "iris-vv-stump.csv", X, y)  # a halfspace file that shadows a library stump instance
    library = runner.invoke(app, ["instances", "export-mps", "iris-vv-stump.csv", "--out", str(tmp_path / "a.mps")])
    assert library.exit_code == 0 and "stump-staircase" in library.stdout
    own = runner.invoke(app, ["instances", "export-mps", "./iris-vv-stump.csv", "--out", str(tmp_path / "b.mps")])
    assert own.exit_code == 0 and "halfspace-relaxed" in own.stdout
    missing = runner.invoke(app, ["instances", "export-mps", "sub/missing.csv"])
    assert missing.exit_code == 2 and "'sub/missing.csv' does not exist" in missing.stderr
