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
        """argmin over the class of sum_i weights_i 1[h(X_i) != y_i], re-scored and certified."""
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
        """argmin_w sum_i l(<w, X_i>, y_i) + eta_sum ||f||_m^2 (the regularised objective)."""
        ...

    def least_squares(
        self, Z: np.ndarray, u: np.ndarray, *, caller: str | None = None, step: str | None = None
    ) -> ConvexResult:
        """argmin_w ||<w, Z> - u||^2 over the class (Perturb's projection)."""
        ...
