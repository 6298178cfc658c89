"""Interrupted long commands leave no complete-looking results (the command-line side).

Real signals to real ``python -m oraclepriv`` processes: Ctrl-C (SIGINT) exits 130 and SIGTERM 143, and the
output folder then holds a ``PARTIAL`` file (saying what happened and how to resume) and the cells finished so
far, never the summary files of a finished run. ``bench mip`` resumes from those cells (checked in-process,
where a run is fast and deterministic); each experiment marks its folder the same way.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from test_interrupts import Child, default_sigint
from typer.testing import CliRunner

from oraclepriv.cli import app
from oraclepriv.cli.common import EXIT_SIGINT, EXIT_SIGTERM, PARTIAL

ROOT = Path(__file__).resolve().parent.parent
#: seconds from the signal to the exit (the solver side stops within a second; the rest is unwinding)
PROMPT = 6.0
SUMMARY_FILES = ("rows.csv", "rows.json", "summary.json", "summary.md", "profile.png")


class Command(Child):
    """``python -m oraclepriv ARGS`` in its own process (test_interrupts' child, with a command line to run)."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "oraclepriv", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=default_sigint,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def wait_for(self, predicate, count: int = 1, timeout: float = 60.0) -> list[str]:
        """Read stdout until ``count`` lines satisfy ``predicate``; the lines read."""
        seen: list[str] = []
        deadline = time.perf_counter() + timeout
        while sum(map(predicate, seen)) < count:
            seen.append(self.line(timeout=max(0.1, deadline - time.perf_counter())))
            assert seen[-1], f"the command ended first: {seen} {self.finish()}"
        return seen

    def interrupt(self, signum: int) -> tuple[int, str, float]:
        """Send ``signum``; (return code, stderr, seconds to exit)."""
        sent = time.perf_counter()
        self.proc.send_signal(signum)
        err = self.finish()
        return self.proc.returncode, err, time.perf_counter() - sent


def _is_row(line: str) -> bool:
    return line.startswith("  sepnoise-")


def _check_partial(out: Path, rc: int, err: str, expected_rc: int, how: str) -> list[dict]:
    assert rc == expected_rc, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    marker = out / PARTIAL
    assert marker.is_file(), sorted(p.name for p in out.iterdir())
    text = marker.read_text()
    assert f"interrupted ({how})" in text and "resume" in text, text
    assert f"{out} holds partial outputs" in err, err
    present = [name for name in SUMMARY_FILES if (out / name).exists()]
    assert present == [], f"an interrupted run wrote summary files: {present}"
    return [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]


def _interrupted_bench_mip(tmp_path: Path, signum: int, *extra: str) -> tuple[Command, int, str, float, Path]:
    """bench mip on the issue suite with highs at a 2 s limit (the d = 10 cells run into it), signalled
    after its first two cells."""
    out = tmp_path / "mip"
    command = Command("bench", "mip", "--backends", "highs", "--time-limit", "2", "--out", str(out), *extra)
    command.wait_for(_is_row, count=2)
    rc, err, seconds = command.interrupt(signum)
    return command, rc, err, seconds, out


def test_ctrl_c_in_bench_mip_exits_130_and_leaves_a_partial_resumable_folder(tmp_path):
    _, rc, err, seconds, out = _interrupted_bench_mip(tmp_path, signal.SIGINT)
    cells = _check_partial(out, rc, err, EXIT_SIGINT, "Ctrl-C")
    assert seconds <= PROMPT, f"exit {seconds:.2f} s after SIGINT (load {os.getloadavg()})"
    assert len(cells) >= 2 and {c["backend"] for c in cells} == {"highs"}
    assert all(c["status"] != "error" for c in cells), cells  # the interrupted cell is not recorded as an error


@pytest.mark.slow
def test_sigterm_in_bench_mip_with_workers_exits_143_and_kills_them(tmp_path):
    """SIGTERM to the parent alone: its pool of two worker processes dies with it; the folder is marked."""
    out = tmp_path / "mip"
    command = Command("bench", "mip", "--backends", "highs", "--time-limit", "2", "--out", str(out), "--jobs", "2")
    command.wait_for(_is_row, count=2)
    workers = psutil.Process(command.proc.pid).children(recursive=True)
    assert len(workers) >= 2, workers
    rc, err, _ = command.interrupt(signal.SIGTERM)
    _check_partial(out, rc, err, EXIT_SIGTERM, "SIGTERM")
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"worker processes outlived the command: {[p.pid for p in alive]}"


@pytest.mark.slow
def test_sigterm_in_bench_mip_exits_143_and_marks_the_folder(tmp_path):
    _, rc, err, seconds, out = _interrupted_bench_mip(tmp_path, signal.SIGTERM)
    _check_partial(out, rc, err, EXIT_SIGTERM, "SIGTERM")
    assert seconds <= PROMPT


def _bench_mip_quick(out: Path, *extra: str):
    return CliRunner().invoke(app, ["bench", "mip", "--quick", "--backends", "highs", "--out", str(out), *extra])


def test_bench_mip_resumes_the_cells_an_interrupted_run_left(tmp_path):
    """The rows of cells.jsonl are taken as they are (a sentinel time shows it), the missing cell runs, the
    summary is written from all of them and the marker and the cells file go; --no-resume runs every cell."""
    out = tmp_path / "mip"
    first = _bench_mip_quick(out)
    assert first.exit_code == 0, first.output
    assert not (out / PARTIAL).exists() and not (out / "cells.jsonl").exists()
    rows = json.loads((out / "rows.json").read_text())
    assert len(rows) == 4
    # what an interrupted run leaves: three finished cells, the marker; no summary
    for name in SUMMARY_FILES:
        (out / name).unlink()
    (out / PARTIAL).write_text("interrupted")
    with open(out / "cells.jsonl", "w") as fh:
        for row in rows[:3]:
            fh.write(json.dumps({**row, "seconds": 0.123456}) + "\n")
        fh.write('{"instance": "truncated by a kill')  # a half-written last line is ignored
    resumed = _bench_mip_quick(out)
    assert resumed.exit_code == 0, resumed.output
    assert "resuming: 3 of 4 cells" in resumed.output
    again = json.loads((out / "rows.json").read_text())
    assert [r["instance"] for r in again] == [r["instance"] for r in rows]
    assert [r["seconds"] for r in again[:3]] == [0.123456] * 3 and again[3]["seconds"] != 0.123456
    assert not (out / PARTIAL).exists() and not (out / "cells.jsonl").exists()
    assert all((out / name).exists() for name in SUMMARY_FILES)

    (out / PARTIAL).write_text("interrupted")
    (out / "cells.jsonl").write_text(json.dumps({**rows[0], "seconds": 0.123456}) + "\n")
    fresh = _bench_mip_quick(out, "--no-resume")
    assert fresh.exit_code == 0 and "resuming" not in fresh.output
    assert 0.123456 not in [r["seconds"] for r in json.loads((out / "rows.json").read_text())]


def test_a_failed_bench_mip_run_keeps_no_summary_of_an_earlier_run(tmp_path, monkeypatch):
    """An earlier run's summary in --out is removed when a new run starts, so an interrupted (here: failing)
    run cannot leave it looking like this run's results."""
    from oraclepriv.bench import mip

    out = tmp_path / "mip"
    assert _bench_mip_quick(out).exit_code == 0

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mip, "run_one", broken)
    result = _bench_mip_quick(out)
    assert result.exit_code == EXIT_SIGINT
    assert (out / PARTIAL).is_file() and "interrupted (Ctrl-C)" in (out / PARTIAL).read_text()
    assert [name for name in SUMMARY_FILES if (out / name).exists()] == []


