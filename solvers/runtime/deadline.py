"""One wall-clock deadline per oracle call, honoured by every phase of a backend.

:meth:`oraclepriv.oracle.Oracle.solve` creates a :class:`Deadline` when the call starts (before
validation) and hands it to the backend with the problem (:attr:`ReducedProblem.deadline
<oraclepriv.solvers.base.ReducedProblem>`). Every phase of a backend asks it how much time is
left: scaling and grouping, start heuristics, model building, the solve, core verification,
polishing, the regions of a parallel search. The rules (``docs/deadlines.md``):

* a loop that can stop with a usable partial result checks :meth:`Deadline.expired` between
  steps (the repair loop of the primal heuristic, separation rounds, the enumeration's blocks);
* a phase with no usable partial result (building a solver's model) calls :meth:`Deadline.check`
  at intervals, which raises :class:`DeadlineExceeded`; the backend catches it and answers with
  what it has proved so far;
* a solver call gets :meth:`Deadline.solver_seconds` as its own time limit;
* a C call that cannot be interrupted is bounded up front (its size, or a share of the time
  left: :meth:`Deadline.share`).

A deadline never makes an answer dishonest: a phase cut short only loses candidates or cuts,
and the protocol still re-scores the hypothesis and certifies it only against a proved bound.

An interrupt (Ctrl-C, :mod:`oraclepriv.solvers.runtime.interrupts`) expires the deadline at once, so the
same checks end the work of a solver's callbacks promptly; the interrupt itself is then raised as
:class:`KeyboardInterrupt` by the code that caught it.
"""

from __future__ import annotations

import logging
import math
import time

__all__ = ["Deadline", "DeadlineExceeded", "MAX_TIME_LIMIT", "check_time_limit"]

log = logging.getLogger(__name__)

#: the longest time limit accepted, in seconds (about 11.6 days). Longer ones overflow the solvers'
#: interfaces (OR-Tools takes int64 milliseconds, a Python thread wait at most ~49 days, SCIP refuses
#: more than 1e20) and would fail deep inside a backend; for no limit, give none.
MAX_TIME_LIMIT = 1e6


def check_time_limit(value, name: str = "time_limit") -> float:
    """``value`` as a time limit in seconds: a number > 0 and at most :data:`MAX_TIME_LIMIT`, or a
    ValueError naming ``name`` and the value."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds; got {value!r}") from None
    if isinstance(value, bool) or not (0 < seconds <= MAX_TIME_LIMIT):  # NaN too
        raise ValueError(
            f"{name} must be a number of seconds > 0 and at most {MAX_TIME_LIMIT:g} (about 11.6 days; for no "
            f"limit give none); got {value!r}"
        )
    return seconds


class DeadlineExceeded(Exception):
    """Raised by :meth:`Deadline.check` inside a phase that has no usable partial result.

    Backends catch it and answer with the hypothesis and bound found so far; it never leaves
    :meth:`oraclepriv.solvers.base.Backend.solve`.
    """


class Deadline:
    """A point in time (``time.perf_counter``) by which one oracle call should return.

    Parameters
    ----------
    seconds : float or None
        The time limit; None for no limit (then nothing ever expires, except by :meth:`interrupt`).
    start : float, optional
        ``time.perf_counter()`` at the start of the call (default: now).
    parent : Deadline, optional
        A sub-deadline (:meth:`share`) also expires when its parent does.

    Attributes
    ----------
    seconds, start : float
        As given.
    stopped : list of str
        The phases that stopped at the deadline (recorded by :meth:`note`), in order.
    """

    __slots__ = ("seconds", "start", "at", "parent", "_interrupted", "stopped")

    def __init__(self, seconds: float | None, *, start: float | None = None, parent: Deadline | None = None):
        if seconds is not None and not (seconds >= 0 and math.isfinite(seconds)):
            raise ValueError(f"Deadline: seconds must be a finite number >= 0 or None; got {seconds!r}")
        self.seconds = seconds
        self.start = time.perf_counter() if start is None else float(start)
        self.at = None if seconds is None else self.start + float(seconds)
        self.parent = parent
        self._interrupted = False
        self.stopped: list[str] = [] if parent is None else parent.stopped

    def __repr__(self) -> str:
        left = self.remaining()
        return f"Deadline(seconds={self.seconds}, remaining={'none' if left is None else f'{left:.3f}'})"

    @property
    def limited(self) -> bool:
        """True if a time limit applies (here or in a parent)."""
        return self.at is not None or (self.parent is not None and self.parent.limited)

    @property
    def interrupted(self) -> bool:
        """True once :meth:`interrupt` was called (here or on a parent)."""
        return self._interrupted or (self.parent is not None and self.parent.interrupted)

    def interrupt(self) -> None:
        """Expire now: a Ctrl-C arrived and every phase should stop (the caller re-raises it)."""
        self._interrupted = True

    def remaining(self) -> float | None:
        """Seconds left (>= 0), or None when no limit applies."""
        if self.interrupted:
            return 0.0
        left = None if self.at is None else max(0.0, self.at - time.perf_counter())
        if self.parent is not None:
            up = self.parent.remaining()
            if up is not None:
                left = up if left is None else min(left, up)
        return left

    def expired(self) -> bool:
        """True when the time is up (or an interrupt arrived)."""
        left = self.remaining()
        return left is not None and left <= 0.0

    def elapsed(self) -> float:
        """Seconds since the start of the call."""
        return time.perf_counter() - self.start

    def note(self, phase: str) -> None:
        """Record that ``phase`` stopped at the deadline (once per phase; logged at DEBUG)."""
        if phase not in self.stopped:
            self.stopped.append(phase)
            log.debug("deadline reached in phase %r after %.3f s (limit %s)", phase, self.elapsed(), self.seconds)

    def check(self, phase: str) -> None:
        """Raise :class:`DeadlineExceeded` (after :meth:`note`) if the deadline has passed."""
        if self.expired():
            self.note(phase)
            raise DeadlineExceeded(phase)

    def solver_seconds(self, *, reserve: float = 0.0, minimum: float = 1e-3) -> float | None:
        """The time limit to hand a solver call: what is left minus ``reserve`` (time kept back for
        the phases after it), at least ``minimum``; None when no limit applies."""
        left = self.remaining()
        if left is None:
            return None
        return max(left - reserve, minimum)

    def share(self, fraction: float) -> Deadline:
        """A sub-deadline at ``fraction`` of the time left (a phase that must leave time to later
        ones, e.g. the start heuristics); with no limit, an unlimited child of this deadline."""
        left = self.remaining()
        seconds = None if left is None else max(0.0, fraction * left)
        return Deadline(seconds, parent=self)

    def wall_clock(self) -> float | None:
        """The deadline as ``time.time()`` (for another process on this machine), or None."""
        left = self.remaining()
        return None if left is None else time.time() + left
