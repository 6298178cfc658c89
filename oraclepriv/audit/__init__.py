"""Privacy audits (design and statistics: docs/theory/audits.md) of the learners of Block, Bun, Desai,
Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data" and of the baselines:
run whole learners many times on neighbouring private datasets with fixed public data and bound the
privacy loss from below with Clopper–Pearson intervals. Negative controls in
:mod:`oraclepriv.audit.controls`.
"""

from oraclepriv.audit.runner import AuditResult, Neighbours, audit_learner, outcome_key
from oraclepriv.audit.scenarios import flip_scenario, leak_scenario, quantile_scenario, tight_construction
from oraclepriv.audit.stats import EpsilonEstimate, clopper_pearson, estimate_epsilon

__all__ = [
    "AuditResult",
    "EpsilonEstimate",
    "Neighbours",
    "audit_learner",
    "clopper_pearson",
    "estimate_epsilon",
    "flip_scenario",
    "leak_scenario",
    "outcome_key",
    "quantile_scenario",
    "tight_construction",
]
