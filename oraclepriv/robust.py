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
    :class:`UncertifiedOracleError`, or the backend's own exception propagates: it outputs "bottom"). If on *every*
    dataset the whole run fails with probability at most gamma, the mechanism is
    (eps, delta + (1 + e^eps) gamma)-DP (:func:`conditional_privacy`). That gamma must
    hold uniformly over datasets, adversarial ones included: it is an assumption about the solver,
    not something a run can certify. **Re-running with fresh noise after a failure is not private**
    (a solver that fails exactly when the answer would reveal the differing record makes the retried
    mechanism never output that answer on one neighbour; ``tests/test_robust.py`` shows an audit
    catching it).

``"fallback"`` — exact fallback: an uncertified call, and a call whose backend raised an exception, is
    re-solved by an exact backend with no time limit (:class:`FallbackOracle`). Every answer the
    learner uses is then an exact minimiser, so the composite is a perfect oracle and the learner's
    privacy proof applies unchanged, for any behaviour of the primary solver (wrong, uncertified or
    raising). What remains outside the guarantee: the exact fallback itself failing (an uncertified
    answer or an exception from it aborts the fit with :class:`UncertifiedOracleError`; with the exact
    default backends and no time limit only resource exhaustion does that), running time on failure,
    which is unbounded (the fallback is exponential in d for halfspaces), and the extra time, a timing
    side channel that differential privacy does not cover. The ledger records both calls (the
    fallback's ``step`` ends in ``"/fallback"``; a call that raised is a row with status ``"error"``),
    so oracle-call counts stay honest.

``"flag"`` — keep the uncertified answer and record ``diagnostics_["proof_applies"] = False``: for
    experiments with heuristics, not a privacy guarantee (an audit with a targeting heuristic shows
    the loss is unbounded).

Interrupts are never solver failures: only :class:`Exception` is caught, so a KeyboardInterrupt (Ctrl-C,
and the command line's SIGTERM, a KeyboardInterrupt subclass), SystemExit and the other
:class:`BaseException` interrupts of :mod:`oraclepriv.solvers.runtime.interrupts` propagate and never start the
unbounded fallback. :class:`~oraclepriv.solvers.runtime.deadline.DeadlineExceeded` is not an interrupt (an
interrupt expires the deadline and is then raised as a KeyboardInterrupt); the backends answer it
with what they have proved, and one that escapes a backend is a failure at the time limit like any other.
What an exception said depends on the private data: where a mode handles it ("fallback", and
SubsampleAggregate's teachers) it is kept as a non-private diagnostic (``details["fallback_from"]``,
:attr:`UncertifiedOracleError.error`), never in the release or in the message of an error the fit
raises; under "raise" the backend's exception propagates as the backend wrote it.

Why not "count failures with a noisy threshold": when each call contains the whole private dataset,
no failure test makes the mechanism private against a heuristic that targets one record
(docs/theory/robustification.md, section "Why no failure test can fix a learner whose calls see all
the data"); the sound alternatives are the three above, or designs where the solver never sees all of
the data: subsample-and-aggregate, a different algorithm (:mod:`oraclepriv.learners.subsample`).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np

from oraclepriv.ledger import record_call
from oraclepriv.oracle import Oracle, OracleResult, make_oracle
from oraclepriv.protocols import ERMOracle
from oraclepriv.release import warn_privacy_leak

__all__ = [
    "ON_UNCERTIFIED_MODES",
    "FallbackOracle",
    "UncertifiedOracleError",
    "conditional_privacy",
    "describe_mode",
    "fallback_oracle",
    "solve_or_fail",
]

#: the values of a learner's ``on_uncertified`` parameter
ON_UNCERTIFIED_MODES = ("raise", "fallback", "flag")

log = logging.getLogger(__name__)


class UncertifiedOracleError(RuntimeError):
    """A private-data oracle call gave no answer certified optimal over the whole class.

    The message names the step and the backend only. What the call answered (``result``: its
    objective, bound and status) and, when its backend raised, the exception (``error``) depend on
    the private data: non-private diagnostics, which warn with
    :class:`~oraclepriv.release.PrivacyLeakWarning` when read.

    Parameters
    ----------
    message : str
        Names the step and the backend only.
    result : OracleResult or None, default None
        The uncertified answer, when there was one (non-private).
    error : BaseException or None, default None
        What the backend raised, when it raised (non-private).
    """

    def __init__(self, message: str, result: OracleResult | None = None, error: BaseException | None = None) -> None:
        super().__init__(message)
        self._result = result
        self._error = error

    @property
    def result(self) -> OracleResult | None:
        """The uncertified answer (objective, bound, status): NON-PRIVATE; warns when read."""
        if self._result is not None:
            warn_privacy_leak(
                "UncertifiedOracleError.result (the call's objective, bound and status) depends on the private data; "
                "it is a non-private diagnostic. Do not publish it."
            )
        return self._result

    @property
    def error(self) -> BaseException | None:
        """The exception the backend raised, if it raised: NON-PRIVATE (its message may hold data); warns."""
        if self._error is not None:
            warn_privacy_leak(
                "UncertifiedOracleError.error (what the backend raised) may depend on the private data; it is a "
                "non-private diagnostic. Do not publish it."
            )
        return self._error

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the message only (a parallel run's worker hands exceptions back to its parent): like a pickled
        learner's diagnostics (:mod:`oraclepriv.release`), ``result`` and ``error`` do not leave the process."""
        return (type(self), (str(self),))


def solve_or_fail(
    oracle: ERMOracle, X: Any, y: Any, weights: Any = None, *, caller: str | None = None, step: str | None = None
) -> tuple[OracleResult | None, dict[str, Any] | None]:
    """``(oracle.solve(...), None)``, or ``(None, failure)`` when the call raised an :class:`Exception`.

    A raising call is a failed call: its record (backend, status "error", the exception's type and
    message: NON-PRIVATE) is returned and added to every open ledger, so call counts stay honest. An
    :class:`UncertifiedOracleError` (a :class:`FallbackOracle` whose fallback raised) is returned the
    same way without a new ledger row: the composite oracle recorded its own calls. Interrupts
    (:class:`BaseException` that is not an :class:`Exception`) propagate.

    Parameters
    ----------
    oracle : ERMOracle
        The oracle to call.
    X : array-like of shape (n, d)
        The points.
    y : array-like of shape (n,)
        Labels in {0, 1}.
    weights : array-like of shape (n,) or None, default None
        Weights of either sign; None for weight 1.
    caller : str or None, default None
        Who calls, as recorded in the ledger.
    step : str or None, default None
        Which step of the caller, as recorded in the ledger.

    Returns
    -------
    result : OracleResult or None
        The answer, or None when the call raised.
    failure : dict or None
        None, or the failed call's record (backend, status "error", the exception's type, message and
        the exception itself): non-private.
    """
    start = time.perf_counter()
    try:
        return oracle.solve(X, y, weights, caller=caller, step=step), None
    except UncertifiedOracleError as exc:
        return None, {"backend": "the exact fallback", "status": "error", "error": type(exc).__name__, "exception": exc}
    except Exception as exc:  # noqa: BLE001 - every solver exception is a failed call (module docstring)
        failure: dict[str, Any] = {
            "backend": str(getattr(oracle, "backend", None) or "the default exact backend"),
            "status": "error",
            "error": type(exc).__name__,
            "message": str(exc),
            "seconds": time.perf_counter() - start,
            "exception": exc,
        }
    shape = np.shape(X)
    signed = weights is not None and bool(np.any(np.asarray(weights, dtype=np.float64) < 0))
    record_call(
        {
            "caller": caller,
            "step": step,
            "hypothesis_class": oracle.hypothesis_class,
            "backend": failure["backend"],
            "n": int(shape[0]) if len(shape) >= 1 else 0,
            "d": int(shape[1]) if len(shape) == 2 else 1,
            "signed_weights": signed,
            "status": "error",
            "certified": False,
            "restriction": None,
            "objective": math.inf,
            "bound": -math.inf,
            "gap": math.inf,
            "nodes": None,
            "seconds": failure["seconds"],
        }
    )
    log.debug("%s raised %s on call %s; treated as a failed call", failure["backend"], failure["error"], step)
    return None, failure


class FallbackOracle:
    """An oracle that never returns an uncertified answer it could have proved: primary, then exact.

    ``solve`` calls ``primary``; if that answer is certified it is returned; otherwise -- an
    uncertified answer, or an :class:`Exception` raised by the primary -- ``fallback`` (an exact
    backend, normally without a time limit) solves the *same* instance and its answer is returned,
    with ``details["fallback_from"]`` describing the primary's failure (non-private). If the
    fallback's answer is not certified either, it is returned and the learner's exactness gate
    raises; if the fallback raises, :class:`UncertifiedOracleError` is raised naming the step and the
    fallback backend only (the exception is its ``error``). Every call is recorded in the ledger.

    Interrupts are not failures: a KeyboardInterrupt (Ctrl-C), SystemExit or any other
    :class:`BaseException` that is not an :class:`Exception` propagates and never starts the
    (unbounded) fallback (``docs/deadlines.md``, "Interrupts").

    Parameters
    ----------
    primary : Oracle
        The oracle tried first (e.g. time-limited or heuristic).
    fallback : Oracle
        The exact oracle for the calls the primary does not certify; the same hypothesis class.

    Raises
    ------
    ValueError
        When the two oracles solve different classes.
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
        """Solve with the primary oracle, and with the fallback when the primary's answer is not certified.

        The same contract as :meth:`oraclepriv.Oracle.solve`.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points.
        y : array-like of shape (n,)
            Labels in {0, 1}.
        weights : array-like of shape (n,) or None, default None
            Weights of either sign; None for weight 1.
        caller : str or None, default None
            Who calls, as recorded in the ledger.
        step : str or None, default None
            Which step of the caller, as recorded in the ledger.

        Returns
        -------
        OracleResult
            The primary's certified answer, or the fallback's (with ``details["fallback_from"]``).

        Raises
        ------
        UncertifiedOracleError
            When the fallback raised.
        """
        first, failure = solve_or_fail(self.primary, X, y, weights, caller=caller, step=step)
        if first is not None and first.certified:
            return first
        self.fallbacks += 1
        if first is not None:
            log.debug(
                "fallback: %s answered uncertified (status %s); re-solving with %s",
                first.backend,
                first.status,
                self.fallback.backend or "the default exact backend",
            )
            failure = {
                "backend": first.backend,
                "status": first.status,
                "objective": first.objective,
                "bound": first.bound,
                "seconds": first.seconds,
            }
        else:
            assert failure is not None
            log.debug("fallback: %s raised; re-solving with %s", failure["backend"], self.fallback.backend)
            failure = {k: v for k, v in failure.items() if k != "exception"}
        fallback_step = f"{step}/fallback" if step else "fallback"
        second, error = solve_or_fail(self.fallback, X, y, weights, caller=caller, step=fallback_step)
        if second is None:
            assert error is not None
            raise UncertifiedOracleError(
                f"oracle call {step!r}: the exact fallback backend {error['backend']!r} raised an exception, so no "
                "certified answer exists for this call; what it raised is this error's .error (a non-private "
                "diagnostic)",
                error=error["exception"],
            ) from None
        second.details["fallback_from"] = failure
        return second


def fallback_oracle(
    hypothesis_class: str,
    backend: Any = None,
    time_limit: float | None = None,
    fallback_backend: str | None = None,
    **options: Any,
) -> FallbackOracle:
    """An oracle that solves with ``backend`` first, then with an exact ``fallback_backend`` without a time limit.

    Parameters
    ----------
    hypothesis_class : {"threshold", "stump", "halfspace"}
        The class both oracles minimise over.
    backend : str, backend class or instance, or None, default None
        The primary backend (as for :func:`oraclepriv.make_oracle`).
    time_limit : float or None, default None
        Seconds per call of the primary.
    fallback_backend : str or None, default None
        The exact backend of the fallback; None: the oracle's exact default for the instance's shape
        (:func:`oraclepriv.oracle.default_backend`), chosen per call.
    **options
        The primary backend's options.

    Returns
    -------
    FallbackOracle
        The composite oracle.
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

    Parameters
    ----------
    epsilon : float
        The learner's epsilon with a perfect oracle, > 0.
    delta : float
        Its delta, in [0, 1).
    gamma : float
        A bound on the probability of failure on every dataset, in [0, 1].

    Returns
    -------
    epsilon : float
        The same epsilon.
    delta : float
        ``delta + (1 + e^epsilon) gamma``, at most 1.

    Raises
    ------
    ValueError
        For a parameter out of its range.

    Examples
    --------
    >>> epsilon, delta = conditional_privacy(1.0, 0.0, 1e-9)
    >>> print(f"{delta:.4g}")
    3.718e-09
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
    """The privacy record's entry for a learner's ``on_uncertified`` mode.

    Parameters
    ----------
    mode : {"raise", "fallback", "flag"}
        The mode.

    Returns
    -------
    dict
        ``on_uncertified`` and ``robustness``, the guarantee the mode keeps, in words.

    Raises
    ------
    ValueError
        For an unknown mode.
    """
    texts = {
        "raise": "one shot; a private-data call that is uncertified or raises aborts the fit (no output). "
        "Guarantee (eps, delta + (1 + e^eps) gamma) if every dataset fails w.p. <= gamma (assumption); "
        "re-running after a failure is not covered",
        "fallback": "calls whose answer is uncertified or whose backend raised are re-solved by an exact backend "
        "without a time limit: every answer used is exact, so the perfect-oracle proof applies for any behaviour "
        "of the primary backend (not covered: a failure of the exact fallback itself, which aborts the fit; "
        "running time)",
        "flag": "uncertified answers kept and flagged; no privacy guarantee for flagged fits",
    }
    if mode not in texts:
        raise ValueError(f"on_uncertified must be one of {list(ON_UNCERTIFIED_MODES)}; got {mode!r}")
    return {"on_uncertified": mode, "robustness": texts[mode]}
