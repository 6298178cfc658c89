"""Ctrl-C and SIGTERM while a solver runs: interrupts stay interrupts, and no solver outlives them.

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
waits: a Ctrl-C asks the solver to stop through its own cancellation API (``cancel``), the main
thread waits until the call has returned, and only then is the KeyboardInterrupt raised.

Why the wait is unconditional: a helper thread still inside a solver's C++ code when the
interpreter exits aborts the process. The thread is a daemon, so Python exits without it; when the
solver returns, the thread tries to take the GIL of a finalizing interpreter, CPython ends it with
``pthread_exit``, and the forced unwinding through the solver binding's C++ frame (which may not
throw) calls ``std::terminate``: "terminate called without an active exception", exit code 134
instead of 130. A second Ctrl-C while the solver stops (a user pressing it twice) must therefore not
cut the wait short. So, while the helper runs, SIGINT (when it has Python's default handler) is
*recorded* rather than raised: no KeyboardInterrupt can leave the wait, however many arrive, and it
is raised once the call has returned. Other signal handlers that raise (the command line's SIGTERM
handler, :func:`terminate_cleanly`) do raise in the wait; the helper is then stopped and waited for
in the same way, further exceptions meanwhile being absorbed.

The request to stop is repeated every :data:`POLL_SECONDS` until the call returns, because a
cancellation can be lost: CP-SAT's ``StopSearch`` does nothing before ``Solve`` has set up its
search (the solve then runs to its own limit). An interrupt that lands while the helper thread is
being started is handled too: either the helper has begun the call (it is stopped and waited for)
or it never will.

:func:`terminate_cleanly` makes SIGTERM, whose default action kills this process at once, first
unwind the block (so a joblib pool kills its worker processes) and then terminate the process as it
would have.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["call_interruptibly", "terminate_cleanly", "in_main_thread", "POLL_SECONDS", "STOP_WARN_SECONDS"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: seconds between checks of the helper thread, and between repeated requests to stop once interrupted
POLL_SECONDS = 0.05
#: seconds after an interrupt without the solver having stopped before a warning says that it is awaited
STOP_WARN_SECONDS = 10.0


def in_main_thread() -> bool:
    """True in the main thread of the main interpreter, the only one Python delivers signals to."""
    return threading.current_thread() is threading.main_thread()


class _SolverThread(Generic[T]):
    """One blocking call in a daemon helper thread, and what the waiting thread needs to stop it.

    ``done`` is set once ``call`` has returned or raised (the helper then runs only Python code,
    never the solver again): waiting for it is the join that matters. ``_claim`` decides, without
    waiting, whether the helper begins the call: whichever of the helper and an interrupted waiter
    takes it first, so an interrupt that lands while the thread starts never leaves a solve running
    unobserved."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._call = call
        self._claim = threading.Lock()
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="oraclepriv-solver", daemon=True)

    def _run(self) -> None:
        try:
            if self._claim.acquire(blocking=False):  # else the waiter was interrupted first: never begin
                self.value = self._call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, re-raised there
            self.error = exc
        finally:
            self.done.set()

    def stop(self, cancel: Callable[[], Any]) -> int:
        """After an interrupt: ask the solver to stop, again every :data:`POLL_SECONDS`, until the call
        has returned. Further interrupts (KeyboardInterrupt, or whatever a signal handler raises) are
        absorbed; returns how many arrived. An exception of ``cancel`` itself is logged once, and the
        wait goes on (the solver then stops at its own limit)."""
        if self._claim.acquire(blocking=False):  # the helper has not begun the call, and now never will
            return 0
        absorbed = 0
        started = time.monotonic()
        warned = cancel_failed = False
        while not self.done.is_set():
            try:
                try:
                    cancel()
                except Exception:  # noqa: BLE001 - a broken cancel must not leave the solver running
                    if not cancel_failed:
                        log.warning("asking the solver to stop failed; waiting for it to return", exc_info=True)
                        cancel_failed = True
                self.done.wait(POLL_SECONDS)
                if not warned and time.monotonic() - started >= STOP_WARN_SECONDS:
                    log.warning(
                        "interrupted: the solver has not stopped after %.0f s; waiting for it to return "
                        "(a solver left running would abort the process at exit)",
                        STOP_WARN_SECONDS,
                    )
                    warned = True
            except BaseException as exc:  # noqa: BLE001 - another Ctrl-C while the solver stops: keep stopping it
                absorbed += 1
                log.debug("%s while the solver stops: still waiting for it", type(exc).__name__)
        return absorbed


