"""The PublicCoverEM-vs-RRSPM experiment (``oraclepriv experiment cover-baseline``): a quick run writes its
files, does not depend on the number of processes, selects on the even repetitions and reports the odd ones.

The full run is ``python -m oraclepriv experiment cover-baseline --jobs 2 --out results/figures/cover``
(minutes, mostly the halfspace cells; not in the default test run).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oraclepriv.cover import cover_count
from oraclepriv.experiments.cover_baseline import FULL_CONFIG, QUICK_CONFIG, em_term, run_cover_baseline
from oraclepriv.experiments.stats import select_even_report_odd


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return run_cover_baseline(tmp_path_factory.mktemp("cover"), quick=True, random_state=1)


def test_quick_run_writes_every_file(quick):
    for key in ("runs", "best", "png", "summary", "readme"):
        assert quick["paths"][key].exists() and quick["paths"][key].stat().st_size > 0
    best = pd.read_csv(quick["paths"]["best"])
    assert set(best.method) == {"erm", "rrspm", "public_cover_em"}
    assert (best.mean_excess >= 0).all()
    cells = {(h, n) for h, spec in QUICK_CONFIG["scenarios"].items() for n in spec["ns"]}
    assert "halfspace" in {h for h, _ in cells}
    assert set(zip(best.hypothesis, best.n)) == cells and len(best) == 3 * len(cells)
    # every learner sees the same private sample: ERM is never worse than both private learners at once
    for _, g in best.groupby(["hypothesis", "n"]):
        e = dict(zip(g.method, g.mean_excess))
        assert e["erm"] <= max(e["rrspm"], e["public_cover_em"]) + 1e-12
    em = best[best.method == "public_cover_em"]
    for r in em.itertuples():  # the EM term (docs/theory/public-cover-em.md, section 3) at the chosen m, with the cover's size (m + 1 thresholds)
        assert r.em_term == pytest.approx(em_term(r.cover_size, r.n, 1.0, 0.05), rel=1e-5)
        if r.hypothesis == "threshold":
            assert r.cover_size == r.m + 1
        elif r.hypothesis == "stump":
            # every (feature, sign, cut) of continuous public points is a distinct labeling, except that
            # the all-0 and all-1 labelings come 2 k = 6 times each: one kept (dedup=True)
            assert r.cover_size == 2 * 3 * (r.m + 1) - 10
        else:
            # Cover's count in d = 2 (uniform points are in general position with probability 1)
            assert r.cover_size == 2 * (1 + (r.m - 1) + math.comb(r.m - 1, 2)) == cover_count(r.m, 2)
            assert math.isnan(r.continuous_em)  # the 2/(eps n) heuristic is derived for one cut only
    em_runs = quick["runs"][quick["runs"].method == "public_cover_em"]
    half = em_runs[em_runs.hypothesis == "halfspace"]
    assert sorted(half.m.unique()) == sorted(QUICK_CONFIG["scenarios"]["halfspace"]["em_ms"])
    assert (half.cover_size == [cover_count(m, 2) for m in half.m]).all()
    # the released candidate makes at least as many private mistakes as the cover's best
    assert (em_runs.em_gap >= 0).all() and em_runs.cover_best_excess.notna().all()
    summary = json.loads(quick["paths"]["summary"].read_text())
    assert {"config", "random_state", "seconds", "slopes", "ratio"} <= set(summary)
    readme = quick["paths"]["readme"].read_text()
    assert "cover-baseline" in readme and "zero oracle calls" in readme and "EM term" in readme
    assert "**halfspaces:**" in readme and "| halfspace | 300 |" in readme
    assert {t["hypothesis"] for t in summary["timing"]} == set(QUICK_CONFIG["scenarios"])


def test_grids_are_per_class_and_threshold_stump_cells_come_first():
    # the cells' seeds are spawned in config order: halfspaces appended after thresholds and stumps leave
    # their seeds (and results) as they were
    for cfg in (FULL_CONFIG, QUICK_CONFIG):
        assert list(cfg["scenarios"]) == ["threshold", "stump", "halfspace"]
        for spec in cfg["scenarios"].values():
            assert set(spec) == {"ns", "rrspm_ms", "em_ms"}
    half = FULL_CONFIG["scenarios"]["halfspace"]
    assert max(half["em_ms"]) <= 256 and len(half["rrspm_ms"]) <= 7 and max(half["ns"]) <= 3000


def test_adding_the_halfspace_cells_leaves_the_other_cells_unchanged(quick, tmp_path, monkeypatch):
    import oraclepriv.experiments.cover_baseline as cb

    without = {**QUICK_CONFIG, "scenarios": {h: v for h, v in QUICK_CONFIG["scenarios"].items() if h != "halfspace"}}
    monkeypatch.setattr(cb, "QUICK_CONFIG", without)
    old = run_cover_baseline(tmp_path, quick=True, random_state=1)
    new = quick["runs"][quick["runs"].hypothesis != "halfspace"].reset_index(drop=True)
    pd.testing.assert_frame_equal(old["runs"].drop(columns="seconds"), new.drop(columns="seconds"))


def test_selection_uses_even_reps_and_reports_odd_reps(quick):
    runs, best = quick["runs"], quick["best"]
    assert sorted(runs.rep.unique()) == list(range(QUICK_CONFIG["repetitions"]))
    for r in best.itertuples():
        g = runs[(runs.hypothesis == r.hypothesis) & (runs.n == r.n) & (runs.method == r.method)]
        even = g[g.rep % 2 == 0].groupby("m").excess.mean()
        odd = g[(g.rep % 2 == 1) & (g.m == r.m)].excess
        assert r.m == even.idxmin()
        assert r.select_excess == pytest.approx(even.min(), rel=1e-12)
        assert r.mean_excess == pytest.approx(odd.mean(), rel=1e-12)
        assert r.runs == len(odd) == QUICK_CONFIG["repetitions"] // 2


def test_selection_ignores_the_odd_reps_when_choosing():
    # m = 1 is best on the even reps and worst on the odd ones: it must still be chosen and its odd mean reported
    runs = pd.DataFrame(
        [
            {
                "hypothesis": "threshold",
                "n": 10,
                "method": "x",
                "m": m,
                "rep": rep,
                "excess": (0.1 if m == 1 else 0.2) if rep % 2 == 0 else (0.9 if m == 1 else 0.0),
            }
            for m in (1, 2)
            for rep in range(4)
        ]
    )
    best = select_even_report_odd(runs, ["hypothesis", "n", "method", "m"], ["hypothesis", "n", "method"])
    assert best.m.tolist() == [1] and best.mean_excess.tolist() == [0.9] and best.select_excess.tolist() == [0.1]


@pytest.mark.slow  # run_cells' pool path is covered by test_robust_experiment.py; backends by tests/test_execution.py
def test_results_do_not_depend_on_the_number_of_worker_processes(quick, tmp_path):
    parallel = run_cover_baseline(tmp_path, quick=True, random_state=1, n_jobs=2)
    # every column but the fits' wall times
    pd.testing.assert_frame_equal(quick["runs"].drop(columns="seconds"), parallel["runs"].drop(columns="seconds"))
    pd.testing.assert_frame_equal(quick["best"], parallel["best"])


@pytest.mark.slow
def test_cli_runs_the_quick_experiment(tmp_path):
    from oraclepriv.cli import app

    out = tmp_path / "cli"
    res = CliRunner().invoke(app, ["experiment", "cover-baseline", "--quick", "--seed", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "README.md").exists() and (out / "cover.png").exists()
    assert "public_cover_em" in res.output
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs.method) == {"erm", "rrspm", "public_cover_em"}
    assert runs.loc[runs.method == "public_cover_em", "em_gap"].ge(0).all()
    assert not math.isnan(runs.loc[runs.method == "public_cover_em", "em_gap"].iloc[0])
    bad = CliRunner().invoke(app, ["experiment", "cover-baseline", "--quick", "--jobs", "0", "--out", str(out)])
    assert bad.exit_code == 2


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n_jobs"):
        run_cover_baseline("/tmp/never-written", quick=True, n_jobs=0)
    with pytest.raises(ValueError, match="random_state"):
        run_cover_baseline("/tmp/never-written", quick=True, random_state=-1)
    assert np.isfinite(em_term(513, 1000, 1.0))
