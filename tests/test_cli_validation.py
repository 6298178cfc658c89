"""Bad input found by the command-line audit: each case is refused with one line naming the flag (or file) and
the value, exit code 2, and no traceback; where the defect was a traceback or a silent wrong answer after the
work, the work is replaced by a function that fails the test (:func:`test_cli_inputs.forbid_work`). Also the
numerical delta where e^epsilon overflows, and the CSV reader's refusals (unnamed and repeated columns, rows of
the wrong length, empty cells, unreadable files)."""

from __future__ import annotations

import decimal
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from test_cli_inputs import _refused, forbid_work
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.io import read_csv_problem, write_csv_problem

runner = CliRunner()


@pytest.fixture
def no_work(monkeypatch):
    forbid_work(monkeypatch)
    import oraclepriv.verify.verifier as verifier

    def started(*args, **kwargs):
        raise AssertionError("the work started before the input was checked")

    monkeypatch.setattr(verifier, "verify_learner", started)


@pytest.fixture
def files(tmp_path):
    """Tiny inputs: a labelled 2-feature file, its public points, a 1-feature file (verify), its public points,
    a weighted 1-feature file, and a PPM file whose third (public) row carries label 1."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    paths = {name: tmp_path / f"{name}.csv" for name in ("private", "public", "v1", "v1pub", "weighted", "ppm")}
    write_csv_problem(paths["private"], X, (X[:, 0] > 0).astype(int))
    write_csv_problem(paths["public"], rng.normal(size=(4, 2)), None)
    write_csv_problem(paths["v1"], np.array([[0.1], [0.5], [0.9]]), np.array([0, 1, 1]))
    write_csv_problem(paths["v1pub"], np.array([[0.3], [0.7]]), None)
    write_csv_problem(paths["weighted"], np.array([[0.1], [0.5], [0.9]]), np.array([0, 1, 1]), np.array([1, 2, 1]))
    paths["ppm"].write_text("x0,x1,y,public\n0.1,0.2,0,1\n0.3,0.1,1,0\n0.5,0.5,1,1\n0.7,0.2,0,0\n")
    return {name: str(path) for name, path in paths.items()}


def _learn(files, *args: str) -> list[str]:
    return ["learn", files["private"], "--public", files["public"], *args]


def _verify(files, *args: str) -> list[str]:
    return ["verify", "instance", files["v1"], "--hypothesis-class", "threshold", *args]


# ------------------------------------------------------------------------------------- epsilon (1, 2, 19, 21)


def test_numerical_delta_where_e_to_the_epsilon_overflows():
    from oraclepriv.near_ties import numerical_delta

    assert numerical_delta(1.0, 1e-6) == (1 + math.e) * 1e-6  # unchanged where e^eps is finite
    assert numerical_delta(710.0, 1e-12) == 1.0  # was OverflowError: math range error
    assert numerical_delta(math.inf, 1e-12) == 1.0
    assert numerical_delta(800.0, 0.0) == 0.0
    # below 1 in log space: still an upper bound on (1 + e^eps) gamma, and close to it
    gamma = 1e-320
    value = numerical_delta(710.0, gamma)
    exact = (1 + decimal.Decimal(710).exp()) * decimal.Decimal(gamma)
    assert decimal.Decimal(value) >= exact and value < 1.01 * float(exact)
    with pytest.raises(ValueError, match="epsilon"):
        numerical_delta(math.nan, 1e-12)


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "rrspm", "--runs", "1", "--draws", "1", "--epsilon", "710"],
        ["audit", "subsample", "--runs", "1", "--epsilon", "800"],
        ["audit", "public-cover", "--epsilon", "1e308"],
    ],
    ids=["rrspm", "subsample", "public-cover"],
)
def test_audits_refuse_an_epsilon_whose_exponential_overflows(no_work, args):
    value = repr(float(args[-1]))
    _refused(args, "--epsilon must be a real number in (0, 700] (e^epsilon must stay a finite float64)", value)


def test_learn_and_verify_refuse_an_epsilon_whose_exponential_overflows(files, no_work):
    """The library's one rule (oraclepriv.validation.check_epsilon), its error named by the flag."""
    rule = "--epsilon must be a real number in (0, 700]"
    for algorithm in ("rrspm", "perturbation", "public-cover-em"):
        _refused(_learn(files, "--algorithm", algorithm, "--epsilon", "710"), rule, "got 710.0")
    _refused(_verify(files, "--public", files["v1pub"], "--algorithm", "rrspm", "--epsilon", "710"), rule, "710.0")
    _refused(_learn(files, "--algorithm", "rrspm", "--epsilon", "inf"), rule, "got inf")
    _refused(_learn(files, "--algorithm", "rrspm", "--epsilon", "nan"), rule, "got nan")
    ppm = runner.invoke(app, ["learn", files["ppm"], "--algorithm", "ppm", "--epsilon", "710"])
    assert ppm.exit_code == 2 and f"{rule} (e^epsilon must stay a finite float64) or inf" in ppm.stderr


