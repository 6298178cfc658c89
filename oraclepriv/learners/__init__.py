"""Private learners of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private
Learning with Public Data" (docs/theory/block-et-al.md), one module per algorithm:

* :mod:`~oraclepriv.learners.perturb` — Algorithm 1 (Perturb), the shared last step;
* :mod:`~oraclepriv.learners.perturbation` — Algorithm 2 (Perturbation), J + 1 oracle calls;
* :mod:`~oraclepriv.learners.regularization` — Algorithm 3 (Regularization), 2 oracle calls;
* :mod:`~oraclepriv.learners.rrspm` — Algorithm 4 (RRSPM), 2 oracle calls;
* :mod:`~oraclepriv.learners.rspm` — Algorithm 5 (RSPM, Neel-Roth-Wu), 1 oracle call, on a grid domain;

and, private for ANY oracle (docs/theory/robustification.md, section
"Subsample-and-aggregate: private for any oracle"):

* :mod:`~oraclepriv.learners.subsample` — subsample-and-aggregate, Perturb as the aggregator;

the exponential-mechanism baseline of Wang, Lei, Fienberg, "Learning with Differential Privacy:
Stability, Learnability and the Sufficiency and Necessity of ERM Principle" (Alg. 1 with Ex. 3/7) and
Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees" (Alg. 5), no oracle
call (docs/theory/public-cover-em.md):

* :mod:`~oraclepriv.learners.public_cover_em` — PublicCoverEM, the EM over the labelings of the public points;

and of Bassily, Moran, Nandi, "Learning from Mixtures of Private and Public Populations"
(docs/theory/ppm.md):

* :mod:`~oraclepriv.learners.ppm` — Algorithm 2 (A_LearnHalf, Helly-based PPM learner), no oracle call;

and of Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees"
(docs/theory/margin-learners.md), no public data and no oracle call:

* :mod:`~oraclepriv.learners.margin` — MarginERM (Algorithm 2 with Algorithm 4) and AdaptiveMarginERM (Algorithm 6).

Every learner is a scikit-learn-style estimator: ``fit(X_private, y_private, X_public=Z)``
returns self; fitted ``hypothesis_``, ``ledger_`` (this fit's oracle calls) and ``privacy_``;
``predict(X)``; ``summary()`` (JSON-friendly).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oraclepriv.learners._base import NEIGHBOURING, NotFittedError, PrivateLearner, UncertifiedOracleError
    from oraclepriv.learners.margin import AdaptiveMarginERM, MarginERM
    from oraclepriv.learners.output_perturbation import OutputPerturbationLogistic
    from oraclepriv.learners.perturbation import Perturbation
    from oraclepriv.learners.ppm import PPMHalfspaces
    from oraclepriv.learners.public_cover_em import PublicCoverEM
    from oraclepriv.learners.regularization import LinearPredictor, Regularization
    from oraclepriv.learners.rrspm import RRSPM
    from oraclepriv.learners.rspm import RSPM
    from oraclepriv.learners.subsample import SubsampleAggregate

#: each public name and the module that defines it: imported on first use (PEP 562), so that the learner
#: registry (:mod:`oraclepriv.learners.registry`), which the command line's help reads, loads no learner and
#: not scikit-learn
_HOMES = {
    "NEIGHBOURING": "oraclepriv.learners._base",
    "NotFittedError": "oraclepriv.learners._base",
    "PrivateLearner": "oraclepriv.learners._base",
    "UncertifiedOracleError": "oraclepriv.learners._base",
    "AdaptiveMarginERM": "oraclepriv.learners.margin",
    "MarginERM": "oraclepriv.learners.margin",
    "OutputPerturbationLogistic": "oraclepriv.learners.output_perturbation",
    "Perturbation": "oraclepriv.learners.perturbation",
    "PPMHalfspaces": "oraclepriv.learners.ppm",
    "PublicCoverEM": "oraclepriv.learners.public_cover_em",
    "LinearPredictor": "oraclepriv.learners.regularization",
    "Regularization": "oraclepriv.learners.regularization",
    "RRSPM": "oraclepriv.learners.rrspm",
    "RSPM": "oraclepriv.learners.rspm",
    "SubsampleAggregate": "oraclepriv.learners.subsample",
}

__all__ = [
    "AdaptiveMarginERM",
    "LinearPredictor",
    "MarginERM",
    "NEIGHBOURING",
    "NotFittedError",
    "OutputPerturbationLogistic",
    "Perturbation",
    "PPMHalfspaces",
    "PrivateLearner",
    "PublicCoverEM",
    "RRSPM",
    "RSPM",
    "Regularization",
    "SubsampleAggregate",
    "UncertifiedOracleError",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'oraclepriv.learners' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
