"""Interrupts are interrupts, and no solver outlives one (docs/deadlines.md, "Interrupts").

Three layers, all with real signals:

* the library: a child process solves a hard halfspace instance (n = 400, d = 10: hundreds of
  seconds to certify) through ``fallback_oracle`` with one backend after another; the test sends
  SIGINT about a second into each solve and expects, within a few seconds, a KeyboardInterrupt out
  of ``solve`` with no fallback run, nothing but the child's own lines on stdout (SCIP's own handler
  prints "pressed CTRL-C" there and returns an "error" answer, which a fallback would re-solve), and
  no worker process left behind;
* :func:`~oraclepriv.solvers.runtime.interrupts.call_interruptibly` on a stand-in solver whose timing the
  test controls (a second Ctrl-C while it stops, a Ctrl-C before its search has begun, one that lands
  while the helper thread starts, SIGTERM twice): the interrupt leaves the call only after the solver
  call has returned, so no helper thread is inside a solver when the interpreter exits;
* the command line: ``oraclepriv erm`` on a noisy halfspace instance with ``highs``, ``cpsat``,
  ``scip-bc`` and ``portfolio``, interrupted at varied times (some tries with a second Ctrl-C a few
  milliseconds after the first, while the solver stops): exit 130, never 134 with "terminate called
  without an active exception" (a solver thread still running when the interpreter exited).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent
#: seconds from the signal to the KeyboardInterrupt (measured: 0.05 to 0.8 s on a loaded 2-core machine)
PROMPT = 4.0

CHILD = r"""
import sys, time
import numpy as np
from oraclepriv.robust import fallback_oracle

rng = np.random.default_rng(0)  # separable + 10 % label noise: a long exact solve
X = rng.normal(size=(400, 10))
y = (X @ rng.normal(size=10) >= 0).astype(int)
flip = rng.choice(400, 40, replace=False)
y[flip] = 1 - y[flip]
for spec in sys.argv[1:]:
    backend, _, workers = spec.partition(":")
    options = {"workers": int(workers)} if workers else {}
    oracle = fallback_oracle("halfspace", backend=backend, time_limit=300, **options)
    print("ready", spec, flush=True)
    try:
        res = oracle.solve(X, y)
        print("returned", spec, res.status, flush=True)
    except KeyboardInterrupt:
        print("interrupted", spec, oracle.fallbacks, flush=True)