def test_the_largest_epsilon_taken_still_runs(files):
    args = _learn(files, "--algorithm", "rrspm", "--epsilon", "700", "--seed", "0")
    refused = runner.invoke(app, [*args, "--json"])  # (1 + e^700) gamma >= 1/n: a vacuous guarantee is refused
    assert refused.exit_code == 2 and "vacuous" in refused.stderr and "--allow-weak-guarantee" in refused.stderr
    result = runner.invoke(app, [*args, "--allow-weak-guarantee", "--json"])
    assert result.exit_code == 0, result.output
    privacy = json.loads(result.stdout)["privacy"]
    assert privacy["epsilon"] == 700 and privacy["numerical_delta"] == 1.0 and privacy["vacuous"] is True


# --------------------------------------------------------------------------------------------- outputs (3, 8, 17)


def test_demo_checks_the_picture_format_before_running(tmp_path, no_work):
    _refused(["demo", "--out", str(tmp_path / "demo.txt")], "--out", "demo.txt", "'.txt'", "png")
    _refused(["demo", "--out", str(tmp_path / "demo")], "--out", "no extension")


EMPTY_OUT = [
    ["experiment", "ppm-curves", "--out", ""],
    ["experiment", "margin-utility", "--out", ""],
    ["experiment", "rrspm-tradeoff", "--out", ""],
    ["bench", "mip", "--out", ""],
    ["bench", "oracles", "--out", ""],
    ["bench", "oracles", "--report", ""],
    ["bench", "ppm", "--out", ""],
    ["audit", "public-cover", "--report", ""],
    ["verify", "suite", "--report", ""],
    ["instances", "build", "--out", ""],
    ["instances", "export-mps", "rrspm-2d-n300", "--out", ""],
    ["demo", "--out", ""],
]


@pytest.mark.parametrize("args", EMPTY_OUT, ids=[" ".join(a[:-1]) for a in EMPTY_OUT])
def test_an_empty_output_path_is_refused(tmp_path, no_work, monkeypatch, args):
    monkeypatch.chdir(tmp_path)  # '' is not the current folder
    _refused(args, args[-2], "empty path")
    assert list(tmp_path.iterdir()) == []


BOTH = [["bench", "oracles"], ["bench", "learners"], ["bench", "ppm"], ["audit", "rrspm"], ["verify", "suite"]]


@pytest.mark.parametrize("args", BOTH, ids=[" ".join(a) for a in BOTH])
def test_out_and_report_must_differ(tmp_path, no_work, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    _refused([*args, "--out", "rows.json", "--report", str(tmp_path / "rows.json")], "--out", "--report", "same file")


# ------------------------------------------------------------------------------------------ instances (4, 22)


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [("{bad", "is not valid JSON"), ('[{"name": "x"}]', "has no 'file' field"), ('{"a": 1}', "must be a JSON list")],
)
def test_instances_check_says_what_is_wrong_with_a_manifest(tmp_path, manifest, fragment):
    (tmp_path / "manifest.json").write_text(manifest)
    _refused(["instances", "check", "--dir", str(tmp_path)], "manifest.json", fragment)


def test_export_mps_names_an_empty_instance_name(no_work):
    _refused(["instances", "export-mps", ""], "instance name is empty")


