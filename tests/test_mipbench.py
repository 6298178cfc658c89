"""``oraclepriv bench mip``: MIPLIB-style summary arithmetic, the performance profile, the
cross-backend agreement check (with a lying backend as negative control), and a --quick smoke run."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from mipbench_rows import inst, row
from typer.testing import CliRunner

from oraclepriv.bench import mip as mipbench
from oraclepriv.bench import mip_report
from oraclepriv.bench.mip_agreement import agreement_problems
from oraclepriv.bench.mip_summary import performance_profile, shifted_geometric_mean, summarize
from oraclepriv.cli import app

runner = CliRunner()


# -- arithmetic ------------------------------------------------------------------------------------


def test_shifted_geometric_mean_values():
    assert shifted_geometric_mean([0.0, 0.0]) == pytest.approx(0.0)
    assert shifted_geometric_mean([10.0, 10.0]) == pytest.approx(10.0)
    assert shifted_geometric_mean([1.0, 100.0]) == pytest.approx(math.sqrt(11 * 110) - 10)
    # the shift damps tiny times: 0.001 s and 0.1 s are nearly equal at shift 10
    assert shifted_geometric_mean([0.001]) == pytest.approx(0.001)
    assert math.isnan(shifted_geometric_mean([]))


def test_summary_counts_unsolved_runs_at_the_time_limit():
    rows = [
        row("a", "fast", seconds=1.0),
        row("b", "fast", seconds=3.0),
        row("a", "slow", seconds=20.0),
        row("b", "slow", certified=False, status="time_limit", seconds=60.2, bound=0.0),
        row(
            "a", "lazy", certified=False, status="optimal", seconds=0.5, bound=0.0
        ),  # uncertified "optimal": not solved
        row("b", "lazy", status="unsupported", certified=False, seconds=0.0),
    ]
    agreement_problems(rows, [inst("a"), inst("b")])
    summary = {s["backend"]: s for s in summarize(rows, baseline="slow")}
    assert summary["fast"]["solved"] == 2 and summary["fast"]["sgm_seconds"] == pytest.approx(
        shifted_geometric_mean([1, 3])
    )
    assert summary["slow"]["solved"] == 1 and summary["slow"]["time_limit_hits"] == 1
    assert summary["slow"]["sgm_seconds"] == pytest.approx(shifted_geometric_mean([20, 60]))
    assert (
        summary["lazy"]["instances"] == 1
        and summary["lazy"]["solved"] == 0
        and summary["lazy"]["uncertified_other"] == 1
    )
    assert summary["lazy"]["sgm_seconds"] == pytest.approx(60.0)
    assert summary["fast"]["speedup_vs_baseline"] == pytest.approx(
        shifted_geometric_mean([20, 60]) / shifted_geometric_mean([1, 3])
    )
    # speed-up on common instances only: lazy ran only "a" (b unsupported)
    assert summary["lazy"]["speedup_vs_baseline"] == pytest.approx(20.0 / 60.0)


def test_performance_profile_ratios():
    rows = [
        row("a", "x", seconds=1.0),
        row("a", "y", seconds=4.0),
        row("b", "x", certified=False, bound=0.0),
        row("b", "y", seconds=2.0),
    ]
    backends, ratios = performance_profile(rows)
    assert backends == ["x", "y"]
    np.testing.assert_array_equal(ratios, [[1.0, 4.0], [np.inf, 1.0]])


# -- agreement ---------------------------------------------------------------------------------------


def test_agreement_accepts_consistent_answers():
    rows = [
        row("a", "x", objective=2.0),
        row("a", "y", objective=2.0),
        row("a", "z", certified=False, objective=3.0, bound=1.0, status="time_limit"),
    ]
    assert agreement_problems(rows, [inst("a", best=2.0, proved=True)]) == ([], [])


def test_agreement_catches_disagreeing_certificates_and_false_bounds():
    rows = [row("a", "x", objective=2.0), row("a", "y", objective=3.0)]
    problems, _ = agreement_problems(rows, [inst("a")])
    assert any("certified objectives disagree" in p for p in problems)
    assert any("y proved a lower bound 3.0 above the objective 2.0" in p for p in problems)
    # an uncertified run can still expose a false proof: its hypothesis beats a certified bound
    rows = [row("a", "x", objective=2.0), row("a", "z", certified=False, objective=1.0, bound=0.0, status="time_limit")]
    problems, _ = agreement_problems(rows, [inst("a")])
    assert len(problems) == 1 and "a false proof" in problems[0]
    # the manifest's proved optimum takes part
    problems, _ = agreement_problems([row("a", "x", objective=2.0)], [inst("a", best=1.0, proved=True)])
    assert any("manifest" in p for p in problems)


def test_wrong_restricted_certificate_is_a_warning_and_not_solved():
    rows = [
        row("a", "highs", objective=2.0),
        row("a", "naive-highs", objective=3.0, seconds=0.1, restriction="margin-1e-4 box"),
    ]
    problems, warnings = agreement_problems(rows, [inst("a")])
    assert problems == [] and len(warnings) == 1 and "restricted class" in warnings[0]
    summary = {s["backend"]: s for s in summarize(rows)}
    assert summary["naive-highs"]["solved"] == 0 and summary["naive-highs"]["wrong_certificates"] == 1


# -- the command ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_bench_mip_quick_smoke(tmp_path):
    out = tmp_path / "bench"
    result = runner.invoke(app, ["bench", "mip", "--quick", "--out", str(out)])
    assert result.exit_code == 0, result.output
    backends = mipbench.default_backends()
    assert {"highs", "scip", "pyomo", "cpsat"} <= set(backends)
    with open(out / "rows.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    instances = mipbench.load_suite("noisy-halfspaces", quick=True)
    assert len(rows) == len(instances) * len(backends)
    assert {r["backend"] for r in rows} == set(backends)
    meta = json.loads((out / "summary.json").read_text())
    assert meta["agreement_problems"] == [] and meta["time_limit"] == mipbench.QUICK_TIME_LIMIT
    by_backend = {s["backend"]: s for s in meta["summary"]}
    assert by_backend["highs"]["solved"] == len(instances), "the exact MIP backend certifies every tiny instance"
    # every certified objective on an instance is the same number
    for name in {r["instance"] for r in rows}:
        values = {float(r["objective"]) for r in rows if r["instance"] == name and r["certified"] == "True"}
        assert len(values) == 1
    md = (out / "summary.md").read_text()
    assert (
        "oraclepriv bench mip --suite noisy-halfspaces --out" in md
        and "--quick" in md
        and "CPUs" in md
        and "highspy" in md
    )
    assert (out / "profile.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "agreement: all certified objectives agree" in result.stdout


def test_bench_mip_exits_nonzero_on_a_lying_backend(tmp_path, monkeypatch):
    """Negative control: highs reports a bound one unit above the truth (a false proof). The
    agreement check must print it loudly and the command must exit with code 1."""
    from oraclepriv.solvers.mip.highs import HighsBackend

    real_solve = HighsBackend.solve

    def lying_solve(self, problem):
        answer = real_solve(self, problem)
        answer.bound += 1.0
        return answer

    monkeypatch.setattr(HighsBackend, "solve", lying_solve)
    result = runner.invoke(app, ["bench", "mip", "--quick", "--backends", "highs,scip", "--out", str(tmp_path / "b")])
    assert result.exit_code == 1, result.output
    assert "CROSS-BACKEND DISAGREEMENT" in result.stderr and "a false proof" in result.stderr
    assert "FAILED" in (tmp_path / "b" / "summary.md").read_text()


@pytest.mark.parametrize(
    "args,fragment",
    [
        (
            ["--suite", "miplib"],
            "--suite must be one of ['noisy-halfspaces', 'library', 'real', 'learners', 'small-d']; got 'miplib'",
        ),
        (["--backends", "highs,cplex"], "--backends: unknown backend(s) ['cplex']"),
        (["--backends", "highs,highs"], "--backends must not repeat a backend; got ['highs'] more than once"),
        (
            ["--backends", "scip-bc:strategy=greedy"],
            "--backends 'scip-bc:strategy=greedy': backend 'scip-bc': strategy",
        ),
        (
            ["--time-limit", "-1"],
            "--time-limit must be a number of seconds > 0 and at most 1e+06 (about 11.6 days; for no limit give none); got -1",
        ),
    ],
)
def test_bench_mip_bad_input(tmp_path, args, fragment):
    result = runner.invoke(app, ["bench", "mip", "--quick", "--out", str(tmp_path / "x"), *args])
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_backend_specs_carry_options_and_bad_ones_fail_by_name():
    from oraclepriv.backends import parse_backend_spec
    from oraclepriv.bench.mip import check_backends

    assert parse_backend_spec("scip-bc") == ("scip-bc", {})
    assert parse_backend_spec("scip-bc:workers=2,output_flag=false") == (
        "scip-bc",
        {"workers": 2, "output_flag": False},
    )
    assert check_backends(["scip-bc", "scip-bc:workers=2"]) == ["scip-bc", "scip-bc:workers=2"]
    for bad, match in (
        (["scip-bc:workers=0"], "workers"),
        (["scip-bc:workers"], "key=value"),
        (["nope:x=1"], "unknown backend"),
        (["scip-bc:bogus=1"], "bogus"),
        (["scip-bc:workers=1,workers=2"], "option 'workers' is given twice"),
    ):
        with pytest.raises(ValueError, match=match):
            check_backends(bad)


def test_a_backend_list_keeps_each_specs_own_options():
    """`--backends` is comma-separated and so are a spec's options: key=value items continue the spec before them."""
    from oraclepriv.backends import split_backend_list

    assert split_backend_list("scip-bc:strategy=partition,part_size=50,gurobi") == [
        "scip-bc:strategy=partition,part_size=50",
        "gurobi",
    ]
    assert split_backend_list(" highs , scip-bc:workers=2 ,,") == ["highs", "scip-bc:workers=2"]
    assert split_backend_list("part_size=5,highs") == ["part_size=5", "highs"]  # nothing to continue: refused later


