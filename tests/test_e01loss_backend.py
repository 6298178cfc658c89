"""The E01Loss peer (``solvers/peers/e01loss.py``): what its answers may claim, and how its process is run.

E01Loss is not an oracle of the project: its answers are never certified, the bound is its own
claim (stated as restricted to data in general position), and the objective is the protocol's
re-scoring of the halfspace it returns. Its child process must stop at the deadline, at its memory
cap and at a Ctrl-C, and leave nothing running.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from oraclepriv.solvers.base import UnsupportedProblemError

from oraclepriv import make_oracle
from oraclepriv.bench.mip_suite import halfspace_instance

pytest.importorskip("e01loss")
pytest.importorskip("cvxopt")

from brute_force import brute_halfspace  # noqa: E402
from oraclepriv.solvers.peers.e01loss import E01LossBackend, cell_enumeration_bytes  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _children() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def _small_instance(seed: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eight points in general position; unit weights for seed 0, signed unit weights otherwise."""
    rng = np.random.default_rng([seed, d])
    X = rng.normal(size=(8, d))
    y = rng.integers(0, 2, size=8)
    w = np.where(rng.random(8) < 0.5, -1.0, 1.0) if seed else np.ones(8)
    return X, y, w


@pytest.mark.parametrize("algorithm", ["cell", "icg"])
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_answers_are_rescored_never_certified_and_bounded_by_the_claim(algorithm, d, seed):
    """The objective is the weighted loss of the returned halfspace on the caller's (signed) data; the bound
    is E01Loss's claimed loss shifted by the sign reduction, and equals the brute-force optimum on these
    instances in general position (so the labels reach E01Loss the right way round); nothing is certified."""
    X, y, w = _small_instance(seed, d)
    res = make_oracle("halfspace", backend="e01loss", algorithm=algorithm, time_limit=60).solve(X, y, w)
    pred = res.hypothesis.predict(X)
    assert res.objective == pytest.approx(float(np.sum(w * (pred != y))))
    assert not res.certified
    assert "general position" in res.restriction
    offset = float(np.sum(np.minimum(w, 0.0)))  # the signed loss is the reduced loss plus this
    assert res.bound == pytest.approx(res.details["e01loss_claimed_loss"] + offset)
    assert res.bound == pytest.approx(brute_halfspace(X, y, w))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_the_incremental_generation_returns_a_halfspace_that_meets_its_claim(d, seed):
    """E01Loss's incremental generation fits its max-margin halfspace to the optimal labeling, and that
    halfspace, read as 1[w.x + b >= 0], attains the optimum (the adapter's orientation is right)."""
    X, y, w = _small_instance(seed, d)
    res = make_oracle("halfspace", backend="e01loss", algorithm="icg", time_limit=60).solve(X, y, w)
    assert res.meets_bound and res.status == "optimal" and not res.certified
    assert res.objective == pytest.approx(brute_halfspace(X, y, w))


def test_the_rescoring_catches_a_claim_the_returned_halfspace_misses():
    """E01Loss 1.0.1's cell enumeration claims the optimum 4 on this instance but returns the halfspace of
    another cell, with 5 errors: the answer says so (meets_bound False) instead of passing the claim on."""
    _name, X, y, w = halfspace_instance(50, 2, 0)
    res = make_oracle("halfspace", backend="e01loss", time_limit=60).solve(X, y, w)
    exact = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    assert exact.certified and exact.objective == 4.0
    assert res.bound == 4.0 and res.objective == 5.0
    assert not res.meets_bound and res.status == "feasible"


def test_weighted_problems_are_not_e01loss_problems():
    X = np.random.default_rng(0).normal(size=(10, 2))
    y = np.arange(10) % 2
    with pytest.raises(UnsupportedProblemError, match=r"weights .* must\s+all be equal; got values from 1.0 to 10.0"):
        make_oracle("halfspace", backend="e01loss").solve(X, y, np.arange(1.0, 11.0))


def test_a_cell_enumeration_beyond_the_memory_cap_is_not_started():
    _name, X, y, w = halfspace_instance(100, 5, 0)
    assert cell_enumeration_bytes(100, 5) > 2 * 2**30
    start = time.perf_counter()
    res = make_oracle("halfspace", backend="e01loss", time_limit=60).solve(X, y, w)
    assert time.perf_counter() - start < 5.0
    assert res.status == "error" and res.bound == -np.inf and not res.meets_bound
    assert "needs at least" in res.details["error"] and "memory_gb = 2" in res.details["error"]
    assert not _children()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the address-space cap reads /proc (Linux)")
def test_the_memory_cap_stops_a_cell_enumeration_that_outgrows_it():
    """n = 60, d = 3: the estimate (36 MB) is under the cap of 48 MB, the arrays E01Loss really builds
    (several of 60 x 34,220 entries) are not: the child's MemoryError becomes the answer's error."""
    _name, X, y, w = halfspace_instance(60, 3, 0)
    cap = 0.045
    assert cell_enumeration_bytes(60, 3) < cap * 2**30
    res = make_oracle("halfspace", backend="e01loss", memory_gb=cap, time_limit=60).solve(X, y, w)
    assert res.status == "error", res.details
    assert "memory cap" in res.details["error"]
    assert not _children()