# ------------------------------------------------------------------------------------------- the CSV reader (5, 6, 7, 25)


def _erm_refuses(tmp_path, content: str, *fragments: str) -> None:
    path = tmp_path / "data.csv"
    path.write_text(content)
    _refused(["erm", str(path), "--hypothesis-class", "stump"], "data.csv", *fragments)


def test_a_pandas_index_column_is_refused(tmp_path):
    _erm_refuses(tmp_path, ",x0,x1,y\n0,0.1,0.2,0\n1,0.3,0.1,1\n", "column 1 of the header has no name", "index=False")
    _erm_refuses(tmp_path, "Unnamed: 0,x0,y\n0,0.1,0\n1,0.3,1\n", "column 1", "'Unnamed: 0'")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("x0,x1,y\n0.1,0.2,0,9\n0.3,0.1,1,5\n", "row 1 (line 2) has 4 fields but the header has 3"),
        ("x0,x1,y\n0.1,0.2,0\n0.3,0.1,1,5\n", "row 2 (line 3) has 4 fields"),
        ("x0,x1,y\n0.1,0.2,0\n0.3,0.1\n", "row 2 (line 3) has 2 fields"),
    ],
    ids=["first-row-longer", "later-row-longer", "row-shorter"],
)
def test_a_row_with_another_field_count_than_the_header_is_refused(tmp_path, content, fragment):
    _erm_refuses(tmp_path, content, fragment)


def test_a_repeated_column_name_is_refused(tmp_path):
    _erm_refuses(tmp_path, "x0,x0,y\n0.1,0.2,0\n0.3,0.1,1\n", "'x0' twice")


def test_an_empty_cell_is_called_one(tmp_path):
    _erm_refuses(tmp_path, "x0,x1,y\n0.1,0.2,0\n\n0.3,,1\n", "column 'x1' row 2 is an empty cell")
    _erm_refuses(tmp_path, "x0,x1,y\n0.1,NA,0\n", "column 'x1' row 1", "'NA'")


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")
def test_a_file_that_cannot_be_read_is_named():
    _refused(["erm", "/proc/self/mem", "--hypothesis-class", "stump"], "data file '/proc/self/mem'", "cannot be read")


def test_the_reader_still_reads_what_it_writes(tmp_path):
    X, y, w = np.array([[0.1, -2.5e-300], [3.0, 7.0]]), np.array([0, 1]), np.array([1.5, -2.0])
    write_csv_problem(tmp_path / "ok.csv", X, y, w)
    data = read_csv_problem(tmp_path / "ok.csv")
    assert np.array_equal(data.X, X) and np.array_equal(data.y, y) and np.array_equal(data.weights, w)
    (tmp_path / "spaced.csv").write_text(" x0 , y\n1,0\n\n   \n2,1\n")  # names stripped, blank lines skipped
    assert read_csv_problem(tmp_path / "spaced.csv").X.ravel().tolist() == [1.0, 2.0]


# ------------------------------------------------------------------------------------------------ bench (9, 10, 11)


def test_bench_mip_refuses_an_empty_backend_list(no_work, tmp_path):
    _refused(["bench", "mip", "--backends", "", "--out", str(tmp_path / "o")], "--backends", "''")


def test_bench_mip_refuses_a_backend_that_supports_no_instance_of_the_suite(no_work, tmp_path):
    _refused(["bench", "mip", "--backends", "sweep", "--out", str(tmp_path / "o")], "'sweep'", "halfspace")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("args", "rule"),
    [
        (["bench", "learners", "--min-seconds", "inf"], "finite"),
        (["instances", "build", "--time-limit", "inf"], "at most 1e+06"),
        (["bench", "mip", "--time-limit", "inf"], "at most 1e+06"),
        # finite but beyond what the solvers' interfaces take (SCIP refuses > 1e20, OR-Tools overflows int64 ms)
        (["bench", "mip", "--time-limit", "1e21"], "at most 1e+06"),
        (["instances", "build", "--time-limit", "1000001"], "at most 1e+06"),
    ],
    ids=["bench-learners", "instances-build", "bench-mip", "bench-mip-huge", "instances-build-huge"],
)
def test_durations_must_be_finite_and_within_the_solvers_range(no_work, tmp_path, monkeypatch, args, rule):
    monkeypatch.chdir(tmp_path)
    shown = {"1e21": "1e+21", "1000001": "1000001"}.get(args[-1], args[-1])  # the value as the message repeats it
    _refused(args, args[-2], shown, rule)


