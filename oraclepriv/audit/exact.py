"""Exact privacy audit of mechanisms whose output law is explicit (the exponential mechanism of
:class:`~oraclepriv.learners.public_cover_em.PublicCoverEM`; docs/theory/audits.md, section "Exact
audits of explicit output laws").

For a learner that reports the exact law of its output on a dataset (``output_log_probabilities``:
one parameter row and one log-probability per possible output), the privacy loss between two
neighbouring datasets D, D' is computed, not estimated:

    eps(D, D') = max over outputs c of |log p_D(c) - log p_D'(c)|,

with outputs matched by their parameters (:func:`output_law`; the loss is
:func:`oraclepriv.privacy_loss.privacy_loss`); an output possible under one dataset and impossible under
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

from oraclepriv.privacy_loss import privacy_loss

__all__ = ["ExactAuditResult", "audit_exact_distribution", "default_replacements", "output_law", "output_parameters"]

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


def output_law(law: tuple[np.ndarray, np.ndarray]) -> dict[bytes, float]:
    """A learner's ``output_log_probabilities`` answer (one parameter row and one log-probability per output)
    as a mapping from the output's parameters (their float64 bytes, -0.0 read as 0.0) to its log-probability:
    outputs of two laws match when their parameters are equal (the form
    :func:`oraclepriv.privacy_loss.privacy_loss` compares; :func:`output_parameters` reads a key back)."""
    params, logp = law
    logp = np.asarray(logp, dtype=np.float64)
    rows = np.ascontiguousarray(np.asarray(params, dtype=np.float64).reshape(len(logp), -1) + 0.0)
    return dict(zip([row.tobytes() for row in rows], logp.tolist()))


def output_parameters(key: bytes) -> list[float]:
    """The parameters of the output an :func:`output_law` key stands for."""
    return np.frombuffer(key, dtype=np.float64).tolist()


def default_replacements(
    X: np.ndarray, y: np.ndarray, X_public: np.ndarray | None, n_others: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, int, str]]:
    """Records to substitute at a position: n_others public points (if any) with each label and
    n_others other private records (the label flip of the record itself is added per position)."""
    out: list[tuple[np.ndarray, int, str]] = []
    if X_public is not None:
        for j in rng.choice(X_public.shape[0], size=min(n_others, X_public.shape[0]), replace=False):
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
    base = output_law(learner.output_log_probabilities(X, y, *public))
    others = default_replacements(X, y, public[0] if public else None, n_others, rng)
    positions = range(X.shape[0]) if positions is None else positions
    worst_eps, count = 0.0, 0
    worst: dict[str, Any] = {}
    for i in positions:
        swaps = [(X[i].copy(), 1 - int(y[i]), "label flip")] + others
        for x_new, label, what in swaps:
            if np.array_equal(x_new, X[i]) and label == int(y[i]):
                continue  # not a neighbour: the same dataset
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = x_new, label
            law = output_law(make_learner().output_log_probabilities(X2, y2, *public))
            found = privacy_loss(base, law)
            count += 1
            if found.loss > worst_eps or not worst:
                worst_eps = found.loss
                output = [] if found.outcome is None else output_parameters(found.outcome)
                worst = {"position": int(i), "replacement": what, "output": output}
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
