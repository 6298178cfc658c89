"""``oraclepriv bench oracles --only``: one group of rows, and a bad group refused in one line before any work."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import oraclepriv.bench.oracles as oracles
from oraclepriv.cli import app

runner = CliRunner()

#: a row of each group, as the benchmarks return them (the command prints and reports them)
ROWS = {
    "stump": {
        "benchmark": "stump-repeat",
        "n": 10,
        "d": 2,
        "argsort_seconds": 1.0,
        "first_seconds": 1.5,
        "seconds": 0.05,
        "first_ratio": 1.5,
        "ratio": 0.05,
        "target_ratio": 0.1,
        "kept": True,
        "same_as_fresh": True,
        "certified": True,
        "sweep": "compiled",
    },
    "enumerate": {"benchmark": "enumerate-d2", "n": 10, "d": 2, "seconds": 0.5, "certified": True},
}

#: what the report says of each group's row
REPORTED = {"stump": "stump oracle, repeat call", "enumerate": "halfspace oracle (enumerate-d2"}


@pytest.fixture
def runs(monkeypatch):
    """The groups the command asked ``bench_oracles`` for (no benchmark runs)."""
    asked: list[str | None] = []

    def fake(quick: bool = False, progress=None, only: str | None = None):
        asked.append(only)
        return [ROWS[only]] if only else list(ROWS.values())

    monkeypatch.setattr(oracles, "bench_oracles", fake)
    return asked


@pytest.mark.parametrize("group", oracles.GROUPS)
def test_only_runs_one_group_and_the_report_names_it(tmp_path, runs, group):
    report = tmp_path / "oracles.md"
    result = runner.invoke(app, ["bench", "oracles", "--only", group, "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert runs == [group]
    assert f"oraclepriv bench oracles --only {group} --report" in report.read_text()
    for shown, text in REPORTED.items():
        assert (text in report.read_text()) == (shown == group)


def test_without_only_every_group_runs(runs):
    result = runner.invoke(app, ["bench", "oracles"])
    assert result.exit_code == 0, result.output
    assert runs == [None]


@pytest.mark.parametrize("value", ["bogus", "Stump", ""])
def test_a_bad_group_is_one_line_naming_the_option_and_value(runs, value):
    result = runner.invoke(app, ["bench", "oracles", "--only", value])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "--only" in lines[0] and repr(value) in lines[0] and "stump" in lines[0] and "enumerate" in lines[0]
    assert runs == []  # refused before any benchmark