"""


def default_sigint() -> None:
    """In the child before exec: SIGINT back to its default action. A test run started in the background
    by a non-interactive shell (``cmd &``) inherits SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler, so the signal these tests send would be lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Child:
    """The child process, its stdout read line by line with a timeout."""

    def __init__(self, specs: list[str]):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, *specs],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            preexec_fn=default_sigint,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def line(self, timeout: float) -> str:
        return self.lines.get(timeout=timeout)

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def wait_for_workers(self) -> list[psutil.Process]:
        """Wait until two loky worker processes run the regions; all descendants then."""
        t0 = time.perf_counter()
        while len([p for p in self.descendants() if "loky" in " ".join(p.cmdline())]) < 2:
            assert time.perf_counter() - t0 < 60, "no worker processes started"
            time.sleep(0.2)
        time.sleep(0.5)
        return self.descendants()

    def finish(self) -> str:
        try:
            _, err = self.proc.communicate(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return err


def _interrupt_each(specs: list[str], delay: float = 1.0) -> None:
    child = Child(specs)
    workers: list[psutil.Process] = []
    for spec in specs:
        assert child.line(timeout=60).split() == ["ready", spec]
        time.sleep(delay)
        if ":" in spec:  # wait until the regions run in worker processes
            workers = child.wait_for_workers()
        sent = time.perf_counter()
        child.proc.send_signal(signal.SIGINT)
        line = child.line(timeout=30)
        latency = time.perf_counter() - sent
        assert line.split() == ["interrupted", spec, "0"], f"{spec}: {line!r} (0 = no fallback ran)"
        assert latency <= PROMPT, f"{spec}: KeyboardInterrupt {latency:.2f} s after SIGINT (load {os.getloadavg()})"
    err = child.finish()
    assert child.proc.returncode == 0, err[-2000:]
    assert child.line(timeout=5) == ""  # stdout held the child's own lines and nothing else
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"worker processes outlived the interrupt: {[p.pid for p in alive]}"


@pytest.mark.slow
def test_ctrl_c_stops_scip_bc_cpsat_and_highs_promptly_without_a_fallback():
    """PySCIPOpt (SCIP's own handler, Python callbacks), CP-SAT (its own handler, GIL released) and
    HiGHS (GIL released): each solve ends with a KeyboardInterrupt within a few seconds."""
    _interrupt_each(["scip-bc", "cpsat", "highs"])


@pytest.mark.slow
def test_ctrl_c_stops_the_other_backends_and_the_parallel_search():
    """scip (SCIP inside OR-Tools), pyomo (HiGHS through Pyomo), naive-highs, and scip-bc with two
    worker processes (SIGINT to the parent alone: the workers are killed)."""
    _interrupt_each(["scip", "pyomo", "naive-highs", "scip-bc:2"])


@pytest.mark.slow
def test_sigterm_to_the_parent_alone_leaves_no_worker_running():
    """scip-bc:workers=2: SIGTERM to the parent (not its process group) terminates it as SIGTERM
    does (return code -15) after joblib's pool killed the workers (SIGTERM's default action alone would
    leave the region solves running)."""
    child = Child(["scip-bc:2"])
    assert child.line(timeout=60).split() == ["ready", "scip-bc:2"]
    workers = child.wait_for_workers()
    child.proc.send_signal(signal.SIGTERM)
    child.finish()
    assert child.proc.returncode == -signal.SIGTERM
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"worker processes outlived their parent: {[(p.pid, p.cmdline()[:3]) for p in alive]}"


def test_keyboard_interrupt_is_never_a_solver_failure():
    """The fallback oracle catches nothing: a KeyboardInterrupt (or SystemExit) from the primary
    propagates, and the fallback never runs."""
    import numpy as np
    from oraclepriv.solvers.base import Backend, BackendAnswer

    from oraclepriv.hypotheses import Stump
    from oraclepriv.oracle import make_oracle
    from oraclepriv.robust import FallbackOracle

    for exc in (KeyboardInterrupt, SystemExit):

        class Interrupted(Backend):
            name = "interrupted"
            classes = frozenset({"stump"})

            def solve(self, problem):
                raise exc()

        class Counting(Backend):
            name = "counting"
            classes = frozenset({"stump"})
            calls = 0

            def solve(self, problem):
                Counting.calls += 1
                return BackendAnswer(Stump(0, 0.0, 1), bound=0.0)

        oracle = FallbackOracle(make_oracle("stump", backend=Interrupted), make_oracle("stump", backend=Counting))
        with pytest.raises(exc):
            oracle.solve(np.arange(4.0)[:, None], [0, 0, 1, 1])
        assert oracle.fallbacks == 0 and Counting.calls == 0


# ------------------------------------------------------------------ call_interruptibly on a stand-in solver

#: the scenarios run in a child process (signals sent to the test process itself could interrupt pytest);
#: the child loads solvers/runtime/interrupts.py by path (stdlib only: no package import, a fast start)
UNIT_CHILD = r"""
import importlib.util, json, logging, os, signal, sys, threading, time

spec = importlib.util.spec_from_file_location("interrupts_under_test", sys.argv[1])
interrupts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(interrupts)
scenario = sys.argv[2]
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")


class Solver:
    # A blocking call that releases the GIL, as a solver does: it sets up for ``begin`` seconds (a
    # cancel then is lost, like CP-SAT's StopSearch before Solve has set up its search), searches until
    # asked to stop or for ``limit`` seconds, and takes ``latency`` seconds to stop.
    def __init__(self, begin=0.0, limit=8.0, latency=0.0):
        self.begin, self.limit, self.latency = begin, limit, latency
        self.began, self.searching, self.stop, self.returned = (threading.Event() for _ in range(4))
        self.cancels = 0

    def solve(self):
        self.began.set()
        time.sleep(self.begin)
        self.searching.set()
        stopped = self.stop.wait(self.limit)
        if stopped:
            time.sleep(self.latency)
        self.returned.set()
        return "stopped" if stopped else "limit"

    def cancel(self):
        self.cancels += 1
        if self.searching.is_set():
            self.stop.set()


def signals_at(signum, *offsets):
    t0 = time.perf_counter()

    def send():
        for offset in offsets:
            time.sleep(max(0.0, t0 + offset - time.perf_counter()))
            os.kill(os.getpid(), signum)

    threading.Thread(target=send, daemon=True).start()


class Stop(BaseException):
    pass


def run(solver, call=None):
    t0 = time.perf_counter()
    out = {}
    try:
        out["value"] = interrupts.call_interruptibly(call or solver.solve, solver.cancel)
    except BaseException as exc:
        out["raised"] = type(exc).__name__
        out["raised_args"] = list(exc.args)
        out["solver_returned_first"] = solver.returned.is_set()
    out["seconds"] = time.perf_counter() - t0
    out["began"] = solver.began.is_set()
    out["cancels"] = solver.cancels
    out["solver_running"] = solver.began.is_set() and not solver.returned.is_set()
    out["helpers_alive"] = sum(t.name == "oraclepriv-solver" and t.is_alive() for t in threading.enumerate())
    out["sigint_handler_restored"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    return out


signal.signal(signal.SIGINT, signal.default_int_handler)
if scenario == "second-ctrl-c":  # Ctrl-C, then two more while the solver takes 0.6 s to stop
    solver = Solver(latency=0.6)
    signals_at(signal.SIGINT, 0.2, 0.35, 0.5)
    out = run(solver)
elif scenario == "early-ctrl-c":  # Ctrl-C while the solver sets up: its first cancel is lost
    solver = Solver(begin=0.4)
    signals_at(signal.SIGINT, 0.1)
    out = run(solver)
elif scenario in ("ctrl-c-in-thread-start", "ctrl-c-before-thread-start"):
    # the Ctrl-C lands inside Thread.start: after the helper was started, or before
    start = threading.Thread.start

    def interrupted_start(self):
        if scenario == "ctrl-c-in-thread-start":
            start(self)
        raise KeyboardInterrupt

    threading.Thread.start = interrupted_start
    solver = Solver(limit=3.0)
    out = run(solver)
    threading.Thread.start = start
    time.sleep(0.3)  # a helper that had not begun the call must never begin it
    out["began_later"] = solver.began.is_set() and not out["began"]
    out["solver_running_later"] = solver.began.is_set() and not solver.returned.is_set()
elif scenario == "sigterm-twice":  # a SIGTERM handler that raises, twice while the solver stops
    count = [0]

    def on_sigterm(signum, frame):
        count[0] += 1
        raise Stop(count[0])

    signal.signal(signal.SIGTERM, on_sigterm)
    solver = Solver(latency=0.6)
    signals_at(signal.SIGTERM, 0.2, 0.4)
    out = run(solver)
elif scenario == "application-sigint-handler":  # an application's own SIGINT handler is left alone
    calls = []
    signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    solver = Solver(limit=0.5)
    signals_at(signal.SIGINT, 0.1)
    out = run(solver)
    out["application_handler_calls"] = len(calls)
    out["handler_kept"] = signal.getsignal(signal.SIGINT) is not signal.default_int_handler
elif scenario == "cancel-raises":  # a broken cancel: the solver runs to its limit, then the Ctrl-C
    solver = Solver(limit=0.8)

    def broken():
        solver.cancels += 1
        raise RuntimeError("cancel failed")

    signals_at(signal.SIGINT, 0.1)
    t0 = time.perf_counter()
    try:
        interrupts.call_interruptibly(solver.solve, broken)
        out = {"raised": None}
    except BaseException as exc:
        out = {"raised": type(exc).__name__, "solver_returned_first": solver.returned.is_set()}
    out["seconds"] = time.perf_counter() - t0
elif scenario == "no-interrupt":  # the plain path: the value, the handler back, no helper left
    solver = Solver(limit=0.2)
    out = run(solver)
elif scenario == "worker-thread":  # outside the main thread the call runs where it is
    where = []
    solver = Solver(limit=0.1)
    worker = threading.Thread(target=lambda: where.append(interrupts.call_interruptibly(
        lambda: threading.current_thread().name, solver.cancel)), name="worker")
    worker.start()
    worker.join()
    out = {"ran_in": where[0]}
print(json.dumps(out), flush=True)
"""


def _unit(scenario: str) -> dict:
    """Run one stand-in scenario in a child process; its JSON line, plus what it wrote on stderr."""
    import json

    from oraclepriv.solvers.runtime import interrupts

    proc = subprocess.run(
        [sys.executable, "-c", UNIT_CHILD, interrupts.__file__, scenario],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=default_sigint,
    )
    assert proc.returncode == 0, f"{scenario}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["stderr"] = proc.stderr
    return out


def test_a_second_ctrl_c_while_the_solver_stops_does_not_leave_it_running():
    """Three Ctrl-Cs while the solver takes 0.6 s to stop: the KeyboardInterrupt leaves only after the
    solver call has returned, no helper thread is left, and SIGINT's handler is Python's again."""
    out = _unit("second-ctrl-c")
    assert out["raised"] == "KeyboardInterrupt", out
    assert out["solver_returned_first"] and not out["solver_running"], out
    assert out["helpers_alive"] == 0 and out["sigint_handler_restored"], out
    assert 0.7 <= out["seconds"] <= 5.0, out


def test_a_ctrl_c_before_the_search_has_begun_is_not_lost():
    """The stand-in ignores a cancel while it sets up (0.4 s), like CP-SAT's StopSearch before Solve
    has set up its search: the request is repeated until it takes, so the call ends long before the
    solver's own 8 s limit."""
    out = _unit("early-ctrl-c")
    assert out["raised"] == "KeyboardInterrupt" and out["solver_returned_first"], out
    assert out["cancels"] >= 2 and out["seconds"] <= 3.0, out


@pytest.mark.parametrize("scenario", ["ctrl-c-in-thread-start", "ctrl-c-before-thread-start"])
def test_a_ctrl_c_while_the_helper_thread_starts(scenario):
    """A KeyboardInterrupt out of ``Thread.start`` (after the thread was started, or before): either
    the helper began the call and was stopped and waited for, or it never begins it."""
    out = _unit(scenario)
    assert out["raised"] == "KeyboardInterrupt", out
    assert not out["solver_running"] and not out["solver_running_later"] and not out["began_later"], out
    assert out["helpers_alive"] == 0 and out["seconds"] <= 2.0, out


def test_sigterm_twice_while_the_solver_stops_raises_the_first_after_it_returned():
    """A SIGTERM handler that raises (the command line's): the first exception propagates, after the
    solver call has returned; the second, which arrived while it stopped, is absorbed."""
    out = _unit("sigterm-twice")
    assert out["raised"] == "Stop" and out["raised_args"] == [1], out
    assert out["solver_returned_first"] and out["helpers_alive"] == 0, out


def test_an_applications_own_sigint_handler_is_left_alone():
    """Only Python's default SIGINT handler is deferred: an application's own handler is called as
    usual, and since it raises nothing, the solve goes on to its end."""
    out = _unit("application-sigint-handler")
    assert out["value"] == "limit" and out["application_handler_calls"] == 1, out
    assert out["cancels"] == 0 and out["handler_kept"], out


def test_a_failing_cancel_still_waits_for_the_solver():
    """A cancel that raises is logged once, and the interrupt still waits for the solver call (here
    until its own 0.8 s limit) rather than leaving it running."""
    out = _unit("cancel-raises")
    assert out["raised"] == "KeyboardInterrupt" and out["solver_returned_first"], out
    assert out["seconds"] >= 0.7, out
    assert out["stderr"].count("asking the solver to stop failed") == 1, out["stderr"]


def test_without_an_interrupt_the_call_returns_its_value_and_leaves_nothing_behind():
    out = _unit("no-interrupt")
    assert out["value"] == "limit" and "raised" not in out, out
    assert out["helpers_alive"] == 0 and out["sigint_handler_restored"], out
    assert _unit("worker-thread")["ran_in"] == "worker"


# ------------------------------------------------------------------------------- the command line

#: exit codes of an interrupted command (a shell reports a process ended by SIGINT as 130 too)
EXIT_SIGINT = 130
#: the command as the installed ``oraclepriv`` script runs it (``python -m oraclepriv`` differs: when
#: a Ctrl-C's KeyboardInterrupt passed through an ``exec`` of a string, e.g. a dataclass being created
#: by a lazy import, CPython 3.11 ends an ``-m`` run by SIGINT itself after the command exited 130)
CLI = [sys.executable, "-c", "import sys; from oraclepriv.cli import app; sys.exit(app(prog_name='oraclepriv'))"]
#: the stderr line (``--verbose``) that says the oracle call has begun; delays count from it
STARTED = "oraclepriv.oracle DEBUG: oracle for"
CLI_BACKENDS = ["highs", "cpsat", "scip-bc", "portfolio"]


@pytest.fixture(scope="module")
def noisy_instance(tmp_path_factory) -> Path:
    """n = 200, d = 8, 10 % label noise: every one of the four backends is still solving (mostly inside
    the solver library) for well beyond 3 s; portfolio runs scip-bc first at d = 8."""
    import numpy as np

    rng = np.random.default_rng(0)
    n, d = 200, 8
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) >= 0).astype(int)
    flip = rng.choice(n, n // 10, replace=False)
    y[flip] = 1 - y[flip]
    path = tmp_path_factory.mktemp("interrupts") / "noisy-8d-n200.csv"
    rows = [",".join([*(f"x{j}" for j in range(d)), "y"])]
    rows += [",".join([*(repr(float(v)) for v in xi), str(int(yi))]) for xi, yi in zip(X, y)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _interrupted_erm(data: Path, backend: str, delay: float, again: float | None) -> dict:
    """``oraclepriv erm`` interrupted ``delay`` seconds after the oracle call began; a second SIGINT
    ``again`` seconds after the first if given. Exit code, seconds from the first signal to the exit,
    and stdout/stderr (without the DEBUG log lines)."""
    proc = subprocess.Popen(
        [*CLI, "--verbose", "erm", str(data), "--hypothesis-class", "halfspace", "--backend", backend],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=default_sigint,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    err: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while True:
            line = lines.get(timeout=120)
            assert line is not None, f"{backend}: the command ended before the oracle call: {''.join(err)[-2000:]}"
            if STARTED in line:
                break
        time.sleep(delay)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        if again is not None:
            time.sleep(again)
            proc.send_signal(signal.SIGINT)
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.wait(timeout=60)
        seconds = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    stderr = "".join(line for line in err if " DEBUG: " not in line)
    return {"rc": proc.returncode, "seconds": seconds, "stdout": out, "stderr": stderr}


#: what Python prints for a KeyboardInterrupt raised after the command's own work has ended: in the
#: interpreter's shutdown ("Exception ignored in" threading._shutdown), or escaping the command line's
#: entry point while it unwinds (a traceback through typer and cli/common.py only). Only a second Ctrl-C
#: can land there, after the solver wait is over; the command line does not silence it (its own
#: business, not the solvers': such a try still must not abort, print on stdout or exit otherwise)
_ENTRY_FRAME = r'  File "(?:<string>|[^"]*/(?:typer|oraclepriv/cli)/[^"]*)", line \d+, in [^\n]*\n'
_SOURCE_LINE = r"    [^\n]*\n"  # a frame's source line, or the ^~~ markers under it
LATE_INTERRUPT = re.compile(
    r"Exception ignored in: <module 'threading' [^\n]*\nTraceback \(most recent call last\):\n"
    rf'  File "[^"]*/threading\.py", line \d+, in _shutdown\n(?:{_SOURCE_LINE})*KeyboardInterrupt: ?\n'
    rf"|Traceback \(most recent call last\):\n(?:{_ENTRY_FRAME}(?:{_SOURCE_LINE})*)+KeyboardInterrupt\n"
)


def _interrupt_erm_repeatedly(data: Path, backend: str, tries: list[tuple[float, float | None]], at_once: int) -> None:
    """Each try (delay, gap to a second Ctrl-C or None) in its own process, ``at_once`` at a time.
    A single Ctrl-C must end the command with exit code 130 exactly, and nothing on stdout or stderr.
    After a second one the process may also end by SIGINT itself (Python restores SIGINT's default
    action when it shuts down, which a shell reports as 130 too), and Python's report of that second
    interrupt (:data:`LATE_INTERRUPT`) may be on stderr; nothing else. Never an abort."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=at_once) as pool:
        results = list(pool.map(lambda t: _interrupted_erm(data, backend, *t), tries))
    failures = []
    for (delay, again), res in zip(tries, results):
        allowed = {EXIT_SIGINT} if again is None else {EXIT_SIGINT, -signal.SIGINT}
        stderr = res["stderr"] if again is None else LATE_INTERRUPT.sub("", res["stderr"])
        what = f"{backend}: SIGINT {delay:.2f} s into the call" + (
            "" if again is None else f", again {again:.3f} s later"
        )
        if res["rc"] not in allowed or res["stdout"] or stderr.strip() or res["seconds"] > 30:
            failures.append(f"{what}: exit {res['rc']} after {res['seconds']:.2f} s, stderr {res['stderr'][-600:]!r}")
    assert not failures, "\n".join(failures)


def _tries(backend: str, count: int, earliest: float, latest: float) -> list[tuple[float, float | None]]:
    """``count`` tries at delays spread over ``earliest`` to ``latest`` seconds into the oracle call,
    every second one with a second Ctrl-C 5-30 ms after the first (while the solver stops)."""
    import random

    rng = random.Random(f"interrupts-{backend}-{count}")
    return [(rng.uniform(earliest, latest), None if i % 2 == 0 else rng.uniform(0.005, 0.03)) for i in range(count)]


@pytest.mark.parametrize(
    "backend",
    [b if b in ("highs", "cpsat") else pytest.param(b, marks=pytest.mark.slow) for b in CLI_BACKENDS],
)
def test_ctrl_c_ends_erm_with_exit_130_and_no_abort(noisy_instance, backend):
    """An interrupted ``oraclepriv erm`` run per backend, 1-2 s into the call (the solve), with a second Ctrl-C
    while the solver stops: a helper thread left inside HiGHS or CP-SAT when the interpreter exits aborts the
    process ("terminate called without an active exception", exit 134). The default run tries those two backends
    (scip-bc and portfolio in the slow run, for room under the test budget); the slow run also makes 20 tries per
    backend, half of them with one Ctrl-C."""
    _, double = _tries(backend, 2, 1.0, 2.0)  # the second try of the seeded pair: the one with two Ctrl-Cs
    _interrupt_erm_repeatedly(noisy_instance, backend, [double], at_once=1)


@pytest.mark.slow
@pytest.mark.parametrize("backend", CLI_BACKENDS)
def test_ctrl_c_ends_erm_with_exit_130_in_20_of_20_tries(noisy_instance, backend):
    """The measurement behind docs/deadlines.md: 20 interrupted runs per backend at 0.3-3 s into the
    call (the model build, the backend's lazy imports and the solve), half of them with a second
    Ctrl-C while the solver stops."""
    _interrupt_erm_repeatedly(noisy_instance, backend, _tries(backend, 20, 0.3, 3.0), at_once=2)
