"""The small common base every oracle backend implements.

A backend *searches*. It receives a :class:`ReducedProblem` — the signed problem after the
label-flip reduction done once in the protocol layer (``oraclepriv.oracle``), so every weight
is >= 0 — and returns a :class:`BackendAnswer`: a hypothesis plus what the backend can prove
about the optimum of the *reduced* problem (``bound``). The protocol layer re-scores the
hypothesis itself, converts the bound back to the signed problem and decides ``certified``
(``docs/theory/cover-cut-model.md``, section 4, for the MIP backends).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias, get_args, overload

import numpy as np
from oraclepriv.solvers.runtime.deadline import Deadline, check_time_limit

if TYPE_CHECKING:  # a runtime import would be circular when solvers.base is imported first
    from oraclepriv.hypotheses import Hypothesis

__all__ = [
    "Backend",
    "BackendAnswer",
    "Deadline",
    "ReducedProblem",
    "STATUSES",
    "Status",
    "UnsupportedProblemError",
    "SolverNotInstalledError",
    "fingerprint",
    "import_solver",
    "import_highspy",
    "TESTED_HIGHSPY",
    "MAX_RANDOM_SEED",
]

#: what a backend may say about its search, and the oracle about its answer. "optimal": the search
#: finished and proved its bound (the protocol keeps the word only when the answer meets that bound);
#: "feasible": a real hypothesis, but nothing proves it optimal (a heuristic model, a stalled search);
#: "time_limit": the deadline stopped the search; "infeasible": the solver's model had no solution;
#: "error": the solver failed (docs/theory/certification.md, "Why a solver status proves nothing")
Status: TypeAlias = Literal["optimal", "feasible", "time_limit", "infeasible", "error"]
#: the values of :data:`Status`, for the check of an answer built by untyped code
STATUSES: tuple[Status, ...] = get_args(Status)


#: the largest random seed a backend accepts (HiGHS', SCIP's and CP-SAT's seeds are C ints)
MAX_RANDOM_SEED = 2**31 - 1


class UnsupportedProblemError(ValueError):
    """The backend cannot solve this (class, dimension) combination.

    Raised by :meth:`Backend.check` before any search, e.g. for ``enumerate`` with d > 3.
    """


class SolverNotInstalledError(ImportError):
    """The backend's solver package is not importable in this environment.

    The message names the package to install and the version the backend is tested with.
    """


@dataclass(frozen=True)
class ReducedProblem:
    """One oracle problem after the sign reduction: min_h sum_i w_i 1[h(x_i) != y_i] with every w_i >= 0.

    The protocol (``oraclepriv.oracle``) flips the label of every point with a negative weight and
    takes the weight's absolute value; the signed loss is then a constant plus this reduced loss for
    every hypothesis, so a backend never handles signs.

    Parameters
    ----------
    hypothesis_class : str
        ``"threshold"``, ``"stump"`` or ``"halfspace"``.
    X : numpy.ndarray of shape (n, d), float64
        The points, finite.
    y : numpy.ndarray of shape (n,), int8
        The reduced labels, in {0, 1}.
    w : numpy.ndarray of shape (n,), float64
        The reduced weights, all >= 0.
    deadline : Deadline or None, default None
        The call's wall-clock deadline, set by the protocol when the call started
        (``docs/deadlines.md``); None when the backend is called directly (it then starts its own
        from its ``time_limit``, :meth:`Backend.deadline`).

    Attributes
    ----------
    n, d : int
        Number of points and dimension.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).
    """

    hypothesis_class: str
    X: np.ndarray  # (n, d) float64, finite
    y: np.ndarray  # (n,) int8 in {0, 1}
    w: np.ndarray  # (n,) float64 >= 0
    deadline: Deadline | None = field(default=None, compare=False)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def with_deadline(self, deadline: Deadline | None) -> ReducedProblem:
        """The same problem under another deadline (a backend handing the call, or part of its time, on)."""
        return dataclasses.replace(self, deadline=deadline)

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


@dataclass
class BackendAnswer:
    """What a backend found and what it proved, on the reduced (w >= 0) problem.

    Parameters
    ----------
    hypothesis : oraclepriv.hypotheses.Hypothesis
        The best hypothesis found. The protocol re-scores it; a backend's own loss figure is never used.
    bound : float
        A proved lower bound on the optimum of the reduced problem, or ``-inf`` if nothing is proved.
        Proved over the whole class unless the backend declares a :meth:`Backend.restriction`.
    status : Status, default "optimal"
        One of :data:`STATUSES`; anything else raises ValueError.
    nodes : int or None, default None
        Search nodes, where the method has them.
    details : dict, default {}
        Backend-specific diagnostics (solver status, model sizes, timings), passed through to the result.
    """

    hypothesis: Hypothesis
    bound: float  # proved lower bound on the reduced optimum (-inf if nothing is proved)
    status: Status = "optimal"
    nodes: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"BackendAnswer: status must be one of {STATUSES}, got {self.status!r}")


class Backend(ABC):
    """Base class of every oracle backend: capability flags and ``solve``.

    A backend only searches: :meth:`solve` receives a :class:`ReducedProblem` and returns a
    :class:`BackendAnswer`. Re-scoring, the conversion of the bound to the signed problem and the
    decision ``certified`` are the protocol's (``oraclepriv.oracle``). Backends are registered by
    name in ``oraclepriv.backends`` (the design follows CVXPY's solver interface: capability flags
    and ``is_installed``).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for one ``solve`` call; None for no limit. Called through the protocol, the
        deadline counts from the start of the oracle call (:meth:`deadline`). ``sweep`` (O(d n log n))
        ignores it.
    **options
        Backend-specific options, listed in :attr:`options`; any other name raises ValueError.

    Attributes
    ----------
    name : str
        The registered name.
    classes : frozenset of str
        The hypothesis classes the backend solves.
    options : frozenset of str
        The keyword options ``make_oracle`` may pass (beyond ``time_limit``).
    certificate : str
        One sentence: what ``certified`` means for an answer of this backend.
    requires : tuple of str
        Top-level packages its solver needs (checked by :meth:`is_installed`).
    time_limit : float or None
        The time limit given.
    config : dict
        The options given.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).
    .. [2] S. Diamond, S. Boyd, "CVXPY: A Python-embedded modeling language for convex
       optimization", JMLR 17(83), 2016 (its solver interface is the model for the registry).

    Examples
    --------
    A backend that always predicts 1 and proves only the trivial bound 0 (reduced weights are
    >= 0). The protocol re-scores its hypothesis on the signed problem and shifts the bound by the
    reduction's offset (here -1, from the negative weight); predicting 1 everywhere is optimal here,
    and the answer is certified:

    >>> import math
    >>> from oraclepriv import make_oracle
    >>> from oraclepriv.hypotheses import Threshold
    >>> from oraclepriv.solvers.base import Backend, BackendAnswer
    >>> class AlwaysOne(Backend):
    ...     name = "always-one"
    ...     classes = frozenset({"threshold"})
    ...     certificate = "bound 0: a reduced loss is never negative"
    ...     def solve(self, problem):
    ...         return BackendAnswer(Threshold(-math.inf), bound=0.0)
    >>> res = make_oracle("threshold", backend=AlwaysOne).solve([[0.0], [1.0]], [0, 1], [-1.0, 1.0])
    >>> res.objective, res.bound, res.certified
    (-1.0, -1.0, True)
    """

    name: ClassVar[str] = ""
    classes: ClassVar[frozenset[str]] = frozenset()
    options: ClassVar[frozenset[str]] = frozenset()
    #: one sentence: what ``certified`` means for an answer of this backend (an instance attribute where
    #: the meaning depends on the options, e.g. a MIP backend's certify mode)
    certificate: str = ""
    #: top-level Python packages its solver needs (checked by ``is_installed``, imported only when solving)
    requires: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def is_installed(cls) -> bool:
        """True if every package in ``requires`` can be imported (CVXPY's convention); nothing is imported."""
        return all(importlib.util.find_spec(package) is not None for package in cls.requires)

    def restriction(self, hypothesis_class: str) -> str | None:
        """The restricted class this backend's bound is proved over, or None for the whole class.

        A backend whose bound holds only over part of the class (a margin, a box) says so here;
        the protocol then never marks its answers ``certified`` (whole-class optimality), only
        ``meets_bound`` with this restriction stated (docs/release-boundary.md).

        Parameters
        ----------
        hypothesis_class : str
            The class of the problem.

        Returns
        -------
        str or None
            A description of the restricted class, or None.
        """
        return None

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            # the options proper; the time limit is a parameter of its own (a learner's backend_options and a
            # command-line backend spec refuse it: time_limit=, --time-limit)
            takes = f"its options: {', '.join(sorted(self.options))}" if self.options else "it takes no options"
            raise ValueError(
                f"backend {self.name!r}: unknown option(s) {unknown}; {takes} (the time limit is not one: it is "
                "the time_limit parameter)"
            )
        self.time_limit = (
            None if time_limit is None else check_time_limit(time_limit, f"backend {self.name!r}: time_limit")
        )
        self.config = dict(options)

    @overload
    def int_option(self, name: str, default: int, minimum: int, maximum: int | None = None) -> int: ...

    @overload
    def int_option(self, name: str, default: None, minimum: int, maximum: int | None = None) -> int | None: ...

    def int_option(self, name: str, default: int | None, minimum: int, maximum: int | None = None) -> int | None:
        """The integer option ``name`` (``default`` when not given; None only where the default is None, i.e.
        "unset"), or a ValueError naming the backend, the option and the value when it is not an integer in
        [minimum, maximum]."""
        value = self.config.get(name, default)
        if value is None and default is None:
            return None
        if (
            isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, np.integer))
            or value < minimum
            or (maximum is not None and value > maximum)
        ):
            if maximum is not None:
                kind = f"an integer in [{minimum}, {maximum}]"
            else:
                kind = {1: "a positive integer", 0: "a non-negative integer"}.get(minimum, f"an integer >= {minimum}")
            raise ValueError(f"backend {self.name!r}: {name} must be {kind}; got {value!r}")
        return int(value)

    def choice_option(self, name: str, default: str, choices: Iterable[str]) -> str:
        """The option ``name``, one of ``choices`` (``default`` when not given), or a ValueError naming the
        backend, the option, the choices and the value."""
        value = self.config.get(name, default)
        allowed = list(choices)
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"backend {self.name!r}: {name} must be one of {allowed}; got {value!r}")
        return value

    def number_option(self, name: str, default: float, low: float, high: float, why: str = "") -> float:
        """The real option ``name`` in [low, high] (``default`` when not given), or a ValueError naming the
        backend, the option, the range (with ``why``, when given) and the value."""
        value = self.config.get(name, default)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"backend {self.name!r}: {name} must be a number in [{low:g}, {high:g}]; got {value!r}")
        if not low <= value <= high:  # NaN too
            because = f" ({why})" if why else ""
            raise ValueError(f"backend {self.name!r}: {name} must be in [{low:g}, {high:g}]{because}; got {value!r}")
        return float(value)

    def seconds_option(self, name: str, default: float) -> float:
        """The option ``name``, a number of seconds >= 0 and at most the longest time limit (``default`` when
        not given), or a ValueError naming the backend, the option and the value."""
        from oraclepriv.solvers.runtime.deadline import MAX_TIME_LIMIT

        value = self.config.get(name, default)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"backend {self.name!r}: {name} must be a number of seconds >= 0; got {value!r}")
        if not 0 <= value <= MAX_TIME_LIMIT:  # NaN too
            raise ValueError(
                f"backend {self.name!r}: {name} must be a number of seconds >= 0 and at most {MAX_TIME_LIMIT:g}; "
                f"got {value!r}"
            )
        return float(value)

    def flag_option(self, name: str, default: bool) -> bool:
        """The yes/no option ``name`` (``default`` when not given), or a ValueError naming it when it is
        not True or False (a string such as "no" would otherwise read as True)."""
        value = self.config.get(name, default)
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"backend {self.name!r}: {name} must be True or False; got {value!r}")
        return bool(value)

    def fresh(self) -> Backend:
        """A new instance with this one's configuration and none of its state (kept models, core pools).

        Learners treat a configured instance as a template and solve with fresh copies, so that no
        solver state carries from one fit to the next, or from one teacher's block of private data to
        another's (SubsampleAggregate's parallel composition needs each teacher to see its block only).
        """
        return type(self)(time_limit=self.time_limit, **self.config)

    def check(self, hypothesis_class: str, n: int, d: int) -> None:
        """Refuse a problem this backend cannot solve, before any work.

        Parameters
        ----------
        hypothesis_class : str
            The class of the problem.
        n : int
            The number of points.
        d : int
            The number of features.

        Raises
        ------
        UnsupportedProblemError
            When the backend does not solve this class (or, in a subclass, this size).
        """
        if hypothesis_class not in self.classes:
            raise UnsupportedProblemError(
                f"backend {self.name!r} does not support hypothesis class {hypothesis_class!r}; "
                f"it supports {sorted(self.classes)}"
            )

    def deadline(self, problem: ReducedProblem) -> Deadline:
        """The deadline this search must honour: the protocol's (set when the oracle call started),
        or one starting now from ``time_limit`` when the backend is called directly."""
        if problem.deadline is not None:
            return problem.deadline
        return Deadline(None if self.time_limit is None else float(self.time_limit))

    @abstractmethod
    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        """Search the reduced problem; return the hypothesis found and what is proved about the optimum.

        A backend with a time limit honours ``self.deadline(problem)`` in every phase and returns
        within it plus a small overhead (``docs/deadlines.md``); a KeyboardInterrupt propagates.

        Parameters
        ----------
        problem : ReducedProblem
            The problem, with non-negative weights.

        Returns
        -------
        BackendAnswer
            The hypothesis found, the proved lower bound and the status.
        """


