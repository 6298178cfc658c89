"""The convex ERM oracle: the protocol Algorithm 3 calls for its convex class.

Algorithm 3 (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with
Public Data"; docs/theory/block-et-al.md, section "Algorithm 3: Regularization")
needs F convex, so its oracle solves convex problems over bounded linear predictors
F = {x -> <w, x> : ||w||_inf <= 1} instead of weighted 0-1 problems. This module is to that
oracle what :mod:`oraclepriv.oracle` is to the 0-1 oracle: learners call it, it loads the
backend lazily (``solvers/convex_linear.py``), and it records every call in the open ledgers
with the same fields (caller, step, class, backend, n, d, status, certified, objective, bound,
gap, nodes, seconds).

Backend names: the convex registry (:data:`oraclepriv.backends.CONVEX_BACKENDS`, the same mechanism as the
0-1 backends') holds ``"highs-qp+kkt"``, the name the backend records for its calls (HiGHS' QP on the box QP, a
KKT polish and a Lagrangian certificate; the name ``oraclepriv bench convex`` and the oracle-cost cells use
too). ``"scipy"``, the key from when the backend was SciPy's SLSQP, is a deprecated alias of it for one
release: it still works and emits a ``FutureWarning``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from oraclepriv.backends import CONVEX_BACKENDS
from oraclepriv.hypotheses import LinearPredictor
from oraclepriv.ledger import CallRecord, record_call
from oraclepriv.solvers.base import Status
from oraclepriv.validation import as_features, check_positive

__all__ = [
    "CONVEX_BACKENDS",
    "CONVEX_BACKEND_ALIASES",
    "DEFAULT_CONVEX_BACKEND",
    "ConvexOracle",
    "ConvexResult",
    "convex_backend_key",
    "make_convex_oracle",
]

#: the backend ``backend=None`` selects; its key is the name it records for its calls (``ConvexLinearBackend.backend``)
DEFAULT_CONVEX_BACKEND = "highs-qp+kkt"
#: deprecated backend names -> the key they stand for (each use emits a FutureWarning); to be removed in the next release
CONVEX_BACKEND_ALIASES = CONVEX_BACKENDS.aliases


def convex_backend_key(backend: Any, argument: str = "backend", *, warn: bool = True, stacklevel: int = 2) -> str:
    """The registry key ``backend`` selects: None -> :data:`DEFAULT_CONVEX_BACKEND`; a deprecated alias -> its key,
    with a ``FutureWarning`` naming the new value unless ``warn`` is False (``stacklevel`` is warnings.warn's, seen
    from the caller of this function: 2, the default, points at that caller's caller); anything else not in
    :data:`CONVEX_BACKENDS` -> a ValueError naming ``argument`` and the value."""
    if backend is None:
        return DEFAULT_CONVEX_BACKEND
    if isinstance(backend, str) and backend in CONVEX_BACKENDS:
        return backend
    if isinstance(backend, str) and backend in CONVEX_BACKENDS.aliases:
        key = CONVEX_BACKENDS.canonical(backend)
        if warn:
            warnings.warn(
                f"{argument}={backend!r} is deprecated and will be removed in the next release; use "
                f"{argument}={key!r} (the same backend: HiGHS' QP plus a KKT polish and a Lagrangian certificate; "
                "no SciPy solver runs)",
                FutureWarning,
                stacklevel=stacklevel + 1,
            )
        return key
    aliases = ", ".join(f"{old!r} (deprecated alias of {new!r})" for old, new in CONVEX_BACKENDS.aliases.items())
    raise ValueError(
        f"{argument} must be None or one of {CONVEX_BACKENDS.names()} (the convex oracle's backends; also accepted: "
        f"{aliases}); got {backend!r}"
    )


@dataclass
class ConvexResult:
    """One convex-oracle answer: ``certified`` iff ``gap <= opt_tol``, against a proved bound.

    Parameters
    ----------
    hypothesis : LinearPredictor
        The minimiser found.
    objective : float
        Its objective.
    bound : float
        A proved lower bound on the optimum (a Lagrangian bound, docs/convex-oracle.md).
    certified : bool
        Whether ``gap <= opt_tol``.
    status : {'optimal', 'feasible', 'time_limit', 'infeasible', 'error'}
        The backend's status (:data:`oraclepriv.solvers.base.Status`).
    gap : float
        ``objective - bound``, at least 0, with the objective's rounding error bound added for the
        regularized ERM.
    nodes : int or None
        Not used by the convex backend (None).
    seconds : float
        Wall-clock seconds of the call.
    backend : str
        The backend's name.
    """

    hypothesis: LinearPredictor
    objective: float
    bound: float
    certified: bool
    status: Status
    gap: float
    nodes: int | None
    seconds: float
    backend: str

    @property
    def w(self) -> np.ndarray:
        return np.asarray(self.hypothesis.w)


class ConvexOracle:
    """Regularized ERM and bounded least squares over bounded linear predictors (module docstring).

    The convex oracle of Algorithm 3 (Regularization) of Block, Bun, Desai, Shetty, Wu,
    "Oracle-Efficient Differentially Private Learning with Public Data"; every call is certified by
    a proved lower bound and recorded in the ledger (docs/convex-oracle.md).

    Parameters
    ----------
    backend : str or None, default None
        The convex backend: None or "highs-qp+kkt" (its one backend); "scipy" is a deprecated alias
        and warns.
    opt_tol : float, default 1e-6
        The largest gap ``objective - bound`` a certified answer may have, > 0.

    Raises
    ------
    ValueError
        For an unknown backend or a non-positive ``opt_tol``.
    """

    def __init__(self, backend: str | None = None, opt_tol: float = 1e-6) -> None:
        name = convex_backend_key(backend, "backend", stacklevel=2)
        self.name = name
        self.solver = CONVEX_BACKENDS.get(name)(opt_tol=check_positive(opt_tol, "opt_tol"))

    def _finish(
        self, w: np.ndarray, info: dict[str, Any], caller: str | None, step: str | None, start: float
    ) -> ConvexResult:
        seconds = time.perf_counter() - start
        record_call(cast(CallRecord, {"caller": caller, "step": step, **info, "seconds": seconds}))
        return ConvexResult(
            hypothesis=LinearPredictor(tuple(float(v) for v in w)),
            objective=info["objective"],
            bound=info["bound"],
            certified=bool(info["certified"]),
            status=info["status"],
            gap=info["gap"],
            nodes=info.get("nodes"),
            seconds=seconds,
            backend=info["backend"],
        )

    def regularized_erm(
        self,
        X: np.ndarray,
        y_pm: np.ndarray,
        Z: np.ndarray,
        eta_sum: float,
        *,
        caller: str | None = None,
        step: str | None = None,
    ) -> ConvexResult:
        """The regularized ERM ``argmin_w sum_i abs(<w, X_i> - y_i) / 2 + eta_sum * ||<w, .>||_m^2``.

        ``||.||_m`` is the root mean square over the public points Z; w ranges over ``||w||_inf <= 1``.

        Parameters
        ----------
        X : numpy.ndarray of shape (n, d)
            The private features.
        y_pm : numpy.ndarray of shape (n,)
            The private labels in {-1, +1}.
        Z : numpy.ndarray of shape (m, d)
            The public points (at least one).
        eta_sum : float
            The regularization weight on the sum scale, finite and >= 0.
        caller : str or None, default None
            Who calls, as recorded in the ledger.
        step : str or None, default None
            Which step of the caller, as recorded in the ledger.

        Returns
        -------
        ConvexResult
            The minimiser, its objective, the certified bound and the gap.

        Raises
        ------
        ValueError
            For inputs of the wrong shape, non-finite values, labels outside {-1, +1} or a negative
            ``eta_sum``.
        """
        start = time.perf_counter()
        X, y_pm, Z, eta_sum = _checked_regularized(X, y_pm, Z, eta_sum)
        w, info = self.solver.solve_regularized(X, y_pm, Z, eta_sum)
        return self._finish(w, info, caller, step, start)

    def least_squares(
        self, Z: np.ndarray, u: np.ndarray, *, caller: str | None = None, step: str | None = None
    ) -> ConvexResult:
        """The bounded least squares ``argmin_w sum_i (<w, Z_i> - u_i)^2`` over ``||w||_inf <= 1``.

        Perturb's projection (Algorithm 1).

        Parameters
        ----------
        Z : numpy.ndarray of shape (m, d)
            The public points.
        u : numpy.ndarray of shape (m,)
            The targets, finite.
        caller : str or None, default None
            Who calls, as recorded in the ledger.
        step : str or None, default None
            Which step of the caller, as recorded in the ledger.

        Returns
        -------
        ConvexResult
            The minimiser, its objective, the certified bound and the gap.
        """
        start = time.perf_counter()
        Z = as_features(Z, "Z", allow_1d=False)
        u = _finite_vector(u, Z.shape[0], "u", "Z")
        w, info = self.solver.solve_least_squares(Z, u)
        return self._finish(w, info, caller, step, start)


def _finite_vector(values: Any, n: int, name: str, rows_of: str) -> np.ndarray:
    """``values`` as a finite float64 vector of length n (the rows of ``rows_of``), or a ValueError naming it."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; got {values!r:.80}") from None
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a vector with one entry per row of {rows_of} ({n}); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(
            f"{name} must be finite; entry {int(np.flatnonzero(~np.isfinite(arr))[0])} is {arr[~np.isfinite(arr)][0]}"
        )
    return arr


