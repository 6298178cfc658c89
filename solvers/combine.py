"""Answers of several searches of the same reduced problem, combined into one.

Used where one backend hands a call, or part of its time, to another (``direction-bb``'s fallback,
``portfolio``'s phases). Every answer combined must carry a bound proved over the whole class
(:meth:`~oraclepriv.solvers.base.Backend.restriction` None): then each bound holds for the problem,
so the largest one does; the hypothesis kept is the one with the lowest re-scored loss (the earliest
on ties). A phase cut short by the deadline therefore never costs the answer what an earlier phase
found or proved: a later phase's trivial bound 0 or worse halfspace is outweighed. The answer is
"optimal" only when the kept loss meets the kept bound within the gap rule (``gaps.gap_rule``),
otherwise it carries the last answer's status (the state the call ended in). The searches'
incumbent traces (:mod:`oraclepriv.solvers.runtime.incumbents`) are merged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oraclepriv.solvers.base import BackendAnswer, ReducedProblem
from oraclepriv.solvers.mip.milp import gap_rule, reduced_loss
from oraclepriv.solvers.runtime.incumbents import merge_traces

__all__ = ["combine_answers", "combine_phases"]


def combine_phases(
    problem: ReducedProblem, phases: Sequence[tuple[str, BackendAnswer]], details: dict[str, Any]
) -> BackendAnswer:
    """One answer from the named answers of the phases that ran, in the order they ran.

    The largest bound, the hypothesis of lowest re-scored loss (the earliest phase's on ties), the last
    phase's nodes, and ``details`` with ``"hypothesis_from"`` and ``"bound_from"`` (the names of the
    phases they came from) and ``"incumbents"`` (the traces of every phase and of ``details`` merged).
    Raises ValueError when ``phases`` is empty."""
    if not phases:
        raise ValueError("combine_phases: phases must name at least one answer; got none")
    X, y, w = problem.X, problem.y, problem.w
    losses = [reduced_loss(answer.hypothesis, X, y, w) for _, answer in phases]
    kept = min(range(len(phases)), key=losses.__getitem__)  # the first of equal losses
    proved = max(range(len(phases)), key=lambda k: phases[k][1].bound)  # the first of equal bounds
    bound = phases[proved][1].bound
    abs_gap, _ = gap_rule(w)
    last = phases[-1][1]
    status = "optimal" if losses[kept] <= bound + abs_gap else last.status
    return BackendAnswer(
        phases[kept][1].hypothesis,
        bound=bound,
        status=status,
        nodes=last.nodes,
        details={
            **details,
            "hypothesis_from": phases[kept][0],
            "bound_from": phases[proved][0],
            "incumbents": merge_traces(
                *(answer.details.get("incumbents") for _, answer in phases), details.get("incumbents")
            ),
        },
    )


def combine_answers(
    problem: ReducedProblem, first: BackendAnswer, second: BackendAnswer, details: dict[str, Any]
) -> BackendAnswer:
    """Two answers, ``first`` the earlier (:func:`combine_phases` with the phases named ``"first"`` and
    ``"second"``): the larger bound, the better hypothesis (``first`` on ties), ``second``'s nodes and
    status unless the kept loss meets the kept bound."""
    return combine_phases(problem, [("first", first), ("second", second)], details)