def test_bench_mip_takes_a_spec_with_two_options(tmp_path):
    spec = "scip-bc:strategy=partition,part_size=20"
    result = runner.invoke(
        app, ["bench", "mip", "--quick", "--backends", f"{spec},scip-bc", "--out", str(tmp_path / "p")]
    )
    assert result.exit_code == 0, result.output + result.stderr
    rows = json.loads((tmp_path / "p" / "rows.json").read_text())
    assert {row["backend"] for row in rows} == {spec, "scip-bc"}
    assert all(row["certified"] for row in rows)


def test_the_summary_says_a_load_exceeded_the_cores_only_when_it_did(monkeypatch):
    monkeypatch.setattr(mip_report.os, "cpu_count", lambda: 2)
    calm = [{**row("a", "x"), "load_1min": 0.7}, {**row("b", "x"), "load_1min": 1.9}]
    busy = [{**row("a", "x"), "load_1min": 0.7}, {**row("b", "x"), "load_1min": 5.1}]
    md_calm = mip_report.markdown_summary(calm, summarize(calm), [], [], "cmd", "noisy-halfspaces", 60.0)
    md_busy = mip_report.markdown_summary(busy, summarize(busy), [], [], "cmd", "noisy-halfspaces", 60.0)
    assert "0.70-1.90 (at most the 2 cores)" in md_calm and "inflated" not in md_calm
    assert "0.70-5.10 (above the 2 cores at times" in md_busy


