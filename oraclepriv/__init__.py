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
    "PrivacyLeakWarning",
    "PrivateGridSearch",
    "PublicData",
    "Release",
    "Stump",
    "Threshold",
    "hypothesis_from_dict",
    "load_release",
    "make_oracle",
    "__version__",
]


#: names of oraclepriv.release exported here: PrivacyLeakWarning (what every privacy warning is),
#: Release (a fit's published object) and load_release (a saved release, ready to predict)
_RELEASE_NAMES = ("PrivacyLeakWarning", "Release", "load_release")


def __getattr__(name: str) -> Any:
    """``PrivateGridSearch`` and the release names are imported on first use: they need scikit-learn, which
    ``import oraclepriv`` does not load (the command line starts without it)."""
    if name == "PrivateGridSearch":
        from oraclepriv.selection import PrivateGridSearch

        return PrivateGridSearch
    if name in _RELEASE_NAMES:  # the release boundary (oraclepriv.release) needs scikit-learn too
        import oraclepriv.release

        return getattr(oraclepriv.release, name)
    raise AttributeError(f"module 'oraclepriv' has no attribute {name!r}")
