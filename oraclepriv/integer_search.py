"""The largest whole number for which a monotone condition holds: how many public points fit a size limit.

Both the public cover of :mod:`oraclepriv.cover` and the class G of the PPM learner
(:mod:`oraclepriv.learners.ppm`) grow with the number of public points m; when one is too large, the command
line tells the user the largest m that fits. Such counts grow fast (C(m, d)-like), so the search doubles m
until the condition fails and then bisects, evaluating the condition O(log m) times.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["largest_holding"]


def largest_holding(holds: Callable[[int], bool]) -> int:
    """The largest m >= 0 with ``holds(m)``, for a condition that holds up to some m and fails beyond it
    (0 when it fails at m = 1; ``holds(0)`` is not asked). The condition must fail for some m."""
    low, high = 0, 1
    while holds(high):
        low, high = high, 2 * high
    while high - low > 1:  # holds(low) (or low = 0) and not holds(high)
        middle = (low + high) // 2
        low, high = (middle, high) if holds(middle) else (low, middle)
    return low
