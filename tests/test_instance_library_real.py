"""The real-data tier of the instance library: its files regenerate byte-identically from
their specs, its manifest values are consistent, the manifest merge never loses a best value or
accepts a false proof, and ``bench mip --suite real --quick`` runs end to end."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv.bench.mip import load_suite
from oraclepriv.cli import app
from oraclepriv.hypotheses import Halfspace
from oraclepriv.instances import (
    INSTANCE_SPECS,
    REAL_TIER,
    REAL_TIER_SPECS,
    check_witnesses,
    generate,
    instances_dir,
    load_instance,
    load_manifest,
    real_tier,
    record_results,
)
from oraclepriv.instances.manifest import _sha256
from oraclepriv.io import write_csv_problem

runner = CliRunner()
SPECS = {spec.name: spec for spec in INSTANCE_SPECS}
TIER = {entry["name"]: entry for entry in load_manifest() if entry["name"] in REAL_TIER}


def test_the_tier_is_in_the_manifest_with_its_shape():
    assert set(TIER) == set(REAL_TIER) and len(REAL_TIER) == len(set(REAL_TIER))
    assert 20 <= len(REAL_TIER) <= 30
    for name, entry in TIER.items():
        assert entry["class"] == "halfspace" and 4 <= entry["d"] <= 10, name
        assert entry["tier"] == "real", name
    # real data at full size: every row of the data set (or of the two digits of a pair)
    sizes = {"breast_cancer": 569, "wine": 178, "wine_class1": 178, "iris_versicolor": 150, "digits_even_odd": 1797}
    for name, entry in TIER.items():
        dataset = entry["params"].get("dataset")
        if dataset in sizes:
            assert entry["n"] == sizes[dataset], name


@pytest.mark.parametrize("spec", REAL_TIER_SPECS, ids=lambda spec: spec.name)
def test_tier_files_regenerate_byte_identically(spec, tmp_path):
    X, y, weights = generate(spec)
    write_csv_problem(tmp_path / spec.filename, X, y, weights)
    assert _sha256(tmp_path / spec.filename) == TIER[spec.name]["sha256"]
    assert _sha256(instances_dir() / spec.filename) == TIER[spec.name]["sha256"]


def test_manifest_values_are_consistent():
    """Every tier instance has a best objective (the re-scored loss of a hypothesis some backend
    returned), no proved bound above it, who found and proved them at what time limit, and open
    instances say so with a positive gap."""
    for name, entry in TIER.items():
        objective, bound = entry["best_objective"], entry["best_bound"]
        _, _, _, weights = load_instance(name)
        tolerance = 1e-9 * max(1.0, float(np.abs(weights).sum()))
        assert objective is not None and entry["solved_by"], name
        assert bound is not None and entry["bound_by"], name
        assert bound <= objective + tolerance, f"{name}: bound {bound} above the objective {objective}"
        assert entry["gap"] == pytest.approx(max(0.0, objective - bound), abs=1e-12), name
        assert entry["proved_optimal"] == (objective <= bound + tolerance), name
        if not entry["signed_weights"]:
            assert objective == round(objective), f"{name}: unit weights give integer objectives"
        for key in ("solved_time_limit", "bound_time_limit"):
            assert entry[key] is None or entry[key] > 0, name


def test_quick_subset_is_small():
    quick = real_tier(quick=True)
    assert len(quick) == 2 and set(quick) <= set(REAL_TIER)
    assert all(SPECS[name].d <= 5 and SPECS[name].n <= 200 for name in quick)
    instances = load_suite("real", quick=True)
    assert [instance.name for instance in instances] == quick
    assert [instance.name for instance in load_suite("real")] == real_tier()


def _one_instance_library(tmp_path, name="iris-virginica-4f"):
    """A copy of one tier instance as a library of its own (file + manifest entry without results)."""
    shutil.copy(instances_dir() / f"{name}.csv", tmp_path)
    entry = dict(TIER[name])
    for key in (
        "best_objective",
        "solved_by",
        "solved_time_limit",
        "best_hypothesis",
        "best_bound",
        "bound_by",
        "bound_time_limit",
    ):
        entry[key] = None
    entry.update(proved_optimal=False, gap=None)
    (tmp_path / "manifest.json").write_text(json.dumps([entry]))
    return name


def _attaining(name, loss):
    """A halfspace with this loss on the instance: the shipped witness with its offset b shifted."""
    _, X, y, w = load_instance(name)
    witness = TIER[name]["best_hypothesis"]
    for shift in np.linspace(0.0, -1.0, 2001):
        hypothesis = {**witness, "b": witness["b"] + float(shift)}
        if Halfspace(tuple(hypothesis["w"]), hypothesis["b"]).loss(X, y, w) == loss:
            return hypothesis
    raise AssertionError(f"no shift of {name}'s witness has loss {loss}")


def _row(name, backend, objective, bound, certified=False, restriction=None, status="time_limit", limit=60.0, **more):
    """A bench mip row; ``hypothesis=True``: one that attains ``objective`` (a new best needs one)."""
    if more.get("hypothesis") is True:
        more["hypothesis"] = _attaining(name, objective)
    return {
        "instance": name,
        "class": "halfspace",
        "backend": backend,
        "status": status,
        "objective": objective,
        "bound": bound,
        "certified": certified,
        "restriction": restriction,
        "time_limit": limit,
        **more,
    }


def test_record_results_keeps_the_best_values_and_says_who(tmp_path):
    name = _one_instance_library(tmp_path)
    rows = [
        _row(name, "a", 5.0, 1.0, hypothesis=True),
        # its objective counts, its bound does not
        _row(name, "naive", 3.0, 4.0, restriction="margin 1e-4", hypothesis=True),
        _row(name, "b", 4.0, 2.0, limit=10.0),  # no new best: no hypothesis needed
        _row(name, "c", math.nan, "-inf", status="error"),
    ]
    (entry,) = record_results(rows, tmp_path)
    assert (entry["best_objective"], entry["solved_by"], entry["solved_time_limit"]) == (3.0, "naive", 60.0)
    assert (entry["best_bound"], entry["bound_by"], entry["bound_time_limit"]) == (2.0, "b", 10.0)
    assert entry["proved_optimal"] is False and entry["gap"] == 1.0
    # a later, worse run changes nothing; a certificate closes the instance and names the prover
    (entry,) = record_results([_row(name, "d", 6.0, 0.0, limit=1.0)], tmp_path)
    assert (entry["best_objective"], entry["best_bound"]) == (3.0, 2.0)
    (entry,) = record_results([_row(name, "e", 3.0, 3.0, certified=True, status="optimal")], tmp_path)
    assert entry["solved_by"] == "naive" and entry["bound_by"] == "e" and entry["proved_optimal"] and entry["gap"] == 0
    assert json.loads((tmp_path / "manifest.json").read_text())[0] == entry
    assert check_witnesses(tmp_path) == []  # what record writes, check accepts


def test_record_results_refuses_a_false_proof_and_unknown_instances(tmp_path):
    name = _one_instance_library(tmp_path)
    record_results([_row(name, "a", 3.0, 1.0, hypothesis=True)], tmp_path)
    with pytest.raises(ValueError, match="false proof"):
        record_results([_row(name, "liar", 9.0, 4.0)], tmp_path)
    with pytest.raises(ValueError, match="unknown instance 'nope'"):
        record_results([_row("nope", "a", 3.0, 1.0)], tmp_path)


@pytest.mark.slow
def test_bench_mip_real_quick_end_to_end(tmp_path):
    out = tmp_path / "bench"
    result = runner.invoke(
        app,
        ["bench", "mip", "--suite", "real", "--quick", "--backends", "scip-bc", "--time-limit", "5", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "rows.json").read_text())
    assert [r["instance"] for r in rows] == real_tier(quick=True)
    assert all(r["status"] != "error" for r in rows)
    assert "oraclepriv bench mip --suite real" in (out / "summary.md").read_text()
    # the rows carry their hypotheses, so the run can be recorded in a library (here a copy of the quick tier)
    library = tmp_path / "library"
    library.mkdir()
    for name in real_tier(quick=True):
        shutil.copy(instances_dir() / f"{name}.csv", library)
    blank = dict.fromkeys(("best_objective", "solved_by", "best_hypothesis", "best_bound", "bound_by"))
    entries = [{**TIER[name], **blank, "proved_optimal": False} for name in real_tier(quick=True)]
    (library / "manifest.json").write_text(json.dumps(entries))
    result = runner.invoke(app, ["instances", "record", str(out / "rows.json"), "--dir", str(library)])
    assert result.exit_code == 0, result.output
    assert check_witnesses(library) == []


@pytest.mark.slow
def test_bench_mip_real_quick_with_every_default_backend(tmp_path):
    out = tmp_path / "bench"
    result = runner.invoke(app, ["bench", "mip", "--suite", "real", "--quick", "--out", str(out)])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "summary.json").read_text())
    assert meta["agreement_problems"] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in REAL_TIER if TIER[n]["proved_optimal"]])
def test_a_fresh_solve_agrees_with_the_manifest(name):
    """A fresh scip-bc call (60 s) never beats a proved optimum nor proves a bound above a best objective;
    when it certifies, it certifies the manifest's value."""
    from oraclepriv.oracle import make_oracle

    entry, X, y, weights = load_instance(name)
    result = make_oracle("halfspace", backend="scip-bc", time_limit=60.0).solve(X, y, weights)
    tolerance = 1e-9 * max(1.0, float(np.abs(weights).sum()))
    assert result.objective >= entry["best_bound"] - tolerance
    assert result.bound <= entry["best_objective"] + tolerance
    if result.certified:
        assert result.objective == pytest.approx(entry["best_objective"], abs=tolerance)
