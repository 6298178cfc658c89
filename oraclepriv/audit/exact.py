"""Exact privacy audit of mechanisms whose output law is explicit (the exponential mechanism of
:class:`~oraclepriv.learners.public_cover_em.PublicCoverEM`; docs/theory/audits.md, section "Exact
audits of explicit output laws").

For a learner that reports the exact law of its output on a dataset (``output_log_probabilities``:
one parameter row and one log-probability per possible output), the privacy loss between two
neighbouring datasets D, D' is computed, not estimated:

    eps(D, D') = max over outputs c of |log p_D(c) - log p_D'(c)|,

with outputs matched by their parameters; an output possible under one dataset and impossible under
the other gives infinity. The audit takes the maximum over many neighbours (every position of the
private data, each replaced by its label flip and by other records) and fails iff it exceeds the
claimed epsilon. No sampling, so no confidence level: a pass says no audited neighbour pair breaks
the claim, a fail exhibits the pair that does (``worst``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ExactAuditResult", "audit_exact_distribution", "default_replacements", "law_distance"]

#: slack for float rounding in the log-probabilities
_FLOAT_SLACK = 1e-9


@dataclass
class ExactAuditResult:
    """Verdict of an exact audit; ``worst`` names the neighbour pair with the largest loss."""

    learner: str
    scenario: str
    epsilon: float
    epsilon_hat: float
    n_neighbours: int
    passed: bool
    worst: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "scenario": self.scenario,
            "epsilon": self.epsilon,
            "epsilon_hat": self.epsilon_hat,
            "n_neighbours": self.n_neighbours,
            "passed": self.passed,
            "worst": self.worst,
            "seconds": self.seconds,
        }


def law_distance(law_a: tuple[np.ndarray, np.ndarray], law_b: tuple[np.ndarray, np.ndarray]) -> tuple[float, int]:
    """max_c |log p_a(c) - log p_b(c)| over the union of both supports (infinite if an output is
    possible under one law only), and the index in law_a (or -1 - index in law_b) where it is attained."""
    params_a, logp_a = law_a
    params_b, logp_b = law_b
    rows_b = {np.ascontiguousarray(r).tobytes(): j for j, r in enumerate(params_b)}
    matched = np.full(len(logp_a), -1, dtype=np.int64)
    for i, r in enumerate(params_a):
        matched[i] = rows_b.get(np.ascontiguousarray(r).tobytes(), -1)
    worst, where = 0.0, 0
    for i in range(len(logp_a)):
        j = matched[i]
        if j < 0:
            if logp_a[i] > -math.inf:
                return math.inf, i
            continue
        gap = abs(float(logp_a[i]) - float(logp_b[j]))
        if gap > worst:
            worst, where = gap, i
    unmatched_b = np.setdiff1d(np.arange(len(logp_b)), matched[matched >= 0])
    if np.any(logp_b[unmatched_b] > -math.inf):
        return math.inf, -1 - int(unmatched_b[np.argmax(logp_b[unmatched_b])])
    return worst, where


def default_replacements(
    X: np.ndarray, y: np.ndarray, X_public: np.ndarray | None, n_others: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, int, str]]:
    """Records to substitute at a position: n_others public points (if any) with each label and
    n_others other private records (the label flip of the record itself is added per position)."""
    out: list[tuple[np.ndarray, int, str]] = []
    publics = (
        () if X_public is None else rng.choice(X_public.shape[0], size=min(n_others, X_public.shape[0]), replace=False)
    )
    for j in publics:
        for label in (0, 1):
            out.append((X_public[j].copy(), label, f"public point {int(j)}, label {label}"))
    for k in rng.choice(X.shape[0], size=min(n_others, X.shape[0]), replace=False):
        out.append((X[k].copy(), int(y[k]), f"private record {int(k)}"))
    return out


def audit_exact_distribution(
    make_learner: Callable[[], Any],
    X: np.ndarray,
    y: np.ndarray,
    X_public: np.ndarray | None,
    *,
    epsilon: float,
    positions: Iterable[int] | None = None,
    n_others: int = 4,
    seed: int = 0,
    learner_name: str = "",
    scenario: str = "",
) -> ExactAuditResult:
    """Exact audit over neighbours of (X, y): at every position (default all), the label flip of
    that record and the records of :func:`default_replacements` (``n_others=0``: label flips only,
    the neighbours of label-DP). ``make_learner()`` returns an unfitted learner with
    ``output_log_probabilities(X, y, X_public)`` (called without X_public when it is None)."""
    t0 = time.perf_counter()
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int8)
    rng = np.random.default_rng(seed)
    public = () if X_public is None else (np.asarray(X_public, dtype=np.float64),)
    learner = make_learner()
    base = learner.output_log_probabilities(X, y, *public)
    others = default_replacements(X, y, public[0] if public else None, n_others, rng)
    positions = range(X.shape[0]) if positions is None else positions
    worst_eps, worst, count = 0.0, {}, 0
    for i in positions:
        swaps = [(X[i].copy(), 1 - int(y[i]), "label flip")] + others
        for x_new, label, what in swaps:
            if np.array_equal(x_new, X[i]) and label == int(y[i]):
                continue  # not a neighbour: the same dataset
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = x_new, label
            law = make_learner().output_log_probabilities(X2, y2, *public)
            gap, where = law_distance(base, law)
            count += 1
            if gap > worst_eps or not worst:
                worst_eps = gap
                params = base[0][where] if where >= 0 else law[0][-1 - where]
                worst = {"position": int(i), "replacement": what, "output": [float(v) for v in params]}
            if math.isinf(worst_eps):
                break
        if math.isinf(worst_eps):
            break
    passed = worst_eps <= float(epsilon) * (1 + _FLOAT_SLACK) + _FLOAT_SLACK
    return ExactAuditResult(
        learner_name or type(learner).__name__,
        scenario,
        float(epsilon),
        float(worst_eps),
        count,
        bool(passed),
        worst,
        time.perf_counter() - t0,
    )
