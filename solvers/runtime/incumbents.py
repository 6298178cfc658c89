"""When a search found its incumbents: the primal side of an anytime benchmark.

A backend that keeps an :class:`IncumbentTrace` notes every improving objective value it finds,
stamped with the seconds since the oracle call started, and returns the trace in
``details["incumbents"]`` as a list of ``[seconds, value]`` pairs with strictly decreasing values.
From it ``oraclepriv bench mip`` reads when the final incumbent was first found and the primal
integral (Berthold, "Measuring the impact of primal heuristics", Oper. Res. Lett. 41(6), 2013;
``results/README.md``).

The values are the backend's own numbers on the problem it sees (the reduced, non-negative-weight
problem of ``solvers/base.py``; the protocol maps them back to the signed problem): the loss of a
labeling the search accepted, not a re-scored halfspace. Only the final answer is re-scored, and a
trace is a diagnostic of timing, never part of a certificate.

Times are seconds from the call's start (:class:`~oraclepriv.solvers.runtime.deadline.Deadline`'s
``start``), measured on the process's ``time.perf_counter`` clock, the clock of the call's own
``seconds``, so that no stamp of the calling process lies outside the call. The regions of a
parallel search, in other processes, get the call's start as a wall-clock time
(:attr:`IncumbentTrace.origin`), read the wall clock once to place it on their own
``perf_counter``, and stamp on that: a step of the wall clock (NTP at boot) then shifts a region's
stamps at most, never one stamp against the next.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from oraclepriv.solvers.runtime.deadline import Deadline


class IncumbentTrace:
    """Improving incumbent values of one search, stamped in seconds since the call started.

    Parameters
    ----------
    origin : float
        The call's start as ``time.time()`` (wall clock, shared by the processes of one machine).
    start : float, optional
        The call's start on this process's ``time.perf_counter`` clock (default: ``origin`` placed
        on it through one reading of the wall clock).
    """

    __slots__ = ("origin", "start", "points")

    def __init__(self, origin: float, start: float | None = None) -> None:
        self.origin = float(origin)
        self.start = time.perf_counter() - (time.time() - self.origin) if start is None else float(start)
        self.points: list[list[float]] = []

    @classmethod
    def for_deadline(cls, deadline: Deadline) -> IncumbentTrace:
        """A trace whose clock starts when ``deadline`` (the call's) started: the start of its outermost
        parent (a phase's deadline, such as the portfolio's lead, starts later than the call)."""
        while deadline.parent is not None:
            deadline = deadline.parent
        return cls(time.time() - (time.perf_counter() - deadline.start), start=deadline.start)

    @property
    def best(self) -> float:
        """The best value noted so far (inf before the first)."""
        return self.points[-1][1] if self.points else math.inf

    def note(self, value: float, seconds: float | None = None) -> None:
        """Record ``value`` if it improves on every value noted so far (``seconds``: now by default)."""
        value = float(value)
        if not value < self.best:  # also drops NaN
            return
        at = time.perf_counter() - self.start if seconds is None else float(seconds)
        if self.points and at < self.points[-1][0]:
            at = self.points[-1][0]  # stamps of other processes may lag: keep the trace ordered in time
        self.points.append([max(at, 0.0), value])

    def merge(self, points: Iterable[Iterable[float]]) -> None:
        """Add another search's ``[seconds, value]`` pairs on the same clock (a parallel region's)."""
        for seconds, value in sorted((float(s), float(v)) for s, v in points):
            self._insert(seconds, value)

    def _insert(self, seconds: float, value: float) -> None:
        merged = [p for p in self.points if p[0] <= seconds]
        if merged and not value < merged[-1][1]:
            return
        merged.append([max(seconds, 0.0), value])
        merged += [p for p in self.points if p[0] > seconds and p[1] < value]
        self.points = merged

    def to_list(self) -> list[list[float]]:
        """The trace as plain ``[seconds, value]`` pairs (JSON-ready)."""
        return [list(p) for p in self.points]


def merge_traces(*traces: Iterable[Iterable[float]] | None) -> list[list[float]]:
    """One trace from the traces of searches on the same call's clock (None: a search without one)."""
    merged = IncumbentTrace(0.0)
    for points in traces:
        if points:
            merged.merge(points)
    return merged.to_list()
