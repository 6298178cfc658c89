"""The oracle protocol: the one seam every learner calls.

Problem (Block et al., "Oracle-Efficient Differentially Private Learning with Public Data",
Def. 4, specialised to binary classes): given x_i in R^d, y_i in {0, 1} and real weights w_i
of either sign, return h in H minimising  sum_i w_i * 1[h(x_i) != y_i].

This module does, once, what every backend would otherwise get wrong on its own:

* validation of X, y, weights (clear errors naming the argument and value);
* the exact sign reduction  w * 1[h != y] = w + |w| * 1[h != 1 - y]  for w < 0, so backends
  only ever see w >= 0 (RRSPM's Laplace weights are negative half the time);
* re-scoring: ``objective`` is the returned hypothesis's own weighted 0-1 loss on the original
  signed problem, in float64 — never a solver's number;
* certification: ``certified`` is True iff  objective <= bound + tolerance, where ``bound`` is
  the backend's lower bound converted to the signed problem, proved over the **whole** class, and
  ``tolerance = 1e-9 * max(1, sum_i |w_i|)`` absorbs float64 summation error only. A backend whose
  bound covers a restricted class only (a margin, a box: ``Backend.restriction``) never certifies;
  its answers report ``meets_bound`` with the ``restriction`` stated. What the tolerance costs a
  private learner (a near-tie probability, the "numerical delta"): ``docs/release-boundary.md``;
* one deadline per call: with a time limit T, a :class:`~oraclepriv.solvers.runtime.deadline.Deadline` is set
  when ``solve`` starts (before validation) and every phase of the backend honours it, so the call
  returns within T plus a small overhead (``docs/deadlines.md``); ``details["overrun_seconds"]``
  records by how much it went over;
* extreme magnitudes: data whose columns or weights lie near the ends of the float64 range reach
  the backend scaled by exact powers of two (:class:`~oraclepriv.solvers.exponents.PowerOfTwoScaling`),
  and its answer is mapped back exactly;
* interrupts: a KeyboardInterrupt raised inside a backend propagates (never an "error" answer);
* the ledger: every call is recorded in every open :class:`~oraclepriv.ledger.Ledger`.

Events (backend chosen, uncertified answers, deadline overruns) are logged at DEBUG level on the
``oraclepriv.oracle`` logger.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from oraclepriv.backends import available_backends, backend_class, installed_backends
from oraclepriv.hypotheses import Hypothesis
from oraclepriv.ledger import Ledger, record_call
from oraclepriv.solvers.base import Backend, ReducedProblem, SolverNotInstalledError, Status
from oraclepriv.solvers.exponents import PowerOfTwoScaling
from oraclepriv.solvers.runtime.deadline import Deadline, check_time_limit
from oraclepriv.validation import as_features, as_labels, as_weights

__all__ = [
    "HYPOTHESIS_CLASSES",
    "MIP_PREFERENCE",
    "Oracle",
    "OracleResult",
    "Status",
    "Ledger",
    "make_oracle",
    "reduce_signed_weights",
    "default_backend",
    "certification_tolerance",
    "CERTIFICATION_RTOL",
]

HYPOTHESIS_CLASSES = ("threshold", "stump", "halfspace")

log = logging.getLogger(__name__)

#: halfspaces in d = 2 .. PORTFOLIO_MAX_D go to the ``portfolio`` backend by default (direction-bb,
#: with scip-bc for a lead in d = 7 and 8): measured faster than enumerate in d = 2, 3 and than every
#: MIP backend in d <= 5, and the only method closing noisy d = 8 data (docs/solvers/direction-bb.md);
#: above it, the MIP backends
PORTFOLIO_MAX_D = 8


#: relative tolerance of a certificate (float64 summation error only)
CERTIFICATION_RTOL = 1e-9


def certification_tolerance(weights: np.ndarray) -> float:
    """Absolute tolerance of the certificate: 1e-9 * max(1, sum |w_i|) (float64 summation error)."""
    return CERTIFICATION_RTOL * max(1.0, float(np.abs(weights).sum()))


def reduce_signed_weights(y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact reduction of a signed weighted 0-1 problem to one with non-negative weights.

    For w < 0:  w * 1[h != y] = w + |w| * 1[h != 1 - y].  Returns (y', |w|, offset) with
    loss_signed(h) = offset + loss_reduced(h) for every h, where offset = sum of negative w.
    """
    negative = weights < 0
    y_reduced = np.where(negative, 1 - y, y).astype(np.int8)
    offset = float(weights[negative].sum())
    return y_reduced, np.abs(weights), offset


