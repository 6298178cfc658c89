"""``oraclepriv learn``'s flags for the margin learners of Bassily, Mohri, Suresh: each reaches the estimator's
parameter, bad values are refused by flag name before any data is read, and a flag the learner does not take is
refused, naming the learners it applies to."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from oraclepriv.cli.app import app

ROWS = "x0,x1,y\n0.3,0.2,1\n-0.2,-0.3,0\n0.25,0.1,1\n-0.1,-0.4,0\n0.5,0.3,1\n-0.35,-0.2,0\n0.2,0.45,1\n-0.3,-0.3,0\n"


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(ROWS)
    return str(path)


def _learn(data, *args):
    return CliRunner().invoke(app, ["learn", data, "--epsilon", "1", "--delta", "0.01", "--seed", "3", *args])


def test_every_flag_reaches_the_release(data):
    result = _learn(
        data,
        "--algorithm",
        "margin-erm",
        "--json",
        *("--margin", "0.2", "--radius", "1.5", "--norm-bound", "2", "--accounting", "direct-gaussian"),
        *("--rounds", "1", "--jl-dim", "none"),
    )
    assert result.exit_code == 0, result.output
    privacy = json.loads(result.output)["privacy"]
    assert (privacy["margin"], privacy["radius"], privacy["norm_bound"]) == (0.2, 1.5, 2.0)
    assert privacy["accounting"] == "direct-gaussian" and privacy["rounds"] == 1
    assert privacy["projection"] == "identity: jl_dim=None"


def test_rounds_and_jl_dim_take_integers(data):
    result = _learn(data, "--algorithm", "margin-erm", "--json", "--rounds", "2", "--jl-dim", "1")
    assert result.exit_code == 0, result.output
    privacy = json.loads(result.output)["privacy"]
    assert privacy["rounds"] == 2 and privacy["jl_dim"] == 1 and privacy["projected"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rounds", "two"], "--rounds must be auto or an integer >= 1; got 'two'"),
        (["--rounds", "0"], "--rounds must be auto or an integer >= 1; got '0'"),
        (["--jl-dim", "-3"], "--jl-dim must be auto or none or an integer >= 1; got '-3'"),
        (["--margin", "0"], "--margin must be a finite number > 0; got 0"),
        (["--margin", "nan"], "--margin must be a finite number > 0; got nan"),
        (["--radius", "inf"], "--radius must be a finite number > 0; got inf"),
        (["--norm-bound", "-1"], "--norm-bound must be a finite number > 0; got -1"),
        (["--accounting", "exact"], "--accounting must be one of ['paper', 'resampling-gaussian', 'direct-gaussian']"),
    ],
)
def test_bad_values_are_refused_by_flag(data, args, message):
    result = _learn(data, "--algorithm", "margin-erm", *args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_a_flag_the_learner_does_not_take_is_refused_with_where_it_applies(data):
    result = _learn(data, "--algorithm", "adaptive-margin-erm", "--margin", "0.2")
    assert result.exit_code == 2
    assert "chooses the margin privately (Algorithm 6): --margin 0.2 does not apply" in result.output
    result = CliRunner().invoke(app, ["learn", data, "--algorithm", "rrspm", "--epsilon", "1", "--radius", "2"])
    assert result.exit_code == 2
    assert "--radius applies to --algorithm margin-erm and adaptive-margin-erm only" in result.output


def test_the_adaptive_learner_takes_the_shared_flags(data):
    result = _learn(
        data, "--algorithm", "adaptive-margin-erm", "--json", "--radius", "1", "--accounting", "direct-gaussian"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["privacy"]["erm"]["accounting"] == "direct-gaussian"  # the inner Algorithm 2


def test_rows_outside_the_ball_are_refused_by_file_row_and_flag_without_a_private_value(data):
    result = _learn(data, "--algorithm", "margin-erm", "--radius", "0.3")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "row 1 lies outside the ball of --radius 0.3 (7 of its 8 rows do)" in result.output
    assert "0.36" not in result.output  # row 1's norm, sqrt(0.13) = 0.3606, is private
    result = _learn(data, "--algorithm", "adaptive-margin-erm", "--radius", "0.3")
    assert result.exit_code == 2 and "row 1 lies outside the ball of --radius 0.3" in result.output