def test_a_time_limit_beyond_the_solvers_range_is_refused_by_name_in_the_library():
    from oraclepriv.solvers.runtime.deadline import MAX_TIME_LIMIT

    from oraclepriv import make_oracle
    from oraclepriv.backends import backend_class

    with pytest.raises(ValueError, match=r"time_limit must be .* at most 1e\+06.*2000000"):
        make_oracle("halfspace", backend="scip-bc", time_limit=2 * MAX_TIME_LIMIT)
    with pytest.raises(ValueError, match=r"backend 'scip': time_limit must be"):
        backend_class("scip")(time_limit=1e19)
    assert make_oracle("halfspace", time_limit=MAX_TIME_LIMIT).time_limit == MAX_TIME_LIMIT


def test_jobs_has_an_upper_bound(no_work):
    from oraclepriv.cli.common import max_jobs

    too_many = str(max_jobs() + 1)
    _refused(["audit", "rrspm", "--jobs", too_many], "--jobs", too_many, f"at most {max_jobs()}")
    assert 4 <= max_jobs() <= 256


# ------------------------------------------------------------------------------------ verify instance (12, 13, 14, 20)


@pytest.mark.parametrize("delta", ["-0.1", "nan", "1"])
def test_verify_checks_delta_like_learn(files, no_work, delta):
    _refused(_verify(files, "--public", files["v1pub"], "--algorithm", "rrspm", "--delta", delta), "--delta", delta)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--algorithm", "rspm", "--grid", "0,1", "--delta", "0.1"], "--delta 0.1 does not apply"),
        (["--algorithm", "rrspm", "--public", "V1PUB", "--grid", "0,1"], "--grid '0,1' does not apply"),
        (["--algorithm", "rrspm", "--public", "V1PUB", "--mode", "exact", "--draws", "5"], "--draws 5 does not apply"),
        (["--algorithm", "rrspm", "--public", "V1PUB", "--delta", "0.1"], "add --mode sampled"),
        (["--algorithm", "rspm", "--grid", "0,1", "--hypothesis-class", "halfspace"], "--hypothesis-class"),
    ],
)
def test_verify_refuses_options_that_do_not_apply(files, no_work, extra, fragment):
    extra = [files["v1pub"] if a == "V1PUB" else a for a in extra]
    _refused(_verify(files, *extra), fragment)


def test_verify_refuses_weighted_data_and_other_features(files, no_work):
    args = ["--public", files["v1pub"], "--algorithm", "rrspm", "--hypothesis-class", "threshold"]
    _refused(["verify", "instance", files["weighted"], *args], "'weight' column")
    _refused(_verify(files, *args, "--others", files["private"]), "--others", "['x0', 'x1']", "['x0']")
    _refused(_verify(files, "--public", files["public"], "--algorithm", "rrspm"), "--public", "['x0', 'x1']")


# ------------------------------------------------------------------------------------------- learn (15, 23, 24, 25)


@pytest.mark.parametrize(
    ("flag", "value"), [("--backend", "nosuch"), ("--time-limit", "-5"), ("--on-uncertified", "foo")]
)
def test_ppm_refuses_the_oracle_options(files, flag, value):
    _refused(["learn", files["ppm"], "--algorithm", "ppm", "--epsilon", "1", flag, value], flag, "does not apply")


def test_subsample_names_the_default_of_teachers(files):
    args = ["learn", files["v1"], "--public", files["v1pub"], "--algorithm", "subsample", "--epsilon", "1"]
    line = _refused([*args, "--hypothesis-class", "stump"])
    assert "--teachers" in line and "default, 16" in line and "n=3" in line and "n_teachers" not in line


