"""Ctrl-C and SIGTERM while a solver runs: interrupts stay interrupts.

Solver libraries handle signals in ways that lose them (``docs/deadlines.md``, "Interrupts"):

* SCIP (PySCIPOpt, and SCIP inside OR-Tools) installs its own SIGINT handler during a solve
  (``misc/catchctrlc``), prints "pressed CTRL-C" on stdout and returns the status "userinterrupt",
  which looks like a solver failure; the backends set ``misc/catchctrlc = FALSE``;
* CP-SAT catches SIGINT and stops as if a time limit was reached (``catch_sigint_signal``); the
  backend sets it to False;
* HiGHS, MPSolver and CP-SAT release the GIL while they solve, so Python's own SIGINT handler
  cannot raise :class:`KeyboardInterrupt` before the call returns (at the time limit, or never);
* PySCIPOpt's callbacks swallow exceptions raised inside them, a KeyboardInterrupt included.

:func:`call_interruptibly` runs such a blocking call in a helper thread while the main thread
waits: a Ctrl-C in the main thread asks the solver to stop through its own cancellation API
(``cancel``), waits for it, and re-raises the KeyboardInterrupt. :func:`terminate_cleanly` makes
SIGTERM, whose default action kills this process at once, first unwind the block (so a joblib
pool kills its worker processes) and then terminate the process as it would have.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = ["call_interruptibly", "terminate_cleanly", "in_main_thread"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: seconds between checks of the helper thread (a join with a timeout returns at once when it ends)
POLL_SECONDS = 0.05


def in_main_thread() -> bool:
    """True in the main thread of the main interpreter, the only one Python delivers signals to."""
    return threading.current_thread() is threading.main_thread()


def call_interruptibly(call: Callable[[], T], cancel: Callable[[], Any]) -> T:
    """``call()``, with Ctrl-C (and any exception a signal handler raises) stopping it promptly.

    In the main thread, ``call`` (a solver's blocking call that releases the GIL) runs in a daemon
    helper thread; if the waiting main thread is interrupted, ``cancel()`` asks the solver to stop
    (its own API: HiGHS's interrupt callback, ``InterruptSolve``, ``StopSearch``,
    ``interruptSolve``), the helper is waited for and the exception is re-raised. A second Ctrl-C
    while waiting propagates at once (the helper is a daemon). Elsewhere (a worker thread, which
    never receives signals) it is just ``call()``. Exceptions of ``call`` are re-raised as they are.
    """
    if not in_main_thread():
        return call()
    box: dict[str, Any] = {}
    # not Thread.join: a join interrupted by KeyboardInterrupt marks a still running thread as stopped
    # (CPython's _wait_for_tstate_lock), and the next join would return at once
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, re-raised there
            box["error"] = exc
        finally:
            done.set()

    helper = threading.Thread(target=target, name="oraclepriv-solver", daemon=True)
    helper.start()
    try:
        while not done.wait(POLL_SECONDS):
            pass
    except BaseException:
        log.debug("interrupt while a solver runs: asking it to stop")
        try:
            cancel()
        finally:
            while not done.wait(POLL_SECONDS):  # the solver stops within its own polling interval
                pass
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Terminated(BaseException):
    """SIGTERM arrived inside :func:`terminate_cleanly` (unwinds the block like a KeyboardInterrupt)."""


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """Inside the block, SIGTERM unwinds it (``finally`` clauses run, a joblib pool aborts and kills
    its workers) before the process terminates as SIGTERM would have terminated it.

    Only where SIGTERM still has its default action and in the main thread; a handler the
    application installed is left alone (it decides what SIGTERM does)."""
    if not in_main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise _Terminated()

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        log.debug("SIGTERM: workers stopped, terminating")
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        raise  # not reached: the default action terminates the process
    finally:
        if signal.getsignal(signal.SIGTERM) is handler:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
