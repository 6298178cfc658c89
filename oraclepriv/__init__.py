"""oraclepriv: oracle-efficient differentially private learning with public data, on exact ERM oracles.

Entry points: :func:`make_oracle` (exact, certified weighted-0-1 ERM), :class:`Ledger` (every oracle
call recorded), the hypothesis classes, and — in :mod:`oraclepriv.learners` — the private learners.

The names below are imported on first use (PEP 562), so that ``import oraclepriv`` loads neither numpy nor
scikit-learn: the command line's launcher starts with it and answers Ctrl-C during its own imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oraclepriv.accountant import BudgetExceededError, PrivacyAccountant
    from oraclepriv.hypotheses import Halfspace, Hypothesis, Stump, Threshold, hypothesis_from_dict
    from oraclepriv.ledger import Ledger
    from oraclepriv.oracle import Oracle, OracleResult, make_oracle
    from oraclepriv.public_data import PublicData
    from oraclepriv.release import PrivacyLeakWarning, Release, load_release
    from oraclepriv.selection import PrivateGridSearch

__version__ = "0.1.0"

#: each public name and the module that defines it
_HOMES = {
    "BudgetExceededError": "oraclepriv.accountant",
    "PrivacyAccountant": "oraclepriv.accountant",
    "Halfspace": "oraclepriv.hypotheses",
    "Hypothesis": "oraclepriv.hypotheses",
    "Stump": "oraclepriv.hypotheses",
    "Threshold": "oraclepriv.hypotheses",
    "hypothesis_from_dict": "oraclepriv.hypotheses",
    "Ledger": "oraclepriv.ledger",
    "Oracle": "oraclepriv.oracle",
    "OracleResult": "oraclepriv.oracle",
    "make_oracle": "oraclepriv.oracle",
    "PublicData": "oraclepriv.public_data",
    "PrivacyLeakWarning": "oraclepriv.release",
    "Release": "oraclepriv.release",
    "load_release": "oraclepriv.release",
    "PrivateGridSearch": "oraclepriv.selection",
}

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


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use and keep it here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'oraclepriv' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
