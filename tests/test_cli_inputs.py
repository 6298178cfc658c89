"""Every command-line input error is one line on stderr and exit 2, before any work starts:
output paths (a directory where a file goes, a file where a folder goes, a path under a file, an
unwritable place), input files that are directories, seeds and run counts, instance names as ``instances list``
prints them, options that do not apply; --help shows flags as flags; the audit's hint on too few runs; the caveat
of ``learn --on-uncertified flag``; and a start-up that does not import scikit-learn.

Each refusal is checked with the command's work replaced by a function that fails the test, so an error found
only after the work (the old behaviour: a traceback once the whole job had run) cannot pass.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import numpy as np
import pytest
from optional_backends import RESTRICTED
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.io import write_csv_problem

runner = CliRunner()
UNWRITABLE = "/proc/oraclepriv-test.mps"  # creating anything in /proc fails, for root too

#: the function each writing command's work starts with (module, name)
WORK = {
    "bench oracles": ("oraclepriv.bench.oracles", "bench_oracles"),
    "bench mip": ("oraclepriv.bench.mip", "run_benchmark"),
    "bench learners": ("oraclepriv.bench.learners", "bench_learners"),
    "bench ppm": ("oraclepriv.bench.ppm", "bench_ppm"),
    "bench convex": ("oraclepriv.bench.convex", "bench_convex"),
    "audit rrspm": ("oraclepriv.audit.suite", "rrspm_audit_suite"),
    "audit subsample": ("oraclepriv.audit.suite", "subsample_audit_suite"),
    "audit public-cover": ("oraclepriv.audit.suite", "public_cover_audit_suite"),
    "instances export-mps": ("oraclepriv.instances", "export_mps"),
    "instances build": ("oraclepriv.instances", "build_library"),
    "verify suite": ("oraclepriv.verify.suite", "run_suite"),
    "demo": ("oraclepriv.demo", "run_demo"),
}
#: (command, its output option, file or folder); experiments: tests/test_cli_partial.py
OUTPUTS = [
    ("bench oracles", "--out", "file"),
    ("bench oracles", "--report", "file"),
    ("bench mip", "--out", "folder"),
    ("bench learners", "--out", "file"),
    ("bench learners", "--report", "file"),
    ("bench ppm", "--out", "file"),
    ("bench ppm", "--report", "file"),
    ("bench convex", "--out", "file"),
    ("bench convex", "--report", "file"),
    ("audit rrspm", "--out", "file"),
    ("audit rrspm", "--report", "file"),
    ("audit subsample", "--report", "file"),
    ("audit public-cover", "--report", "file"),
    ("audit public-cover", "--out", "file"),
    ("instances export-mps rrspm-2d-n300", "--out", "file"),
    ("instances build", "--out", "folder"),
    ("verify suite", "--out", "file"),
    ("verify suite", "--report", "file"),
    ("demo", "--out", "file"),
]


def forbid_work(monkeypatch) -> None:
    """Every command's work (the experiments' too) fails the test if it starts."""
    from test_cli_partial import EXPERIMENTS

    def started(*args, **kwargs):
        raise AssertionError("the work started before the input was checked")

    for module, name in [*WORK.values(), *EXPERIMENTS.values()]:
        monkeypatch.setattr(importlib.import_module(module), name, started)


@pytest.fixture
def no_work(monkeypatch):
    forbid_work(monkeypatch)


def _refused(args: list[str], *fragments: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (args, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
    for fragment in fragments:
        assert fragment in lines[0], (args, lines[0])
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize(("command", "option", "kind"), OUTPUTS, ids=[f"{c} {o}" for c, o, _ in OUTPUTS])
def test_output_paths_are_checked_before_any_work(tmp_path, no_work, command, option, kind):
    args = command.split()
    afile = tmp_path / "a-file.mps"
    afile.write_text("x")
    if kind == "file":
        _refused([*args, option, str(tmp_path)], option, str(tmp_path), "is a directory")
    else:
        _refused([*args, option, str(afile)], option, str(afile), "is a file")
    _refused([*args, option, str(afile / "x.mps")], option, "is a file")
    _refused([*args, option, UNWRITABLE], option, "not writable")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file.mps"]  # nothing written


def test_an_output_file_in_a_missing_folder_gets_the_folder(tmp_path, monkeypatch):
    """One helper for output paths (cli.common.check_output_file): a file's missing folders are created before
    the work starts, as bench mip --out creates its folder; demo --out and verify suite --report refused them."""
    import oraclepriv.demo
    import oraclepriv.verify.suite

    def demo(seed, echo, figure_path):
        assert figure_path.parent.is_dir()  # created before the work
        figure_path.write_bytes(b"png")
        return {
            "audit": [{"learner": "RRSPM", "passed": True}],
            "erm": {"certified": True},
            "rrspm": {"oracle_calls": 2},
        }

    monkeypatch.setattr(oraclepriv.demo, "run_demo", demo)
    monkeypatch.setattr(oraclepriv.verify.suite, "run_suite", lambda **kwargs: [])
    monkeypatch.setattr(oraclepriv.verify.suite, "explicit_law_rows", lambda **kwargs: [])
    picture = tmp_path / "a" / "b" / "demo.png"
    assert runner.invoke(app, ["demo", "--out", str(picture)]).exit_code == 0 and picture.read_bytes() == b"png"
    report, rows = tmp_path / "c" / "verify.md", tmp_path / "d" / "e" / "rows.json"
    result = runner.invoke(app, ["verify", "suite", "--quick", "--report", str(report), "--out", str(rows)])
    assert result.exit_code == 0, result.output
    assert report.read_text().strip() and json.loads(rows.read_text()) == {"noisy_argmin": [], "explicit_laws": []}


def test_the_default_output_of_export_mps_is_checked_too(tmp_path, no_work, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rrspm-2d-n300.mps").mkdir()
    _refused(["instances", "export-mps", "rrspm-2d-n300"], "--out", "is a directory")


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    private = tmp_path / "private.csv"
    write_csv_problem(private, X, y)
    public = tmp_path / "public.csv"
    write_csv_problem(public, rng.normal(size=(6, 2)), None)
    labelled_public = tmp_path / "labelled-public.csv"
    write_csv_problem(labelled_public, rng.normal(size=(6, 2)), np.array([0, 1] * 3))
    return private, public, labelled_public


def test_a_directory_given_as_a_data_file_is_said_to_be_one(tmp_path, data):
    private, public, _ = data
    folder = str(tmp_path)
    _refused(["erm", folder, "--hypothesis-class", "stump"], "data file", folder, "is a directory")
    learn = ["learn", str(private), "--algorithm", "rrspm", "--epsilon", "1"]
    _refused(["learn", folder, "--public", str(public), "--algorithm", "rrspm", "--epsilon", "1"], "is a directory")
    _refused([*learn, "--public", folder], "--public", "is a directory")
    verify = ["verify", "instance", folder, "--algorithm", "rrspm", "--public", str(public)]
    _refused(verify, "data file", "is a directory")
    _refused(["erm", str(tmp_path / "nope.csv"), "--hypothesis-class", "stump"], "does not exist")


SEEDED = [
    ["demo"],
    ["audit", "public-cover"],
    ["audit", "rrspm"],
    ["audit", "subsample"],
    ["verify", "suite"],
    ["experiment", "ppm-curves", "--out", "OUT"],
    ["experiment", "margin-utility", "--out", "OUT"],
    ["experiment", "cover-baseline", "--out", "OUT"],
]


@pytest.mark.parametrize("args", SEEDED, ids=[" ".join(a[:2]) for a in SEEDED])
def test_a_negative_seed_is_refused_everywhere(tmp_path, no_work, args):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    _refused([*args, "--seed", "-1"], "--seed", "-1")
    assert not (tmp_path / "out").exists()


def test_learn_and_verify_refuse_a_negative_seed(data, no_work):
    private, public, _ = data
    _refused(["learn", str(private), "--public", str(public), "--algorithm", "rrspm", "--epsilon", "1", "--seed", "-1"])
    verify = ["verify", "instance", str(private), "--algorithm", "rrspm", "--public", str(public), "--seed", "-2"]
    _refused(verify, "--seed", "-2")


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "rrspm", "--runs", "0"],
        ["audit", "subsample", "--runs", "-5"],
        ["audit", "rrspm", "--draws", "0"],
        ["bench", "learners", "--repeats", "0"],
        ["bench", "ppm", "--repeat", "0"],
    ],
)
def test_counts_below_their_minimum_are_refused(no_work, args):
    _refused(args, args[-2], args[-1])


def test_instances_check_on_a_folder_without_a_manifest(tmp_path):
    _refused(["instances", "check", "--dir", str(tmp_path)], "--dir", "manifest.json")


def test_instances_list_prints_names_export_mps_takes(tmp_path):
    listed = runner.invoke(app, ["instances", "list"])
    assert listed.exit_code == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert len(names) > 10 and not any(name.endswith(".csv") for name in names)
    for name in (names[0], names[-1]):
        for given in (name, f"{name}.csv"):  # the file name is accepted too
            out = tmp_path / f"{given}.mps"
            result = runner.invoke(app, ["instances", "export-mps", given, "--out", str(out)])
            assert result.exit_code == 0, result.output
            assert out.stat().st_size > 0


def _commands(group, path=()):
    import typer.main

    command = typer.main.get_command(group) if not path else group
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))
    if path:
        yield path, command


def test_help_shows_flags_as_flags_and_a_flag_takes_no_value(data):
    """typer showed ``--json <bool>``, ``--quick <bool>``, even ``--help <bool>``; a flag's value is an error."""
    checked = 0
    for path, _ in _commands(app):
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, path
        assert "<bool>" not in result.output, (path, result.output)
        checked += 1
    assert checked >= 20
    erm_help = runner.invoke(app, ["erm", "--help"], terminal_width=200).output
    assert "--json" in erm_help and "<float>" in erm_help  # options with values still show their type
    private, _, _ = data
    valued = runner.invoke(app, ["erm", str(private), "--hypothesis-class", "stump", "--json", "true"])
    assert valued.exit_code == 2 and "true" in valued.output