def test_instances_selects_from_the_suite_and_names_what_it_lacks(tmp_path):
    suite = [inst("a"), inst("b"), inst("c")]
    assert [i.name for i in mipbench.select_instances(suite, ["c", "a"])] == ["a", "c"]  # the suite's order
    assert mipbench.select_instances(suite, None) == suite
    for bad, match in ((["x"], r"unknown instance\(s\) \['x'\]"), (["a", "a"], "repeated"), ([], "no instance")):
        with pytest.raises(ValueError, match=match):
            mipbench.select_instances(suite, bad)
    out = tmp_path / "one"
    ran = runner.invoke(
        app,
        [
            "bench",
            "mip",
            "--quick",
            "--instances",
            "sepnoise-n30-d2-s0",
            "--backends",
            "direction-bb",
            "--out",
            str(out),
        ],
    )
    assert ran.exit_code == 0, ran.output
    rows = json.loads((out / "rows.json").read_text())
    assert [r["instance"] for r in rows] == ["sepnoise-n30-d2-s0"]
    assert "--instances sepnoise-n30-d2-s0" in (out / "summary.md").read_text()  # the command reproduces the run
    # one instance: no performance profile, and both the summary and the command line say why
    assert not (out / "profile.png").exists()
    assert "No performance profile" in (out / "summary.md").read_text() and "No performance profile" in ran.output
    bad = runner.invoke(app, ["bench", "mip", "--quick", "--instances", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--instances: unknown instance(s) ['nope']" in bad.stderr


def test_a_performance_profile_is_drawn_over_two_instances_or_more(tmp_path):
    """A profile ranks backends across instances: over one instance it is skipped, and summary.md and
    summary.json say why; over two it is written."""
    one = [row("a", "x"), row("a", "y", seconds=2.0)]
    paths = mip_report.write_outputs(
        tmp_path / "one", one, summarize(one), [], [], command="cmd", suite="s", time_limit=60.0
    )
    assert "profile.png" not in paths and not (tmp_path / "one" / "profile.png").exists()
    note = mip_report.profile_note(one)
    assert note is not None and "at least 2; this run has 1" in note
    assert note in (tmp_path / "one" / "summary.md").read_text()
    assert "![performance profile]" not in (tmp_path / "one" / "summary.md").read_text()
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["profile_note"] == note
    two = [*one, row("b", "x"), row("b", "y")]
    paths = mip_report.write_outputs(
        tmp_path / "two", two, summarize(two), [], [], command="cmd", suite="s", time_limit=60.0
    )
    assert paths["profile.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert mip_report.profile_note(two) is None
    assert "![performance profile](profile.png)" in (tmp_path / "two" / "summary.md").read_text()


def test_the_former_suite_name_issue_still_runs_the_noisy_halfspaces_suite_with_a_warning(tmp_path):
    """``issue``, the default suite's former name, is a deprecated alias for one release: the API warns with a
    FutureWarning, the command line says so on stderr, and the run and its report carry the new name."""
    with pytest.warns(FutureWarning, match="'issue' is now called 'noisy-halfspaces'"):
        old = mipbench.load_suite("issue", quick=True)
    assert [i.name for i in old] == [i.name for i in mipbench.load_suite("noisy-halfspaces", quick=True)]
    out = tmp_path / "alias"
    args = [
        "bench",
        "mip",
        "--quick",
        "--suite",
        "issue",
        "--instances",
        "sepnoise-n30-d2-s0",
        "--backends",
        "enumerate",
    ]
    ran = runner.invoke(app, [*args, "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    assert "--suite issue is deprecated" in ran.stderr and "it runs --suite noisy-halfspaces" in ran.stderr
    summary = (out / "summary.md").read_text()
    assert (
        summary.startswith("# MIP oracle benchmark: suite `noisy-halfspaces`") and "--suite noisy-halfspaces" in summary
    )
