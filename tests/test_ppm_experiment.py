"""Smoke tests of the PPM learning-curve experiment and benchmark (Bassily, Moran, Nandi, "Learning from
Mixtures of Private and Public Populations"; docs/theory/ppm.md#case-14); the full runs are
``run_ppm_curves(out_dir)`` and ``bench_ppm()`` (not part of the default test run)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oraclepriv.bench.ppm import bench_ppm
from oraclepriv.experiments.ppm_curves import _disagreement_d1, run_ppm_curves
from oraclepriv.experiments.stats import fit_slope
from oraclepriv.hypotheses import Halfspace
from oraclepriv.ppm import ClassG, a_constr_half


def test_learning_curve_smoke(tmp_path):
    res = run_ppm_curves(tmp_path, sizes={1: (30, 120), 2: (16, 24)}, repetitions=2, draws=2, n_test=4000)
    for key in ("runs_csv", "means_csv", "slopes_csv", "png"):
        assert (tmp_path / res["paths"][key].split("/")[-1]).stat().st_size > 0
    means = res["means"]
    assert set(means.method) == {"ppm", "erm"}
    assert set(means[means.method == "ppm"].epsilon) == {0.1, 1.0, math.inf}
    assert means.mean_excess.between(0, 1).all()
    # realizable ERM is consistent with the data, so its excess error is the disagreement region only
    assert len(res["slopes"]) == 2 * 2 * 4  # (d, noise) x (3 epsilons + ERM)


def test_d1_disagreement_is_exact():
    # ERM-style halfspaces: 1 iff x >= 0.5 disagrees with 1(x >= 0.3) on [0.3, 0.5)
    assert math.isclose(_disagreement_d1(Halfspace((1.0,), -0.5)), 0.2)
    assert math.isclose(_disagreement_d1(Halfspace((-1.0,), 0.5)), 0.8)  # 1 iff x <= 0.5
    G = ClassG(a_constr_half(np.array([[0.1], [0.3], [0.6]])))
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(400_000, 1))
    target = x[:, 0] >= 0.3
    for desc in [("ones",), ("aff0",), (0,), (2,), (4,), (5,)]:
        h = G.hypothesis(desc)
        assert abs(_disagreement_d1(h) - np.mean(h.predict(x) != target)) < 5e-3


def test_fit_slope():
    n = np.array([10, 100, 1000])
    assert math.isclose(fit_slope(n, 3.0 / n), -1.0)
    assert math.isnan(fit_slope(n, np.zeros(3)))


def test_bad_experiment_arguments(tmp_path):
    with pytest.raises(ValueError, match="dims"):
        run_ppm_curves(tmp_path, dims=(3,))
    with pytest.raises(ValueError, match="epsilon"):
        run_ppm_curves(tmp_path, epsilons=(0.0,))
    with pytest.raises(ValueError, match="noise"):
        run_ppm_curves(tmp_path, noises=(0.5,))


def test_bench_small_case():
    out = bench_ppm(cases=("d2_npub100",), repeat=1)
    case = out["cases"]["d2_npub100"]
    assert case["n_pub"] == 100 and case["class_size"] > 10**7
    assert case["best_wall_seconds"] > 0
    with pytest.raises(ValueError, match="unknown bench case"):
        bench_ppm(cases=("nope",))
