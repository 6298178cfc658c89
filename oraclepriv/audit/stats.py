"""Statistics of a privacy audit: Clopper–Pearson bounds and a lower confidence bound on epsilon.

A mechanism M is (eps, delta)-DP for neighbours D, D' iff for every event E
    P(M(D) in E) <= e^eps P(M(D') in E) + delta   (and with D, D' swapped)
(Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data",
Def. 1; the audit design: docs/theory/audits.md). From N runs on each side we get, for each event E,
a one-sided
lower Clopper–Pearson bound on P(M(D) in E) and an upper bound on P(M(D') in E), hence

    eps_lower(E) = log( (p_lo(D, E) - delta) / p_hi(D', E) ),

which is a valid lower confidence bound on the privacy loss of E. We take the maximum over the
events and both directions, with a Bonferroni correction over all of them, so the reported
``eps_lower`` exceeds the true privacy loss with probability at most ``alpha``: a correct
eps-DP mechanism yields ``eps_lower > eps`` with probability <= alpha.

The privacy loss of a mechanism is never below 0 (the worst event over both directions has ratio
>= 1), so ``max(0, bound)`` is a lower bound at the same confidence: every reported ``eps_lower``
(the maximum and each event's) is clamped at 0. ``eps_lower == 0`` means no evidence of any
privacy loss at this run count (the log-ratio bound was negative, or no event was frequent enough
to bound it at all: p_lo <= delta), not a measured loss of 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scipy.stats import beta as beta_dist

__all__ = ["clopper_pearson", "EpsilonEstimate", "estimate_epsilon", "epsilon_from_event_counts"]


def clopper_pearson(k: int, n: int, alpha: float, side: str = "two-sided") -> tuple[float, float]:
    """Exact binomial confidence bounds for k successes in n trials.

    Parameters
    ----------
    k : int
        Successes, in [0, n].
    n : int
        Trials, > 0.
    alpha : float
        One minus the confidence level, in (0, 1).
    side : {"two-sided", "lower", "upper"}, default "two-sided"
        "two-sided": (lo, hi) at level 1 - alpha; "lower" or "upper": one-sided at level 1 - alpha (the
        other end is 0 or 1).

    Returns
    -------
    lo : float
        The lower bound.
    hi : float
        The upper bound.

    Raises
    ------
    ValueError
        For k outside [0, n], n <= 0, alpha outside (0, 1) or an unknown side.

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 10, 0.05, side="upper")
    >>> lo, round(hi, 4)
    (0.0, 0.2589)
    """
    if n <= 0 or not (0 <= k <= n):
        raise ValueError(f"clopper_pearson: need 0 <= k <= n and n > 0; got k={k}, n={n}")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    a = alpha / 2 if side == "two-sided" else alpha
    lo = 0.0 if k == 0 else float(beta_dist.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta_dist.ppf(1 - a, k + 1, n - k))
    if side == "lower":
        return lo, 1.0
    if side == "upper":
        return 0.0, hi
    if side != "two-sided":
        raise ValueError(f"side must be 'two-sided', 'lower' or 'upper'; got {side!r}")
    return lo, hi


@dataclass
class EpsilonEstimate:
    """The result of :func:`estimate_epsilon`.

    Parameters
    ----------
    eps_lower : float
        The largest lower confidence bound over events and directions, clamped at 0 (a privacy loss is
        never negative).
    eps_point : float
        The largest plug-in log-ratio (inf if one side's count is 0).
    worst_event : object
        The event (outcome key) with the largest bound before the clamp at 0.
    worst_direction : str
        Its direction, "D>D'" or "D'>D".
    n_events : int
        The number of events tested.
    alpha : float
        One minus the confidence.
    delta : float
        The delta the ratios are tested at.
    details : list of dict, default []
        One row per event and direction.
    """

    eps_lower: float  # max over events/directions of the lower confidence bound, clamped at 0 (never negative)
    eps_point: float  # max over events/directions of the plug-in log-ratio (inf if one side is 0)
    worst_event: Any  # the event (outcome key) and direction with the largest bound before the clamp at 0
    worst_direction: str
    n_events: int
    alpha: float
    delta: float
    details: list[dict[str, Any]] = field(default_factory=list)


def estimate_epsilon(
    outcomes_a: Iterable[Hashable],
    outcomes_b: Iterable[Hashable],
    *,
    alpha: float = 0.05,
    delta: float = 0.0,
) -> EpsilonEstimate:
    """Lower confidence bound on the privacy loss from samples of M(D) (a) and M(D') (b).

    Events are the single outcomes seen on either side (for a discrete output law the worst event
    ratio is attained by a single outcome). Bonferroni over 2 bounds x 2 directions x events.

    Parameters
    ----------
    outcomes_a : iterable of hashable
        The outcomes of the runs on D.
    outcomes_b : iterable of hashable
        The outcomes of the runs on D'.
    alpha : float, default 0.05
        One minus the joint confidence.
    delta : float, default 0.0
        Test ``P(E) <= e^eps P'(E) + delta``.

    Returns
    -------
    EpsilonEstimate
        The lower confidence bound, the point estimate and the worst event.

    Raises
    ------
    ValueError
        When a sample is empty.
    """
    counts_a, counts_b = Counter(outcomes_a), Counter(outcomes_b)
    n_a, n_b = sum(counts_a.values()), sum(counts_b.values())
    if n_a == 0 or n_b == 0:
        raise ValueError(f"estimate_epsilon: both samples must be non-empty; got {n_a} and {n_b}")
    rows = []
    for event in sorted(set(counts_a) | set(counts_b), key=repr):
        rows.append((event, "D>D'", counts_a[event], n_a, counts_b[event], n_b))
        rows.append((event, "D'>D", counts_b[event], n_b, counts_a[event], n_a))
    return epsilon_from_event_counts(rows, alpha=alpha, delta=delta)


def epsilon_from_event_counts(
    rows: list[tuple[Any, str, int, int, int, int]], *, alpha: float = 0.05, delta: float = 0.0
) -> EpsilonEstimate:
    """Lower confidence bound on eps from (event, direction, k_num, n_num, k_den, n_den) rows.

    Each row tests P_num(E) <= e^eps P_den(E) + delta; Bonferroni over 2 bounds per row. The
    events must be fixed before looking at the samples. Every bound reported is clamped at 0 (a
    privacy loss is never negative; 0 means no evidence of any loss at these counts); the worst
    event is the one with the largest bound before the clamp, so it stays informative when all are 0.
    """
    if not rows:
        raise ValueError("epsilon_from_event_counts: no events")
    alpha_each = alpha / (2 * len(rows))
    best_raw, best_point = -math.inf, -math.inf
    worst_event, worst_direction = None, ""
    details = []
    for event, direction, ka, na, kb, nb in rows:
        lo, _ = clopper_pearson(ka, na, alpha_each, "lower")
        _, hi = clopper_pearson(kb, nb, alpha_each, "upper")
        raw = math.log((lo - delta) / hi) if lo - delta > 0 else -math.inf  # may be negative, or -inf
        lower = max(0.0, raw)  # a privacy loss is never negative: same confidence, never below 0
        pa, pb = ka / na, kb / nb
        point = (
            math.inf if (pb == 0 and pa - delta > 0) else (math.log((pa - delta) / pb) if pa - delta > 0 else -math.inf)
        )
        details.append(
            {
                "event": event,
                "direction": direction,
                "count": ka,
                "count_other": kb,
                "eps_lower": lower,
                "eps_point": point,
            }
        )
        if worst_event is None or raw > best_raw:
            best_raw, worst_event, worst_direction = raw, event, direction
        best_point = max(best_point, point)
    n_events = len({repr(r[0]) for r in rows})
    best_lower = max(0.0, best_raw)
    return EpsilonEstimate(best_lower, best_point, worst_event, worst_direction, n_events, alpha, delta, details)
