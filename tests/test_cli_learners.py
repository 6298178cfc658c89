"""`oraclepriv learn`, `demo`, `audit rrspm` and `bench learners` from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.demo import run_demo
from oraclepriv.io import write_csv_problem
from oraclepriv.ppm.hypothesis import PolytopeComplement

runner = CliRunner()


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] >= 0).astype(int)
    Z = rng.normal(size=(10, 2))
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, X, y)
    write_csv_problem(public, Z, None)
    return private, public, tmp_path


def test_learn_takes_a_public_file_as_long_as_the_private_one(tmp_path):
    """The CLI hands its public points over as PublicData: the refusal of an ambiguous plain array
    (the cross-validation slicing hazard) never hits a public file with as many rows as the private one."""
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    write_csv_problem(tmp_path / "private.csv", X, (X[:, 0] >= 0).astype(int))
    write_csv_problem(tmp_path / "public.csv", Z, None)
    result = runner.invoke(
        app,
        [
            "learn",
            str(tmp_path / "private.csv"),
            "--public",
            str(tmp_path / "public.csv"),
            "--algorithm",
            "rrspm",
            "--epsilon",
            "1",
            "--hypothesis-class",
            "threshold",
            "--seed",
            "0",
            "--public-size",
            "all",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["privacy"]["m"] == 40


def test_learn_rrspm_json_reports_two_calls_and_privacy(data):
    private, public, _ = data
    args = [
        "learn",
        str(private),
        "--public",
        str(public),
        "--algorithm",
        "rrspm",
        "--epsilon",
        "1",
        "--hypothesis-class",
        "stump",
        "--seed",
        "3",
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {
        "algorithm",
        "hypothesis",
        "privacy",
        "n_features",
    }  # the release only, no diagnostics by default
    assert out["algorithm"] == "RRSPM" and out["privacy"]["oracle_calls_by_design"] == 2
    assert "warning" not in result.stderr
    diag = runner.invoke(app, args + ["--diagnostics", "all"])
    assert "NON-PRIVATE diagnostics" in diag.stderr
    calls = json.loads(diag.stdout)["diagnostics"]["oracle_calls"]
    assert [c["step"] for c in calls] == ["private-erm", "perturb"]
    assert calls[1]["n"] == 10  # the projection call sees the public points only
    assert out["privacy"]["epsilon"] == 1.0 and out["privacy"]["delta"] == 0.0
    assert "replace one private record" in out["privacy"]["neighbouring"]
    assert out["hypothesis"]["hypothesis_class"] == "stump"
    again = runner.invoke(app, args)
    assert json.loads(again.stdout)["hypothesis"] == out["hypothesis"]  # --seed makes it reproducible


def test_learn_halfspace_gaussian_variant(data):
    private, public, _ = data
    result = runner.invoke(
        app,
        [
            "learn",
            str(private),
            "--public",
            str(public),
            "--algorithm",
            "rrspm",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--seed",
            "1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["privacy"]["noise"] == "gaussian" and out["privacy"]["delta"] == 1e-5
    assert out["hypothesis"]["hypothesis_class"] == "halfspace"


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--epsilon", "0"], "epsilon"),
        (["--epsilon", "-1"], "epsilon"),
        (["--epsilon", "1", "--delta", "0.5"], "delta"),
        (["--epsilon", "1", "--hypothesis-class", "circle"], "circle"),
        (["--epsilon", "1", "--on-uncertified", "retry"], "--on-uncertified"),
    ],
)
def test_learn_bad_parameters(data, extra, fragment):
    private, public, _ = data
    result = runner.invoke(app, ["learn", str(private), "--public", str(public), "--algorithm", "rrspm", *extra])
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_learn_on_uncertified_fallback_recovers_a_timed_out_mip(data):
    """--time-limit too short for highs, --on-uncertified fallback: the exact default re-solves it."""
    private, public, _ = data
    result = runner.invoke(
        app,
        [
            "learn",
            str(private),
            "--public",
            str(public),
            "--algorithm",
            "rrspm",
            "--epsilon",
            "1",
            "--backend",
            "highs",
            "--time-limit",
            "0.001",
            "--on-uncertified",
            "fallback",
            "--seed",
            "0",
            "--json",
            "--diagnostics",
            "proof_applies,fallbacks",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    steps = [(c["step"], c["backend"], c["certified"]) for c in out["diagnostics"]["oracle_calls"]]
    assert steps[:2] == [("private-erm", "highs", False), ("private-erm/fallback", "portfolio", True)]
    assert out["privacy"]["on_uncertified"] == "fallback" and out["diagnostics"]["proof_applies"] is True
    assert out["diagnostics"]["fallbacks"] == 1 and set(out["diagnostics"]) == {
        "notice",
        "oracle_calls",
        "proof_applies",
        "fallbacks",
    }


def test_learn_public_features_must_match(data):
    private, _, tmp = data
    other = tmp / "other.csv"
    write_csv_problem(other, np.zeros((4, 3)), None)
    result = runner.invoke(
        app, ["learn", str(private), "--public", str(other), "--algorithm", "rrspm", "--epsilon", "1"]
    )
    assert result.exit_code == 2 and "feature columns" in result.stderr


@pytest.mark.slow
def test_demo_story_holds_on_small_sizes(tmp_path):
    lines = []
    picture = tmp_path / "demo.png"
    report = run_demo(n_private=600, n_public=8, audit_runs=600, echo=lines.append, figure_path=picture)
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and any(str(picture.resolve()) in line for line in lines)
    bad = runner.invoke(app, ["demo", "--out", str(tmp_path / "no" / "such" / "dir.png")])
    assert bad.exit_code == 2 and "--out" in bad.stderr
    assert runner.invoke(app, ["demo", "--seed", "-1"]).exit_code == 2
    assert report["erm"]["certified"]
    assert report["rrspm"]["oracle_calls"] == 2 and report["rrspm"]["steps"] == ["private-erm", "perturb"]
    verdicts = {v["learner"]: v["passed"] for v in report["audit"]}
    assert verdicts == {"RRSPM": True, "broken: returns fhat": False}
    assert any("CAUGHT" in line for line in lines)


@pytest.mark.slow
def test_audit_rrspm_command_small(tmp_path):
    out = tmp_path / "audit.json"
    """Wiring and output schema (the verdicts themselves are tested in test_audit_rrspm.py at full power)."""
    result = runner.invoke(app, ["audit", "rrspm", "--runs", "30", "--draws", "3000", "--seed", "1", "--out", str(out)])
    rows = json.loads(out.read_text())
    assert {r["expected"] for r in rows} == {"pass", "fail"}
    assert {r["sampler"] for r in rows} == {"whole learner", "reduced"}
    assert {r["n_runs"] for r in rows} == {30, 3000} and all(
        r["detects"] > 1.0 for r in rows if r["sampler"] == "reduced"
    )
    assert result.exit_code == (0 if all(r["verdict"] == "ok" for r in rows) else 1)
    bad = runner.invoke(app, ["audit", "rrspm", "--runs", "0"])
    assert bad.exit_code == 2 and "--runs must be >= 1" in bad.stderr


def test_learn_ppm_reads_privacy_bits_column(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    public = ((y == 0) & (rng.random(40) < 0.7)).astype(int)
    path = tmp_path / "ppm.csv"
    path.write_text(
        "x0,x1,y,public\n" + "".join(f"{a!r},{b!r},{c},{p}\n" for (a, b), c, p in zip(X.tolist(), y, public))
    )
    result = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1", "--seed", "0", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["hypothesis"]["hypothesis_class"] == PolytopeComplement.hypothesis_class and out["hypothesis"]["d"] == 2
    assert out["privacy"]["oracle_calls_by_design"] == 0  # the paper's algorithm makes no ERM call
    text = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1", "--seed", "0"])
    assert text.exit_code == 0 and "privacy: pure 1-DP" in text.stdout  # the text output prints the guarantee
    # errors: a missing privacy-bit column, bits outside {0,1}, --public given
    path.write_text("x0,x1,y\n1,2,0\n")
    result = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1"])
    assert result.exit_code == 2 and "'public' column" in result.stderr
    path.write_text("x0,x1,y,public\n1,2,0,2\n")
    result = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1"])
    assert result.exit_code == 2 and "column 'public' row 1" in result.stderr
    result = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1", "--public", str(path)])
    assert result.exit_code == 2 and "do not pass --public" in result.stderr


def _learn_options() -> set[str]:
    import typer.main

    learn = typer.main.get_command(app).commands["learn"]  # type: ignore[attr-defined]
    return {option for param in learn.params for option in param.opts if option.startswith("--")}


def _assert_names_only_cli_levers(message: str) -> None:
    """Every --flag is one `oraclepriv learn` has; a Python parameter (name=...) is named only in the note
    that says it is the Python API's, and nothing before it (but the CSV column public=1) looks like one."""
    import re

    assert set(re.findall(r"--[a-z][a-z-]*", message)) <= _learn_options(), message
    cli_part, _, python_part = message.partition("in the Python API")
    assert python_part, message
    assert set(re.findall(r"\b([a-z_]+)=", cli_part)) <= {"public", "d"}, message
    for parameter in re.findall(r"\b([a-z_]+)=\.\.\.", message):
        assert parameter not in {option[2:].replace("-", "_") for option in _learn_options()}


