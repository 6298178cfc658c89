"""A property-based fuzz of the command line: over commands, arguments and small CSV files
(malformed, empty, huge, subnormal, non-numeric, wrong labels, missing columns), bad paths (directories, missing
files, paths under a file, unwritable places), no command prints a Python traceback, and every failure is one
line on stderr with exit code 2 (warnings, each a line of its own, may come before it).

Commands that would run long jobs (audits, benchmarks, experiments, the demo) are fuzzed with at least one bad
input each, so they must refuse it before any work; the cheap ones (erm, learn, verify instance, instances
export-mps and check) also run on whatever valid input the draw makes, on tiny data with short time limits.
In-process through typer's CliRunner: the default run draws a bounded number of examples (a few seconds), the
thorough profile many more under ``-m slow``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cli_inputs import forbid_work
from typer.testing import CliRunner

from oraclepriv.cli import app

runner = CliRunner()

CELLS = st.sampled_from(
    ["0", "1", "-1", "0.5", "2", "1e308", "-1e308", "5e-324", "1e-310", "1e400", "nan", "inf", "-inf", "abc", "", " 3 "]
)
LABELS = st.sampled_from(["0", "1", "1", "0", "2", "-1", "0.5", "a", "", "nan", "1.0"])


CLEAN_CELLS = st.sampled_from(["0", "1", "-1", "0.5", "2", "-3.25", "7"])


@st.composite
def csv_texts(draw) -> str:
    """A small CSV: half of them clean tables with 0/1 labels (so that commands run), the others with odd
    values, missing or extra columns, or not a table at all."""
    kind = draw(st.sampled_from(["clean", "clean", "clean", "odd", "odd", "empty", "header", "garbage", "ragged"]))
    if kind == "empty":
        return ""
    if kind == "header":
        return "x0,x1,y\n"
    if kind == "garbage":
        return draw(st.text(max_size=30))
    clean = kind == "clean"
    n_features = draw(st.integers(1 if clean else 0, 3))
    columns = [f"x{j}" for j in range(n_features)]
    extras = draw(st.lists(st.sampled_from(["y", "weight", "public", "x0"]), max_size=3, unique=True))
    if clean:
        extras = [c for c in extras if c in ("y", "public")]
    if clean or draw(st.booleans()):
        extras = ["y", *[c for c in extras if c != "y"]]
    columns += extras
    rows = []
    for _ in range(draw(st.integers(1, 6) if not clean else st.integers(3, 8))):
        if clean:
            cells = [draw(st.sampled_from(["0", "1"])) if c in ("y", "public") else draw(CLEAN_CELLS) for c in columns]
        else:
            cells = [draw(LABELS) if c in ("y", "public") else draw(CELLS) for c in columns]
        if kind == "ragged" and draw(st.booleans()):
            cells = cells[: draw(st.integers(0, len(cells)))]
        rows.append(",".join(cells))
    return ",".join(columns) + "\n" + "\n".join(rows) + "\n"


#: where a path argument points: a file with the drawn text, or something that is not such a file
PATHS = st.sampled_from(["file"] * 6 + ["dir", "missing", "under-file", "unwritable", "too-long"])


def _opt(draw, option: str, good: list[str], bad: list[str], required: bool = False) -> list[str]:
    """``[option, value]``: left out half of the time (unless ``required``), else a good value twice as often
    as a bad one."""
    roll = draw(st.integers(0, 5))
    if not required and roll < 3:
        return []
    pool = bad if (roll % 3 == 2 and bad) or not good else good
    return [option, draw(st.sampled_from(pool))]


@st.composite
def cheap_invocations(draw) -> list[str]:
    """Commands that run on what they get (tiny data, short limits); placeholders DATA, PUBLIC, SMALL-PUBLIC (its
    first two rows), OUT and others (:func:`_materialize`)."""
    command = draw(st.sampled_from(["erm", "learn", "learn", "verify", "export-mps", "check"]))
    flag = ["--json"] if draw(st.booleans()) else []
    if command == "erm":
        args = ["erm", "DATA", *_opt(draw, "--hypothesis-class", ["threshold", "stump", "halfspace"], ["linear"], True)]
        args += _opt(
            draw, "--backend", ["enumerate", "sweep", "highs", "cpsat", "scip-bc"], ["bogus", "highs:threads=x"]
        )
        return args + _opt(draw, "--time-limit", ["1", "0.5"], ["0", "-1", "nan", "inf", "abc"]) + flag
    if command == "learn":
        algorithm = draw(
            st.sampled_from(["rrspm", "perturbation", "regularization", "subsample", "public-cover-em", "ppm"])
        )
        args = ["learn", "DATA", "--algorithm", algorithm]
        args += ["--public", "PUBLIC"] if algorithm != "ppm" or draw(st.integers(0, 4)) == 0 else []
        args += _opt(draw, "--epsilon", ["1", "0.5", "inf"], ["0", "-1", "nan", "abc"], True)
        args += _opt(draw, "--delta", ["1e-6"], ["0.5", "-1", "2"])
        good_classes = {"regularization": ["linear"], "ppm": ["halfspace"]}.get(algorithm, ["threshold", "stump"])
        args += _opt(draw, "--hypothesis-class", good_classes, ["bogus", "halfspace", "linear"])
        args += _opt(draw, "--seed", ["0", "3"], ["-1"])
        args += _opt(draw, "--teachers", ["2"] if algorithm == "subsample" else [], ["0", "-3", "4"])
        args += _opt(draw, "--on-uncertified", ["raise", "flag", "fallback"], ["bogus"])
        args += _opt(draw, "--time-limit", ["1"], ["0"])
        return args + _opt(draw, "--diagnostics", ["all"], ["bogus", ""]) + flag
    if command == "verify":
        algorithm = draw(st.sampled_from(["rrspm", "rspm"]))
        args = ["verify", "instance", "DATA", "--algorithm", algorithm]
        # at most two public points: the exact law over 5 points and 5 records takes minutes
        args += _opt(
            draw, "--public", ["SMALL-PUBLIC"] if algorithm == "rrspm" else [], ["PUBLIC"], algorithm == "rrspm"
        )
        args += _opt(draw, "--hypothesis-class", ["threshold", "stump"], ["halfspace", "bogus"], True)
        args += _opt(draw, "--epsilon", ["1"], ["0", "-1"])
        args += _opt(
            draw, "--grid", ["0,1;0,1", "-1,0,1"] if algorithm == "rspm" else [], ["abc", ""], algorithm == "rspm"
        )
        args += _opt(draw, "--mode", ["exact", "sampled"], ["bogus"])
        args += _opt(draw, "--draws", ["50"], ["0"], "sampled" in args)  # the default, 1e7, is a long run
        return args + _opt(draw, "--seed", ["0"], ["-1"])
    if command == "export-mps":
        args = ["instances", "export-mps", draw(st.sampled_from(["rrspm-2d-n300", "iris-vv-stump.csv", "bogus", ""]))]
        args += _opt(draw, "--out", ["OUT"], ["DIR", "UNDER-FILE", "UNWRITABLE", "TOO-LONG"])
        args += _opt(draw, "--backend", ["highs", "scip"], ["bogus"])
        return args + _opt(draw, "--formulation", ["relaxed", "margin", "staircase"], ["bogus"])
    return ["instances", "check", "--dir", draw(st.sampled_from(["DIR", "A-FILE", "MISSING-PARENT", "TOO-LONG"]))]


#: (command, [(option, a bad value)...]): long commands, each fuzzed with at least one bad input
LONG = {
    "audit rrspm": [("--runs", "0"), ("--runs", "-5"), ("--seed", "-1"), ("--epsilon", "0"), ("--draws", "0")],
    "audit subsample": [("--runs", "-1"), ("--seed", "-1"), ("--epsilon", "nan"), ("--jobs", "0")],
    "audit public-cover": [("--seed", "-1"), ("--others", "0"), ("--epsilon", "-1")],
    "bench oracles": [("--only", "bogus")],
    "bench mip": [("--suite", "bogus"), ("--backends", "bogus"), ("--time-limit", "0"), ("--jobs", "0")],
    "bench learners": [("--repeats", "0"), ("--min-seconds", "-1"), ("--jobs", "0")],
    "bench ppm": [("--repeat", "0")],
    "bench convex": [("--methods", "bogus"), ("--slsqp-max-n", "-1"), ("--seed", "-1")],
    "experiment ppm-curves": [("--seed", "-1")],
    "experiment margin-utility": [("--seed", "-1")],
    "experiment rrspm-tradeoff": [("--seed", "-1"), ("--jobs", "0")],
    "experiment robust-tradeoff": [("--seed", "-2")],
    "experiment cover-baseline": [("--seed", "-1"), ("--jobs", "0"), ("--parallel-backend", "bogus")],
    "experiment oracle-cost": [("--seed", "-1")],
    "demo": [("--seed", "-1")],
    "verify suite": [("--seed", "-1"), ("--jobs", "0")],
}
#: output options by command: (option, file or folder)
LONG_OUTPUTS = {
    "bench mip": [("--out", "folder")],
    "instances build": [("--out", "folder")],
    "demo": [("--out", "file")],
    **{name: [("--out", "folder")] for name in LONG if name.startswith("experiment")},
    **{
        name: [("--out", "file"), ("--report", "file")]
        for name in ("audit rrspm", "audit subsample", "audit public-cover", "bench oracles", "bench learners")
    },
    "bench ppm": [("--out", "file"), ("--report", "file")],
    "bench convex": [("--out", "file"), ("--report", "file")],
    "verify suite": [("--out", "file"), ("--report", "file")],
}
BAD_OUTPUTS = {
    "file": ["DIR", "UNDER-FILE", "UNWRITABLE", "TOO-LONG"],  # a missing parent folder is created
    "folder": ["A-FILE", "UNDER-FILE", "TOO-LONG"],
}


@st.composite
def refused_invocations(draw) -> list[str]:
    """A long command with one or more bad inputs (and, for experiments, a good --out unless it is the bad one)."""
    name = draw(st.sampled_from(sorted(set(LONG) | set(LONG_OUTPUTS))))
    bad = [(option, value) for option, value in LONG.get(name, [])]
    bad += [(option, path) for option, kind in LONG_OUTPUTS.get(name, []) for path in BAD_OUTPUTS[kind]]
    if name.startswith("experiment"):
        bad.append(("", ""))  # no --out at all
    chosen = draw(st.lists(st.sampled_from(bad), min_size=1, max_size=2, unique_by=lambda pair: pair[0]))
    args = name.split() + (["--quick"] if name.split()[-1] in ("oracles", "mip", "verify", "suite") else [])
    options = dict(chosen)
    if name.startswith("experiment") and "--out" not in options and ("", "") not in chosen:
        options["--out"] = "NEW-FOLDER"
    for option, value in options.items():
        if option:
            args += [option, value]
    return args


def _materialize(args: list[str], root: Path, data: str, public: str, where: str) -> list[str]:
    """Replace the placeholders by paths under ``root``: the data files hold ``data`` / ``public`` unless
    ``where`` sends DATA somewhere else (a directory, a missing file, ...)."""
    (root / "dir").mkdir()
    (root / "a-file").write_text("x")
    (root / "data.csv").write_text(data)
    (root / "public.csv").write_text(public)
    (root / "small-public.csv").write_text("\n".join(public.split("\n")[:3]) + "\n")
    data_path = {
        "file": root / "data.csv",
        "dir": root / "dir",
        "missing": root / "missing.csv",
        "under-file": root / "a-file" / "data.csv",
        "unwritable": Path("/proc/oraclepriv-missing.csv"),
        "too-long": root / ("x" * 300),
    }[where]
    places = {
        "DATA": data_path,
        "PUBLIC": root / "public.csv",
        "SMALL-PUBLIC": root / "small-public.csv",
        "OUT": root / "out.mps",
        "DIR": root / "dir",
        "A-FILE": root / "a-file",
        "UNDER-FILE": root / "a-file" / "inner.json",
        "UNWRITABLE": Path("/proc/oraclepriv-test.json"),
        "MISSING-PARENT": root / "no-such-folder" / "x.json",
        "TOO-LONG": root / ("x" * 300),
        "NEW-FOLDER": root / "new-folder",
    }
    return [str(places[a]) if a in places else a for a in args]


def _check(args: list[str], must_refuse: bool) -> None:
    result = runner.invoke(app, args)
    shown = f"{args}\nexit {result.exit_code}\nstdout: {result.stdout[-1500:]}\nstderr: {result.stderr[-1500:]}"
    assert "Traceback (most recent call last)" not in result.output, shown
    assert result.exception is None or isinstance(result.exception, SystemExit), (shown, repr(result.exception))
    if must_refuse:
        assert result.exit_code == 2, shown
    if result.exit_code == 1:  # the one legitimate exit 1: a verifier verdict the claim does not hold
        assert args[:2] == ["verify", "instance"] and "EXCEEDS" in result.stdout, shown
        return
    if result.exit_code == 3:  # the one legitimate exit 3: a sampled verification too short to decide
        assert args[:2] == ["verify", "instance"] and "INCONCLUSIVE" in result.stdout, shown
        return
    assert result.exit_code in (0, 2), shown
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert lines and lines[-1].startswith("error: "), shown
        assert all(line.startswith("warning: ") for line in lines[:-1]), shown


_FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_THOROUGH = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _cheap(invocations, data, public, where) -> None:
    """Each command of the draw on the same files (three per example: more commands see each odd file)."""
    for args in invocations:
        # in the temporary folder: commands with default output paths (export-mps's NAME.mps) write there
        with tempfile.TemporaryDirectory() as root, pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.chdir(root)
            materialized = _materialize(args, Path(root), data, public, where)
            _check(materialized, must_refuse=where != "file" and "DATA" in args)


def _refused(args) -> None:
    """Each of these options is bad on its own, so the command must stop before its work (which would fail
    the test if it started: nothing long can run here by mistake)."""
    with tempfile.TemporaryDirectory() as root, pytest.MonkeyPatch.context() as monkeypatch:
        forbid_work(monkeypatch)
        _check(_materialize(args, Path(root), "", "", "file"), must_refuse=True)


@pytest.mark.slow
@_FAST
@given(st.lists(cheap_invocations(), min_size=3, max_size=3), csv_texts(), csv_texts(), PATHS)
def test_cheap_commands_never_print_a_traceback(invocations, data, public, where):
    _cheap(invocations, data, public, where)


@_FAST
@given(refused_invocations())
def test_long_commands_refuse_bad_input_before_any_work(args):
    _refused(args)


@pytest.mark.slow
@_THOROUGH
@given(st.lists(cheap_invocations(), min_size=3, max_size=3), csv_texts(), csv_texts(), PATHS)
def test_cheap_commands_never_print_a_traceback_thorough(invocations, data, public, where):
    _cheap(invocations, data, public, where)


@pytest.mark.slow
@_THOROUGH
@given(refused_invocations())
def test_long_commands_refuse_bad_input_before_any_work_thorough(args):
    _refused(args)