def _checked_regularized(X: Any, y_pm: Any, Z: Any, eta_sum: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The regularized problem's inputs, or a ValueError naming the bad one: X and Z finite with the same
    columns (Z at least one row: ||.||_m averages over it), labels in {-1, +1}, eta_sum finite and >= 0
    (a negative weight makes the problem non-convex and the Lagrangian certificate invalid)."""
    X = as_features(X, "X", allow_1d=False)
    Z = as_features(Z, "Z", allow_1d=False)
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z has {Z.shape[1]} columns but X has {X.shape[1]} (shape mismatch)")
    y = _finite_vector(y_pm, X.shape[0], "y_pm", "X")
    bad = (y != 1.0) & (y != -1.0)
    if bad.any():
        raise ValueError(
            f"y_pm must contain labels in {{-1, +1}}; entry {int(np.flatnonzero(bad)[0])} is {float(y[bad][0])!r}"
        )
    try:
        eta = float(eta_sum)
    except (TypeError, ValueError):
        raise ValueError(f"eta_sum must be a finite number >= 0; got {eta_sum!r}") from None
    if not (math.isfinite(eta) and eta >= 0.0):
        raise ValueError(f"eta_sum must be a finite number >= 0; got {eta_sum!r}")
    return X, y, Z, eta


def make_convex_oracle(backend: str | None = None, **options: Any) -> ConvexOracle:
    """Build the convex oracle of Algorithm 3 (Regularization).

    Parameters
    ----------
    backend : str or None, default None
        None or "highs-qp+kkt" (the one convex backend); the deprecated "scipy" selects it with a
        FutureWarning.
    **options
        ``opt_tol`` (float, default 1e-6): the largest certified gap.

    Returns
    -------
    ConvexOracle
        The oracle.

    Examples
    --------
    >>> import numpy as np
    >>> oracle = make_convex_oracle(opt_tol=1e-6)
    >>> result = oracle.least_squares(np.array([[1.0], [0.5]]), np.array([0.5, 0.25]))
    >>> result.certified, round(result.hypothesis.w[0], 6)
    (True, 0.5)
    """
    return ConvexOracle(convex_backend_key(backend, "backend", stacklevel=2), **options)