def test_learn_ppm_too_many_public_points_names_the_command_lines_levers(tmp_path):
    """|G| above the limit: the library's hint said 'Cap the public sample with max_public=... or raise
    max_hypotheses', two parameters `learn` has no flag for. The CLI names the data file's public rows and
    columns, how many public points fit, and the Python parameters only as the Python API's."""
    from oraclepriv.learners.ppm import largest_public_sample

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    public = np.r_[np.ones(60, int), np.zeros(20, int)]
    path = tmp_path / "ppm.csv"
    path.write_text(
        "x0,x1,x2,y,public\n" + "".join(f"{a!r},{b!r},{c!r},{1 - p},{p}\n" for (a, b, c), p in zip(X.tolist(), public))
    )
    result = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    message = result.stderr.strip()
    assert message.count("\n") == 0 and "60 distinct public points (public=1)" in message, message
    fits = largest_public_sample(3)
    assert f"Keep at most {fits} distinct public rows" in message and "fewer feature columns" in message
    assert "max_public=..." in message and "No option of `oraclepriv learn` caps this" in message
    _assert_names_only_cli_levers(message)


def test_learn_ppm_membership_matrix_too_large_names_the_command_lines_levers(tmp_path, monkeypatch):
    """The scoring's memory refusal was a MemoryError (a traceback from the CLI) saying 'reduce the public
    sample (max_public=...) or n'; now one line naming the file's public rows and its rows."""
    import oraclepriv.ppm.scoring as scoring

    monkeypatch.setattr(scoring, "MAX_MEMBERSHIP_BYTES", 1000)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    public = np.r_[np.ones(12, int), np.zeros(28, int)]
    path = tmp_path / "ppm.csv"
    path.write_text("x0,x1,y,public\n" + "".join(f"{a!r},{b!r},{1 - p},{p}\n" for (a, b), p in zip(X.tolist(), public)))
    result = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    message = result.stderr.strip()
    assert "membership matrix" in message and "the 40 rows of data file" in message, message
    assert "fewer distinct public rows or fewer rows" in message
    _assert_names_only_cli_levers(message)
    with pytest.raises(MemoryError, match="max_public"):  # the Python API keeps its own wording and type
        from oraclepriv.learners import PPMHalfspaces

        PPMHalfspaces(epsilon=1.0, random_state=0).fit(X, 1 - public, public == 1)


