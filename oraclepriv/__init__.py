"""oraclepriv: oracle-efficient differentially private learning with public data, on exact ERM oracles.

Entry points: :func:`make_oracle` (exact, certified weighted-0-1 ERM), :class:`Ledger` (every oracle
call recorded), the hypothesis classes, and — in :mod:`oraclepriv.learners` — the private learners.
"""

from typing import Any

from oraclepriv.accountant import BudgetExceededError, PrivacyAccountant
from oraclepriv.hypotheses import Halfspace, Hypothesis, Stump, Threshold, hypothesis_from_dict
from oraclepriv.ledger import Ledger
from oraclepriv.oracle import Oracle, OracleResult, make_oracle
from oraclepriv.public_data import PublicData

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "Halfspace",
    "Hypothesis",
    "Ledger",
    "Oracle",
    "OracleResult",
    "PrivacyAccountant",
    "PrivateGridSearch",
    "PublicData",
    "Stump",
    "Threshold",
    "hypothesis_from_dict",
    "make_oracle",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """``PrivateGridSearch`` is imported on first use: it needs scikit-learn, which ``import oraclepriv`` does
    not load (the command line starts without it)."""
    if name == "PrivateGridSearch":
        from oraclepriv.selection import PrivateGridSearch

        return PrivateGridSearch
    raise AttributeError(f"module 'oraclepriv' has no attribute {name!r}")
