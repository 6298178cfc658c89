"""The exact privacy loss between two output laws, used by the exact audits (:mod:`oraclepriv.audit.exact`)
and by the verifier (:mod:`oraclepriv.verify.verifier`).

A mechanism is pure eps-DP iff for every pair of neighbouring datasets D, D' its output laws P, P' satisfy

    loss(P, P') = max over outcomes o of |log P(o) - log P'(o)|  <=  eps

(the largest absolute value of the privacy loss random variable log P(o) / P'(o) of C. Dwork, A. Roth, "The
Algorithmic Foundations of Differential Privacy"). The maximum runs over the union of both supports: an outcome
possible under one law only gives infinity, an outcome impossible under both is no loss. Laws are given as
log-probabilities so that the tiny probabilities of an exponential mechanism over many outputs do not underflow.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

__all__ = ["PrivacyLoss", "privacy_loss"]

Outcome = TypeVar("Outcome", bound=Hashable)


@dataclass(frozen=True)
class PrivacyLoss(Generic[Outcome]):
    """The privacy loss between two output laws and where it is attained (see :func:`privacy_loss`)."""

    #: max over outcomes of |log p(o) - log q(o)|, in [0, inf]
    loss: float
    #: the first outcome attaining it; None when no outcome is possible under either law
    outcome: Outcome | None


def privacy_loss(log_p: Mapping[Outcome, float], log_q: Mapping[Outcome, float]) -> PrivacyLoss[Outcome]:
    """The exact privacy loss max_o |log p(o) - log q(o)| between two output laws, and an outcome attaining it.

    Parameters
    ----------
    log_p, log_q : mapping of outcome to float
        Each law's log-probability of every outcome it lists (``-inf`` for an impossible one); an outcome a law
        does not list is impossible under it. Outcomes are matched by equality of their keys.

    Returns
    -------
    PrivacyLoss
        ``loss``: the maximum over the union of both supports, in [0, inf]: ``inf`` when an outcome is possible
        under one law only; 0 when the laws agree (or both are empty). ``outcome``: the first outcome attaining
        it, those of ``log_p`` first in their order, then those only ``log_q`` lists; None when no outcome is
        possible under either law.

    Examples
    --------
    >>> import math
    >>> found = privacy_loss({"a": math.log(0.5), "b": math.log(0.5)}, {"a": math.log(0.25), "b": math.log(0.75)})
    >>> round(found.loss, 6), found.outcome
    (0.693147, 'a')
    >>> privacy_loss({"a": 0.0}, {"a": math.log(0.5), "b": math.log(0.5)})
    PrivacyLoss(loss=inf, outcome='b')
    """
    only_q = [o for o in log_q if o not in log_p]
    outcomes = [*log_p, *only_q]
    if not outcomes:
        return PrivacyLoss(0.0, None)
    a = np.concatenate(
        [np.fromiter(log_p.values(), dtype=np.float64, count=len(log_p)), np.full(len(only_q), -math.inf)]
    )
    b = np.fromiter(
        itertools.chain((log_q.get(o, -math.inf) for o in log_p), (log_q[o] for o in only_q)),
        dtype=np.float64,
        count=len(outcomes),
    )
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("log_p and log_q must hold no NaN log-probability")
    possible = (a > -math.inf) | (b > -math.inf)
    if not possible.any():
        return PrivacyLoss(0.0, None)
    with np.errstate(invalid="ignore"):  # -inf - (-inf) where both are impossible, masked below
        gaps = np.where(possible, np.abs(a - b), -1.0)
    where = int(np.argmax(gaps))
    return PrivacyLoss(float(gaps[where]), outcomes[where])