def test_learn_public_cover_em_too_many_public_points_names_the_command_lines_levers(tmp_path):
    """The halfspace cover above max_candidates: the library's hint said 'use fewer public points (max_public)
    or raise max_candidates', two parameters `learn` has no flag for."""
    from oraclepriv.cover import DEFAULT_MAX_CANDIDATES, candidate_count, largest_halfspace_cover

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_csv_problem(private, X, (X[:, 0] > 0).astype(int))
    write_csv_problem(public, rng.normal(size=(200, 3)), None)
    args = ["learn", str(private), "--public", str(public), "--algorithm", "public-cover-em", "--epsilon", "1"]
    result = runner.invoke(app, [*args, "--public-size", "all"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    message = result.stderr.strip()
    fits = largest_halfspace_cover(3)
    assert candidate_count(fits, 3) <= DEFAULT_MAX_CANDIDATES < candidate_count(fits + 1, 3)
    assert "200 public points" in message and f"keep at most {fits} rows in the public file" in message, message
    assert f"Give --public-size {fits} or less" in message
    _assert_names_only_cli_levers(message)


def test_learn_subsample_laplace_and_gaussian(data):
    private, public, _ = data
    base = [
        "learn",
        str(private),
        "--public",
        str(public),
        "--algorithm",
        "subsample",
        "--epsilon",
        "1",
        "--hypothesis-class",
        "stump",
        "--teachers",
        "12",
        "--seed",
        "2",
        "--json",
    ]
    result = runner.invoke(app, base)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["algorithm"] == "subsample-aggregate" and out["privacy"]["oracle_calls_by_design"] == 13
    assert out["privacy"]["noise"] == "laplace" and out["privacy"]["guarantee"].startswith("pure 1-DP for any oracle")
    assert out["privacy"]["on_uncertified"] == "flag" and "diagnostics" not in out
    diag = json.loads(runner.invoke(app, base + ["--diagnostics", "uncertified_teachers"]).stdout)["diagnostics"]
    assert diag["uncertified_teachers"] == []
    assert [c["n"] for c in diag["oracle_calls"][:12]] == [25] * 12 and diag["oracle_calls"][-1]["n"] == 10
    gauss = json.loads(runner.invoke(app, base + ["--delta", "1e-6"]).stdout)
    assert gauss["privacy"]["noise"] == "gaussian" and gauss["privacy"]["delta"] == 1e-6
    bad = runner.invoke(app, base[:-1] + ["--teachers", "1"])
    assert bad.exit_code == 2 and "--teachers" in bad.stderr


@pytest.mark.slow
def test_audit_subsample_command_small(tmp_path):
    out, report = tmp_path / "audit.json", tmp_path / "audit.md"
    """Wiring and output schema (the verdicts are tested in test_subsample.py at full power)."""
    result = runner.invoke(
        app, ["audit", "subsample", "--runs", "100", "--seed", "2", "--out", str(out), "--report", str(report)]
    )
    rows = json.loads(out.read_text())
    assert len(rows) == 7 and {r["expected"] for r in rows} == {"pass", "fail"}
    assert result.exit_code == (0 if all(r["verdict"] == "ok" for r in rows) else 1)
    assert {r["delta"] for r in rows} == {0.0, 1e-6}  # the Gaussian rows are audited at their delta
    assert "oraclepriv audit subsample --runs 100" in report.read_text()


def test_learn_public_cover_em_makes_no_oracle_call(data):
    private, public, _ = data
    args = [
        "learn",
        str(private),
        "--public",
        str(public),
        "--algorithm",
        "public-cover-em",
        "--epsilon",
        "1",
        "--seed",
        "0",
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["algorithm"] == "public-cover-em" and out["privacy"]["oracle_calls_by_design"] == 0
    assert out["privacy"]["cover_size"] == 2 * (1 + 9 + 36)  # Cover's count for 10 public points in the plane
    for extra in (["--backend", "highs"], ["--delta", "1e-6"], ["--on-uncertified", "flag"]):
        bad = runner.invoke(app, args + extra)
        assert bad.exit_code == 2 and extra[0] in bad.output


def test_learn_regularization_backend_names(tmp_path):
    """--backend highs-qp+kkt names the convex oracle's backend; the deprecated 'scipy' still runs it, with a
    one-line warning naming the new value, and releases the same; an unknown name is refused naming it."""
    rng = np.random.default_rng(2)
    X, Z = rng.uniform(-0.5, 0.5, size=(40, 2)), rng.uniform(-0.5, 0.5, size=(8, 2))
    write_csv_problem(tmp_path / "private.csv", X, (X[:, 0] >= 0).astype(int))
    write_csv_problem(tmp_path / "public.csv", Z, None)
    args = ["learn", str(tmp_path / "private.csv"), "--public", str(tmp_path / "public.csv"), "--algorithm"]
    args += ["regularization", "--hypothesis-class", "linear", "--epsilon", "1", "--delta", "1e-3", "--seed", "0"]
    args += ["--json", "--backend"]
    new = runner.invoke(app, [*args, "highs-qp+kkt"])
    assert new.exit_code == 0, new.output
    assert "deprecated" not in new.stderr
    old = runner.invoke(app, [*args, "scipy"])
    assert old.exit_code == 0, old.output
    assert "warning: --backend scipy is deprecated" in old.stderr and "use --backend highs-qp+kkt" in old.stderr
    assert json.loads(old.stdout) == json.loads(new.stdout)
    bad = runner.invoke(app, [*args, "slsqp"])
    assert bad.exit_code == 2 and "got 'slsqp'" in bad.stderr


def test_audit_public_cover_command(tmp_path):
    report = tmp_path / "audit.md"
    result = runner.invoke(app, ["audit", "public-cover", "--others", "1", "--report", str(report)])
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert "control: cover built from private points too" in text and "UNEXPECTED" not in text
    assert runner.invoke(app, ["audit", "public-cover", "--epsilon", "0"]).exit_code == 2
    # label flips alone cannot expose a cover built from private features: refused
    assert runner.invoke(app, ["audit", "public-cover", "--others", "0"]).exit_code == 2