def test_teachers_apply_to_subsample_only(data):
    private, public, _ = data
    args = ["learn", str(private), "--public", str(public), "--epsilon", "1", "--teachers", "8"]
    _refused([*args, "--algorithm", "rrspm"], "--teachers 8", "subsample", "rrspm")
    fitted = runner.invoke(app, [*args, "--algorithm", "subsample", "--hypothesis-class", "stump", "--seed", "0"])
    assert fitted.exit_code == 0, fitted.output


def test_a_label_column_in_the_public_file_is_named_in_a_warning(data):
    private, public, labelled = data
    args = ["learn", str(private), "--algorithm", "rrspm", "--epsilon", "1", "--hypothesis-class", "stump"]
    warned = runner.invoke(app, [*args, "--public", str(labelled), "--seed", "0"])
    assert warned.exit_code == 0, warned.output
    assert "warning: --public" in warned.stderr and "['y']" in warned.stderr and "ignored" in warned.stderr
    quiet = runner.invoke(app, [*args, "--public", str(public), "--seed", "0"])
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr


def test_learn_text_output_in_flag_mode_says_there_is_no_guarantee(data):
    private, public, _ = data
    args = ["learn", str(private), "--public", str(public), "--algorithm", "rrspm", "--epsilon", "1"]
    flagged = runner.invoke(app, [*args, "--hypothesis-class", "stump", "--on-uncertified", "flag", "--seed", "0"])
    assert flagged.exit_code == 0, flagged.output
    assert "caveat: NO privacy guarantee" in flagged.stdout and "not a claim" in flagged.stdout
    raised = runner.invoke(app, [*args, "--hypothesis-class", "stump", "--seed", "0"])
    assert raised.exit_code == 0 and "NO privacy guarantee" not in raised.stdout and "pure 1-DP" in raised.stdout


