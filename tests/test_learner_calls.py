"""The learners' tier of ``bench mip`` (``oraclepriv/bench/learner_calls.py``): calls recorded from real fits.

The recorded RRSPM call is checked against an independent reconstruction of Algorithm 4's weights
(the learner's random stream: random public labels, then Lap(2m/eps) weights, reduced by the sign
flip), the tier is deterministic and paired, the cost-of-noise report computes its ratios and
medians, and the recorded calls are solved exactly by every ``scip-bc`` strategy.
"""

from __future__ import annotations

import numpy as np
import pytest

from oraclepriv import make_oracle
from oraclepriv.bench.learner_calls import (
    QUICK_GRID,
    RecordingBackend,
    cost_of_noise,
    cost_of_noise_markdown,
    learner_calls,
    learner_instances,
)
from oraclepriv.bench.mip import SUITES, load_suite


def test_the_recorded_rrspm_call_is_algorithm_4s():
    d, n, m, seed = 3, 30, 6, 4
    call = learner_calls("rrspm", d, n, m, seed)
    assert call.step == "private-erm"
    assert call.X.shape == (n + m, d)
    # the private rows come first, unit weights, their own labels
    np.testing.assert_array_equal(call.X[:n], call.X_private)
    np.testing.assert_array_equal(call.y[:n], call.y_private)
    np.testing.assert_array_equal(call.w[:n], np.ones(n))
    # the public rows: RRSPM's stream draws Ytilde, then xi ~ Lap(2m/eps); the backend sees |xi| and
    # the label flipped where xi < 0 (the protocol's sign reduction)
    rng = np.random.default_rng(seed)
    ytilde = rng.integers(0, 2, size=m)
    xi = rng.laplace(0.0, 2.0 * m / 1.0, m)
    np.testing.assert_allclose(call.w[n:], np.abs(xi))
    np.testing.assert_array_equal(call.y[n:], np.where(xi < 0, 1 - ytilde, ytilde))


def test_the_tier_is_deterministic_and_paired():
    first = learner_instances(QUICK_GRID)
    again = learner_instances(QUICK_GRID)
    assert [name for name, *_ in first] == [name for name, *_ in again]
    for (_, X, y, w), (_, X2, y2, w2) in zip(first, again):
        np.testing.assert_array_equal(X, X2)
        np.testing.assert_array_equal(y, y2)
        np.testing.assert_array_equal(w, w2)
    names = [name for name, *_ in first]
    assert names[0].endswith("-private") and names[1] == names[0].replace("-private", "-erm")
    assert RecordingBackend.problems == []  # the recorder keeps nothing between fits


def test_the_suite_is_registered_in_bench_mip():
    assert "learners" in SUITES
    instances = load_suite("learners", quick=True)
    assert {inst.hypothesis_class for inst in instances} == {"halfspace"}
    assert len(instances) == 2 * len(QUICK_GRID)


def test_cost_of_noise_pairs_rows_and_reports_medians():
    def row(instance, backend, seconds, certified=True, load=1.5):
        return {"instance": instance, "backend": backend, "seconds": seconds, "certified": certified, "load_1min": load}

    rows = [
        row("rrspm-d5-n200-m5-s0-private", "a", 4.0),
        row("rrspm-d5-n200-m5-s0-erm", "a", 1.0),
        row("rrspm-d5-n200-m10-s0-private", "a", 60.0, certified=False),
        row("rrspm-d5-n200-m10-s0-erm", "a", 2.0),
        row("rrspm-d5-n200-m5-s0-private", "b", 3.0),
        row("rrspm-d5-n200-m5-s0-erm", "b", 1.5),
    ]
    pairs = cost_of_noise(rows)
    ratios = {(p["pair"], p["backend"]): p["ratio"] for p in pairs}
    assert ratios[("rrspm-d5-n200-m5-s0", "a")] == 4.0
    assert ratios[("rrspm-d5-n200-m10-s0", "a")] == 30.0
    assert [p["censored"] for p in pairs if p["backend"] == "a"] == [False, True]
    text = cost_of_noise_markdown(rows)
    assert "| a | 1/2 | 17 | 17 |" in text and "| b | 1/1 | 2 | 2 |" in text
    assert ">= 30" in text and "1.50, 1.50" in text
    # per cell: the d = 5, n = 200 cell of backend a has one certified call of two, its slowest at 60 s, and its
    # median (17) lies between a censored ratio and an exact one: a lower bound
    assert "| rrspm-d5-n200 | a | 1/2 | 60 | >= 17 |" in text and "| rrspm-d5-n200 | b | 1/1 | 3 | 2 |" in text


@pytest.mark.parametrize("learner", ["rrspm", "perturbation"])
def test_recorded_calls_are_solved_exactly_by_every_strategy(learner):
    import pyscipopt  # noqa: F401  # required (scip-bc): a broken install must fail, not skip

    call = learner_calls(learner, 2, 25, 6, 1)
    truth = make_oracle("halfspace", backend="enumerate").solve(call.X, call.y, call.w)
    for strategy in ("plain", "heavy-first", "decompose", "auto"):
        res = make_oracle("halfspace", backend="scip-bc", strategy=strategy).solve(call.X, call.y, call.w)
        assert res.certified
        assert res.objective == pytest.approx(truth.objective, abs=1e-7 * call.w.sum())


def test_bench_mip_on_the_learners_suite_writes_the_cost_of_noise_table(tmp_path):
    from typer.testing import CliRunner

    from oraclepriv.cli import app

    out = tmp_path / "learners"
    (out).mkdir()
    (out / "cost-of-noise.md").write_text("an earlier run's table\n")
    result = CliRunner().invoke(
        app, ["bench", "mip", "--suite", "learners", "--quick", "--backends", "direction-bb", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = (out / "cost-of-noise.md").read_text()
    assert "earlier run" not in text
    pairs = [line for line in text.splitlines() if line.startswith(("| rrspm-d3-n40-m", "| perturbation-d3-n40-m"))]
    assert len(pairs) == len(QUICK_GRID)
    cells = [line for line in text.splitlines() if line.startswith(("| rrspm-d3-n40 |", "| perturbation-d3-n40 |"))]
    assert len(cells) == len(QUICK_GRID)
    assert "cost-of-noise.md" in result.output
