"""oraclepriv: oracle-efficient differentially private learning with public data, on exact ERM oracles.

Entry points: :func:`make_oracle` (exact, certified weighted-0-1 ERM), :class:`Ledger` (every oracle
call recorded), the hypothesis classes, and — in :mod:`oraclepriv.learners` — the private learners.
"""

from oraclepriv.hypotheses import Halfspace, Hypothesis, Stump, Threshold, hypothesis_from_dict
from oraclepriv.ledger import Ledger
from oraclepriv.oracle import Oracle, OracleResult, make_oracle
from oraclepriv.public_data import PublicData

__version__ = "0.1.0"

__all__ = [
    "Halfspace",
    "Hypothesis",
    "Ledger",
    "Oracle",
    "OracleResult",
    "PublicData",
    "Stump",
    "Threshold",
    "hypothesis_from_dict",
    "make_oracle",
    "__version__",
]
