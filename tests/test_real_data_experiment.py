"""The real-data comparison (oraclepriv/experiments/real_data*.py) on its tiny configuration: every planned cell has a
row, a rerun resumes from the stored cells, the report regenerates from them alone, the scaling reads no private
record, capped and failing fits keep their rows, and the best private learner is the one the paired numbers say."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import time

import numpy as np
import pandas as pd
import pytest

from oraclepriv.experiments import real_data_sets
from oraclepriv.experiments.real_data import (
    SNAPSHOT,
    TINY_CONFIG,
    cell_fingerprint,
    load_snapshot,
    plan_cells,
    run_real_data,
)
from oraclepriv.experiments.real_data_cell import LEARNERS, PRIVATE, REFERENCE, Context, Entry, run_cell
from oraclepriv.experiments.real_data_sets import PublicScaling, make_split
from oraclepriv.experiments.real_data_stats import best_private

OUTPUTS = ["README.md", "fits.csv", "accuracy.csv", "best.csv", "heldout.csv", "summary.json", "iris-vv.png"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("real-data")
    seen: list[tuple[int, int]] = []
    result = run_real_data(out, config=TINY_CONFIG, progress=lambda done, total: seen.append((done, total)))
    return out, result, seen


def _accuracies(frame: pd.DataFrame) -> pd.Series:
    return frame.set_index("key").accuracy.sort_index()


def test_every_planned_cell_has_a_row(tiny):
    out, result, seen = tiny
    specs = plan_cells(TINY_CONFIG, 0)
    fits = result["fits"]
    assert sorted(fits.key) == sorted(s["key"] for s in specs)
    assert set(fits.learner) == set(LEARNERS) - {"adaptive_margin_erm_all", "adaptive_margin_erm_direct_all"}
    assert set(fits.status) == {"ok"}, fits[fits.status != "ok"][["learner", "status", "reason"]]
    assert fits.accuracy.between(0, 1).all() and (fits.seconds >= 0).all()
    # the references are fitted once per seed, the learners once per seed and epsilon
    per_learner = fits.groupby("learner").size()
    reps, epsilons = TINY_CONFIG["repetitions"], len(TINY_CONFIG["epsilons"])
    for name, count in per_learner.items():
        assert count == reps * (1 if LEARNERS[name].kind == REFERENCE else epsilons), name
    # the private learners state the guarantee they were asked for
    private = fits[fits.kind == PRIVATE]
    assert np.allclose(private.guarantee_epsilon, private.epsilon)
    for name in OUTPUTS:
        assert (out / name).exists(), name
    assert seen[-1] == (len(specs), len(specs))
    assert not (out / "cells.jsonl").exists()  # the interrupted-run cache goes once the outputs are written


def test_the_best_private_learner_is_named_with_its_lead(tiny):
    out, result, _ = tiny
    best = result["best"]
    assert len(best) == len(TINY_CONFIG["tasks"]) * len(TINY_CONFIG["epsilons"])
    row = best.iloc[0]
    table = result["accuracy"]
    private = table[(table.kind == PRIVATE) & (table.epsilon == row.epsilon)]
    assert math.isclose(row.accuracy, private.accuracy.max())
    assert LEARNERS[row.best].kind == PRIVATE
    readme = (out / "README.md").read_text()
    assert "## Findings" in readme and LEARNERS[row.best].label in readme


def test_rerun_resumes_from_the_stored_cells(tiny, tmp_path):
    out, result, _ = tiny
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    rows = load_snapshot(copy)
    dropped = {r["key"] for r in rows[::3]}
    text = "".join(json.dumps(r) + "\n" for r in rows if r["key"] not in dropped)
    (copy / SNAPSHOT).write_bytes(gzip.compress(text.encode()))
    seen: list[tuple[int, int]] = []
    again = run_real_data(copy, config=TINY_CONFIG, progress=lambda done, total: seen.append((done, total)))
    runs = [json.loads(line) for line in (copy / "runs.jsonl").read_text().splitlines()]
    assert runs[-1]["computed"] == len(dropped) and runs[-1]["resumed"] == len(rows) - len(dropped)
    assert seen[0] == (len(rows) - len(dropped), len(rows))
    pd.testing.assert_series_equal(_accuracies(again["fits"]), _accuracies(result["fits"]))


def test_report_only_regenerates_from_the_stored_cells(tiny, tmp_path):
    out, result, _ = tiny
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for name in OUTPUTS:
        (copy / name).unlink()
    again = run_real_data(copy, config=TINY_CONFIG, report_only=True)
    for name in OUTPUTS:
        assert (copy / name).exists(), name
    assert (copy / "accuracy.csv").read_text() == (out / "accuracy.csv").read_text()
    assert (copy / "best.csv").read_text() == (out / "best.csv").read_text()
    assert len((copy / "runs.jsonl").read_text().splitlines()) == 1  # nothing computed, no run recorded
    pd.testing.assert_series_equal(_accuracies(again["fits"]), _accuracies(result["fits"]))


def test_report_only_refuses_missing_cells(tiny, tmp_path):
    out, _, _ = tiny
    with pytest.raises(ValueError, match="report_only: .* not stored"):
        run_real_data(tmp_path / "empty", config=TINY_CONFIG, report_only=True)
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    with pytest.raises(ValueError, match="report_only: .* not stored"):
        run_real_data(copy, config={**TINY_CONFIG, "epsilons": [1.0, 3.0]}, report_only=True)


def test_the_scaling_reads_no_private_record(monkeypatch):
    split = make_split("breast-cancer", 7)
    task, X, y = real_data_sets.load_task("breast-cancer")
    n_test, n_public = task.sizes(len(y))
    perm = np.random.default_rng(7).permutation(len(y))
    public, others = perm[n_test : n_test + n_public], np.r_[perm[:n_test], perm[n_test + n_public :]]
    assert np.array_equal(split.Z, X[public])
    # every row but the public ones (the private records and the test split) replaced: the scaling is unchanged
    wild = X.copy()
    wild[others] = np.random.default_rng(0).normal(1e4, 1e3, size=(len(others), X.shape[1]))
    flipped = y.copy()
    flipped[others] ^= 1
    monkeypatch.setattr(real_data_sets, "_rows", lambda _task: (wild, flipped))
    changed = make_split("breast-cancer", 7)
    for field in ("mean", "scale", "directions"):
        assert np.array_equal(getattr(changed.scaling, field), getattr(split.scaling, field)), field
    assert changed.scaling.radius == split.scaling.radius
    assert not np.array_equal(changed.X_private, split.X_private)


def test_scaled_rows_lie_in_the_unit_ball():
    split = make_split("digits-3v8", 1)
    for which, d in (("all", 64), ("low", 2)):
        X, Z, T = split.features(which, 2)
        assert X.shape[1] == Z.shape[1] == T.shape[1] == d
        for rows in (X, Z, T):
            assert np.linalg.norm(rows, axis=1).max() <= 1 + 1e-12
    scaling = PublicScaling.from_public(split.Z)
    assert np.array_equal(scaling.mean, split.scaling.mean)
    with pytest.raises(ValueError, match="components must be between 1 and 64; got 65"):
        split.features("low", 65)


@pytest.mark.parametrize("learner", ["adaptive_margin_erm_all", "adaptive_margin_erm_direct_all"])
def test_the_adaptive_margin_learners_fit_in_a_cell(learner):
    spec = {**plan_cells(TINY_CONFIG, 0)[0], "learner": learner, "epsilon": 2.0}
    (row,) = run_cell(spec)
    assert row["status"] == "ok", row["reason"]
    assert 0 <= row["accuracy"] <= 1 and row["d"] == 4 and row["guarantee_epsilon"] == 2.0


def test_the_direct_margin_learners_run_the_configured_setting():
    spec = {**plan_cells(TINY_CONFIG, 0)[0], "learner": "margin_erm_direct_all", "epsilon": 1.0}
    est = LEARNERS["margin_erm_direct_all"].fit(
        Context(
            X=np.full((20, 2), 0.5),
            y=np.r_[np.zeros(10), np.ones(10)].astype(int),
            Z=np.zeros((1, 2)),
            epsilon=1.0,
            seed=0,
            config=spec["config"],
        )
    )
    record = est.release_.privacy
    assert record["accounting"] == "direct-gaussian" and record["rounds"] == 1 and record["jl_dim"] is None


def test_a_learners_own_settings_enter_its_cells_fingerprints_alone():
    """Adding (or changing) the direct margin learners' settings keeps every other cell's fingerprint, so their
    stored cells stay valid; the direct learners' cells change with their settings."""
    without = {k: v for k, v in TINY_CONFIG.items() if k != "margin_direct"}
    changed = {**TINY_CONFIG, "margin_direct": {**TINY_CONFIG["margin_direct"], "rounds": 2}}
    base, old, other = (
        {s["key"]: s["fingerprint"] for s in plan_cells(cfg, 0)} for cfg in (TINY_CONFIG, without, changed)
    )
    own = {key for key in base if "|margin_erm_direct_all|" in key}
    assert own and all(base[key] == old[key] == other[key] for key in base if key not in own)
    assert all(base[key] != other[key] for key in own)
    assert cell_fingerprint(without, 0) == cell_fingerprint(TINY_CONFIG, 0)