#: MIP backends for halfspaces above PORTFOLIO_MAX_D, fastest first (results/bench-mip: scip-bc)
MIP_PREFERENCE = ("scip-bc", "highs", "scip", "cpsat", "pyomo")


def default_backend(hypothesis_class: str, n: int, d: int) -> str:
    """The backend ``make_oracle(..., backend=None)`` uses for a problem of this shape: an exact one
    whose solver is installed (:meth:`oraclepriv.solvers.base.Backend.is_installed`)."""
    if hypothesis_class in ("threshold", "stump"):
        name = "sweep"
    elif d <= 1:
        name = "enumerate"
    elif d <= PORTFOLIO_MAX_D:
        name = "portfolio"
    else:
        installed = [b for b in MIP_PREFERENCE if b in available_backends() and backend_class(b).is_installed()]
        name = installed[0] if installed else "direction-bb"
    log.debug("default backend for %s with n=%d, d=%d: %s", hypothesis_class, n, d, name)
    return name


@dataclass
class OracleResult:
    """One oracle answer. ``objective`` is re-scored by the hypothesis itself.

    ``meets_bound``: objective <= bound + tolerance. ``restriction``: None when ``bound`` is proved
    over the whole hypothesis class, else a description of the smaller class it is proved over.
    ``certified`` = ``meets_bound`` and ``restriction is None``: optimal over the whole class, the
    only sense in which a learner's exactness gate accepts an answer. ``status``: the backend's
    :data:`~oraclepriv.solvers.base.Status`, with "optimal" turned into "feasible" when the answer
    does not meet the bound.
    """

    hypothesis: Hypothesis
    objective: float
    bound: float
    certified: bool
    status: Status
    gap: float
    nodes: int | None
    seconds: float
    backend: str
    hypothesis_class: str
    n: int
    d: int
    signed_weights: bool
    tolerance: float
    meets_bound: bool = False
    restriction: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary (the CLI's ``--json`` output)."""
        return {
            "class": self.hypothesis_class,
            "backend": self.backend,
            "n": self.n,
            "d": self.d,
            "objective": self.objective,
            "bound": self.bound,
            "certified": self.certified,
            "meets_bound": self.meets_bound,
            "restriction": self.restriction,
            "status": self.status,
            "gap": self.gap,
            "nodes": self.nodes,
            "seconds": self.seconds,
            "signed_weights": self.signed_weights,
            "tolerance": self.tolerance,
            "hypothesis": self.hypothesis.to_dict(),
            "details": self.details,
        }


def _relative_gap(objective: float, bound: float) -> float:
    if not math.isfinite(bound):
        return math.inf
    scale = max(abs(objective), abs(bound))
    return 0.0 if scale == 0 else max(0.0, objective - bound) / scale


class Oracle:
    """An exact weighted-0-1 ERM oracle for one hypothesis class (see ``make_oracle``)."""

    def __init__(
        self,
        hypothesis_class: str,
        backend: str | type[Backend] | Backend | None = None,
        time_limit: float | None = None,
        **options: Any,
    ) -> None:
        if hypothesis_class not in HYPOTHESIS_CLASSES:
            raise ValueError(
                f"unknown hypothesis class {hypothesis_class!r}; expected one of {list(HYPOTHESIS_CLASSES)}"
            )
        if time_limit is not None:
            time_limit = check_time_limit(time_limit, "time_limit")
        if backend is None and options:
            raise ValueError(
                f"backend-specific option(s) {sorted(options)} need an explicit backend=...; with backend=None "
                "(chosen per problem) only time_limit is accepted"
            )
        self.hypothesis_class = hypothesis_class
        self.time_limit = time_limit
        self.options = dict(options)
        self._backends: dict[str, Backend] = {}
        name: str | None
        if isinstance(backend, Backend):  # a configured instance: used as it is
            if options or time_limit is not None:
                raise ValueError(
                    f"backend {backend.name!r} is an instance, already configured; pass no options or time_limit"
                )
            name = backend.name
            self._backends[name] = backend
        elif isinstance(backend, type):
            if not issubclass(backend, Backend):
                raise ValueError(f"backend must be a name, a Backend subclass or instance; got {backend!r}")
            backend_cls: type[Backend] = backend
            name = backend_cls.name
            self._backends[name] = backend_cls(time_limit=time_limit, **options)
        elif backend is not None and backend not in available_backends():
            raise ValueError(f"unknown backend {backend!r}; available backends: {available_backends()}")
        else:
            name = backend
        #: the backend's registered name, or None (chosen per problem among the installed exact backends)
        self.backend: str | None = name
        if name is not None:  # fail fast on bad options / missing solver
            self._backend_instance(name)
        log.debug(
            "oracle for %s: backend %s, time limit %s",
            hypothesis_class,
            name or "chosen per problem",
            time_limit,
        )

    def __repr__(self) -> str:
        return f"Oracle({self.hypothesis_class!r}, backend={self.backend!r}, time_limit={self.time_limit})"

    def restriction(self) -> str | None:
        """The restricted class this oracle's bounds are proved over, or None (the whole class).
        ``backend=None`` picks exact backends only, so it is then always None."""
        if self.backend is None:
            return None
        return self._backend_instance(self.backend).restriction(self.hypothesis_class)

    def _backend_instance(self, name: str) -> Backend:
        if name not in self._backends:
            cls = backend_class(name)
            if not cls.is_installed():
                packages = " and ".join(cls.requires)
                raise SolverNotInstalledError(
                    f"backend {name!r} needs the {packages} package, which is not installed here (pip install "
                    f"{' '.join(cls.requires)}); installed backends: {installed_backends()}"
                )
            self._backends[name] = cls(time_limit=self.time_limit, **self.options)
        return self._backends[name]

    def solve(
        self,
        X: ArrayLike,
        y: ArrayLike,
        weights: ArrayLike | None = None,
        *,
        caller: str | None = None,
        step: str | None = None,
    ) -> OracleResult:
        """Minimise sum_i weights[i] * 1[h(X[i]) != y[i]] over the class; record the call.

        ``caller``/``step`` label the call in the ledger (e.g. ``caller="RRSPM", step="project"``).
        """
        start = time.perf_counter()
        X = as_features(X, "X")
        n, d = X.shape
        if self.hypothesis_class == "threshold" and d != 1:
            raise ValueError(f"X must have exactly one feature for hypothesis class 'threshold'; got d={d}")
        y = as_labels(y, n, "y")
        w = as_weights(weights, n, "weights")
        name = self.backend or default_backend(self.hypothesis_class, n, d)
        backend = self._backend_instance(name)
        backend.check(self.hypothesis_class, n, d)
        limit = None if backend.time_limit is None else float(backend.time_limit)
        deadline = Deadline(limit, start=start)

        y_reduced, w_abs, offset = reduce_signed_weights(y, w)
        scaling = PowerOfTwoScaling.fit(X, w_abs, self.hypothesis_class)
        problem = ReducedProblem(
            self.hypothesis_class, scaling.scale_X(X), y_reduced, scaling.scale_w(w_abs), deadline=deadline
        )
        backend_start = time.perf_counter()
        answer = backend.solve(problem)
        backend_seconds = time.perf_counter() - backend_start

        hypothesis = scaling.hypothesis_back(answer.hypothesis)
        objective = hypothesis.loss(X, y, w)  # the hypothesis re-scores itself, signed problem
        reduced_bound = scaling.bound_back(answer.bound)
        bound = offset + reduced_bound if math.isfinite(reduced_bound) else -math.inf
        tolerance = certification_tolerance(w)
        meets_bound = bool(math.isfinite(bound) and objective <= bound + tolerance)
        restriction = backend.restriction(self.hypothesis_class)
        certified = meets_bound and restriction is None
        details = dict(answer.details)
        if details.get("incumbents") is not None:  # the backend's incumbent values, on the signed problem
            details["incumbents"] = [[t, offset + scaling.value_back(v)] for t, v in details["incumbents"]]
        details["backend_seconds"] = backend_seconds
        details["certificate"] = backend.certificate
        status: Status = answer.status
        if status == "optimal" and not meets_bound:
            # "optimal" is the solver's word about its own model; the answer is not proved optimal
            details["backend_status"] = status
            status = "feasible"
        if not scaling.identity:
            details["power_of_two_scaling"] = scaling.to_dict()
        seconds = time.perf_counter() - start
        details["time_limit"] = limit
        details["overrun_seconds"] = 0.0 if limit is None else max(0.0, seconds - limit)
        if deadline.stopped:
            details["deadline_phases"] = list(deadline.stopped)
        if details["overrun_seconds"] > 0:
            log.debug("%s took %.3f s, %.3f s over its limit of %s s", name, seconds, details["overrun_seconds"], limit)
        if not certified:
            log.debug(
                "uncertified answer from %s (%s, n=%d, d=%d): status %s, objective %.12g, bound %.12g%s",
                name,
                self.hypothesis_class,
                n,
                d,
                status,
                objective,
                bound,
                f", restricted to {restriction}" if restriction else "",
            )
        result = OracleResult(
            hypothesis=hypothesis,
            objective=objective,
            bound=bound,
            certified=certified,
            status=status,
            gap=_relative_gap(objective, bound),
            nodes=answer.nodes,
            seconds=seconds,
            backend=name,
            hypothesis_class=self.hypothesis_class,
            n=n,
            d=d,
            signed_weights=bool((w < 0).any()),
            tolerance=tolerance,
            meets_bound=meets_bound,
            restriction=restriction,
            details=details,
        )
        record_call(
            {
                "caller": caller,
                "step": step,
                "hypothesis_class": self.hypothesis_class,
                "backend": name,
                "n": n,
                "d": d,
                "signed_weights": result.signed_weights,
                "status": result.status,
                "certified": result.certified,
                "restriction": result.restriction,
                "objective": result.objective,
                "bound": result.bound,
                "gap": result.gap,
                "nodes": result.nodes,
                "seconds": result.seconds,
            }
        )
        return result


def make_oracle(hypothesis_class: str, backend: str | type[Backend] | Backend | None = None, **options: Any) -> Oracle:
    """Build an exact ERM oracle: ``make_oracle("halfspace", backend="enumerate").solve(X, y, w)``.

    ``backend``: a registered name (:func:`oraclepriv.backends.available_backends`), a Backend subclass,
    a configured Backend instance, or None to pick per call among the installed exact backends:
    ``sweep`` for thresholds and stumps; for halfspaces ``enumerate`` in d = 1, ``portfolio``
    (``direction-bb``; in d = 7 and 8 with ``scip-bc`` leading, or alone on nearly separable data) in d = 2 to :data:`PORTFOLIO_MAX_D`, and
    the first installed of :data:`MIP_PREFERENCE` above (:func:`default_backend`). Options:
    ``time_limit`` (seconds) and backend-specific keywords; unknown ones are rejected by name.
    """
    return Oracle(hypothesis_class, backend=backend, **options)
