"""The oracle-cost experiment's bookkeeping on a tiny configuration (oraclepriv/experiments/oracle_cost.py): every
oracle call of every learner accounted for against the learner's own ledger, seconds that add up, twins built from
the same private rows, capped calls kept (not dropped), resume, and results independent of n_jobs."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from oraclepriv.experiments.oracle_cost import (
    TINY_CONFIG,
    convex_backend_name,
    load_cells,
    plan_cells,
    run_oracle_cost,
)
from oraclepriv.experiments.oracle_cost_cell import GaussianHalfspaceScenario, grid_equivalent
from oraclepriv.hypotheses import Halfspace, Stump, Threshold

TIMING = [
    "total_seconds",
    "oracle_seconds",
    "non_oracle_seconds",
    "seconds",
    "twin_seconds",
    "noise_ratio",
    "nodes",
    "twin_nodes",
    "cores",
    "cuts",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("oracle-cost")
    seen = []
    result = run_oracle_cost(
        out, config=TINY_CONFIG, n_jobs=1, progress=lambda done, total: seen.append((done, total)), figures=False
    )
    return out, result, seen


def test_every_planned_cell_has_a_row_and_none_failed(tiny):
    out, result, seen = tiny
    specs, _ = plan_cells(TINY_CONFIG, 0)
    fits = result["fits"]
    assert len(fits) == len(specs) == result["summary"]["run"]["cells"]
    assert set(fits.status) == {"ok"}, fits[fits.status != "ok"][["learner", "status", "reason"]]
    assert set(fits.learner) == {
        "erm",
        "rrspm",
        "perturbation",
        "subsample",
        "rspm",
        "public_cover_em",
        "ppm",
        "regularization",
        "output_perturbation",
        "margin_erm",
        "margin_erm_direct",
        "adaptive_margin_erm",
    }
    assert seen[-1] == (len(specs), len(specs)) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    for name in ("README.md", "calls.csv"):  # the figures: test_quick_variant_runs_in_under_two_minutes (slow)
        assert (out / name).stat().st_size > 1000, name


def test_every_oracle_call_is_accounted_for_against_the_ledger(tiny):
    """The call rows of each fit are its outer ledger's records; their number equals the learner's own ledger and the
    calls its algorithm makes by design, and every 0-1 oracle call went through the recording backend."""
    _, result, _ = tiny
    fits, calls = result["fits"], result["calls"]
    key = ["class", "d", "n", "learner", "backend", "rep"]
    counted = calls.groupby(key).size().rename("rows")
    merged = fits.set_index(key).join(counted).fillna({"rows": 0})
    assert (merged.rows == merged.calls).all()
    learners = merged[merged.learner_ledger_calls.notna()] if "learner_ledger_calls" in merged else merged.iloc[:0]
    assert len(learners) == (fits.learner != "erm").sum()
    assert (learners.rows == learners.learner_ledger_calls).all()
    assert (merged.rows == merged.calls_by_design).all()
    J = TINY_CONFIG["perturbation"]["J"]
    by_learner = merged.groupby(level="learner").rows.unique().to_dict()
    assert list(by_learner["rrspm"]) == [2] and list(by_learner["perturbation"]) == [J + 1]
    assert list(by_learner["public_cover_em"]) == [0] and list(by_learner["output_perturbation"]) == [0]
    zero_one = calls[calls.learner.isin(["erm", "rrspm", "perturbation", "subsample", "rspm"])]
    assert zero_one.recorded.all()
    assert set(calls.kind) == {"erm", "private", "public", "public-noisy", "teacher", "convex"}


def test_regularization_cells_are_labelled_with_the_backend_their_convex_calls_ran(tiny):
    """Regularization calls no 0-1 backend: its cells carry the convex oracle's backend name (in their key and noise
    seed), the name its regularized-ERM calls record (the projection step, least squares, records its own)."""
    _, result, _ = tiny
    fits, calls = result["fits"], result["calls"]
    label = convex_backend_name()
    assert label == "highs-qp+kkt"
    assert set(fits[fits.learner == "regularization"].backend) == {label}
    convex = calls[calls.kind == "convex"]
    assert set(convex.backend) == {label} and set(convex.step) == {"regularized-erm", "perturb"}
    erm = convex[convex.step == "regularized-erm"]
    assert len(erm) == (fits.learner == "regularization").sum() and set(erm.call_backend) == {label}
    specs, _ = plan_cells(TINY_CONFIG, 0)
    assert {s["key"].split("|")[4] for s in specs if s["learner"] == "regularization"} == {label}


def test_seconds_add_up(tiny):
    _, result, _ = tiny
    fits, calls = result["fits"], result["calls"]
    key = ["class", "d", "n", "learner", "backend", "rep"]
    summed = calls.groupby(key).seconds.sum()
    joined = fits.set_index(key).join(summed.rename("call_seconds")).fillna({"call_seconds": 0.0})
    np.testing.assert_allclose(joined.oracle_seconds, joined.call_seconds, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(joined.oracle_seconds + joined.non_oracle_seconds, joined.total_seconds, atol=1e-9)
    assert (joined.non_oracle_seconds > -1e-6).all()  # the calls happen inside the timed fit
    assert (joined.total_seconds > 0).all()


def test_twins_hold_the_same_private_rows_and_no_noise_rows(tiny):
    _, result, _ = tiny
    fits, calls = result["fits"], result["calls"]
    key = ["class", "d", "n", "learner", "backend", "rep"]
    private = calls[calls.kind == "private"].merge(fits[key + ["private_digest"]], on=key)
    assert len(private) and (private.twin_kind == "solved").all()
    assert (private.twin_digest == private.private_digest).all()
    assert (private.private_rows == private.n).all() and (private.noise_rows == private.rows - private.n).all()
    assert (private.noise_rows > 0).all()
    by_construction = calls[calls.kind.isin(["public", "teacher"])]
    assert len(by_construction) and (by_construction.twin_kind == "by construction").all()
    assert (by_construction.noise_ratio == 1.0).all()
    noisy = calls[calls.kind == "public-noisy"]
    assert len(noisy) and (noisy.twin_kind == "solved").all() and noisy.twin_seconds.gt(0).all()
    assert calls[calls.kind.isin(["erm", "convex"])].twin_kind.eq("none").all()


@pytest.mark.slow
def test_resume_computes_nothing_and_n_jobs_does_not_change_the_results(tiny, tmp_path):
    out, first, _ = tiny
    lines = (out / "cells.jsonl").read_text().count("\n")
    again = run_oracle_cost(out, config=TINY_CONFIG, n_jobs=1, figures=False)
    assert again["summary"]["run"]["computed"] == 0 and again["summary"]["run"]["resumed"] == len(first["fits"])
    assert (out / "cells.jsonl").read_text().count("\n") == lines  # nothing appended
    plain = (out / "cells.jsonl").read_bytes()
    (out / "cells.jsonl").unlink()  # a checkout holds only the compressed snapshot: it resumes from it
    from_snapshot = run_oracle_cost(out, config=TINY_CONFIG, n_jobs=1, figures=False)
    assert from_snapshot["summary"]["run"]["computed"] == 0
    (out / "cells.jsonl").write_bytes(plain)
    parallel = run_oracle_cost(tmp_path, config=TINY_CONFIG, n_jobs=2, figures=False)
    for frame in ("fits", "calls"):
        a = first[frame].drop(columns=TIMING, errors="ignore").reset_index(drop=True)
        b = parallel[frame].drop(columns=TIMING, errors="ignore").reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b)
    assert len(load_cells(tmp_path / "cells.jsonl")) == len(first["fits"])


def test_capped_calls_are_recorded_not_dropped(tmp_path):
    """A backend whose every answer is uncertified: the private learners abort (status "uncertified", nothing
    released), their calls stay in the rows with lower-bound ratios, SubsampleAggregate falls back on its public call."""
    from oraclepriv.backends import registered_backend
    from oraclepriv.experiments.robust_tradeoff import FlakyBackend

    always = type("AlwaysFailing", (FlakyBackend,), {"rate": 1.0})
    config = {**TINY_CONFIG, "grid": [["stump", 3, {"flaky": [40]}]], "repetitions": 1}
    with registered_backend("flaky", always):
        result = run_oracle_cost(tmp_path, config=config, n_jobs=1, figures=False)
    fits, calls = result["fits"].set_index("learner"), result["calls"]
    assert fits.loc["rrspm", "status"] == "uncertified" and math.isnan(fits.loc["rrspm", "excess"])
    assert fits.loc["erm", "status"] == "uncertified"
    assert fits.loc["subsample", "status"] == "ok"  # private for any oracle: failed teachers abstain
    rr = calls[(calls.learner == "rrspm")]
    assert len(rr) == 1 and not rr.certified.iloc[0] and rr.ratio_censored.iloc[0].startswith("lower")
    assert "fallback" in set(calls[calls.learner == "subsample"].kind)
    assert fits.loc["rrspm", "calls"] == 1 and fits.loc["rrspm", "oracle_seconds"] > 0


def test_bad_arguments_name_themselves(tmp_path):
    with pytest.raises(ValueError, match="random_state"):
        run_oracle_cost(tmp_path, random_state=-1, config=TINY_CONFIG)
    with pytest.raises(ValueError, match="n_jobs"):
        run_oracle_cost(tmp_path, n_jobs=0, config=TINY_CONFIG)
    with pytest.raises(ValueError, match="config"):
        run_oracle_cost(tmp_path, config=[1])
    with pytest.raises(ValueError, match="progress"):
        run_oracle_cost(tmp_path, config=TINY_CONFIG, progress=3)
    with pytest.raises(ValueError, match="scale"):
        run_oracle_cost(tmp_path, scale="yes")
    with pytest.raises(ValueError, match="scale=True"):
        run_oracle_cost(tmp_path, scale=True, quick=True)
    with pytest.raises(ValueError, match="scale=True"):
        run_oracle_cost(tmp_path, scale=True, config=TINY_CONFIG)


def test_gaussian_disagreement_matches_monte_carlo():
    rng = np.random.default_rng(0)
    scen = GaussianHalfspaceScenario(3)
    X = rng.standard_normal((400_000, 3))
    target = X @ scen.normal >= scen.offset
    for h in (Halfspace((1.0, -0.5, 0.2), 0.1), Halfspace(tuple(-scen.normal), 0.3), Halfspace((0.0, 0.0, 0.0), -1.0)):
        assert scen.disagreement(h) == pytest.approx(np.mean(h.predict(X) != target), abs=4e-3)


def test_grid_equivalent_is_the_rounded_classifier():
    G = 16
    x = np.random.default_rng(1).uniform(0, 1, 5000)
    centre = (np.floor(x * G) + 0.5) / G
    g = (np.arange(G) + 0.5) / G
    for h in (Threshold(g[5]), Stump(0, g[3], 1), Stump(0, g[9], -1), Threshold(math.inf)):
        X = x[:, None]
        np.testing.assert_array_equal(grid_equivalent(h, G).predict(X), h.predict(centre[:, None]))


@pytest.mark.slow
def test_quick_variant_runs_in_under_two_minutes(tmp_path):
    start = time.perf_counter()
    result = run_oracle_cost(tmp_path, quick=True, n_jobs=2)
    assert time.perf_counter() - start < 120
    assert set(result["fits"].status) <= {"ok", "uncertified", "refused", "skipped"}
    assert len(result["calls"]) and (tmp_path / "crossover.png").stat().st_size > 10_000
    for name in ("call_time.png", "noise_ratio.png", "pareto.png"):
        assert (tmp_path / name).stat().st_size > 10_000, name


def test_the_default_portfolio_is_planned_beside_scip_bc_and_is_the_crossover_backend():
    """Wherever the configuration plans scip-bc, the default backend ``portfolio`` gets the same sizes, and the
    RRSPM vs PublicCoverEM comparison is made on it when the run has RRSPM fits on it (scip-bc otherwise)."""
    import pandas as pd

    from oraclepriv.experiments.oracle_cost import FULL_CONFIG
    from oraclepriv.experiments.oracle_cost_report import crossover_backend

    specs, _ = plan_cells(FULL_CONFIG, 0)

    def sizes(backend):
        return {(s["d"], s["n"]) for s in specs if s["hypothesis_class"] == "halfspace" and s["backend"] == backend}

    assert sizes("scip-bc") and sizes("portfolio") == sizes("scip-bc")
    rows = {"class": ["halfspace"] * 2, "learner": ["rrspm", "erm"]}
    assert crossover_backend(pd.DataFrame({**rows, "backend": ["scip-bc", "portfolio"]})) == "scip-bc"
    assert crossover_backend(pd.DataFrame({**rows, "backend": ["portfolio", "scip-bc"]})) == "portfolio"


def test_the_study_at_scale_plans_halfspaces_on_the_default_backend_at_researchers_sizes():
    """SCALE_CONFIG: n up to 5000 in d <= 5 and up to 1000 in d <= 10, every oracle learner on ``portfolio`` (the
    default halfspace backend), so that the crossover is compared at n = 200 and 1000 over d = 2-10."""
    from oraclepriv.experiments.oracle_cost import FULL_CONFIG, SCALE_CONFIG
    from oraclepriv.experiments.oracle_cost_readme import _protocol

    specs, _ = plan_cells(SCALE_CONFIG, 0)
    assert {s["hypothesis_class"] for s in specs} == {"halfspace"}
    oracle_backends = {s["backend"] for s in specs if s["learner"] in ("erm", "rrspm", "perturbation", "subsample")}
    assert oracle_backends == {"portfolio"}
    rrspm = {(s["d"], s["n"]) for s in specs if s["learner"] == "rrspm"}
    assert max(n for d, n in rrspm if d <= 5) == 5000 and max(n for d, n in rrspm if d > 5) == 1000
    for n in (200, 1000):
        assert {d for d, size in rrspm if size == n} == {2, 3, 4, 5, 6, 7, 8, 10}
        assert {s["d"] for s in specs if s["learner"] == "public_cover_em" and s["n"] == n} >= {2, 10}
    assert SCALE_CONFIG["call_cap"] == FULL_CONFIG["call_cap"]  # the study's cap: the cells compare across runs
    protocol = "\n".join(_protocol(SCALE_CONFIG, {"missing_backends": {}}))
    assert "halfspace d = 5: portfolio n = 200, 1000, 5000" in protocol


def test_crossover_is_the_d_from_which_on_rrspm_is_cheaper():
    """Curves that cross twice (RRSPM cheaper at d = 4, 5, dearer again at 6, cheaper from 7: the portfolio's lead
    at d = 6) give the last crossing, between 6 and 7; undetermined d's after it do not undo it; none is found
    when EM is cheaper at the last d or the d after its last win is undetermined."""
    from oraclepriv.experiments.oracle_cost_report import _crossing

    ds = [2, 3, 4, 5, 6, 7, 8, 10]
    gaps = {2: 1.1, 3: 0.8, 4: -0.5, 5: -1.2, 6: 0.2, 7: -1.8, 8: -4.4, 10: math.nan}
    assert _crossing(ds, gaps) == pytest.approx(6 + 0.2 / 2.0)
    assert math.isnan(_crossing(ds, {**gaps, 10: 0.3}))  # EM cheaper at the largest d: no crossover
    assert math.isnan(_crossing(ds, {**gaps, 7: math.nan}))  # the d after EM's last win undetermined
    assert math.isnan(_crossing(ds, {d: -1.0 for d in ds}))  # RRSPM cheaper everywhere: nothing crosses


def test_a_run_without_a_backend_keeps_its_stored_cells(tiny, tmp_path, monkeypatch):
    """On a machine without one of the configured backends (gurobipy not installed), a resumed run keeps and
    reports the cells another machine stored for that backend, never rewrites the snapshot without them, and
    recomputes nothing."""
    import shutil

    import oraclepriv.backends as backends_module

    out, first, _ = tiny
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    real = backends_module.installed_backends
    monkeypatch.setattr(backends_module, "installed_backends", lambda cls: [b for b in real(cls) if b != "enumerate"])
    specs, missing = plan_cells(TINY_CONFIG, 0)
    assert "enumerate" in missing["halfspace"] and all(s["backend"] != "enumerate" for s in specs)
    again = run_oracle_cost(copy, config=TINY_CONFIG, n_jobs=1, figures=False)
    run = again["summary"]["run"]
    # the enumerate cells, and the other learners' cells at the sizes only enumerate was configured for
    planned = {s["key"] for s in specs}
    stored = [r for r in load_cells(copy / "cells.jsonl") if r["key"] not in planned]
    assert any(r["key"].split("|")[4] == "enumerate" for r in stored)
    assert run["computed"] == 0 and run["kept_without_backend"] == len(stored) > 0
    assert len(again["fits"]) == len(first["fits"])  # the report still holds the enumerate cells
    import gzip

    with gzip.open(copy / "cells.jsonl.gz", "rt") as fh:
        keys = [line.split('"key": "')[1].split('"')[0] for line in fh if '"key"' in line]
    assert len(keys) == len(first["fits"]) and {r["key"] for r in stored} <= set(keys)
    readme = (copy / "README.md").read_text()
    assert "Not installed here: enumerate" in readme and f"the {len(stored)} cells" in readme