def test_ppm_names_the_file_and_row_of_a_labelled_public_example(files):
    line = _refused(["learn", files["ppm"], "--algorithm", "ppm", "--epsilon", "1"], files["ppm"], "row 3")
    assert "label_determined" not in line


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--epsilon", "1", "--time-limit", "0"], "--time-limit"),
        (["--epsilon", "1", "--time-limit", "inf"], "--time-limit"),
        (["--epsilon", "-1"], "--epsilon"),
        (["--epsilon", "1", "--hypothesis-class", "foo"], "--hypothesis-class 'foo'"),
        (["--epsilon", "1", "--on-uncertified", "foo"], "--on-uncertified"),
        (["--epsilon", "1", "--delta", "0.5"], "--delta 0.5"),
    ],
)
def test_learn_errors_name_the_flag(files, no_work, extra, fragment):
    _refused(_learn(files, "--algorithm", "rrspm", *extra), fragment)


# ---------------------------------------------------------------------------------------- audits and erm (16, 18)


def test_public_cover_audit_refuses_more_others_than_it_has(no_work):
    from oraclepriv.audit.suite import max_useful_others

    _refused(["audit", "public-cover", "--others", "1000000000"], "--others", f"at most {max_useful_others()}")


def test_a_time_limit_inside_the_backend_spec_is_refused(files, no_work, tmp_path):
    erm = ["erm", files["private"], "--hypothesis-class", "halfspace"]
    _refused([*erm, "--backend", "scip-bc:time_limit=5", "--time-limit", "1"], "time_limit", "--time-limit")
    _refused([*erm, "--backend", "scip-bc:time_limit=5"], "time_limit", "--time-limit")
    learn = _learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--backend", "scip-bc:time_limit=5")
    _refused(learn, "time_limit", "--time-limit")
    bench = ["bench", "mip", "--backends", "scip-bc:time_limit=5", "--out", str(tmp_path / "o")]
    _refused(bench, "time_limit", "--time-limit")


