"""Witnesses in the instance library's manifest: every best known objective comes with the hypothesis that
attains it (``best_hypothesis``), which ``check_witnesses`` and ``oraclepriv instances check`` re-score, and
``record_results`` / ``oraclepriv instances record`` accept a new best only with a hypothesis that attains it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.hypotheses import Halfspace
from oraclepriv.instances import check_witnesses, instances_dir, load_instance, load_manifest, record_results

runner = CliRunner()
NAME = "iris-virginica-4f"


def test_every_best_known_objective_is_attained_by_its_stored_hypothesis():
    assert check_witnesses() == []
    assert all(entry.get("best_hypothesis") for entry in load_manifest())


def _copy(tmp_path, **changes):
    """A one-instance library (file + its shipped manifest entry, with ``changes``)."""
    shutil.copy(instances_dir() / f"{NAME}.csv", tmp_path)
    entry = {**next(e for e in load_manifest() if e["name"] == NAME), **changes}
    (tmp_path / "manifest.json").write_text(json.dumps([entry]))
    return entry


def _worse(hypothesis: dict) -> dict:
    """The witness with its orientation flipped (misclassifies what it got right)."""
    return {**hypothesis, "w": [-v for v in hypothesis["w"]], "b": -hypothesis["b"]}


def test_a_witness_that_does_not_attain_its_objective_is_reported(tmp_path):
    entry = _copy(tmp_path)
    assert check_witnesses(tmp_path) == []
    _copy(tmp_path, best_hypothesis=_worse(entry["best_hypothesis"]))
    (problem,) = check_witnesses(tmp_path)
    assert (
        f"{NAME}: best_hypothesis re-scores to" in problem
        and f"not the recorded objective {entry['best_objective']!r}" in problem
    )
    # a lower objective no witness attains: the witness and the (now false) proof are both reported
    _copy(tmp_path, best_objective=entry["best_objective"] - 1)
    problems = check_witnesses(tmp_path)
    assert any("re-scores to" in p for p in problems) and any("a false proof" in p for p in problems), problems
    _copy(tmp_path, best_hypothesis=None)
    assert "has no best_hypothesis" in check_witnesses(tmp_path)[0]
    result = runner.invoke(app, ["instances", "check", "--dir", str(tmp_path)])
    assert result.exit_code == 1 and "has no best_hypothesis" in result.output


def _row(objective, hypothesis, backend="b", bound=-np.inf, certified=False):
    return {
        "instance": NAME,
        "class": "halfspace",
        "backend": backend,
        "status": "time_limit",
        "objective": objective,
        "bound": bound,
        "certified": certified,
        "restriction": None,
        "time_limit": 60.0,
        "hypothesis": hypothesis,
    }


def test_record_results_keeps_a_new_best_only_with_a_hypothesis_that_attains_it(tmp_path):
    entry = _copy(tmp_path)
    _, X, y, w = load_instance(NAME, tmp_path)
    worse = _worse(entry["best_hypothesis"])
    loss = Halfspace(tuple(worse["w"]), worse["b"]).loss(X, y, w)
    with pytest.raises(ValueError, match="re-scores to"):  # a row claiming the optimum with the flipped halfspace
        record_results([_row(entry["best_objective"], worse)], tmp_path)
    (kept,) = record_results([_row(loss, worse)], tmp_path)  # honest but worse: nothing changes
    assert kept["best_hypothesis"] == entry["best_hypothesis"] and kept["best_objective"] == entry["best_objective"]


def test_a_tie_adds_a_missing_witness_and_keeps_the_first_finder(tmp_path):
    entry = _copy(tmp_path, best_hypothesis=None)
    (merged,) = record_results(
        [_row(entry["best_objective"], entry["best_hypothesis"] or _shipped_witness(), "late")], tmp_path
    )
    assert merged["solved_by"] == entry["solved_by"] != "late"
    assert merged["best_hypothesis"] == _shipped_witness()
    assert check_witnesses(tmp_path) == []


def _shipped_witness() -> dict:
    return next(e for e in load_manifest() if e["name"] == NAME)["best_hypothesis"]


def test_instances_record_merges_a_rows_file_and_refuses_bad_ones(tmp_path):
    entry = _copy(tmp_path, best_hypothesis=None)
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([_row(entry["best_objective"], _shipped_witness())]))
    result = runner.invoke(app, ["instances", "record", str(rows), "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert NAME in result.stdout and check_witnesses(tmp_path) == []
    for content, fragment in [
        ("{", "not readable JSON"),
        ('{"a": 1}', "must hold a list of rows"),
        ("[{}]", "row 1 lacks the keys ['instance'"),
    ]:
        rows.write_text(content)
        result = runner.invoke(app, ["instances", "record", str(rows), "--dir", str(tmp_path)])
        assert result.exit_code == 2 and fragment in result.output, result.output
        assert "Traceback" not in result.output
    result = runner.invoke(app, ["instances", "record", str(tmp_path / "nope.json")])
    assert result.exit_code == 2 and "does not exist" in result.output
    rows.write_text("[]")
    for folder, fragment in [
        (tmp_path / "none", "holds no manifest.json"),
        (rows.parent / "sub", "holds no manifest.json"),
    ]:
        result = runner.invoke(app, ["instances", "record", str(rows), "--dir", str(folder)])
        assert result.exit_code == 2 and fragment in result.output and "Traceback" not in result.output
    (tmp_path / f"{NAME}.csv").unlink()  # the manifest names a file that is gone
    rows.write_text(json.dumps([_row(entry["best_objective"], _shipped_witness())]))
    result = runner.invoke(app, ["instances", "record", str(rows), "--dir", str(tmp_path)])
    assert result.exit_code == 2 and f"{NAME}.csv' does not exist" in result.output, result.output
