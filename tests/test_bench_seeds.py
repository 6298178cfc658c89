"""``bench mip --seeds K``: every backend that takes a random seed runs once per seed, and the report
compares the seeds of one backend (performance variability)."""

from __future__ import annotations

import json

import pytest
from mipbench_rows import row
from typer.testing import CliRunner

from oraclepriv.bench.mip import MAX_SEEDS, seeded_backends
from oraclepriv.bench.mip_report import markdown_summary
from oraclepriv.bench.mip_summary import summarize, unseeded, variability
from oraclepriv.cli import app

runner = CliRunner()


def test_seeded_backends_expand_only_the_backends_that_take_a_seed():
    assert seeded_backends(["scip-bc", "enumerate"], 1) == ["scip-bc", "enumerate"]
    assert seeded_backends(["scip-bc:", "enumerate", "scip-bc:local_search=0"], 3) == [
        "scip-bc:random_seed=0",
        "scip-bc:random_seed=1",
        "scip-bc:random_seed=2",
        "enumerate",
        "scip-bc:local_search=0,random_seed=0",
        "scip-bc:local_search=0,random_seed=1",
        "scip-bc:local_search=0,random_seed=2",
    ]


@pytest.mark.parametrize(
    ("backends", "seeds", "message"),
    [
        (["scip-bc"], 0, r"--seeds must be an integer in \[1, 100\]; got 0"),
        (["scip-bc"], MAX_SEEDS + 1, "got 101"),
        (["scip-bc"], True, "got True"),
        (["scip-bc:random_seed=4"], 2, "--backends 'scip-bc:random_seed=4' sets its random_seed"),
        (["enumerate", "e01loss"], 2, "none of the backends .* takes a random seed"),
    ],
)
def test_bad_seed_requests_are_refused_by_name(backends, seeds, message):
    with pytest.raises(ValueError, match=message):
        seeded_backends(backends, seeds)


def test_unseeded_gives_back_the_spec_and_its_seed():
    assert unseeded("scip-bc") == ("scip-bc", None)
    assert unseeded("scip-bc:random_seed=7") == ("scip-bc", 7)
    assert unseeded("scip-bc:local_search=0,random_seed=2") == ("scip-bc:local_search=0", 2)
    assert unseeded("gurobi-bc:random_seed=1,threads=1") == ("gurobi-bc:threads=1", 1)


def test_variability_compares_the_seeds_of_one_backend():
    s0, s1 = "scip-bc:random_seed=0", "scip-bc:random_seed=1"
    rows = [
        row("a", s0, seconds=1.0),
        row("a", s1, seconds=4.0),  # both solve: ratio 4
        row("b", s0, seconds=2.0),
        row("b", s1, seconds=2.0),  # ratio 1
        row("c", s0, seconds=5.0, objective=10.0),
        row("c", s1, certified=False, status="time_limit", seconds=60.0, objective=11.0, bound=8.0),  # one seed only
        row("a", "direction-bb"),
        row("b", "direction-bb"),
        row("c", "direction-bb", objective=10.0),
    ]
    summary = summarize(rows)
    [entry] = variability(rows, summary)
    assert entry["backend"] == "scip-bc" and entry["seeds"] == [0, 1] and entry["instances"] == 3
    assert entry["solved_per_seed"] == [3, 2]
    assert entry["solved_by_some_seeds_only"] == 1 and entry["solved_by_all_seeds"] == 2
    assert entry["median_time_ratio"] == pytest.approx(2.5) and entry["max_time_ratio"] == pytest.approx(4.0)
    assert entry["final_objectives_differ"] == 1
    text = markdown_summary(rows, summary, [], [], "cmd", "noisy-halfspaces", 60.0)
    assert "## Performance variability (random seeds)" in text
    assert "| scip-bc | 0, 1 | 3 | 3, 2 |" in text
    # without seeded runs there is no such table
    plain = [r for r in rows if r["backend"] == "direction-bb"]
    assert variability(plain, summarize(plain)) == []
    assert "Performance variability" not in markdown_summary(
        plain, summarize(plain), [], [], "cmd", "noisy-halfspaces", 60.0
    )


def test_bench_mip_seeds_runs_each_seed_and_reports_them(tmp_path):
    out = tmp_path / "run"
    args = ["bench", "mip", "--quick", "--instances", "sepnoise-n30-d2-s0,sepnoise-n60-d3-s0"]
    result = runner.invoke(app, [*args, "--backends", "scip-bc,enumerate", "--seeds", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "rows.json").read_text())
    assert sorted({r["backend"] for r in rows}) == ["enumerate", "scip-bc:random_seed=0", "scip-bc:random_seed=1"]
    assert all(r["certified"] for r in rows)
    meta = json.loads((out / "summary.json").read_text())
    assert "--seeds 2 --backends scip-bc,enumerate" in meta["command"]
    [entry] = meta["variability"]
    assert entry["backend"] == "scip-bc" and entry["solved_per_seed"] == [2, 2]
    assert "## Performance variability" in (out / "summary.md").read_text()
    bad = runner.invoke(app, [*args, "--backends", "enumerate", "--seeds", "3", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--seeds 3: none of the backends" in bad.stderr


def test_a_seed_that_errors_counts_as_a_different_outcome_and_the_baseline_is_named():
    s0, s1 = "scip-bc:random_seed=0", "scip-bc:random_seed=1"
    failed = row("a", s1, certified=False, status="error", objective=float("nan"), bound=float("-inf"))
    rows = [row("a", s0, objective=2.0), failed, row("a", "naive-highs:random_seed=0", seconds=3.0)]
    summary = summarize(rows, baseline="naive-highs:random_seed=0")
    [entry] = [v for v in variability(rows, summary) if v["backend"] == "scip-bc"]
    assert entry["final_objectives_differ"] == 1 and entry["solved_by_some_seeds_only"] == 1
    text = markdown_summary(rows, summary, [], [], "cmd", "noisy-halfspaces", 60.0)
    assert "speed-up vs naive-highs:random_seed=0 (common instances)" in text
