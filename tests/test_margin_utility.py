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
    assert "run_margin_utility('OUT_DIR', quick=True, random_state=1)" in readme and "| m | epsilon=4 |" in readme
