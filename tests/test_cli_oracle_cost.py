"""``oraclepriv experiment oracle-cost``: the command's wiring (the experiment's bookkeeping is tested on a tiny
configuration in tests/test_oracle_cost.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app

runner = CliRunner()


def test_out_is_required_and_bad_options_are_one_line_errors(tmp_path):
    missing = runner.invoke(app, ["experiment", "oracle-cost"])
    assert missing.exit_code == 2 and "--out" in missing.output
    bad_seed = runner.invoke(app, ["experiment", "oracle-cost", "--out", str(tmp_path / "o"), "--seed", "-1"])
    assert bad_seed.exit_code == 2 and "seed" in bad_seed.output and "Traceback" not in bad_seed.output
    bad_jobs = runner.invoke(app, ["experiment", "oracle-cost", "--out", str(tmp_path / "o"), "--jobs", "0"])
    assert bad_jobs.exit_code == 2 and "--jobs" in bad_jobs.output
    both = runner.invoke(app, ["experiment", "oracle-cost", "--out", str(tmp_path / "o"), "--scale", "--quick"])
    assert both.exit_code != 0 and "--scale" in both.output and "Traceback" not in both.output
    assert not (tmp_path / "o").exists()  # refused before any work


@pytest.mark.slow
def test_quick_run_writes_its_folder_and_resumes(tmp_path):
    out = tmp_path / "oracle-cost"
    first = runner.invoke(app, ["experiment", "oracle-cost", "--quick", "--out", str(out), "--quiet"])
    assert first.exit_code == 0, first.output
    for name in ("cells.jsonl", "fits.csv", "calls.csv", "README.md"):
        assert (out / name).exists(), name
    lines = (out / "cells.jsonl").read_text().splitlines()
    again = runner.invoke(app, ["experiment", "oracle-cost", "--quick", "--out", str(out), "--quiet"])
    assert again.exit_code == 0, again.output
    assert (out / "cells.jsonl").read_text().splitlines() == lines  # every cell was already there
