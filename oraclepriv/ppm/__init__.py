"""PPM learning of halfspaces (R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures of Private and
Public Populations"): Algorithm 1 (:mod:`.constr_half`), the class G of Algorithm 2
(:mod:`.class_g`), exact streaming scoring (:mod:`.scoring`) and the exponential mechanism
(:mod:`.exp_mech`). The estimator is :class:`oraclepriv.learners.ppm.PPMHalfspaces`. The construction,
the guarantees it relies on and its test cases: ``docs/theory/ppm.md``.
"""

from oraclepriv.ppm.class_g import AFF0, ONES, ClassG
from oraclepriv.ppm.constr_half import AffineHull, CandidateFamily, a_constr_half
from oraclepriv.ppm.hypothesis import PolytopeComplement, polytope_complement_from_dict
from oraclepriv.ppm.scoring import ScoredClass, brute_force_mistakes, score_class

__all__ = [
    "AFF0",
    "ONES",
    "AffineHull",
    "CandidateFamily",
    "ClassG",
    "PolytopeComplement",
    "ScoredClass",
    "a_constr_half",
    "brute_force_mistakes",
    "polytope_complement_from_dict",
    "score_class",
]
