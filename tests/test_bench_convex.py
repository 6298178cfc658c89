"""``oraclepriv bench convex``: the convex oracle against SLSQP and Gurobi, rows and agreement check."""

from __future__ import annotations

import pytest
from oraclepriv.solvers.peers.gurobi_env import licence_works
from typer.testing import CliRunner

from oraclepriv.bench import convex
from oraclepriv.cli import app

runner = CliRunner()


def test_every_method_answers_and_the_project_certifies():
    rows = convex.bench_convex(((120, 3),), slsqp_max_n=200)
    by_method = {row["method"]: row for row in rows}
    assert list(by_method) == list(convex.METHODS)
    project = by_method[convex.PROJECT]
    assert project["status"] == "ok" and project["ratio"] == 1.0 and project["solver"] == "box-qp"
    assert project["gap"] <= 1e-6 and project["certified"] is True
    assert "certified" not in by_method["scipy-slsqp"]  # a peer's answer is re-scored, never called certified
    assert by_method["highs-qp+kkt-epigraph"]["solver"] != "box-qp"
    for row in rows:
        if row["status"] == "ok":  # every answer re-scored against a proved bound: all agree to 1e-6 here
            assert row["objective"] >= project["objective"] - 1e-9 and row["gap"] <= 1e-5
            assert not row["below_certified_bound"]
    if licence_works():
        assert by_method["gurobi-box-qp"]["status"] == "ok"
    else:
        assert by_method["gurobi-box-qp"]["status"].startswith("not installed")
    assert convex.disagreements(rows) == []


def test_slsqp_is_not_run_above_its_size_cap_and_the_row_says_so():
    rows = convex.bench_convex(((150, 2),), methods=("scipy-slsqp",), slsqp_max_n=100)
    assert [row["method"] for row in rows] == [convex.PROJECT, "scipy-slsqp"]  # the reference always runs
    assert rows[1]["status"].startswith("not run (n > 100")


def test_an_objective_below_a_certified_bound_is_a_disagreement_and_the_cli_exits_1(monkeypatch, tmp_path):
    rows = convex.bench_convex(((80, 2),), methods=(convex.PROJECT,))
    planted = {**rows[0], "method": "gurobi-box-qp", "objective": rows[0]["objective"] - 1.0}
    planted["below_certified_bound"] = True
    assert convex.disagreements([*rows, planted]) == [planted]
    assert "Agreement: FAILED" in convex.markdown_report([*rows, planted], "cmd")
    monkeypatch.setattr(convex, "bench_convex", lambda *a, **k: [*rows, planted])
    result = runner.invoke(app, ["bench", "convex", "--quick", "--report", str(tmp_path / "r.md")])
    assert result.exit_code == 1 and "DISAGREEMENT: gurobi-box-qp" in result.stderr
    assert "Agreement: FAILED" in (tmp_path / "r.md").read_text()


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--methods", "bogus"], "--methods must name methods among"),
        (["--methods", ","], "--methods must name methods among"),
        (["--methods", "scipy-slsqp,scipy-slsqp"], "--methods must not repeat a method"),
        (["--slsqp-max-n", "-1"], "--slsqp-max-n must be >= 0; got -1"),
        (["--seed", "-1"], "--seed"),
    ],
)
def test_bad_options_are_one_line_before_any_work(monkeypatch, args, fragment):
    monkeypatch.setattr(convex, "bench_convex", lambda *a, **k: pytest.fail("the work started"))
    result = runner.invoke(app, ["bench", "convex", "--quick", *args])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0]
