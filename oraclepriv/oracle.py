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
* the ledger: every call is recorded in every open :class:`~oraclepriv.ledger.Ledger`;
* repeat calls: the oracle keeps the point set it saw last, validated, as a private read-only copy
  (:class:`~oraclepriv.solvers.kept_points.KeptPoints`); a call whose points equal it bit for bit
  skips the validation of X and hands the backend that same copy, so a backend that keeps work for its
  points (``sweep``: the sorted columns) finds it without comparing again. Any change of a value misses.
  The kept copy is dropped when the oracle is pickled or copied (:meth:`Oracle.forget` drops it too).
  When the stump oracle's compiled kernels are in the process (:mod:`~oraclepriv.solvers.combinatorial.
  sweep_compiled`), the pass over the labels and weights and a stump's re-scoring run compiled, with the
  numbers numpy computes (the same answers; docs/oracle.md).

Events (backend chosen, uncertified answers, deadline overruns) are logged at DEBUG level on the
``oraclepriv.oracle`` logger.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from oraclepriv.backends import available_backends, backend_class, installed_backends
from oraclepriv.hypotheses import Hypothesis, Stump, Threshold
from oraclepriv.ledger import Ledger, record_call
from oraclepriv.solvers.base import Backend, ReducedProblem, SolverNotInstalledError, Status
from oraclepriv.solvers.combinatorial import sweep_compiled
from oraclepriv.solvers.combinatorial.sweep import SortedColumns, SweepBackend
from oraclepriv.solvers.exponents import PowerOfTwoScaling
from oraclepriv.solvers.kept_points import KeptPoints
from oraclepriv.solvers.runtime.deadline import Deadline, check_time_limit
from oraclepriv.validation import as_features, as_labels, weights_and_magnitudes

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
    """Absolute tolerance of a certificate: ``1e-9 * max(1, sum_i |w_i|)``.

    It absorbs the float64 summation error of re-scoring a hypothesis, nothing else.

    Parameters
    ----------
    weights : numpy.ndarray
        The weights of the problem, of either sign.

    Returns
    -------
    float
        The absolute tolerance: an answer is certified when ``objective <= bound + tolerance``.
    """
    return CERTIFICATION_RTOL * max(1.0, float(np.abs(weights).sum()))


def reduce_signed_weights(
    y: np.ndarray, weights: np.ndarray, magnitudes: np.ndarray | None = None, magnitude_sum: float | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact reduction of a signed weighted 0-1 problem to one with non-negative weights.

    For ``w < 0``: ``w * 1[h != y] = w + |w| * 1[h != 1 - y]`` (docs/theory/sign-reduction.md), so
    ``loss_signed(h) = offset + loss_reduced(h)`` for every hypothesis h.

    Parameters
    ----------
    y : numpy.ndarray
        Labels in {0, 1}.
    weights : numpy.ndarray
        Weights of either sign, one per label.
    magnitudes : numpy.ndarray or None, default None
        ``np.abs(weights)`` when the caller has it already (it is then returned as the reduced weights).
    magnitude_sum : float or None, default None
        ``float(magnitudes.sum())`` when the caller has it already.

    Returns
    -------
    y_reduced : numpy.ndarray
        The labels, flipped where the weight is negative (int8).
    weights_reduced : numpy.ndarray
        The absolute values of the weights.
    offset : float
        The sum of the negative weights, computed as ``(sum w - sum |w|) / 2`` (one pass over the weights, no
        mask): within float64 summation error of it, never positive, and exactly 0 when no weight is negative.

    Examples
    --------
    >>> import numpy as np
    >>> reduce_signed_weights(np.array([0, 1, 1]), np.array([1.0, -2.0, 0.5]))
    (array([0, 0, 1], dtype=int8), array([1. , 2. , 0.5]), -2.0)
    """
    negative = weights < 0
    y_reduced = np.asarray(y, dtype=np.int8) ^ negative.view(np.int8)  # 1 - y where negative
    magnitudes = np.abs(weights) if magnitudes is None else magnitudes
    offset = 0.0
    if negative.any():
        with np.errstate(over="ignore"):
            total = float(magnitudes.sum()) if magnitude_sum is None else magnitude_sum
        if math.isfinite(total):  # the sum of the negatives is (sum w - sum |w|) / 2; halves first: no overflow
            offset = min(0.0, 0.5 * float(weights.sum()) - 0.5 * total)
        else:  # sum |w| overflows (the protocol refuses such weights): sum the negatives themselves
            offset = float(np.minimum(weights, 0.0).sum())
    return y_reduced, magnitudes, offset


def _labels_and_reduced_weights(
    y: ArrayLike, weights: ArrayLike | None, n: int
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray, float, float | None]:
    """A call's labels and weights validated and reduced: (labels as int8, weights as float64, sum |w|, reduced labels,
    |w|, offset, max |w| or None), what :func:`~oraclepriv.validation.as_labels`,
    :func:`~oraclepriv.validation.weights_and_magnitudes` and :func:`reduce_signed_weights` return, with the same
    errors; the largest magnitude where the pass found it (for :meth:`~oraclepriv.solvers.exponents.
    PowerOfTwoScaling.fit`), else None.

    When the stump oracle's kernels are in this process (:func:`~oraclepriv.solvers.combinatorial.sweep_compiled.
    loaded`; never imported for this) and the arrays are of their types, one compiled pass
    (:func:`~oraclepriv.solvers.combinatorial.sweep_kernels.signed_reduction`) makes the labels, the reduced labels
    and the magnitudes, numpy's bit for bit, and finds the largest magnitude (exact in any order); numpy adds up the
    sums as it does otherwise: the same numbers. Any input it does not cover, and any it would refuse, goes the numpy
    way (which words the error)."""
    kernels = sweep_compiled.loaded()
    if (
        kernels is not None
        and isinstance(y, np.ndarray)
        and isinstance(weights, np.ndarray)
        and y.shape == weights.shape == (n,)
        and y.dtype in (np.int8, np.int64)
        and weights.dtype == np.float64
        and y.flags.c_contiguous
        and weights.flags.c_contiguous
    ):
        labels, reduced, magnitudes = np.empty(n, dtype=np.int8), np.empty(n, dtype=np.int8), np.empty(n)
        labels_valid, any_negative, peak = kernels.signed_reduction(y, weights, labels, reduced, magnitudes)
        if labels_valid:
            with np.errstate(over="ignore"):
                abs_sum = float(magnitudes.sum())
            if math.isfinite(abs_sum):  # every weight finite: so is the largest magnitude
                offset = min(0.0, 0.5 * float(weights.sum()) - 0.5 * abs_sum) if any_negative else 0.0
                return labels, weights, abs_sum, reduced, magnitudes, offset, float(peak)
    labels = as_labels(y, n, "y")
    w, magnitudes, abs_sum = weights_and_magnitudes(weights, n, "weights")  # validated: |w| and sum |w| in one pass
    reduced, magnitudes, offset = reduce_signed_weights(labels, w, magnitudes, abs_sum)
    return labels, w, abs_sum, reduced, magnitudes, offset, None


def _rescored_loss(hypothesis: Hypothesis, points: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """The hypothesis's own weighted 0-1 loss on the signed problem (:meth:`~oraclepriv.hypotheses.Hypothesis.loss`).

    For a stump or a threshold, when the stump oracle's kernels are in this process and the arrays are of their
    types, one compiled pass (:func:`~oraclepriv.solvers.combinatorial.sweep_kernels.mistaken_weights`) makes the
    array of mistaken weights that :func:`~oraclepriv.hypotheses.weighted_zero_one_loss` makes with its predictions,
    its mask and ``numpy.compress`` (the same comparisons, the same values in the same order), and numpy sums it as
    it sums that one: the same float64 loss, in one pass instead of four. ``points``: a column-major copy serves a
    stump best (its column is contiguous)."""
    kernels = sweep_compiled.loaded()
    if (
        kernels is not None
        and isinstance(hypothesis, (Stump, Threshold))
        and type(hypothesis) in (Stump, Threshold)  # their own predict, not a subclass's
        and y.dtype == np.int8
        and w.dtype == np.float64
    ):
        feature, sign = (hypothesis.feature, hypothesis.sign) if isinstance(hypothesis, Stump) else (0, 1)
        threshold = float(hypothesis.threshold)
        column = points[:, feature] if points.ndim == 2 and feature < points.shape[1] else None
        if (
            column is not None
            and column.dtype == np.float64
            and column.shape == y.shape == w.shape
            and column.flags.c_contiguous
            and y.flags.c_contiguous
            and w.flags.c_contiguous
        ):
            mistaken = np.empty(w.shape[0])
            count = kernels.mistaken_weights(column, threshold, int(sign), y, w, mistaken)
            return float(mistaken[:count].sum())
    return hypothesis.loss(points, y, w)


#: MIP backends for halfspaces above PORTFOLIO_MAX_D, fastest first (results/bench-mip: scip-bc)
MIP_PREFERENCE = ("scip-bc", "highs", "scip", "cpsat", "pyomo")


def default_backend(hypothesis_class: str, n: int, d: int) -> str:
    """The backend ``make_oracle(..., backend=None)`` uses for a problem of this shape.

    Always an exact backend whose solver is installed (:meth:`oraclepriv.solvers.base.Backend.is_installed`):
    ``sweep`` for thresholds and stumps; for halfspaces ``enumerate`` in d = 1, ``portfolio`` in
    d = 2 to ``PORTFOLIO_MAX_D`` (8), and above it the first installed of ``MIP_PREFERENCE``
    (``direction-bb`` if none is).

    Parameters
    ----------
    hypothesis_class : {"threshold", "stump", "halfspace"}
        The class the problem minimises over.
    n : int
        The number of points.
    d : int
        The number of features.

    Returns
    -------
    str
        A registered backend name.

    Examples
    --------
    >>> default_backend("stump", n=100, d=3)
    'sweep'
    >>> default_backend("halfspace", n=100, d=3)
    'portfolio'
    """
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
    """One oracle answer, returned by :meth:`Oracle.solve`.

    ``certified`` is ``meets_bound and restriction is None``: the hypothesis is proved optimal over
    the whole class, the only sense in which a learner's exactness gate accepts an answer
    (docs/theory/certification.md).

    Parameters
    ----------
    hypothesis : Hypothesis
        The hypothesis found.
    objective : float
        Its weighted 0-1 loss on the original, signed problem, computed by the hypothesis itself in
        float64 (never a solver's number).
    bound : float
        A lower bound on the optimum, converted to the signed problem (``-inf`` when the backend proved
        none).
    certified : bool
        True iff ``meets_bound`` and ``restriction`` is None.
    status : str
        The backend's status (:data:`~oraclepriv.solvers.base.Status`: "optimal", "feasible",
        "time_limit", "infeasible" or "error"), with "optimal" turned into "feasible" when the answer
        does not meet the bound.
    gap : float
        ``max(0, objective - bound) / max(|objective|, |bound|)``, 0 when both are 0, ``inf`` without a
        bound.
    nodes : int or None
        Branch-and-bound nodes, where the backend counts them.
    seconds : float
        Wall-clock seconds of the whole call.
    backend : str
        The name of the backend that answered.
    hypothesis_class : str
        The class minimised over.
    n : int
        The number of points.
    d : int
        The number of features.
    signed_weights : bool
        Whether any weight was negative.
    tolerance : float
        The certificate's absolute tolerance (:func:`certification_tolerance`).
    meets_bound : bool, default False
        ``objective <= bound + tolerance``.
    restriction : str or None, default None
        None when ``bound`` is proved over the whole class, else a description of the smaller class
        (a margin, a box) it is proved over.
    details : dict, default {}
        Backend-specific facts (incumbents, the certificate's kind, the time limit, by how much the call
        overran it), and ``repeat_points``: whether the call's points were the previous call's.
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
        """A JSON-friendly summary (the command line's ``--json`` output).

        Returns
        -------
        dict
            Every field, the hypothesis as its :meth:`Hypothesis.to_dict`.
        """
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
    """An exact weighted 0-1 ERM oracle for one hypothesis class; built by :func:`make_oracle`.

    The ERM oracle of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private
    Learning with Public Data" (Definition 4), for binary classes and weights of either sign.

    Parameters
    ----------
    hypothesis_class : {"threshold", "stump", "halfspace"}
        The class every call minimises over.
    backend : str, Backend subclass, Backend instance or None, default None
        A registered backend name (:func:`oraclepriv.backends.available_backends`), a
        :class:`~oraclepriv.solvers.base.Backend` subclass, a configured instance (then no
        ``time_limit`` or options), or None: chosen per call among the installed exact backends
        (:func:`default_backend`).
    time_limit : float or None, default None
        Seconds per call; None for no limit. A call returns within the limit plus a small overhead,
        possibly uncertified (docs/deadlines.md).
    **options
        The backend's own keywords (each backend class lists them); they need an explicit ``backend``.

    Raises
    ------
    ValueError
        For an unknown class or backend, a bad time limit, options without a backend, or options the
        backend does not take.
    oraclepriv.solvers.base.SolverNotInstalledError
        When the named backend's solver package is not installed.

    See Also
    --------
    make_oracle : The documented way to build one.
    OracleResult : What :meth:`solve` returns.
    """

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
        self._kept: KeptPoints | None = None  # the points of the last call (module docstring, "repeat calls")
        self._sorted: SortedColumns | None = None  # their sorted columns, when asked for and no sweep holds them
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

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_kept"] = state["_sorted"] = None  # private points: never pickled or copied
        # a copy never shares a sweep backend's kept columns (copying one drops them)
        state["_backends"] = {n: copy.copy(b) if isinstance(b, SweepBackend) else b for n, b in self._backends.items()}
        return state

    def forget(self) -> None:
        """Drop the kept points of the last call, and whatever this oracle's backends keep for them."""
        self._kept = self._sorted = None
        for backend in self._backends.values():
            if isinstance(backend, SweepBackend):
                backend.forget()

    def backend_used(self, name: str) -> Backend | None:
        """The backend instance this oracle holds under ``name`` (None if it never built one)."""
        return self._backends.get(name)

    def _points(self, X: ArrayLike) -> tuple[np.ndarray, bool]:
        """(the call's points as validated float64 (n, d), whether they equal the last call's): the kept
        private copy on a match, else ``X`` validated, then copied and kept."""
        kept = self._kept
        if kept is not None:
            candidate = X[:, None] if isinstance(X, np.ndarray) and X.ndim == 1 else X
            if kept.matches(candidate):
                return kept.array, True
        points = as_features(X, "X")
        self._kept = self._sorted = None  # the old copy goes before the new one is made
        self._kept = KeptPoints.of(points)
        return self._kept.array, False

    def sorted_columns(self, X: ArrayLike) -> SortedColumns:
        """The sorted columns of ``X``'s points (:class:`~oraclepriv.solvers.combinatorial.sweep.SortedColumns`),
        kept for repeat calls: the ``sweep`` backend's own when this oracle solves with one (so a comparison
        after a call sorts nothing), else sorted once per point set here.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Finite features.

        Returns
        -------
        SortedColumns
            Each column's sorted order, its cuts between distinct values and its blocks.
        """
        points, _ = self._points(X)
        sweep = next((b for b in self._backends.values() if isinstance(b, SweepBackend)), None)
        if sweep is not None:
            return sweep.sorted_columns(points)[0]
        if self._sorted is None:
            kept = KeptPoints.holding(points)
            self._sorted = SortedColumns(points if kept is None else kept.columns)
        return self._sorted

    def restriction(self) -> str | None:
        """The restricted class this oracle's bounds are proved over, or None for the whole class.

        ``backend=None`` picks exact backends only, so it is then always None.

        Returns
        -------
        str or None
            A description of the restricted class (e.g. a margin), or None.
        """
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
        """Minimise ``sum_i weights[i] * 1[h(X[i]) != y[i]]`` over the class and record the call.

        Negative weights are reduced exactly to non-negative ones (:func:`reduce_signed_weights`); the
        answer is re-scored on the original problem and certified against the backend's bound. The call
        is recorded in every open :class:`~oraclepriv.ledger.Ledger`.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Finite features; exactly one column for thresholds.
        y : array-like of shape (n,)
            Labels in {0, 1}.
        weights : array-like of shape (n,) or None, default None
            Finite weights of either sign; None for weight 1 on every point.
        caller : str or None, default None
            Who calls, as recorded in the ledger (e.g. "RRSPM").
        step : str or None, default None
            Which step of the caller, as recorded in the ledger (e.g. "private-erm").

        Returns
        -------
        OracleResult
            The hypothesis, its objective, the bound and whether it is certified.

        Raises
        ------
        ValueError
            For features, labels or weights of the wrong shape or with non-finite values, or a problem
            the backend does not support.

        Examples
        --------
        >>> import numpy as np
        >>> oracle = make_oracle("threshold")
        >>> result = oracle.solve(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1])
        >>> result.hypothesis, result.objective, result.certified
        (Threshold(threshold=1.5), 0.0, True)
        """
        start = time.perf_counter()
        X, repeat = self._points(X)
        n, d = X.shape
        if self.hypothesis_class == "threshold" and d != 1:
            raise ValueError(f"X must have exactly one feature for hypothesis class 'threshold'; got d={d}")
        y, w, abs_sum, y_reduced, w_abs, offset, w_peak = _labels_and_reduced_weights(y, weights, n)  # validated
        name = self.backend or default_backend(self.hypothesis_class, n, d)
        backend = self._backend_instance(name)
        backend.check(self.hypothesis_class, n, d)
        limit = None if backend.time_limit is None else float(backend.time_limit)
        deadline = Deadline(limit, start=start)

        scaling = PowerOfTwoScaling.fit(X, w_abs, self.hypothesis_class, peak=w_peak)
        problem = ReducedProblem(
            self.hypothesis_class, scaling.scale_X(X), y_reduced, scaling.scale_w(w_abs), deadline=deadline
        )
        backend_start = time.perf_counter()
        answer = backend.solve(problem)
        backend_seconds = time.perf_counter() - backend_start

        hypothesis = scaling.hypothesis_back(answer.hypothesis)
        # the hypothesis re-scores itself, signed problem; a stump reads one column: of the column-major copy
        rescored = self._kept.columns if self.hypothesis_class == "stump" and self._kept is not None else X
        objective = _rescored_loss(hypothesis, rescored, y, w)
        reduced_bound = scaling.bound_back(answer.bound)
        bound = offset + reduced_bound if math.isfinite(reduced_bound) else -math.inf
        tolerance = CERTIFICATION_RTOL * max(1.0, abs_sum)  # certification_tolerance(w), from the validation's sum
        meets_bound = bool(math.isfinite(bound) and objective <= bound + tolerance)
        restriction = backend.restriction(self.hypothesis_class)
        certified = meets_bound and restriction is None
        details = dict(answer.details)
        if details.get("incumbents") is not None:  # the backend's incumbent values, on the signed problem
            details["incumbents"] = [[t, offset + scaling.value_back(v)] for t, v in details["incumbents"]]
        details["backend_seconds"] = backend_seconds
        details["repeat_points"] = repeat
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
            signed_weights=offset < 0 or bool(np.any(y_reduced != y)),  # a label flipped iff a weight is negative
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
    """Build an exact, certified weighted 0-1 ERM oracle for one hypothesis class.

    Parameters
    ----------
    hypothesis_class : {"threshold", "stump", "halfspace"}
        The class to minimise over (docs/theory/conventions.md).
    backend : str, Backend subclass, Backend instance or None, default None
        A registered name (:func:`oraclepriv.backends.available_backends`), a
        :class:`~oraclepriv.solvers.base.Backend` subclass, a configured instance, or None to pick per
        call among the installed exact backends: ``sweep`` for thresholds and stumps; for halfspaces
        ``enumerate`` in d = 1, ``portfolio`` (``direction-bb``, with ``scip-bc`` leading in d = 7 and
        8) in d = 2 to 8, and the first installed of ``MIP_PREFERENCE`` above (:func:`default_backend`).
    **options
        ``time_limit`` (seconds per call, or None) and the backend's own keywords (each backend class
        lists them); an unknown keyword is refused by name.

    Returns
    -------
    Oracle
        The oracle; its :meth:`Oracle.solve` answers with an :class:`OracleResult`.

    Raises
    ------
    ValueError
        For an unknown class, backend or option.
    oraclepriv.solvers.base.SolverNotInstalledError
        When the named backend's solver package is not installed.

    See Also
    --------
    oraclepriv.backends.installed_backends : The backends usable here.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> result = make_oracle("halfspace", backend="enumerate").solve(X, [0, 1, 1, 1], [1.0, 1.0, 1.0, -2.0])
    >>> result.objective, result.certified
    (-1.0, True)
    """
    return Oracle(hypothesis_class, backend=backend, **options)