def test_an_audit_that_misses_a_control_with_few_runs_says_why(monkeypatch):
    from oraclepriv.audit import suite

    rows = [
        {"scenario": "tight-m1", "learner": "RRSPM", "n_runs": 50, "eps_lower": 0.0, "eps_point": 0.5},
        {"scenario": "tight-m1", "learner": "control: scale / 1.2", "n_runs": 50, "eps_lower": 0.1, "eps_point": 1.0},
    ]
    verdicts = [("pass", "ok", 1.35), ("fail", "UNEXPECTED", 2.7)]

    def fake(n_runs, on_row, **kwargs):
        out = []
        for row, (expected, verdict, detects) in zip(rows, verdicts, strict=True):
            row = {**row, "n_runs": n_runs, "expected": expected, "verdict": verdict, "detects": detects}
            row.update(passed=True, delta=0.0, sampler="whole learner")
            on_row(row)
            out.append(row)
        return out

    monkeypatch.setattr(suite, "subsample_audit_suite", fake)
    result = runner.invoke(app, ["audit", "subsample", "--runs", "50"])
    assert result.exit_code == 1
    assert "UNEXPECTED: 1 verdict(s)" in result.stderr
    assert "hint:" in result.stderr and "run count is too small" in result.stderr and "50 runs" in result.stderr
    assert "detects a loss >= 2.7" in result.stderr and "--runs 4000" in result.stderr
    verdicts[1] = ("pass", "UNEXPECTED", 1.35)  # a learner flagged: no power hint
    flagged = runner.invoke(app, ["audit", "subsample", "--runs", "50"])
    assert flagged.exit_code == 1 and "UNEXPECTED" in flagged.stderr and "hint" not in flagged.stderr


