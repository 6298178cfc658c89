"""``oraclepriv instances check`` validates the manifest (field types and values, an empty manifest, duplicate
names) and the relations between its fields and with the instance files (best bound <= best objective within
the tolerance, gap, proved_optimal, n and d, signed weights, a witness in the instance's class); ``instances
record`` refuses a new best objective without a hypothesis, a row with bad values, a rows file without rows,
and leaves the manifest as it was. Every check is shown to fire on a one-instance copy whose unmodified form
passes (so the problem is the one change), and the bundled manifest passes all of them."""

from __future__ import annotations

import json
import math
import re
import shutil

import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.instances import (
    ManifestError,
    check_library,
    check_witnesses,
    instances_dir,
    load_manifest,
    record_results,
)

runner = CliRunner()
SHIPPED = {entry["name"]: entry for entry in load_manifest()}
OPEN = "diabetes-10f"  # best 85, bound 50: the one open instance (unit weights, tolerance 4.42e-7)
SIGNED = "rrspm-5d-n100"  # signed weights, a negative optimum, closed
STUMP = "iris-vv-stump"


DROP = object()


def _library(tmp_path, name=OPEN, **changes):
    """A one-instance library: the shipped file and its manifest entry with ``changes`` (DROP: no such field)."""
    tmp_path.mkdir(exist_ok=True)
    shutil.copy(instances_dir() / SHIPPED[name]["file"], tmp_path)
    entry = {k: v for k, v in {**SHIPPED[name], **changes}.items() if v is not DROP}
    (tmp_path / "manifest.json").write_text(json.dumps([entry]))
    return entry


def _check(tmp_path) -> list[str]:
    """What the CLI's check does, as a list: the library checks, then (when clean) the witnesses."""
    return check_library(tmp_path) or check_witnesses(tmp_path)


def _check_cli(tmp_path):
    result = runner.invoke(app, ["instances", "check", "--dir", str(tmp_path)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_the_bundled_manifest_passes_every_check():
    assert len(SHIPPED) == 41
    assert check_library() == [] and check_witnesses() == []
    result = runner.invoke(app, ["instances", "check"])
    assert result.exit_code == 0 and "all instances match the manifest" in result.stdout, result.output


@pytest.mark.parametrize("name", [OPEN, SIGNED, STUMP])
def test_an_unmodified_copy_passes(tmp_path, name):
    """The control of every test below: only the change makes the copy fail."""
    _library(tmp_path, name)
    assert _check(tmp_path) == []


# ------------------------------------------------------------------------------- field types and values


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"best_objective": "abc"}, "field 'best_objective' must be a finite number or null; got 'abc'"),
        ({"best_objective": math.nan}, "field 'best_objective' must be a finite number or null; got nan"),
        ({"best_objective": True}, "field 'best_objective' must be a finite number or null; got True"),
        ({"best_bound": math.inf}, "field 'best_bound' must be a finite number or null; got inf"),
        ({"gap": -1.0}, "field 'gap' must be a finite number >= 0 or null; got -1.0"),
        ({"class": "bogus"}, "field 'class' must be one of ['threshold', 'stump', 'halfspace']; got 'bogus'"),
        ({"class": DROP}, "field 'class' is missing (one of ['threshold', 'stump', 'halfspace'] expected)"),
        ({"n": 0}, "field 'n' must be a positive integer; got 0"),
        ({"n": "442"}, "field 'n' must be a positive integer; got '442'"),
        ({"d": 10.0}, "field 'd' must be a positive integer; got 10.0"),
        ({"d": DROP}, "field 'd' is missing (a positive integer expected)"),
        ({"proved_optimal": "no"}, "field 'proved_optimal' must be true or false; got 'no'"),
        ({"signed_weights": 0}, "field 'signed_weights' must be true or false; got 0"),
        ({"solved_by": ""}, "field 'solved_by' must be a backend name or null; got ''"),
        ({"bound_by": 3}, "field 'bound_by' must be a backend name or null; got 3"),
        ({"solved_time_limit": -5}, "field 'solved_time_limit' must be a positive number or null; got -5"),
        ({"bound_time_limit": "600"}, "field 'bound_time_limit' must be a positive number or null; got '600'"),
        (
            {"best_hypothesis": "x"},
            "field 'best_hypothesis' must be an object (a hypothesis's to_dict) or null; got 'x'",
        ),
    ],
)
def test_check_names_the_instance_and_the_field_with_a_bad_value(tmp_path, changes, problem):
    _library(tmp_path, **changes)
    assert check_library(tmp_path) == [f"{OPEN}: {problem}"]
    assert check_witnesses(tmp_path) == [f"{OPEN}: {problem}"]  # on its own it reports instead of crashing
    result = _check_cli(tmp_path)
    assert result.exit_code == 1 and result.stderr.strip() == f"{OPEN}: {problem}", result.output


