"""Tests of the RRSPM experiments (Algorithm 4 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient
Differentially Private Learning with Public Data"; docs/theory/block-et-al.md, section "Experiment
designs"): the quick run end to end, exactness of the population-error formulas, the
optimum/interpolation helpers, and the U-shape in m together with a negative control (Laplace scale
2/eps instead of 2m/eps) that removes it.
The full run is ``run_rrspm_experiments("results/figures/rrspm")`` (a few minutes; not in the default run).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oraclepriv.audit.controls import RRSPMScaleTwoOverEps
from oraclepriv.experiments.rrspm_tradeoff import run_grid, run_rrspm_experiments
from oraclepriv.experiments.rrspm_tradeoff_stats import best_m, m_needed, predicted_m_star
from oraclepriv.experiments.scenarios import StumpScenario, ThresholdScenario
from oraclepriv.hypotheses import Stump, Threshold
from oraclepriv.learners.rrspm import RRSPM


@pytest.mark.slow
def test_quick_run_writes_everything(tmp_path):
    res = run_rrspm_experiments(tmp_path, quick=True, random_state=3)
    for key, path in res["paths"].items():
        assert (tmp_path / path.split("/")[-1]).stat().st_size > 0, key
    for png in ("tradeoff.png", "shift.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    runs = res["runs"]
    assert set(runs.experiment) == {"tradeoff", "shift", "nonsmooth"}
    assert runs.excess.between(0, 1).all() and runs.test_error.between(0.1 - 1e-12, 1).all()
    # the second oracle call is exact: ftilde agrees with fhat on every public point
    assert (runs[runs.method == "rrspm"].agreement == 1.0).all()
    opt = res["optimum"]
    assert set(opt.hypothesis) == {"threshold", "stump"}
    assert {"best_m_grid", "m_star_net", "m_star_paper", "erm_excess", "u_shaped"} <= set(opt.columns)
    assert (opt.erm_excess < 0.02).all()  # exact non-private ERM on thousands of points
    assert set(res["shift"].sigma) == {1.0, 0.2, 0.05}
    # non-smooth control: with few public points in U[0,1] the private threshold near 1.3 projects to
    # "all 0" on Z, so the released threshold is +inf: test error 0.1 + 0.8 * 0.7 = 0.66, ERM ~ 0.1
    ns = res["nonsmooth"]
    bad = ns[(ns.method == "rrspm") & (ns.nu_lo == 1.0)].sort_values("m")
    assert bad.mean_test_error.iloc[0] > 0.5
    assert (ns[ns.method == "erm"].mean_test_error < 0.12).all()
    readme = (tmp_path / "README.md").read_text()
    assert "constants are set to 1" in readme and "Non-smooth" in readme


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (0.0, 0.2), (1.0, 2.0)])
def test_threshold_disagreement_is_exact(lo, hi):
    scen = ThresholdScenario(lo, hi)
    rng = np.random.default_rng(0)
    X, clean = scen.sample_private(200_000, 0.0, rng)
    for theta in (-math.inf, lo - 1, lo + 0.1 * (hi - lo), scen.target, lo + 0.77 * (hi - lo), hi + 5, math.inf):
        h = Threshold(theta)
        assert abs(scen.disagreement(h) - np.mean(h.predict(X) != clean)) < 5e-3


def test_stump_disagreement_is_exact():
    scen = StumpScenario()
    rng = np.random.default_rng(1)
    X, clean = scen.sample_private(200_000, 0.0, rng)
    for feature in (0, 1, 2):
        for sign in (1, -1):
            for theta in (-math.inf, 0.1, 0.3, 0.65, 2.0):
                h = Stump(feature, theta, sign)
                assert abs(scen.disagreement(h) - np.mean(h.predict(X) != clean)) < 5e-3, (feature, theta, sign)


def test_label_noise_rate():
    X, y = ThresholdScenario().sample_private(100_000, 0.1, np.random.default_rng(2))
    assert abs(np.mean(y != (X[:, 0] >= 0.3)) - 0.1) < 5e-3


def test_predicted_m_star():
    p = predicted_m_star(1.0, 100_000, 1)
    assert math.isclose(p["m_star_net"], 100_000 ** (1 / 3))
    assert math.isclose(p["m_star_paper"], 100.0)
    q = predicted_m_star(2.0, 1000, 4, sigma=0.5)
    assert math.isclose(q["m_star_net"], 16_000 ** (1 / 3)) and math.isclose(q["m_star_paper"], 8000**0.4)


def test_best_m_and_m_needed_helpers():
    ms = np.array([1.0, 2, 4, 8, 16, 32, 64])
    curve = 1 / ms + ms**2 / 1000  # minimum at m = (500)^(1/3) ~ 7.9
    errs = np.tile(curve, (20, 1)) + np.random.default_rng(0).normal(0, 1e-4, (20, len(ms)))
    out = best_m(ms, errs)
    assert out["best_m_grid"] == 8.0 and 4 < out["best_m_refined"] < 16
    assert out["best_m_p10"] <= 8 <= out["best_m_p90"]
    assert out["left_end_excess"] > out["best_excess"] < out["right_end_excess"]
    dec = 1 / ms
    assert math.isclose(m_needed(ms, dec, 0.1), 10.0, rel_tol=1e-9)  # exact for a power law
    assert m_needed(ms, dec, 2.0) == 1.0
    assert math.isnan(m_needed(ms, dec, 1e-3))


def _curve(learner_cls) -> pd.Series:
    rows = run_grid(
        ThresholdScenario(),
        n=2000,
        epsilons=[1.0],
        ms=(2, 8, 32, 128, 512),
        repetitions=40,
        rng=np.random.default_rng(11),
        learner_cls=learner_cls,
        erm_baseline=False,
    )
    return pd.DataFrame(rows).groupby("m").excess.mean()


def test_u_shape_in_m_comes_from_the_laplace_scale():
    """Lemma 22 (projection error, decreasing in m) vs Lemma 23 (Laplace weights of scale 2m/eps,
    increasing in m): the correct learner's error curve is U-shaped. With the scale wrong by a factor
    m (2/eps, a broken control from the audit suite) the right arm disappears, so this test fails if
    RRSPM's scale lost its factor m."""
    good = _curve(RRSPM)
    broken = _curve(RRSPMScaleTwoOverEps)
    ms = list(good.index)
    i = int(np.argmin(good.to_numpy()))
    assert 0 < i < len(ms) - 1, good  # interior minimum
    assert good.iloc[-1] > 3 * good.min() and good.iloc[0] > 2 * good.min(), good
    # broken (noise m times too small): keeps improving with m, far below the correct right arm
    assert broken.iloc[-1] < good.iloc[-1] / 10, (good, broken)
    assert broken.iloc[-1] <= broken.min() * 1.5, broken
    # same data, same small-m behaviour where noise does not matter yet (m = 2: Laplace scale 4 vs 2)
    assert abs(broken.iloc[0] - good.iloc[0]) < 0.05