EXPERIMENTS = {
    "ppm-curves": ("oraclepriv.experiments.ppm_curves", "run_ppm_curves"),
    "rrspm-tradeoff": ("oraclepriv.experiments.rrspm_tradeoff", "run_rrspm_experiments"),
    "robust-tradeoff": ("oraclepriv.experiments.robust_tradeoff", "run_robust_tradeoff"),
    "cover-baseline": ("oraclepriv.experiments.cover_baseline", "run_cover_baseline"),
    "oracle-cost": ("oraclepriv.experiments.oracle_cost", "run_oracle_cost"),
}


def _fake_experiment(monkeypatch, name: str, interrupt: type[BaseException] | None):
    """Replace the experiment's run function by one that writes a file and then (optionally) raises."""
    import importlib

    import pandas as pd

    module, function = EXPERIMENTS[name]

    def run(out, **kwargs):
        (Path(out) / "half-written.csv").write_text("a,b\n")
        if interrupt is not None:
            raise interrupt()
        frame = pd.DataFrame({"x": [1]})
        return {"slopes": frame, "ratio": frame}

    monkeypatch.setattr(importlib.import_module(module), function, run)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_marks_its_folder_partial_until_it_finishes(tmp_path, monkeypatch, name):
    out = tmp_path / name
    _fake_experiment(monkeypatch, name, KeyboardInterrupt)
    interrupted = CliRunner().invoke(app, ["experiment", name, "--out", str(out), "--quick", "--quiet"])
    assert interrupted.exit_code == EXIT_SIGINT, interrupted.output
    text = (out / PARTIAL).read_text()
    assert "interrupted (Ctrl-C)" in text and f"oraclepriv experiment {name} --out" in text, text
    if name == "oracle-cost":
        assert "cells.jsonl" in text  # how to resume
    _fake_experiment(monkeypatch, name, None)
    finished = CliRunner().invoke(app, ["experiment", name, "--out", str(out), "--quick", "--quiet"])
    assert finished.exit_code == 0, finished.output
    assert not (out / PARTIAL).exists() and f"wrote {out}" in finished.output


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_needs_out_and_checks_it_before_any_work(tmp_path, monkeypatch, name):
    _fake_experiment(monkeypatch, name, RuntimeError)  # any work would raise
    missing = CliRunner().invoke(app, ["experiment", name, "--quick"])
    assert missing.exit_code == 2 and "Missing option '--out'" in missing.output, missing.output
    afile = tmp_path / "a-file"
    afile.write_text("x")
    on_file = CliRunner().invoke(app, ["experiment", name, "--out", str(afile), "--quick"])
    assert on_file.exit_code == 2 and on_file.output.startswith("error: --out") and "is a file" in on_file.output
    under_file = CliRunner().invoke(app, ["experiment", name, "--out", str(afile / "sub"), "--quick"])
    assert under_file.exit_code == 2 and "is a file" in under_file.output, under_file.output
    unwritable = CliRunner().invoke(app, ["experiment", name, "--out", "/proc/oraclepriv-test", "--quick"])
    assert unwritable.exit_code == 2 and "not writable" in unwritable.output, unwritable.output
    bad_seed = CliRunner().invoke(app, ["experiment", name, "--out", str(tmp_path / "new"), "--seed", "-1"])
    assert bad_seed.exit_code == 2 and "--seed must be >= 0; got -1" in bad_seed.output
    assert not (tmp_path / "new").exists()