@pytest.mark.parametrize("spec", ["scip-bc:bogus=1", "sweep:bogus=1", "scip-bc:workers=2,bogus=1"])
def test_an_unknown_backend_option_lists_only_what_a_spec_takes(files, no_work, tmp_path, spec):
    """It said "allowed: local_search, ..., time_limit, workers", though the spec refuses time_limit (above): the
    list is the spec's options, and the time limit is named by its flag where the command has one."""
    from oraclepriv.backends import backend_class

    name = spec.partition(":")[0]
    takes = ", ".join(sorted(backend_class(name).options)) or "no options"
    if name == "sweep":  # verify's instance of the class the backend solves (sweep: thresholds and stumps)
        verify = _verify(files, "--public", files["v1pub"], "--algorithm", "rrspm", "--backend", spec)
    else:
        verify = ["verify", "instance", files["private"], "--hypothesis-class", "halfspace", "--public"]
        verify += [files["public"], "--algorithm", "rrspm", "--backend", spec]
    commands = {
        "erm": (["erm", files["private"], "--hypothesis-class", "halfspace", "--backend", spec], "--backend"),
        "learn": (_learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--backend", spec), "--backend"),
        "bench": (["bench", "mip", "--backends", spec, "--out", str(tmp_path / "o")], "--backends"),
        "verify": (verify, "--backend"),
    }
    for command, (args, flag) in commands.items():
        line = _refused(args, f"{flag} {spec!r}", "unknown option(s) ['bogus']", takes)
        assert "time_limit" not in line, (command, line)
        assert line.endswith("; the time limit is --time-limit") == (command != "verify"), (command, line)


def test_a_backends_python_error_names_its_options_and_the_time_limit_apart():
    """The Python API keeps time_limit as a parameter of its own (make_oracle, the learners); the unknown-option
    error lists the options proper and says the time limit is not one of them."""
    from oraclepriv import make_oracle

    with pytest.raises(ValueError, match="unknown option") as caught:
        make_oracle("halfspace", backend="scip-bc", bogus=1)
    message = str(caught.value)
    listed = message.split("its options: ")[1].split(" (")[0]
    assert "time_limit" not in listed and "workers" in listed
    assert "the time_limit parameter" in message
    assert make_oracle("halfspace", backend="scip-bc", time_limit=5).time_limit == 5  # still accepted
    with pytest.raises(ValueError, match=r"'sweep': unknown option\(s\) \['bogus'\]; it takes no options"):
        make_oracle("stump", backend="sweep", bogus=1)


def test_checks_do_not_refuse_good_input(files, tmp_path):
    """The new checks leave good commands alone (a verify instance run of a fraction of a second)."""
    result = runner.invoke(app, _verify(files, "--public", files["v1pub"], "--algorithm", "rrspm", "--json"))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"] == "verified"
    assert Path(files["v1"]).exists()


# ------------------------------------------------------------------------ backend specs and counts in learn / audit


def test_learn_takes_a_backend_spec_with_options_as_erm_does(files):
    """--backend NAME:key=value reaches the learner's oracle as backend_options (not refused as an
    unknown backend); a bad option is named by the backend itself."""
    ok = runner.invoke(
        app, [*_learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--backend", "scip-bc:workers=1"), "--json"]
    )
    assert ok.exit_code == 0, ok.output
    _refused(
        _learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--backend", "scip-bc:workers=-1"), "workers", "-1"
    )
    _refused(_learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--backend", "scip-bc:bogus=1"), "bogus")
    _refused(
        _learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--backend", "scip-bc:workers=1,workers=2"), "twice"
    )


def test_regularization_refuses_a_time_limit_it_would_ignore(files, tmp_path):
    from oraclepriv.learners import Regularization

    l1 = tmp_path / "l1.csv"
    write_csv_problem(l1, np.array([[0.1, 0.2], [-0.3, 0.1], [0.2, -0.4]]), np.array([1, 0, 1]))
    args = ["learn", str(l1), "--public", files["public"], "--algorithm", "regularization", "--epsilon", "1"]
    _refused([*args, "--hypothesis-class", "linear", "--time-limit", "5"], "--time-limit", "does not apply")
    learner = Regularization(epsilon=1.0, time_limit=5.0)
    with pytest.raises(ValueError, match="takes no time_limit; got time_limit=5.0"):
        learner.fit(np.array([[0.1, 0.2], [-0.3, 0.1]]), np.array([1, 0]), X_public=np.zeros((3, 2)))


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["audit", "subsample", "--runs", "1000000000000"], "1,000,000,000,000"),
        (["audit", "rrspm", "--runs", "9223372036854775808"], "9,223,372,036,854,775,808"),
        (["audit", "rrspm", "--draws", "100000001"], "100,000,001"),
    ],
    ids=["subsample-runs", "rrspm-runs-beyond-int64", "rrspm-draws"],
)
def test_audit_counts_have_an_upper_bound(no_work, args, shown):
    _refused(args, args[-2], "at most", shown)


def test_warnings_are_one_line_each_and_shown_once(monkeypatch, capsys):
    import warnings

    from oraclepriv.cli.common import configure_warnings
    from oraclepriv.release import PrivacyLeakWarning

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after the test
    configure_warnings()
    for _ in range(3):
        warnings.showwarning(PrivacyLeakWarning("diagnostics are not private"), PrivacyLeakWarning, "x.py", 1)
    warnings.showwarning(RuntimeWarning("overflow"), RuntimeWarning, "y.py", 2)
    err = capsys.readouterr().err.splitlines()
    assert err == ["warning: diagnostics are not private (PrivacyLeakWarning)", "warning: overflow (RuntimeWarning)"]


def test_jobs_minus_one_is_described_by_the_cpus_it_means(monkeypatch):
    import oraclepriv.execution as execution

    monkeypatch.setattr(execution.os, "cpu_count", lambda: 3)
    described = execution.Execution(backend="loky", n_jobs=-1).describe()
    assert described.startswith("3 local processes") and "-1" in described


def test_a_threshold_on_several_features_is_named_by_the_flag_and_the_file(files):
    """The library says X / X_private and d; the command line names --hypothesis-class and the file."""
    for args in (
        ["erm", files["private"], "--hypothesis-class", "threshold"],
        _learn(files, "--algorithm", "rrspm", "--epsilon", "1", "--hypothesis-class", "threshold"),
    ):
        _refused(args, "--hypothesis-class threshold needs data with one feature", "private.csv' has 2 (x0, x1)")
