"""A released model from the command line: ``learn --out MODEL.json`` saves the release, ``predict`` labels a CSV
file's rows with it and ``score`` measures it on labelled rows; every wrong input is one line naming the file and
the problem. Text output shows structures as JSON, and piped ``--help`` is plain text."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from oraclepriv import load_release
from oraclepriv.cli import app
from oraclepriv.io import read_csv_problem, write_csv_problem

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    write_csv_problem(tmp_path / "private.csv", X, (X[:, 0] > 0).astype(int))
    write_csv_problem(tmp_path / "public.csv", rng.normal(size=(6, 2)), None)
    T = rng.normal(size=(10, 2))
    write_csv_problem(tmp_path / "test.csv", T, (T[:, 0] > 0).astype(int), np.arange(1.0, 11.0))
    write_csv_problem(tmp_path / "three.csv", rng.normal(size=(4, 3)), np.array([0, 1, 0, 1]))
    return tmp_path


def _refused(args: list[str], *fragments: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (args, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture
def model(files):
    path = files / "out" / "model.json"  # --out creates the missing folder
    args = ["learn", str(files / "private.csv"), "--public", str(files / "public.csv"), "--algorithm", "rrspm"]
    result = runner.invoke(app, [*args, "--epsilon", "1", "--hypothesis-class", "stump", "--out", str(path)])
    assert result.exit_code == 0, result.output
    return path


def test_learn_out_saves_the_release_that_predict_and_score_use(files, model):
    release = load_release(model)
    assert release.algorithm == "RRSPM" and release.privacy["epsilon"] == 1.0
    test = read_csv_problem(files / "test.csv")
    expected = release.predict(test.X)
    shown = runner.invoke(app, ["predict", str(model), str(files / "test.csv")])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.split() == ["y", *map(str, expected.tolist())]
    written = files / "pred" / "labels.csv"
    assert runner.invoke(app, ["predict", str(model), str(files / "test.csv"), "--out", str(written)]).exit_code == 0
    assert written.read_text().split() == shown.stdout.split()

    scored = runner.invoke(app, ["score", str(model), str(files / "test.csv"), "--json"])
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout)
    wrong = expected != test.y
    assert result["n"] == 10 and result["correct"] == int((~wrong).sum()) and result["accuracy"] == (~wrong).mean()
    assert result["weighted"] and result["zero_one_loss"] == float(test.weights[wrong].sum())  # the weight column
    text = runner.invoke(app, ["score", str(model), str(files / "test.csv")]).stdout
    assert f"({result['correct']} of 10 rows" in text and "weights: the 'weight' column" in text


def test_a_ppm_model_predicts_on_the_file_it_was_fitted_on(tmp_path):
    path = tmp_path / "ppm.csv"
    path.write_text("x0,x1,y,public\n0.1,0.2,0,1\n0.3,0.1,1,0\n0.5,0.5,0,1\n0.7,0.2,1,0\n0.9,0.9,1,0\n")
    model = tmp_path / "ppm.json"
    fitted = runner.invoke(app, ["learn", str(path), "--algorithm", "ppm", "--epsilon", "1", "--out", str(model)])
    assert fitted.exit_code == 0, fitted.output
    predicted = runner.invoke(app, ["predict", str(model), str(path)])  # the 'public' column is not a feature
    assert predicted.exit_code == 0, predicted.output
    assert len(predicted.stdout.split()) == 6 and set(predicted.stdout.split()[1:]) <= {"0", "1"}


def test_wrong_inputs_are_one_line_naming_the_file_and_the_problem(files, model):
    test = str(files / "test.csv")
    _refused(["predict", str(files / "nope.json"), test], "model file", "nope.json", "does not exist")
    _refused(["score", str(files), test], "model file", "is a directory")
    _refused(["predict", str(files / "private.csv"), test], "private.csv", "is not a release", "not JSON")
    (files / "other.json").write_text('{"algorithm": "x", "privacy": {}}')
    _refused(["predict", str(files / "other.json"), test], "other.json", "is not a release", "'hypothesis'")
    (files / "broken.json").write_text('{"algorithm": "x", "hypothesis": {"hypothesis_class": "stump"}, "privacy": {}}')
    _refused(["score", str(files / "broken.json"), test], "broken.json", "is not a release", "missing")
    _refused(["predict", str(model), str(files / "missing.csv")], "data file", "missing.csv", "does not exist")
    _refused(["score", str(model), str(files / "public.csv")], "public.csv", "no label column 'y'", "score")
    halfspace = files / "halfspace.json"
    args = ["learn", str(files / "private.csv"), "--public", str(files / "public.csv"), "--algorithm", "rrspm"]
    assert runner.invoke(app, [*args, "--epsilon", "1", "--out", str(halfspace)]).exit_code == 0
    _refused(["predict", str(halfspace), str(files / "three.csv")], "three.csv", "3 feature columns", "takes 2")
    _refused(["score", str(halfspace), str(files / "three.csv")], "(x0, x1, x2)", "halfspace")


def test_text_output_shows_structures_as_json(files):
    args = ["learn", str(files / "private.csv"), "--public", str(files / "public.csv"), "--algorithm", "rrspm"]
    learned = runner.invoke(app, [*args, "--epsilon", "1", "--hypothesis-class", "stump", "--seed", "0"])
    line = learned.stdout.splitlines()[0]
    assert json.loads(line.split("released hypothesis ", 1)[1])["hypothesis_class"] == "stump"
    erm = runner.invoke(app, ["erm", str(files / "private.csv"), "--hypothesis-class", "stump"])
    hypothesis = next(x for x in erm.stdout.splitlines() if x.startswith("hypothesis"))
    assert json.loads(hypothesis.split(maxsplit=1)[1])["hypothesis_class"] == "stump"


@pytest.mark.parametrize("command", [[], ["learn"], ["predict"], ["bench", "mip"], ["verify", "suite"]])
def test_help_that_is_not_on_a_terminal_is_plain_text(command):
    text = runner.invoke(app, [*command, "--help"]).output
    assert text.startswith("Usage: ") and not any(box in text for box in "╭╮╰╯│─")


def test_learn_help_fits_a_screen_and_lists_the_learners():
    text = runner.invoke(app, ["learn", "--help"]).output
    assert len(text.splitlines()) <= 60
    for name in ("rrspm", "perturbation", "regularization", "subsample", "public-cover-em", "ppm"):
        assert f"  {name} " in text
