"""``bench mip --repeat``: a cell's call run several times, its seconds the median of the runs.

Calls of a few hundredths of a second (the learners' tier) are not timed by one sample; the checks
here: the row keeps every run's seconds and reports their median, runs that disagree are said in
the row's error and stop the repeats, a call stopped by its time limit is not repeated, a bad count is refused with its name and value, resumed cells
are reused only for the same count, and the reports say how the times were taken.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from oraclepriv.solvers.runtime.deadline import Deadline
from typer.testing import CliRunner

from oraclepriv.bench import mip
from oraclepriv.bench.mip import BenchInstance, cell_key, run_one
from oraclepriv.cli import app


def _instance() -> BenchInstance:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:3] ^= 1
    return BenchInstance("tiny", "halfspace", X, y, np.ones(30))


def test_row_reports_the_median_of_its_runs():
    row = run_one(_instance(), "enumerate", 10.0, repeat=3)
    assert row["repeat"] == 3 and len(row["seconds_runs"]) == 3
    assert row["seconds"] == pytest.approx(float(np.median(row["seconds_runs"])))
    assert row["certified"] and not row["error"]


def test_runs_that_disagree_are_said_and_stop_the_repeats(monkeypatch):
    real = mip.run_call
    calls = []

    def drifting(instance, backend, time_limit):
        row = real(instance, backend, time_limit)
        calls.append(1)
        row["objective"] += len(calls) - 1  # the second run reports another objective
        return row

    monkeypatch.setattr(mip, "run_call", drifting)
    row = run_one(_instance(), "enumerate", 10.0, repeat=5)
    assert len(calls) == 2 and len(row["seconds_runs"]) == 2
    assert "run 2 of 5 differs from run 1" in row["error"]


@pytest.mark.parametrize("repeat", [0, -1, 1.5, True, "3"])
def test_bad_repeat_is_refused_by_name_and_value(repeat):
    with pytest.raises(ValueError, match=r"repeat must be an integer >= 1; got " + repr(repeat).replace(".", r"\.")):
        run_one(_instance(), "enumerate", 10.0, repeat=repeat)


def test_cell_key_tells_repeat_counts_and_data_apart():
    row = {"instance": "a", "data_key": "k", "backend": "b", "time_limit": 5.0}
    assert cell_key(row) == ("a", "k", "b", 5.0, 1)  # rows written before --repeat existed ran once
    assert cell_key({**row, "repeat": 4}) != cell_key(row)
    assert cell_key({**row, "data_key": "other"}) != cell_key(row)  # same name, other data


def test_cli_repeat_is_recorded_in_the_reports_and_bad_counts_exit_2(tmp_path):
    out = tmp_path / "bench"
    args = ["bench", "mip", "--suite", "learners", "--quick", "--backends", "direction-bb", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--repeat", "2"])
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "rows.json").read_text())
    assert rows and all(r["repeat"] == 2 and len(r["seconds_runs"]) == 2 for r in rows)
    assert "--repeat 2" in json.loads((out / "summary.json").read_text())["command"]
    assert "median of the runs" in (out / "summary.md").read_text()
    assert "Each call ran 2 times in a row" in (out / "cost-of-noise.md").read_text()
    bad = CliRunner().invoke(app, [*args, "--repeat", "0"])
    assert bad.exit_code == 2 and "--repeat must be an integer >= 1; got 0" in bad.output


def test_a_call_stopped_by_the_time_limit_is_not_repeated(monkeypatch):
    real = mip.run_call
    calls = []

    def stopped(instance, backend, time_limit):
        calls.append(1)
        return {**real(instance, backend, time_limit), "status": "time_limit"}

    monkeypatch.setattr(mip, "run_call", stopped)
    row = run_one(_instance(), "enumerate", 10.0, repeat=4)
    assert len(calls) == 1 and row["seconds_runs"] == [row["seconds"]] and not row["error"]


def test_a_cell_runs_with_the_compiled_kernels_ready_and_says_how_long_they_took(monkeypatch):
    """The first cell of a process makes the compiled kernels ready untimed (``kernels_seconds`` on its row), so a
    d = 6 call uses direction-bb's crossing pairs without loading them inside its seconds; later cells take 0."""
    from oraclepriv.solvers.combinatorial import direction_compiled

    monkeypatch.setattr(mip, "_kernels_ready_seconds", None)
    monkeypatch.setattr(direction_compiled, "_module", None)  # as in a fresh process: nothing loaded yet
    assert direction_compiled.choose(6, Deadline(1.0)).kernels is None  # too little time left to load it in a call
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    instance = BenchInstance("d6", "halfspace", X, (X[:, 0] > 0).astype(int), np.ones(40))
    first = mip.run_call(instance, "direction-bb", 10.0)
    assert first["kernels_seconds"] > 0 and first["certified"]
    assert direction_compiled.choose(6, Deadline(1.0)).kernels is not None
    assert mip.run_call(instance, "direction-bb", 10.0)["kernels_seconds"] == 0.0