def test_the_command_line_starts_without_scikit_learn():
    """--help and the small commands import neither scikit-learn nor pandas (about 1.3 s before)."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from oraclepriv.cli.app import app\n"
        "for args in (['--help'], ['instances', 'list'], ['learn', '--help'], ['bench', 'mip', '--help']):\n"
        "    assert CliRunner().invoke(app, args).exit_code == 0, args\n"
        "heavy = [m for m in ('sklearn', 'pandas', 'scipy', 'matplotlib') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["experiment", "ppm-curves"], "Missing option '--out'"),
        (["learn", "x.csv", "--algorithm", "rrspm", "--epsilon", "abc"], "Invalid value for '--epsilon'"),
        (["erm", "x.csv", "--hypothesis-class", "stump", "--json", "true"], "unexpected extra argument"),
        (["erm", "--bogus"], "No such option: --bogus"),
        (["no-such-command"], "No such command"),
    ],
)
def test_usage_errors_are_one_line_too(args, fragment):
    """Typer's own errors (before a command runs) read like the commands' checks: one line, exit 2."""
    line = _refused(args, fragment)
    assert line.endswith("--help')"), line  # and where to look


def test_a_name_too_long_is_a_one_line_error(tmp_path, no_work):
    """Path.exists() raises for a name longer than the file system takes (one line, never a traceback)."""
    long = str(tmp_path / ("x" * 300))
    _refused(["bench", "oracles", "--out", long], "--out", "too long")
    _refused(["bench", "mip", "--out", long], "--out", "too long")
    _refused(["erm", long, "--hypothesis-class", "stump"], "data file", "too long")
    _refused(["instances", "check", "--dir", long], "--dir", "too long")


# ------------------------------------------------------------------------------------------------ library names
# Bad data or options the library refuses by its Python names (X_private, X_public, weights, delta=, backend=,
# on_uncertified=) and 0-based rows: the command names the flag or the file, and data rows counted from 1 after the
# header (as read_csv_problem counts them), before any learner is fitted.


def _no_python_names(line: str, *names: str) -> None:
    for name in names:
        assert name not in line, (name, line)


@pytest.fixture
def no_fit(monkeypatch):
    """Every learner's fit fails the test: the refusal must come from the command, not the library."""
    from oraclepriv.learners._base import PublicDataEstimator

    def started(*args, **kwargs):
        raise AssertionError("the learner was fitted before the input was checked")

    monkeypatch.setattr(PublicDataEstimator, "fit", started)