@pytest.mark.slow
def test_sigterm_to_an_experiment_exits_143_and_leaves_the_folder_marked(tmp_path):
    """A real quick rrspm-tradeoff (about 7 s), terminated a second after its folder appeared."""
    out = tmp_path / "rrspm"
    command = Command("experiment", "rrspm-tradeoff", "--quick", "--out", str(out))
    start = time.perf_counter()
    while not (out / PARTIAL).exists():
        assert command.proc.poll() is None and time.perf_counter() - start < 60, command.finish()
        time.sleep(0.05)
    time.sleep(1.0)
    rc, err, seconds = command.interrupt(signal.SIGTERM)
    assert rc == EXIT_SIGTERM, err[-2000:]
    assert "interrupted (SIGTERM)" in (out / PARTIAL).read_text() and "Traceback" not in err
    assert seconds <= PROMPT
    assert not (out / "README.md").exists()  # the generated README is written last


INTERRUPT_AT: list[int | None] = [None]
CALLS: list[int] = []


def _counted_cell(i: int, seed: int) -> list[dict]:
    """A cell that records its call and raises KeyboardInterrupt where INTERRUPT_AT says."""
    import math

    import numpy as np

    CALLS.append(i)
    if i == INTERRUPT_AT[0]:
        raise KeyboardInterrupt
    return [{"i": i, "half": np.float64(seed / 2), "count": np.int64(i), "yes": np.bool_(i % 2), "inf": math.inf}]


