"""docs/cluster.md's "A cluster on localhost", run as written: ``dask scheduler`` and ``dask worker`` as
subprocesses, then an audit and a MIP benchmark sent to them with ``--scheduler``, each compared with its
``--jobs 1`` result; everything is torn down and no process of the cluster is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from oraclepriv.cli import app

distributed = pytest.importorskip("distributed")

DASK = [sys.executable, "-m", "distributed.cli.dask_scheduler"]  # what the `dask scheduler` script runs
DASK_WORKER = [sys.executable, "-m", "distributed.cli.dask_worker"]


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as fh:  # the child keeps its own descriptor
        return subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def _group_members(pgid: int) -> list[int]:
    """Live processes of a process group (zombies excluded), read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process group (scheduler, or nanny and its worker processes), SIGKILL after 15 s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while _group_members(process.pid) and time.monotonic() < deadline:
        process.poll()
        time.sleep(0.1)
    if _group_members(process.pid):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler on a free port and one `dask worker --nworkers 2 --nthreads 1`; yields the address."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the teardown check reads /proc")
    folder = tmp_path_factory.mktemp("cluster")
    file = folder / "scheduler.json"
    scheduler = _start([*DASK, "--port", "0", "--no-dashboard", "--scheduler-file", str(file)], folder / "s.log")
    processes = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            assert scheduler.poll() is None, (folder / "s.log").read_text()
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        worker = _start(
            [*DASK_WORKER, address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"], folder / "w.log"
        )
        processes.append(worker)
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process in reversed(processes):
            _stop(process)
    leftovers = {p.pid: _group_members(p.pid) for p in processes}
    assert leftovers == {p.pid: [] for p in processes}, leftovers


def _cli(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "oraclepriv", *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
def test_an_audit_on_the_cluster_gives_the_local_result(cluster, tmp_path):
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    args = ["audit", "subsample", "--runs", "40", "--seed", "2"]
    reference = CliRunner().invoke(app, [*args, "--jobs", "1", "--out", str(local)])
    result = _cli([*args, "--scheduler", cluster, "--out", str(remote)])
    assert result.returncode == reference.exit_code, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == reference.stdout  # the printed rows too

    def rows(path):
        return [{k: v for k, v in row.items() if k != "seconds"} for row in json.loads(path.read_text())]

    assert rows(remote) == rows(local) and len(rows(local)) == 7


@pytest.mark.slow
def test_a_benchmark_on_the_cluster_gives_the_local_result(cluster, tmp_path):
    args = ["bench", "mip", "--quick", "--backends", "highs,scip-bc"]
    reference = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    result = _cli([*args, "--scheduler", cluster, "--out", str(tmp_path / "remote")])
    assert reference.exit_code == 0 and result.returncode == 0, result.stderr
    local = json.loads((tmp_path / "local" / "rows.json").read_text())
    remote = json.loads((tmp_path / "remote" / "rows.json").read_text())
    keys = ["instance", "backend", "status", "certified", "objective", "bound"]
    assert [{k: r[k] for k in keys} for r in remote] == [{k: r[k] for k in keys} for r in local]
    workers = {r["worker"] for r in remote}
    assert len(workers) == 2 and all(w and w.startswith("tcp://") for w in workers)
    assert f"dask cluster at {cluster} (2 worker threads)" in result.stdout
    assert "--parallel-backend dask" in (tmp_path / "remote" / "summary.md").read_text()