#: the highspy version this backend is pinned to (1.15 cannot share a process with ortools 9.15)
TESTED_HIGHSPY = "1.14.0"


def import_solver(module: str, *, backend: str, package: str, tested: str) -> ModuleType:
    """Import a solver's Python module, or raise SolverNotInstalledError naming the backend, the
    package to install and the version the backend is tested with."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):  # Ctrl-C inside a compiled module's init
            raise KeyboardInterrupt from exc
        raise SolverNotInstalledError(
            f"backend {backend!r} needs the {package} package (tested with {package}=={tested}; "
            f"install it with: pip install '{package}=={tested}'); importing it failed: {exc}"
        ) from exc


def import_highspy() -> ModuleType:
    """Import highspy or raise SolverNotInstalledError saying what to install."""
    return import_solver("highspy", backend="highs", package="highspy", tested=TESTED_HIGHSPY)


def fingerprint(kind: str, X: np.ndarray, y: np.ndarray, extra: tuple = ()) -> str:
    """A digest of (kind, points, reduced labels, extra): backends key the models they keep between
    calls on it (a weight-only re-solve on the same points reuses the model)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr((kind, X.shape, extra)).encode())
    digest.update(np.ascontiguousarray(X).tobytes())
    digest.update(np.ascontiguousarray(y, dtype=np.int8).tobytes())
    return digest.hexdigest()