def _linear(tmp_path, private_rows, public_rows) -> tuple[str, str]:
    private, public = tmp_path / "lin.csv", tmp_path / "linpub.csv"
    write_csv_problem(private, np.array(private_rows), np.arange(len(private_rows)) % 2)
    write_csv_problem(public, np.array(public_rows), None)
    return str(private), str(public)


def _regularization(private: str, public: str, *extra: str) -> list[str]:
    return [
        "learn",
        private,
        "--public",
        public,
        "--algorithm",
        "regularization",
        "--hypothesis-class",
        "linear",
        "--epsilon",
        "1",
        *extra,
    ]


def test_learn_names_the_private_file_and_its_row_outside_the_l1_ball(tmp_path, no_fit):
    """The file and the row counted from 1 after the header, in the command line's terms; the private row's norm
    (a function of a private record) is not echoed."""
    private, public = _linear(tmp_path, [[0.1, 0.2], [0.5, 0.9], [0.2, 0.1]], [[0.1, 0.1], [0.2, 0.3]])
    line = _refused(_regularization(private, public), f"data file {private!r}: row 2 has l1 norm > 1", "x0")
    _no_python_names(line, "X_private", "row 1 ", "1.4")


def test_learn_names_the_public_file_and_its_row_outside_the_l1_ball(tmp_path, no_fit):
    private, public = _linear(tmp_path, [[0.1, 0.2], [0.5, 0.3]], [[0.1, 0.1], [0.2, 0.3], [0.9, 0.3]])
    line = _refused(_regularization(private, public), f"--public {public!r}: row 3 has l1 norm 1.2 > 1")
    _no_python_names(line, "X_public", "row 2 ")


@pytest.mark.parametrize("algorithm", ["perturbation", "regularization"])
def test_learn_delta_zero_for_a_gaussian_learner_names_the_flag(tmp_path, no_fit, algorithm):
    """It said "noise='gaussian' gives (eps, delta)-DP: delta must be > 0; got delta=0.0" (regularization) or
    "...: delta must be > 0; got 0.0" (perturbation)."""
    private, public = _linear(tmp_path, [[0.1, 0.2], [0.5, 0.3]], [[0.1, 0.1], [0.2, 0.3]])
    args = (
        _regularization(private, public)
        if algorithm == "regularization"
        else ["learn", private, "--public", public, "--algorithm", "perturbation", "--epsilon", "1"]
    )
    line = _refused([*args, "--delta", "0"], "--delta 0", f"--algorithm {algorithm}", "--delta must be > 0")
    _no_python_names(line, "noise=", "delta=", "got 0.0")


def test_learn_regularization_backend_and_on_uncertified_are_named_by_their_flags(tmp_path, no_fit):
    """It said "backend must be None or one of [...]", "Regularization's convex oracle takes no backend_options" and
    "on_uncertified='fallback' needs a second, exact backend"."""
    private, public = _linear(tmp_path, [[0.1, 0.2], [0.5, 0.3]], [[0.1, 0.1], [0.2, 0.3]])
    args = _regularization(private, public, "--delta", "0.1")
    line = _refused([*args, "--backend", "nope"], "--backend must be one of ['highs-qp+kkt']", "got 'nope'")
    _no_python_names(line, "None")
    line = _refused([*args, "--backend", "highs-qp+kkt:x=1"], "--backend 'highs-qp+kkt:x=1'", "takes no options")
    _no_python_names(line, "backend_options")
    line = _refused([*args, "--on-uncertified", "fallback"], "--on-uncertified fallback", "--on-uncertified raise")
    _no_python_names(line, "on_uncertified")


