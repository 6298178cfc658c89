"""``PowerOfTwoScaling.fit(..., peak=...)``: the largest weight handed over by the caller gives the scaling computed
without it, and no pass over the weights is made for it."""

from __future__ import annotations

import numpy as np
import pytest
from oraclepriv.solvers.exponents import PowerOfTwoScaling


class _NoMaximum(np.ndarray):
    """Weights whose maximum must not be taken (the caller handed it over)."""

    def max(self, *args, **kwargs):  # type: ignore[override]
        raise AssertionError("fit took the maximum of the weights although it was given")


rng = np.random.default_rng(0)
WEIGHTS = {
    "ordinary": np.abs(rng.laplace(size=50)),
    "tiny, some lost to the scaling": np.abs(rng.laplace(size=50)) * 1e-300 + np.where(np.arange(50) == 3, 5e-324, 0),
    "huge": np.abs(rng.laplace(size=50)) * 1e30,
    "all zero": np.zeros(50),
}


@pytest.mark.parametrize("hypothesis_class", ["stump", "halfspace"])
@pytest.mark.parametrize("name", WEIGHTS)
def test_a_given_peak_gives_the_same_scaling_without_a_pass(name, hypothesis_class):
    w = WEIGHTS[name]
    X = rng.normal(size=(w.size, 2)) * np.array([1.0, 1e200])
    expected = PowerOfTwoScaling.fit(X, w, hypothesis_class)
    peak = float(w.max())
    given = PowerOfTwoScaling.fit(X, w.view(_NoMaximum), hypothesis_class, peak=peak)
    assert given.to_dict() == expected.to_dict()
    assert np.array_equal(given.column_exponents, expected.column_exponents)
    if name.startswith(("tiny", "huge")):
        assert expected.weight_exponent != 0  # the case where the peak decides something
    with pytest.raises(AssertionError, match="maximum of the weights"):  # without it, fit takes it itself
        PowerOfTwoScaling.fit(X, w.view(_NoMaximum), hypothesis_class)
