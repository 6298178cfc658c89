"""A :class:`~oraclepriv.verify.verifier.VerifyResult` built by hand, for tests of verdicts and of the CLI."""

from __future__ import annotations

import math

from oraclepriv.verify.verifier import VerifyResult


def verify_result(
    mode: str,
    loss_low: float,
    loss_high: float,
    *,
    delta: float = 0.0,
    delta_low: float = 0.0,
    delta_high: float = 0.0,
    learner: str = "L",
    m: int = 1,
) -> VerifyResult:
    """A result with these intervals (point values at their middles) and neutral values elsewhere."""
    return VerifyResult(
        learner=learner,
        hypothesis_class="threshold",
        backend="sweep",
        mode=mode,
        epsilon=1.0,
        delta=delta,
        n=3,
        m=m,
        n_labelings=m + 1,
        n_neighbours=3,
        loss=(loss_low + loss_high) / 2 if math.isfinite(loss_high) else math.inf,
        loss_low=loss_low,
        loss_high=loss_high,
        delta_at_epsilon=(delta_low + delta_high) / 2,
        delta_low=delta_low,
        delta_high=delta_high,
        worst_neighbour="",
        worst_outcome="",
        release_reads_private_data=False,
        brute_force_checked=0,
        numerical_error=0.0,
        seconds=0.0,
        draws=10 if mode == "sampled" else 0,
    )
