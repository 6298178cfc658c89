"""The learners whose guarantee holds for any solver behaviour, as test parameters: (id, factory(backend, seed)).
Shared by the release-boundary tests (a solver that fails on one record) and the raising-solver tests (one that
raises there)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oraclepriv.learners import RRSPM, Perturbation, SubsampleAggregate

__all__ = ["ROBUST_LEARNERS"]

ROBUST_LEARNERS: dict[str, Callable[[Any, Any], Any]] = {
    "rrspm-laplace-fallback": lambda b, s: RRSPM(
        epsilon=1.0, hypothesis_class="threshold", backend=b, on_uncertified="fallback", random_state=s
    ),
    "rrspm-gaussian-fallback": lambda b, s: RRSPM(
        epsilon=1.0,
        delta=1e-3,
        noise="gaussian",
        hypothesis_class="threshold",
        backend=b,
        on_uncertified="fallback",
        random_state=s,
    ),
    "perturbation-fallback": lambda b, s: Perturbation(
        epsilon=1.0, delta=1e-3, J=3, hypothesis_class="threshold", backend=b, on_uncertified="fallback", random_state=s
    ),
    "subsample-abstain": lambda b, s: SubsampleAggregate(
        n_teachers=4,
        noise="laplace",
        delta=0.0,
        hypothesis_class="threshold",
        backend=b,
        teacher_failure="abstain",
        random_state=s,
    ),
    "subsample-keep": lambda b, s: SubsampleAggregate(
        n_teachers=4,
        noise="laplace",
        delta=0.0,
        hypothesis_class="threshold",
        backend=b,
        teacher_failure="keep",
        random_state=s,
    ),
    "subsample-fallback": lambda b, s: SubsampleAggregate(
        n_teachers=4,
        noise="gaussian",
        delta=1e-3,
        hypothesis_class="threshold",
        backend=b,
        on_uncertified="fallback",
        random_state=s,
    ),
}