def test_every_bad_field_is_reported_on_its_own_line(tmp_path):
    _library(tmp_path, best_objective="abc", n=-1, **{"class": "bogus"})
    result = _check_cli(tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 1 and len(lines) == 3, result.output
    assert all(line.startswith(f"{OPEN}: field ") for line in lines)
    assert {"'best_objective'", "'n'", "'class'"} == {line.split()[2] for line in lines}


def test_an_empty_manifest_is_an_error(tmp_path):
    (tmp_path / "manifest.json").write_text("[]")
    assert check_library(tmp_path) == [f"manifest {str(tmp_path / 'manifest.json')!r} lists no instances"]
    result = _check_cli(tmp_path)
    assert result.exit_code == 1 and "lists no instances" in result.stderr and "all instances" not in result.stdout


def test_two_entries_with_one_name_are_reported(tmp_path):
    entry = _library(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps([entry, entry]))
    assert check_library(tmp_path) == [f"{OPEN}: 2 entries of the manifest have this name"]


# ------------------------------------------------------------------------------- relations between fields


def test_a_bound_above_the_objective_is_a_false_proof(tmp_path):
    _library(tmp_path, best_bound=90.0)
    (problem,) = _check(tmp_path)
    assert (
        problem.startswith(f"{OPEN}: best_bound 90.0 exceeds best_objective 85.0 by 5") and "a false proof" in problem
    )
    result = _check_cli(tmp_path)
    assert result.exit_code == 1 and "a false proof" in result.stderr


def test_a_bound_above_a_negative_objective_is_a_false_proof_beyond_the_tolerance(tmp_path):
    objective = SHIPPED[SIGNED]["best_objective"]
    assert objective < 0
    _library(tmp_path, SIGNED, best_bound=objective + 1e-3)
    (problem,) = _check(tmp_path)
    assert f"{SIGNED}: best_bound" in problem and "a false proof" in problem
    # within the tolerance 1e-9 * sum |w_i| (float summation) it is the same value, and proves the optimum
    _library(tmp_path, SIGNED, best_bound=objective + 1e-12)
    assert _check(tmp_path) == []


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"proved_optimal": True}, "proved_optimal is true, but best_objective 85.0 is 35 above best_bound 50.0"),
        ({"gap": 3.0}, "gap 3.0 is not max(0, best_objective - best_bound) = 35.0"),
        ({"gap": None}, "gap None is not max(0, best_objective - best_bound) = 35.0"),
        ({"best_bound": 85.0, "gap": 0.0}, "proved_optimal is false, but best_objective 85.0 and best_bound 85.0 meet"),
        (
            {"best_bound": None, "bound_by": None},
            "gap 35.0 without both a best_objective (85.0) and a best_bound (None)",
        ),
        ({"solved_by": None}, "best_objective 85.0 has no solved_by (who found it)"),
        ({"bound_by": None}, "best_bound 50.0 has no bound_by (who proved it)"),
        ({"n": 441}, "the file diabetes-10f.csv holds 442 points in 10 dimensions, the manifest says n = 441, d = 10"),
        ({"d": 9}, "the file diabetes-10f.csv holds 442 points in 10 dimensions, the manifest says n = 442, d = 9"),
        ({"signed_weights": True}, "signed_weights is True, but the file has no negative weights"),
    ],
)
def test_check_reports_an_entry_that_disagrees_with_itself_or_its_file(tmp_path, changes, problem):
    _library(tmp_path, **changes)
    (found,) = _check(tmp_path)
    assert found.startswith(f"{OPEN}: {problem}"), found
    result = _check_cli(tmp_path)
    assert result.exit_code == 1 and result.stderr.strip() == found


def test_a_closed_instance_that_says_open_is_reported(tmp_path):
    _library(tmp_path, SIGNED, proved_optimal=False)
    (problem,) = _check(tmp_path)
    assert problem.startswith(f"{SIGNED}: proved_optimal is false, but best_objective")


def test_proved_without_a_bound_is_reported(tmp_path):
    _library(tmp_path, SIGNED, best_bound=None, bound_by=None, gap=None)
    assert _check(tmp_path) == [f"{SIGNED}: proved_optimal is true without both a best_objective and a best_bound"]