def test_the_deadline_stops_the_child():
    """The incremental generation on n = 80, d = 3 runs for minutes; a 1.5 s limit ends the call within a
    few seconds with status time_limit, and the child process is gone."""
    _name, X, y, w = halfspace_instance(80, 3, 0)
    start = time.perf_counter()
    res = make_oracle("halfspace", backend="e01loss", algorithm="icg", time_limit=1.5).solve(X, y, w)
    elapsed = time.perf_counter() - start
    assert res.status == "time_limit" and res.details["e01loss_stopped"] == "at the deadline"
    assert res.bound == -np.inf and not res.meets_bound
    assert 1.4 < elapsed < 6.0
    assert not _children()


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"algorithm": "cells"}, "algorithm must be one of"),
        ({"memory_gb": 0}, "memory_gb must be a positive number"),
        ({"memory_gb": True}, "memory_gb must be a positive number"),
        ({"memory_gb": 1e30}, r"memory_gb must be a positive number of GiB, at most 1\.07374e\+09; got 1e\+30"),
        ({"threads": 1}, "unknown option"),
    ],
)
def test_bad_options_are_named(options, fragment):
    with pytest.raises(ValueError, match=fragment):
        E01LossBackend(**options)


CHILD = r"""
import sys
from oraclepriv import make_oracle
from oraclepriv.bench.mip_suite import halfspace_instance
_, X, y, w = halfspace_instance(80, 3, 0)
oracle = make_oracle("halfspace", backend="e01loss", algorithm="icg", time_limit=300)
print("ready", flush=True)
try:
    oracle.solve(X, y, w)
    print("returned", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@contextlib.contextmanager
def _solving_child():
    """A process solving with e01loss (:data:`CHILD`), once its E01Loss process runs: (process, [E01Loss
    process]). SIGINT at its default action in the child (a test run started in the background inherits it
    ignored); the process is killed on the way out if it still runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().split() == ["ready"]
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 30
        while not parent.children() and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = parent.children(recursive=True)
        assert workers, "the E01Loss process did not start"
        yield proc, workers
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_stops_the_call_and_its_child():
    """A real SIGINT to a process solving with e01loss: a KeyboardInterrupt out of ``solve`` within a few
    seconds, and the E01Loss process it started is gone."""
    with _solving_child() as (proc, workers):
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        assert out.split() == ["interrupted"], (out, err[-2000:])
        _, alive = psutil.wait_procs(workers, timeout=5)
        assert not alive, f"the E01Loss process outlived the interrupt: {[p.pid for p in alive]}"


def test_the_small_d_suite_and_e01loss_rows_in_the_benchmark():
    """``bench mip --suite small-d``: the noisy-halfspaces family at d = 2, 3. E01Loss's rows carry its claim as a
    restricted bound; a cell answer whose halfspace misses the claim is not solved, and the agreement check
    (which compares whole-class certificates) has nothing to report."""
    from oraclepriv.bench.mip import load_suite, run_benchmark
    from oraclepriv.bench.mip_agreement import agreement_problems
    from oraclepriv.bench.mip_summary import summarize

    full = load_suite("small-d")
    assert [(i.n, i.d) for i in full] == [(n, d) for n in (50, 100, 200, 400) for d in (2, 3)]
    instances = load_suite("small-d", quick=True)
    assert {(i.n, i.d) for i in instances} == {(20, 2), (20, 3), (40, 2), (40, 3)}
    rows = run_benchmark(instances, ["enumerate", "e01loss"], time_limit=30)
    problems, _warnings = agreement_problems(rows, instances)
    assert not problems
    for inst in instances:
        exact = next(r for r in rows if r["instance"] == inst.name and r["backend"] == "enumerate")
        peer = next(r for r in rows if r["instance"] == inst.name and r["backend"] == "e01loss")
        assert exact["certified"] and not peer["certified"] and peer["restriction"]
        assert peer["objective"] >= exact["objective"]
        assert peer["meets_bound"] == (peer["objective"] == peer["bound"])
    summary = {s["backend"]: s for s in summarize(rows)}
    assert summary["enumerate"]["solved"] == len(instances)
    assert summary["e01loss"]["solved"] == sum(r["meets_bound"] for r in rows if r["backend"] == "e01loss")


def test_a_child_whose_caller_is_killed_outright_stops_itself():
    """SIGKILL to the calling process runs none of its clean-up; the orphaned E01Loss process notices its
    parent is gone and exits within a second or two instead of computing on."""
    with _solving_child() as (proc, workers):
        proc.kill()
        proc.wait()
        _, alive = psutil.wait_procs(workers, timeout=5)
        assert not alive, f"the E01Loss process outlived its killed caller: {[p.pid for p in alive]}"


def test_a_missing_e01loss_is_named_with_what_to_install(monkeypatch):
    from oraclepriv.solvers.base import SolverNotInstalledError

    monkeypatch.setattr(E01LossBackend, "requires", ("e01loss_not_here", "cvxopt"))
    with pytest.raises(
        SolverNotInstalledError, match=r"needs the packages \['e01loss_not_here', 'cvxopt'\].*pip install"
    ):
        E01LossBackend()


def test_the_calling_process_does_not_import_e01loss():
    """E01Loss (GPL-3.0 by its metadata) runs only in the child: a call leaves it out of this process."""
    code = (
        "import sys\n"
        "from oraclepriv import make_oracle\n"
        "from oraclepriv.bench.mip_suite import halfspace_instance\n"
        "_, X, y, w = halfspace_instance(20, 2, 0)\n"
        "res = make_oracle('halfspace', backend='e01loss', time_limit=60).solve(X, y, w)\n"
        "print(res.details['e01loss_claimed_loss'], 'e01loss' in sys.modules, 'cvxopt' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[1:] == ["False", "False"]
