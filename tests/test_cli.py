"""The command line: `oraclepriv erm` output contract and its errors, and the instance library."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.instances import INSTANCE_SPECS, build_library, check_library, instances_dir
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
    result = runner.invoke(app, ["erm", str(instances_dir() / "rrspm-2d-n300.csv"), "--class", "halfspace", "--json"])
    assert result.exit_code == 0, result.output
    out = _strict_json(result.stdout)
    for key in ("class", "backend", "n", "d", "objective", "bound", "certified", "status", "seconds", "hypothesis"):
        assert key in out
    assert out["class"] == "halfspace" and out["backend"] == "enumerate"
    assert (out["n"], out["d"]) == (300, 2)
    assert out["certified"] is True and out["status"] == "optimal"
    assert set(out["hypothesis"]) == {"type", "w", "b"} and len(out["hypothesis"]["w"]) == 2
    manifest = json.loads((instances_dir() / "manifest.json").read_text())
    best = next(e for e in manifest if e["name"] == "rrspm-2d-n300")["best_objective"]
    assert out["objective"] == pytest.approx(best, abs=1e-9)


def test_erm_uses_weight_column_and_serialises_infinite_threshold(csv_file):
    # all weights favour predicting 1 everywhere: the optimum is the threshold -inf
    path = csv_file([[0.0], [1.0], [2.0]], [1, 1, 0], weights=[5.0, 5.0, -5.0])
    result = runner.invoke(app, ["erm", str(path), "--class", "threshold", "--json"])
    assert result.exit_code == 0, result.output
    out = _strict_json(result.stdout)
    assert out["hypothesis"] == {"type": "threshold", "threshold": "-inf"}
    assert out["objective"] == pytest.approx(-5.0)
    assert out["signed_weights"] is True


def test_erm_stump_human_output(csv_file):
    path = csv_file([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0]], [0, 0, 1])
    result = runner.invoke(app, ["erm", str(path), "--class", "stump"])
    assert result.exit_code == 0, result.output
    assert "certified=True" in result.stdout


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
    result = runner.invoke(app, ["erm", str(path), "--class", "stump"])
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_erm_bad_options_are_clear_errors(csv_file, tmp_path):
    path = csv_file(np.arange(12.0).reshape(3, 4), [0, 1, 0])
    result = runner.invoke(app, ["erm", str(path), "--class", "halfspace", "--backend", "enumerate"])
    assert result.exit_code == 2 and "d <= 3" in result.stderr and "d=4" in result.stderr
    result = runner.invoke(app, ["erm", str(path), "--class", "stump", "--backend", "nope"])
    assert result.exit_code == 2 and "unknown backend 'nope'" in result.stderr
    result = runner.invoke(app, ["erm", str(path), "--class", "circle"])
    assert result.exit_code == 2 and "circle" in result.output
    result = runner.invoke(app, ["erm", str(path), "--class", "stump", "--time-limit", "-1"])
    assert result.exit_code == 2 and "time_limit" in result.stderr
    result = runner.invoke(app, ["erm", str(tmp_path / "missing.csv"), "--class", "stump"])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    wide = csv_file(np.arange(6.0).reshape(3, 2), [0, 1, 0], name="wide.csv")
    result = runner.invoke(app, ["erm", str(wide), "--class", "threshold"])
    assert result.exit_code == 2 and "one feature" in result.stderr


def test_bundled_instances_match_manifest_and_generators(tmp_path):
    assert check_library() == []
    manifest = {e["name"]: e for e in json.loads((instances_dir() / "manifest.json").read_text())}
    assert set(manifest) == {spec.name for spec in INSTANCE_SPECS}
    rebuilt = {e["name"]: e for e in build_library(tmp_path, solve=False)}
    for name, entry in manifest.items():
        assert rebuilt[name]["sha256"] == entry["sha256"], f"{name}: generator output differs from the shipped file"
        assert entry["proved_optimal"] is True


def test_instances_check_detects_a_modified_file(tmp_path):
    build_library(tmp_path, solve=False)
    victim = tmp_path / INSTANCE_SPECS[0].filename
    victim.write_text(victim.read_text().replace("1", "2", 1))
    problems = check_library(tmp_path)
    assert len(problems) == 1 and "checksum mismatch" in problems[0]