def test_bad_arguments(tmp_path):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="label_noise"):
        run_grid(ThresholdScenario(), n=10, epsilons=[1.0], ms=[2], repetitions=1, rng=rng, label_noise=0.5)
    with pytest.raises(ValueError, match="epsilon"):
        run_grid(ThresholdScenario(), n=10, epsilons=[0.0], ms=[2], repetitions=1, rng=rng)
    with pytest.raises(ValueError, match="m must be >= 1"):
        run_grid(ThresholdScenario(), n=10, epsilons=[1.0], ms=[0, 2], repetitions=1, rng=rng)
    with pytest.raises(ValueError, match="random_state"):
        run_rrspm_experiments(tmp_path, quick=True, random_state=-1)


def test_halfspace_scenario_disagreement_is_the_exact_area():
    """Polygon clipping against a Monte Carlo estimate on 400k uniform points (5 sigma ~ 0.004)."""
    from oraclepriv.experiments.scenarios import HalfspaceScenario
    from oraclepriv.hypotheses import Halfspace

    scen = HalfspaceScenario()
    U = np.random.default_rng(0).uniform(size=(400_000, 2))
    target = U @ np.array(scen.target_w) + scen.target_b >= 0
    for h in (
        Halfspace((1.0, 1.0), -0.8),
        Halfspace((1.0, 0.5), -0.6),
        Halfspace((-1.0, 2.0), 0.1),
        Halfspace((0.0, 0.0), 1.0),
        Halfspace((0.0, 0.0), -1.0),
        Halfspace((0.0, 1.0), -2.0),
    ):
        assert scen.disagreement(h) == pytest.approx(np.mean(h.predict(U).astype(bool) != target), abs=0.004)
    assert scen.disagreement(Halfspace((1.0, 1.0), -0.8)) == 0.0
    X, y = scen.sample_private(1000, 0.0, np.random.default_rng(1))
    assert np.array_equal(y, (X.sum(axis=1) >= 0.8).astype(np.int8))
