"""Two answers to the same reduced problem, combined into one.

Used where one backend hands a call to another (``direction-bb``'s fallback, ``portfolio``'s lead):
both bounds are proved over the whole class, so the larger one holds; the hypothesis kept is the one
with the lower re-scored loss; the answer is "optimal" only when that loss meets the kept bound
within the gap rule (``milp.gap_rule``), otherwise it carries the second answer's status. The two
searches' incumbent traces (:mod:`oraclepriv.solvers.incumbents`) are merged.
"""

from __future__ import annotations

from typing import Any

from oraclepriv.solvers.base import BackendAnswer, ReducedProblem
from oraclepriv.solvers.incumbents import merge_traces
from oraclepriv.solvers.milp import gap_rule, reduced_loss

__all__ = ["combine_answers"]


def combine_answers(
    problem: ReducedProblem, first: BackendAnswer, second: BackendAnswer, details: dict[str, Any]
) -> BackendAnswer:
    """The larger bound, the better hypothesis (``first`` on ties), ``second``'s nodes, and ``details``
    with ``"hypothesis_from"``: ``"first"`` or ``"second"``, and ``"incumbents"``: the traces of
    ``first``, ``second`` and ``details`` merged."""
    X, y, w = problem.X, problem.y, problem.w
    loss_first = reduced_loss(first.hypothesis, X, y, w)
    loss_second = reduced_loss(second.hypothesis, X, y, w)
    keep_first = loss_first <= loss_second
    bound = max(first.bound, second.bound)
    abs_gap, _ = gap_rule(w)
    status = "optimal" if min(loss_first, loss_second) <= bound + abs_gap else second.status
    return BackendAnswer(
        first.hypothesis if keep_first else second.hypothesis,
        bound=bound,
        status=status,
        nodes=second.nodes,
        details={
            **details,
            "hypothesis_from": "first" if keep_first else "second",
            "incumbents": merge_traces(
                first.details.get("incumbents"), second.details.get("incumbents"), details.get("incumbents")
            ),
        },
    )