def _slow(_context):
    time.sleep(5)


def _broken(_context):
    raise RuntimeError("no fit today")


@pytest.mark.parametrize(
    ("fit", "status", "reason"), [(_slow, "capped", "cap of 0.3 s ran out"), (_broken, "error", "no fit today")]
)
def test_capped_and_failed_fits_keep_their_rows(monkeypatch, fit, status, reason):
    monkeypatch.setitem(LEARNERS, "probe", Entry("probe", "probe", "low", PRIVATE, fit))
    spec = {**plan_cells(TINY_CONFIG, 0)[0], "learner": "probe", "epsilon": 1.0}
    spec["config"] = {**spec["config"], "cell_cap": 0.3}
    start = time.perf_counter()
    (row,) = run_cell(spec)
    assert time.perf_counter() - start < 3
    assert row["status"] == status and reason in row["reason"]
    assert math.isnan(row["accuracy"]) and row["seconds"] > 0


def test_best_private_is_paired_over_seeds():
    rows = []
    for rep, (a, b, majority) in enumerate([(0.9, 0.8, 0.6), (0.8, 0.72, 0.5), (0.85, 0.76, 0.55)]):
        base = {"task": "t", "status": "ok", "kind": PRIVATE, "rep": rep, "epsilon": 1.0}
        rows += [{**base, "learner": "rrspm", "accuracy": a}, {**base, "learner": "public_cover_em", "accuracy": b}]
        rows += [{**base, "learner": "subsample", "accuracy": 0.99, "status": "capped" if rep == 1 else "ok"}]
        ref = {**base, "kind": REFERENCE, "epsilon": math.nan}
        rows += [{**ref, "learner": "majority", "accuracy": majority}, {**ref, "learner": "erm", "accuracy": 0.95}]
        rows += [{**ref, "learner": "logistic_all", "accuracy": 0.97}]
    (row,) = best_private(pd.DataFrame(rows)).itertuples()
    assert row.best == "rrspm" and row.runner_up == "public_cover_em"
    assert math.isclose(row.lead, 0.09) and row.lead_low > 0  # differences 0.1, 0.08, 0.09
    assert math.isclose(row.over_majority, 0.3)
    assert "subsample (capped)" in row.excluded  # never ranked on fewer seeds


def test_the_command_line_reports_from_the_stored_cells_and_refuses_an_empty_folder(tiny, tmp_path, monkeypatch):
    import functools

    from typer.testing import CliRunner

    from oraclepriv.cli.app import app
    from oraclepriv.experiments import real_data

    out, result, _ = tiny
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    monkeypatch.setattr(real_data, "run_real_data", functools.partial(run_real_data, config=TINY_CONFIG))
    done = CliRunner().invoke(app, ["experiment", "real-data", "--out", str(copy), "--report-only", "--quiet"])
    assert done.exit_code == 0, done.output
    assert result["best"].best.iloc[0] in done.output and f"wrote {copy}" in done.output
    empty = CliRunner().invoke(app, ["experiment", "real-data", "--out", str(tmp_path / "empty"), "--report-only"])
    assert empty.exit_code != 0 and "not stored" in empty.output, empty.output