def test_a_witness_outside_the_instance_class_is_reported(tmp_path):
    """A halfspace attaining a stump instance's objective would be a best objective no stump attains."""
    witness = {"hypothesis_class": "halfspace", "w": [0.0, 0.0], "b": -1.0}  # constant 0
    _, _, y, _ = _instance(STUMP)
    _library(
        tmp_path,
        STUMP,
        best_hypothesis=witness,
        best_objective=float(y.sum()),
        best_bound=None,
        gap=None,
        proved_optimal=False,
    )
    (problem,) = _check(tmp_path)
    assert problem == (
        f"{STUMP}: best_hypothesis is a halfspace, not in the instance's class 'stump' "
        "(witnesses of a stump instance: ['stump', 'threshold'])"
    )


def _instance(name):
    from oraclepriv.instances import load_instance

    return load_instance(name)


# ------------------------------------------------------------------------------- record


def _row(value, hypothesis=None, **changes):
    """A bench mip row of OPEN claiming a certified ``value`` (``changes`` override any key)."""
    objective = value
    row = {
        "instance": OPEN,
        "class": "halfspace",
        "backend": "scip-bc",
        "status": "optimal",
        "objective": objective,
        "bound": objective,
        "certified": True,
        "restriction": None,
        "time_limit": 60.0,
    }
    if hypothesis is not None:
        row["hypothesis"] = hypothesis
    return {**row, **changes}


def _record_cli(tmp_path, rows):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    result = runner.invoke(app, ["instances", "record", str(path), "--dir", str(tmp_path)])
    assert "Traceback" not in result.output
    return result


def test_record_refuses_a_new_best_without_a_hypothesis_and_leaves_the_manifest(tmp_path):
    """The repro: a row claiming 60 < 85 (and proving it) with nothing to re-score."""
    _library(tmp_path)
    before = (tmp_path / "manifest.json").read_bytes()
    with pytest.raises(ValueError, match=r"row 1 \(diabetes-10f, backend 'scip-bc'\): objective 60.0 would be the new"):
        record_results([_row(60.0)], tmp_path)
    result = _record_cli(tmp_path, [_row(60.0)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: rows file {str(tmp_path / 'rows.json')!r}: row 1 ({OPEN}, backend 'scip-bc'): objective 60.0 would be "
        "the new best known objective (now 85.0), but the row has no 'hypothesis' to re-score: a best objective is "
        "recorded only with the hypothesis that attains it"
    ]
    # a later row of the same file refuses the whole file, the earlier good rows included
    worse = _row(90.0, certified=False, bound=51.0, status="time_limit")
    result = _record_cli(tmp_path, [worse, _row(60.0)])
    assert result.exit_code == 2 and "row 2 (" in result.stderr
    assert (tmp_path / "manifest.json").read_bytes() == before
    assert _check(tmp_path) == []


def test_record_takes_a_row_without_hypothesis_that_is_no_new_best(tmp_path):
    """The control: a worse (or tying) objective needs no witness, and its whole-class bound counts."""
    _library(tmp_path)
    (entry,) = record_results([_row(90.0, certified=False, bound=51.0, status="time_limit")], tmp_path)
    assert (entry["best_objective"], entry["best_bound"], entry["bound_by"]) == (85.0, 51.0, "scip-bc")
    assert entry["gap"] == 34.0 and entry["proved_optimal"] is False
    (entry,) = record_results([_row(85.0, certified=False, bound=52.0, status="time_limit")], tmp_path)
    assert entry["best_hypothesis"] == SHIPPED[OPEN]["best_hypothesis"] and entry["best_bound"] == 52.0
    assert _check(tmp_path) == []


def test_record_bounds_count_only_over_the_whole_class_and_below_the_objective(tmp_path):
    _library(tmp_path)
    restricted = _row(90.0, certified=False, bound=80.0, status="optimal", restriction="margin 1e-4")
    (entry,) = record_results([restricted], tmp_path)
    assert (entry["best_bound"], entry["bound_by"]) == (50.0, SHIPPED[OPEN]["bound_by"])
    with pytest.raises(ValueError, match="a false proof"):
        record_results([_row(90.0, certified=False, bound=86.0, status="time_limit")], tmp_path)
    with pytest.raises(ValueError, match="'class' is 'stump', but diabetes-10f is a halfspace instance"):
        record_results([_row(90.0, certified=False, bound=60.0, status="time_limit", **{"class": "stump"})], tmp_path)
    assert _check(tmp_path) == []


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"bound": "-inf"}, "'certified' is true, but its objective 90.0 does not meet its bound -inf"),
        ({"bound": 40.0}, "'certified' is true, but its objective 90.0 does not meet its bound 40.0"),
        ({"restriction": "margin 1e-4"}, "'certified' is true, but its restriction 'margin 1e-4' says the bound"),
        ({"certified": "yes"}, "'certified' must be true or false; got 'yes'"),
        ({"restriction": ""}, "'restriction' must be null (a bound over the whole class) or a non-empty string"),
        ({"objective": "abc"}, "'objective' must be a number (null, \"inf\" or \"-inf\" when not finite); got 'abc'"),
        ({"bound": True}, "'bound' must be a number"),
        ({"time_limit": -1}, "'time_limit' must be a positive number or null; got -1"),
        ({"hypothesis": "x"}, "'hypothesis' must be an object (a hypothesis's to_dict) or null; got 'x'"),
    ],
)
def test_record_refuses_a_row_with_a_bad_value_naming_row_and_key(tmp_path, changes, fragment):
    _library(tmp_path)
    before = (tmp_path / "manifest.json").read_bytes()
    with pytest.raises(ValueError) as raised:
        record_results([_row(90.0, **changes)], tmp_path)
    assert str(raised.value).startswith(f"row 1 ({OPEN}, backend 'scip-bc'): {fragment}"), str(raised.value)
    result = _record_cli(tmp_path, [_row(90.0, **changes)])
    assert result.exit_code == 2 and fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert (tmp_path / "manifest.json").read_bytes() == before


