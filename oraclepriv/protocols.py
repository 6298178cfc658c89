"""The typed seams between the learners and the optimisation layer.

The privacy proofs of Block, Bun, Desai, Shetty, Wu ("Oracle-Efficient Differentially Private
Learning with Public Data", Definition 4) need an *exact* ERM oracle; the learners only ever use
the structural interfaces below, so any object with these methods plugs in:

* :class:`ERMOracle` — weighted 0-1 ERM (weights of either sign) over one hypothesis class,
  answering with an :class:`~oraclepriv.oracle.OracleResult` whose ``certified`` flag says whether
  the answer is proved optimal over the whole class (docs/theory/certification.md). Implemented
  by :class:`~oraclepriv.oracle.Oracle` and :class:`~oraclepriv.robust.FallbackOracle`.
* :class:`ConvexERMOracle` — the convex counterpart Algorithm 3 (Regularization) calls:
  regularised ERM and the least-squares fit of Perturb over bounded linear predictors.
  Implemented by :class:`~oraclepriv.convex_oracle.ConvexOracle`.

The MIP backends' model adapter has its own protocol beside its driver
(:mod:`oraclepriv.solvers.mip.mipbackend`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from oraclepriv.convex_oracle import ConvexResult
    from oraclepriv.oracle import OracleResult

__all__ = ["ConvexERMOracle", "ERMOracle"]


@runtime_checkable
class ERMOracle(Protocol):
    """An exact weighted 0-1 ERM oracle over ``hypothesis_class`` (every call recorded in the ledger)."""

    hypothesis_class: str

    def solve(
        self, X: Any, y: Any, weights: Any = None, *, caller: str | None = None, step: str | None = None
    ) -> OracleResult:
        """argmin over the class of ``sum_i weights_i 1[h(X_i) != y_i]``, re-scored and certified.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points.
        y : array-like of shape (n,)
            Labels in {0, 1}.
        weights : array-like of shape (n,) or None, default None
            Weights of either sign; None for weight 1.
        caller : str or None, default None
            Who calls, as recorded in the ledger.
        step : str or None, default None
            Which step of the caller, as recorded in the ledger.

        Returns
        -------
        OracleResult
            The hypothesis, its objective, the bound and whether it is certified.
        """
        ...


@runtime_checkable
class ConvexERMOracle(Protocol):
    """The convex oracle of Algorithm 3: bounded linear predictors f(x) = <w, x>."""

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
        """argmin_w sum_i l(<w, X_i>, y_i) + eta_sum ||f||_m^2 (the regularised objective).

        l(v, y) = ``abs(v - y) / 2`` and ``||f||_m^2`` is the mean square of f on the public points
        Z (docs/theory/block-et-al.md, section "Algorithm 3: Regularization").

        Parameters
        ----------
        X : numpy.ndarray of shape (n, d)
            The private features.
        y_pm : numpy.ndarray of shape (n,)
            The private labels in {-1, +1}.
        Z : numpy.ndarray of shape (m, d)
            The public points.
        eta_sum : float
            The regularization weight on the sum scale (n times the per-sample eta), >= 0.
        caller : str or None, default None
            Who calls, as recorded in the ledger.
        step : str or None, default None
            Which step of the caller, as recorded in the ledger.

        Returns
        -------
        ConvexResult
            The minimiser, its objective, a certified lower bound and the gap.
        """
        ...

    def least_squares(
        self, Z: np.ndarray, u: np.ndarray, *, caller: str | None = None, step: str | None = None
    ) -> ConvexResult:
        """argmin_w ``||<w, Z> - u||^2`` over the class (Perturb's projection).

        Parameters
        ----------
        Z : numpy.ndarray of shape (m, d)
            The public points.
        u : numpy.ndarray of shape (m,)
            The targets.
        caller : str or None, default None
            Who calls, as recorded in the ledger.
        step : str or None, default None
            Which step of the caller, as recorded in the ledger.

        Returns
        -------
        ConvexResult
            The minimiser, its objective, a certified lower bound and the gap.
        """
        ...