class _DeferredSigint:
    """While the block runs, SIGINT is counted instead of raised, if it has Python's default handler.

    The handler only counts: it runs in the main thread between two bytecodes, possibly while that
    thread holds a lock of the solver's wrapper (CP-SAT's ``StopSearch`` takes one), so asking the
    solver to stop is left to the waiting loop. Any other SIGINT handler (SIG_IGN, SIG_DFL, an
    application's own) is left in place and behaves as it would."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: Any = None

    def _note(self, signum: int, frame: Any) -> None:
        self.count += 1

    def __enter__(self) -> _DeferredSigint:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._note)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._previous is None:
            return
        raised: BaseException | None = None
        while True:  # signal.signal first runs the handlers of pending signals, and one may raise
            try:
                signal.signal(signal.SIGINT, self._previous)
                break
            except BaseException as other:  # noqa: BLE001 - the handler must be restored whatever arrives
                raised = raised or other
        if raised is not None and exc_type is None:
            raise raised


def call_interruptibly(call: Callable[[], T], cancel: Callable[[], Any]) -> T:
    """``call()``, with Ctrl-C (and any exception a signal handler raises) stopping it promptly.

    In the main thread, ``call`` (a solver's blocking call that releases the GIL) runs in a daemon
    helper thread. When the waiting main thread is interrupted (a Ctrl-C, recorded by
    :class:`_DeferredSigint`, or an exception raised by another signal handler, e.g. SIGTERM's),
    ``cancel()`` asks the solver to stop (its own API: HiGHS's interrupt callback,
    ``InterruptSolve``, ``StopSearch``, ``interruptSolve``; it must be safe to call repeatedly and
    from another thread), again every :data:`POLL_SECONDS`, until ``call`` has returned; only then
    does the interrupt propagate (KeyboardInterrupt for a Ctrl-C, else the exception raised first).
    Interrupts that arrive while the solver stops are absorbed, so no solver thread outlives the
    call (module docstring: one left running aborts the process at exit). Elsewhere (a worker
    thread, which never receives signals) it is just ``call()``. Exceptions of ``call`` are
    re-raised as they are.
    """
    if not in_main_thread():
        return call()
    run = _SolverThread(call)
    with _DeferredSigint() as sigint:
        try:
            run.thread.start()
            # not Thread.join: a join interrupted by an exception marks a still running thread as
            # stopped (CPython's _wait_for_tstate_lock), and the next join would return at once
            while not run.done.wait(POLL_SECONDS) and not sigint.count:
                pass
        except BaseException as exc:  # raised by a signal handler: SIGTERM's, or an application's SIGINT handler
            absorbed = run.stop(cancel)
            log.debug("%s while a solver ran: it stopped (%d interrupts meanwhile)", type(exc).__name__, absorbed)
            raise
        if sigint.count:
            absorbed = run.stop(cancel)
            log.debug("Ctrl-C while a solver ran: it stopped (%d interrupts meanwhile)", absorbed + sigint.count - 1)
    if sigint.count:  # the call has returned (or never began): now the Ctrl-C is raised
        raise KeyboardInterrupt
    if run.error is not None:
        raise run.error
    return run.value  # type: ignore[return-value]  # set by the call, which returned


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
