"""What to do when an oracle call is not certified: robustification modes around any oracle.

Background (Neel, Roth, Wu, "How to Use Heuristics for Differential Privacy", FOCS 2019; cited by
Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data",
Section 2, as "[Neel et al. 2019, Theorem 8]"). The privacy proofs of RRSPM (Block et al., Alg. 4,
Lemmas 18-21) and of Algorithms 1-3 assume a *perfect* oracle: every call returns an exact
minimiser (ties broken arbitrarily). A real solver is at best *certifiable*: it returns an answer
with a proof of optimality, or fails (time limit, numerical trouble). The modes here do not rely on
the statement of Neel, Roth and Wu's theorem: each one's guarantee is proved from first principles in
docs/theory/robustification.md. Every private learner picks one with ``on_uncertified``:

``"raise"`` (default) — one shot, failure -> no output (the learner raises
    :class:`~oraclepriv.learners._base.UncertifiedOracleError`, i.e. outputs "bottom"). If on *every*
    dataset the whole run fails with probability at most gamma, the mechanism is
    (eps, delta + (1 + e^eps) gamma)-DP (:func:`conditional_privacy`). That gamma must
    hold uniformly over datasets, adversarial ones included: it is an assumption about the solver,
    not something a run can certify. **Re-running with fresh noise after a failure is not private**
    (a solver that fails exactly when the answer would reveal the differing record makes the retried
    mechanism never output that answer on one neighbour; ``tests/test_robust.py`` shows an audit
    catching it).

``"fallback"`` — exact fallback: an uncertified call is re-solved by an
    exact backend with no time limit (:class:`FallbackOracle`). Every answer the learner uses is then
    an exact minimiser, so the composite is a perfect oracle and the learner's privacy proof applies
    unchanged, for any failure pattern of the primary solver. Costs: running time on failure is
    unbounded (the fallback is exponential in d for halfspaces), and the extra time is a timing side
    channel that differential privacy does not cover. The ledger records both calls (the fallback's
    ``step`` ends in ``"/fallback"``), so oracle-call counts stay honest.

``"flag"`` — keep the uncertified answer and record ``diagnostics_["proof_applies"] = False``: for
    experiments with heuristics, not a privacy guarantee (an audit with a targeting heuristic shows
    the loss is unbounded).

Why not "count failures with a noisy threshold": when each call contains the whole private dataset,
no failure test makes the mechanism private against a heuristic that targets one record
(docs/theory/robustification.md, section "Why no failure test can fix a learner whose calls see all
the data"); the sound alternatives are the three above, or designs where the solver never sees all of
the data: subsample-and-aggregate, a different algorithm (:mod:`oraclepriv.learners.subsample`).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from oraclepriv.oracle import Oracle, OracleResult, make_oracle

__all__ = ["ON_UNCERTIFIED_MODES", "FallbackOracle", "conditional_privacy", "describe_mode", "fallback_oracle"]

#: the values of a learner's ``on_uncertified`` parameter
ON_UNCERTIFIED_MODES = ("raise", "fallback", "flag")

log = logging.getLogger(__name__)


class FallbackOracle:
    """An oracle that never returns an uncertified answer it could have proved: primary, then exact.

    ``solve`` calls ``primary``; if that answer is certified it is returned; otherwise ``fallback``
    (an exact backend, normally without a time limit) solves the *same* instance and its answer is
    returned, with ``details["fallback_from"]`` describing the primary's failure. If the fallback is
    not certified either, its (uncertified) result is returned and the learner's exactness gate
    raises. Both calls are recorded in the ledger.

    Only an *answer* that comes back uncertified triggers the fallback. Nothing is caught: a
    KeyboardInterrupt (Ctrl-C), SystemExit or any exception from the primary propagates, so an
    interrupt is never mistaken for a solver failure and never starts the (unbounded) fallback
    (``docs/deadlines.md``, "Interrupts").
    """

    def __init__(self, primary: Oracle, fallback: Oracle):
        if primary.hypothesis_class != fallback.hypothesis_class:
            raise ValueError(
                f"primary and fallback oracles must solve the same class; got {primary.hypothesis_class!r} "
                f"and {fallback.hypothesis_class!r}"
            )
        self.primary = primary
        self.fallback = fallback
        self.hypothesis_class = primary.hypothesis_class
        self.fallbacks = 0  # how many calls needed the fallback

    def __repr__(self) -> str:
        return f"FallbackOracle(primary={self.primary!r}, fallback={self.fallback!r})"

    def solve(self, X, y, weights=None, *, caller: str | None = None, step: str | None = None) -> OracleResult:
        """Same contract as :meth:`oraclepriv.oracle.Oracle.solve`."""
        first = self.primary.solve(X, y, weights, caller=caller, step=step)
        if first.certified:
            return first
        self.fallbacks += 1
        log.debug(
            "fallback: %s answered uncertified (status %s, objective %.12g, bound %.12g); re-solving with %s",
            first.backend,
            first.status,
            first.objective,
            first.bound,
            self.fallback.backend or "the default exact backend",
        )
        second = self.fallback.solve(X, y, weights, caller=caller, step=f"{step}/fallback" if step else "fallback")
        second.details["fallback_from"] = {
            "backend": first.backend,
            "status": first.status,
            "objective": first.objective,
            "bound": first.bound,
            "seconds": first.seconds,
        }
        return second


def fallback_oracle(
    hypothesis_class: str,
    backend: Any = None,
    time_limit: float | None = None,
    fallback_backend: str | None = None,
    **options: Any,
) -> FallbackOracle:
    """``backend`` (with ``time_limit`` and its ``options``) first, then ``fallback_backend`` with no time limit.

    ``fallback_backend=None`` uses the protocol's exact default for the instance's shape
    (:func:`oraclepriv.oracle.default_backend`: sweep / enumerate / portfolio / scip-bc), chosen per call.
    """
    if time_limit is not None:
        options["time_limit"] = time_limit
    primary = make_oracle(hypothesis_class, backend=backend, **options)
    return FallbackOracle(primary, make_oracle(hypothesis_class, backend=fallback_backend))


def conditional_privacy(epsilon: float, delta: float, gamma: float) -> tuple[float, float]:
    """(eps, delta') of the one-shot "fail -> no output" mechanism (docs/theory/robustification.md).

    If the learner is (eps, delta)-DP with a perfect oracle and, on every dataset, the run fails
    with probability at most ``gamma``, then outputting "bottom" on failure is
    (eps, delta + (1 + e^eps) * gamma)-DP. Proof: P[R(D) in S] <= P[A(D) in S] + gamma
    <= e^eps P[A(D') in S] + delta + gamma <= e^eps (P[R(D') in S] + gamma) + delta + gamma.
    """
    for name, value in (("epsilon", epsilon), ("delta", delta), ("gamma", gamma)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number; got {value!r}")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon!r}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1); got {delta!r}")
    if not 0 <= gamma <= 1:
        raise ValueError(f"gamma (a failure probability) must be in [0, 1]; got {gamma!r}")
    return float(epsilon), float(min(1.0, delta + (1.0 + math.exp(epsilon)) * gamma))


def describe_mode(mode: str) -> dict[str, Any]:
    """The privacy record entry for a learner's ``on_uncertified`` mode."""
    texts = {
        "raise": "one shot; an uncertified private-data call aborts the fit (no output). Guarantee "
        "(eps, delta + (1 + e^eps) gamma) if every dataset fails w.p. <= gamma (assumption); "
        "re-running after a failure is not covered",
        "fallback": "uncertified calls re-solved by an exact backend without a time limit: every answer "
        "used is exact, so the perfect-oracle proof applies (running time not covered)",
        "flag": "uncertified answers kept and flagged; no privacy guarantee for flagged fits",
    }
    if mode not in texts:
        raise ValueError(f"on_uncertified must be one of {list(ON_UNCERTIFIED_MODES)}; got {mode!r}")
    return {"on_uncertified": mode, "robustness": texts[mode]}
