"""The SubsampleAggregate-vs-RRSPM experiment (``oraclepriv experiment robust-tradeoff``): a quick run
writes its files with the documented columns, and the failing solver it uses fails at the rate asked.

The full run is ``oraclepriv experiment robust-tradeoff --out results/figures/robust`` (minutes; not in
the default test run).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oraclepriv.backends import registered_backend
from oraclepriv.experiments.robust_tradeoff import FlakyBackend, run_robust_tradeoff
from oraclepriv.oracle import make_oracle


def test_quick_run_writes_every_file(tmp_path):
    res = run_robust_tradeoff(tmp_path, quick=True, random_state=1)
    for key in ("runs", "best", "failure", "png", "summary", "readme"):
        assert res["paths"][key].exists() and res["paths"][key].stat().st_size > 0
    best = pd.read_csv(res["paths"]["best"])
    assert set(best.method) == {"erm", "rrspm", "subsample"}
    assert (best.mean_excess >= 0).all()
    # the non-private ERM is the baseline: never worse than both private learners at once
    for _cell, g in best.groupby(["hypothesis", "n"]):
        e = dict(zip(g.method, g.mean_excess))
        assert e["erm"] <= max(e["rrspm"], e["subsample"]) + 1e-12
    fail = pd.read_csv(res["paths"]["failure"])
    assert fail.loc[fail.rate == 0, "mean_failed"].eq(0).all()
    assert fail.loc[fail.rate > 0, "mean_failed"].gt(0).all()
    assert "robust-tradeoff" in res["paths"]["readme"].read_text()


@pytest.mark.parametrize("rate", [0.0, 0.3, 1.0])
def test_flaky_backend_fails_at_about_its_rate_and_is_exact_otherwise(rate):
    rng = np.random.default_rng(0)
    flaky = type("F", (FlakyBackend,), {"rate": rate})
    failed = 0
    with registered_backend("flaky-test", flaky):
        for _ in range(200):
            X = rng.normal(size=(20, 1))
            y = (X[:, 0] > 0).astype(int)
            res = make_oracle("threshold", backend="flaky-test").solve(X, y)
            if res.certified:
                assert res.objective == make_oracle("threshold").solve(X, y).objective
            else:
                failed += 1
                assert math.isinf(res.hypothesis.threshold) and res.status == "time_limit"
    assert abs(failed / 200 - rate) < 0.1


@pytest.mark.slow
def test_results_do_not_depend_on_the_number_of_worker_processes(tmp_path):
    serial = run_robust_tradeoff(tmp_path / "a", quick=True, random_state=4, n_jobs=1)
    parallel = run_robust_tradeoff(tmp_path / "b", quick=True, random_state=4, n_jobs=2)
    pd.testing.assert_frame_equal(serial["runs"], parallel["runs"])
    pd.testing.assert_frame_equal(serial["failure"], parallel["failure"])


def test_bad_n_jobs_is_refused():
    with pytest.raises(ValueError, match="n_jobs"):
        run_robust_tradeoff("/tmp/never-written", quick=True, n_jobs=0)