def test_an_interrupted_run_of_cells_resumes_from_its_cells_file(tmp_path):
    """The mechanism behind robust-tradeoff, cover-baseline and rrspm-tradeoff: each finished cell is appended
    to cells.jsonl; a rerun computes only the others and returns exactly what an uninterrupted run returns."""
    from oraclepriv.experiments.cells import CELLS, finish_cells, run_cells

    tasks = [(i, 10 + i) for i in range(6)]
    expected = run_cells(_counted_cell, tasks, 1)
    cache = tmp_path / CELLS
    CALLS.clear()
    INTERRUPT_AT[0] = 3
    try:
        with pytest.raises(KeyboardInterrupt):
            run_cells(_counted_cell, tasks, 1, cache=cache)
    finally:
        INTERRUPT_AT[0] = None
    assert len(cache.read_text().splitlines()) == 3
    CALLS.clear()
    seen: list[tuple[int, int]] = []
    resumed = run_cells(_counted_cell, tasks, 1, progress=lambda done, total: seen.append((done, total)), cache=cache)
    assert CALLS == [3, 4, 5] and seen[0] == (3, 6) and seen[-1] == (6, 6)
    assert resumed == expected
    other = [(i, 20 + i) for i in range(2)]  # other seeds: other cells, computed
    CALLS.clear()
    run_cells(_counted_cell, other, 1, cache=cache)
    assert CALLS == [0, 1]
    finish_cells(tmp_path)
    assert not cache.exists()


@pytest.mark.slow
def test_an_interrupted_quick_robust_tradeoff_resumes_to_the_same_results(tmp_path, monkeypatch):
    import functools

    import pandas as pd

    from oraclepriv.experiments import robust_tradeoff

    def args(out):
        return ["experiment", "robust-tradeoff", "--quick", "--seed", "3", "--out", str(out), "--quiet"]

    assert CliRunner().invoke(app, args(tmp_path / "whole")).exit_code == 0
    real = robust_tradeoff._main_cell
    calls = []

    @functools.wraps(real)  # the same name, so the same cell keys
    def interrupted(*task):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*task)

    monkeypatch.setattr(robust_tradeoff, "_main_cell", interrupted)
    out = tmp_path / "resumed"
    assert CliRunner().invoke(app, args(out)).exit_code == EXIT_SIGINT
    assert (out / PARTIAL).exists() and len((out / "cells.jsonl").read_text().splitlines()) == 2
    monkeypatch.setattr(robust_tradeoff, "_main_cell", real)
    finished = CliRunner().invoke(app, args(out))
    assert finished.exit_code == 0, finished.output
    assert not (out / PARTIAL).exists() and not (out / "cells.jsonl").exists()
    whole, resumed = pd.read_csv(tmp_path / "whole" / "runs.csv"), pd.read_csv(out / "runs.csv")
    timing = [c for c in whole.columns if "second" in c]
    pd.testing.assert_frame_equal(whole.drop(columns=timing), resumed.drop(columns=timing))


@pytest.mark.parametrize("case", ["undecodable", "directory", "output-is-a-directory"])
def test_bench_mip_names_a_resume_or_output_file_it_cannot_use_before_any_cell(tmp_path, monkeypatch, case):
    """A cells.jsonl that is not UTF-8 text or is a directory, or an output file that is a directory, is one
    line naming it, exit 2, and no cell runs (these were tracebacks, some after the whole run)."""
    import oraclepriv.bench.mip as mip

    out = tmp_path / "run"
    out.mkdir()
    target = {"undecodable": "cells.jsonl", "directory": "cells.jsonl", "output-is-a-directory": "rows.json"}[case]
    if case == "undecodable":
        (out / target).write_bytes(b"\xff\xfe")
    else:
        (out / target).mkdir()
    monkeypatch.setattr(mip, "run_benchmark", lambda *a, **k: pytest.fail("the run started"))
    result = CliRunner().invoke(app, ["bench", "mip", "--quick", "--backends", "direction-bb", "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and target in lines[0], lines


@pytest.mark.parametrize("content", [b"garbage\n", b"\x1f\x8b\x08\x00"], ids=["not-gzip", "truncated-gzip"])
def test_a_resume_snapshot_that_cannot_be_read_is_named(tmp_path, content):
    from oraclepriv.experiments.oracle_cost import load_cells

    (tmp_path / "cells.jsonl.gz").write_bytes(content)
    with pytest.raises(ValueError, match=r"cells\.jsonl\.gz' cannot be read as the run's cells"):
        load_cells(tmp_path / "cells.jsonl")
