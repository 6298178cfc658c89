"""The margin-utility experiment (oraclepriv.experiments.margin_utility): its data have the margin it claims, the
predicted shapes have the slopes the bounds state, and the quick run writes its files with both slopes."""

from __future__ import annotations

import numpy as np
import pytest

from oraclepriv.experiments.margin_utility import (
    MARGIN,
    lemma_3_1_shape,
    run_margin_utility,
    sample_margin_data,
    theorem_3_2_shape,
)
from oraclepriv.experiments.stats import fit_slope


def test_the_synthetic_records_have_the_margin_and_lie_in_the_unit_ball():
    X, y = sample_margin_data(5000, np.random.default_rng(0))
    margins = (2.0 * y - 1.0) * X[:, 0]
    assert margins.min() >= 0.999 * MARGIN - 1e-12
    assert np.linalg.norm(X, axis=1).max() < 1.0
    assert 0.45 < y.mean() < 0.55


def test_predicted_shapes_have_the_bounds_slopes():
    m = np.array([1e3, 1e4, 1e5, 1e6])
    theorem = fit_slope(m, theorem_3_2_shape(m, np.ones(4)))
    assert -0.5 < theorem < -0.4  # 1/sqrt(eps m) up to the log(m/beta) factor
    assert fit_slope(np.array([0.5, 1, 2, 4]), theorem_3_2_shape(np.full(4, 1e4), np.array([0.5, 1, 2, 4]))) == (
        pytest.approx(-0.5, abs=0.05)
    )
    lemma = fit_slope(m, lemma_3_1_shape(m, np.ones(4)))
    assert -1.0 < lemma < -0.5  # sqrt(k)/(eps m) first, 1/sqrt(m) at the largest m


@pytest.mark.slow
def test_quick_run_writes_its_files_and_both_slopes(tmp_path):
    result = run_margin_utility(tmp_path, quick=True, random_state=1)
    for path in result["paths"].values():
        assert (tmp_path / path.split("/")[-1]).stat().st_size > 0
    slopes = result["slopes"]
    assert len(slopes) == 6 and slopes["predicted_slope"].notna().all() and slopes["measured_slope"].notna().all()
    means = result["means"]
    at_4 = means[(means.sweep == "m") & (means.epsilon == 4.0)].sort_values("m")
    assert at_4.test_error.iloc[-1] < at_4.test_error.iloc[0]  # more data, smaller error
    readme = (tmp_path / "README.md").read_text()
    assert "oraclepriv experiment margin-utility --out results/margin-utility --seed 1 --quick" in readme
    assert "| m | epsilon=4 |" in readme


def test_the_command_writes_the_files_and_prints_the_slopes(tmp_path, monkeypatch):
    """``oraclepriv experiment margin-utility``, on a grid shrunk to seconds (the module's quick grid takes ~5 s)."""
    from typer.testing import CliRunner

    import oraclepriv.experiments.margin_utility as margin_utility
    from oraclepriv.cli.app import app

    monkeypatch.setattr(margin_utility, "QUICK", {"sizes": (200, 400), "epsilons": (4.0,), "sweep": (1.0, 4.0)})
    monkeypatch.setattr(margin_utility, "SWEEP_SIZE", {"quick": 200, "full": 200})
    monkeypatch.setattr(margin_utility, "N_TEST", 500)
    out = tmp_path / "mu"
    result = CliRunner().invoke(app, ["experiment", "margin-utility", "--out", str(out), "--quick", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "measured_slope" in result.output and "Theorem 3.2" in result.output
    runs = (out / "margin_utility_runs.csv").read_text().splitlines()
    assert len(runs) == 1 + 3 * 4  # header + 3 repetitions of (2 sizes + 2 epsilons)
    assert not (out / "PARTIAL").exists() and (out / "margin_utility.png").stat().st_size > 0