@pytest.mark.parametrize(("key", "value"), [("instance", ["x"]), ("backend", ""), ("status", None)])
def test_record_refuses_a_row_whose_names_are_not_strings(tmp_path, key, value):
    _library(tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"row 1: '{key}' must be a non-empty string; got {value!r}")):
        record_results([_row(90.0, **{key: value})], tmp_path)


def test_record_refuses_a_row_without_restriction_or_class(tmp_path):
    _library(tmp_path)
    row = _row(90.0, certified=False, bound=60.0)
    for key in ("restriction", "class"):
        with pytest.raises(ValueError, match=rf"row 1 lacks the keys \['{key}'\]"):
            record_results([{k: v for k, v in row.items() if k != key}], tmp_path)


def test_record_accepts_a_witness_of_a_smaller_class_and_refuses_one_of_a_larger(tmp_path):
    """A stump is a halfspace (it witnesses a halfspace instance's objective); a halfspace is no stump."""
    constant_0 = {"halfspace": {"hypothesis_class": "halfspace", "w": [0.0, 0.0], "b": -1.0}}
    constant_0["stump"] = {"hypothesis_class": "stump", "feature": 0, "threshold": math.inf, "sign": 1}
    _library(tmp_path / "stump", STUMP)
    positives = float(_instance(STUMP)[2].sum())
    row = {
        **_row(positives, constant_0["halfspace"], certified=False, bound="-inf"),
        "instance": STUMP,
        "class": "stump",
    }
    with pytest.raises(ValueError, match="hypothesis is a halfspace, not in the instance's class 'stump'"):
        record_results([row], tmp_path / "stump")
    _library(tmp_path / "halfspace")
    positives = float(_instance(OPEN)[2].sum())
    (entry,) = record_results(
        [_row(positives, constant_0["stump"], certified=False, bound="-inf")], tmp_path / "halfspace"
    )
    assert entry["best_objective"] == 85.0  # worse: accepted, nothing changes
    assert _check(tmp_path / "halfspace") == []


def test_record_recomputes_proved_optimal_from_the_values(tmp_path):
    """A stored proved_optimal that the values do not support is not carried over by a merge."""
    _library(tmp_path, proved_optimal=True)
    (entry,) = record_results([_row(90.0, certified=False, bound=51.0, status="time_limit")], tmp_path)
    assert entry["proved_optimal"] is False and entry["gap"] == 34.0
    assert _check(tmp_path) == []


def test_record_an_empty_rows_file_is_a_usage_error(tmp_path):
    _library(tmp_path)
    before = (tmp_path / "manifest.json").read_bytes()
    result = _record_cli(tmp_path, [])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: rows file {str(tmp_path / 'rows.json')!r} holds no rows (an empty list): nothing recorded"
    )
    assert (tmp_path / "manifest.json").read_bytes() == before


def test_record_refuses_a_manifest_with_bad_fields_naming_the_manifest(tmp_path):
    _library(tmp_path, best_objective="abc")
    with pytest.raises(ManifestError, match="has 1 problem"):
        record_results([_row(90.0, certified=False, bound=51.0)], tmp_path)
    result = _record_cli(tmp_path, [_row(90.0, certified=False, bound=51.0)])
    (line,) = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and line.startswith(f"error: manifest {str(tmp_path / 'manifest.json')!r} has 1")
    assert f"{OPEN}: field 'best_objective' must be a finite number or null; got 'abc'" in line
    (tmp_path / "manifest.json").write_text("[]")
    result = _record_cli(tmp_path, [_row(90.0, certified=False, bound=51.0)])
    assert result.exit_code == 2 and "lists no instances" in result.stderr