@pytest.mark.parametrize("backend", RESTRICTED)
@pytest.mark.parametrize(("algorithm", "extra"), [("rrspm", []), ("subsample", ["--on-uncertified", "raise"])])
def test_learn_a_restricted_backend_is_named_by_its_flag(data, no_fit, algorithm, extra, backend):
    """A backend whose bounds cover a margin-restricted class with on_uncertified raise: it said "backend='gurobi'
    proves its bounds only over ... Use an exact backend (e.g. backend=None), or on_uncertified='fallback'"."""
    private, public, _ = data
    args = ["learn", str(private), "--public", str(public), "--algorithm", algorithm, "--epsilon", "1", *extra]
    line = _refused(
        [*args, "--backend", backend], f"--backend '{backend}' proves its bounds only over", "--on-uncertified fallback"
    )
    _no_python_names(line, "backend=", "on_uncertified")


def test_learn_a_bad_backend_option_names_the_flag_and_the_spec(data, no_fit):
    private, public, _ = data
    args = ["learn", str(private), "--public", str(public), "--algorithm", "rrspm", "--epsilon", "1"]
    _refused([*args, "--backend", "sweep:bogus=1"], "--backend 'sweep:bogus=1'", "unknown option(s) ['bogus']")


def test_erm_names_the_weight_column_whose_total_overflows(tmp_path):
    """It said "weights: the sum of |weights| overflows float64": the parameter, not the file's 'weight' column."""
    path = tmp_path / "w.csv"
    write_csv_problem(path, np.array([[0.1], [0.5], [0.2]]), np.array([0, 1, 1]), np.full(3, 1e308))
    line = _refused(
        ["erm", str(path), "--hypothesis-class", "threshold"], f"data file {str(path)!r}", "'weight' column"
    )
    _no_python_names(line, "weights")


@pytest.mark.parametrize(
    ("algorithm", "extra", "remedy"),
    [
        ("rrspm", [], "--on-uncertified fallback"),
        ("subsample", ["--teachers", "2", "--on-uncertified", "raise"], "--on-uncertified flag lets such a teacher"),
    ],
)
def test_an_uncertified_private_call_is_said_in_flags(tmp_path, algorithm, extra, remedy):
    """An oracle call stopped by a tiny --time-limit on noisy data is not certified: with --on-uncertified raise
    the fit stops with a one-line error in the command's flags (not on_uncertified=, .result or teacher 0), and
    nothing of the call's status or objective (private-data diagnostics) is printed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    y = (X[:, 0] > 0).astype(int)
    y[rng.random(80) < 0.25] ^= 1
    write_csv_problem(tmp_path / "private.csv", X, y)
    write_csv_problem(tmp_path / "public.csv", rng.normal(size=(10, 5)), None)
    args = ["learn", str(tmp_path / "private.csv"), "--public", str(tmp_path / "public.csv"), "--epsilon", "1"]
    result = runner.invoke(
        app, [*args, "--algorithm", algorithm, "--backend", "scip-bc", "--time-limit", "0.001", *extra]
    )
    assert result.exit_code == 2, result.output
    message = result.stderr
    assert (
        f"--algorithm {algorithm}: an oracle call on the private data was not certified by --backend 'scip-bc'"
        in message
    )
    assert remedy in message and "--time-limit 0.001 s" in message
    for python_name in ("on_uncertified=", ".result", "teacher 0", "objective", "status"):
        assert python_name not in message
