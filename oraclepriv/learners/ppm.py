"""PPM learning of halfspaces: Algorithm 2 ``A_LearnHalf`` of Bassily, Moran & Nandi, "Learning from
Mixtures of Private and Public Populations" (§4; docs/theory/ppm.md), as the estimator :class:`PPMHalfspaces`.

Model (label-determined privacy, §3-4): every example carries a privacy bit; label 1 = private,
label 0 = public. The learner is pure ε-DP with respect to the private records for every
realisation of the privacy bits and of the public records (Lemma 4.1); neighbouring datasets
replace one private (x, y) by any (x', y'), privacy bits and public records fixed.

    1. S_pub <- the examples whose GIVEN privacy bit says public (never recomputed from y: docs/theory/ppm.md#p2)
    2. (C̃_pub, Aff) <- A_ConstrHalf(S_pub)                         [oraclepriv.ppm.constr_half]
    3. G <- {ONES, AFF0} ∪ {1(x ∉ Aff ∩ h_1 ∩ .. ∩ h_j) : j <= d}    [oraclepriv.ppm.class_g]
    4. m(g) <- mistakes of g on ALL n examples, exactly               [oraclepriv.ppm.scoring]
    5. ĝ ~ exp(-ε m(g) / 2)  (exponential mechanism, sampled exactly) [oraclepriv.ppm.exp_mech]

No ERM oracle is called: Helly's theorem (Lemma 4.3) is only used in the proof that some g* ∈ G
is as good as the ERM halfspace (Lemma 4.5). The (non-private) ledger therefore records zero oracle
calls; ``selection_`` records the class sizes and the selected member instead (public: functions of
the public points and of the released hypothesis).

Conventions the paper names but does not spell out (§3's label-determined model, §4's
relaxation (ii); docs/theory/ppm.md#m3 and #case-11): ``private_label=0`` is the flipped convention
(public <=> label 1: run on 1 - y, invert the predictions); ``label_determined=False`` is
relaxation (ii) (public points may carry both labels; the code path is the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from oraclepriv.integer_search import largest_holding
from oraclepriv.learners._base import PrivateEstimator, make_rng
from oraclepriv.ledger import Ledger
from oraclepriv.ppm.class_g import AFF0, ONES, ClassG
from oraclepriv.ppm.constr_half import DEFAULT_RANK_TOL, DEFAULT_TOL, SUPPORT_MODES, CandidateFamily, a_constr_half
from oraclepriv.ppm.exp_mech import sample_from_histogram
from oraclepriv.ppm.hypothesis import PolytopeComplement
from oraclepriv.ppm.scoring import ScoredClass, score_class
from oraclepriv.release import COVERAGE, warn_privacy_leak
from oraclepriv.validation import (
    BOOLEAN,
    EPSILON,
    INFINITE_EPSILON,
    NO_VALIDATION,
    POSITIVE_INTEGER,
    Alternatives,
    Interval,
    StrOptions,
    check_epsilon,
)

__all__ = [
    "PPMHalfspaces",
    "LearnHalfResult",
    "a_learn_half",
    "check_public_mask",
    "exact_log_probabilities",
    "DEFAULT_MAX_HYPOTHESES",
    "ClassTooLargeError",
    "largest_public_sample",
    "REFERENCE",
]

REFERENCE = "Bassily, Moran, Nandi: Learning from Mixtures of Private and Public Populations, Alg. 2 (A_LearnHalf)"
NEIGHBOURING = "replace one private record (x, y) by any (x', y'); public records and privacy bits fixed"
#: refuse to score classes larger than this (d = 2, n_pub = 300 is ~4e9; see docs/theory/ppm.md#feasible-sizes)
DEFAULT_MAX_HYPOTHESES = 5 * 10**9


class ClassTooLargeError(ValueError):
    """The PPM learner's class G would hold more than ``max_hypotheses`` members.

    The message names the Python parameters; the attributes let a caller with other levers (the command
    line: the data file) say what to change in its own terms.

    Parameters
    ----------
    message : str
        The error message.
    size : int
        The size of G.
    limit : int
        The ``max_hypotheses`` it exceeds.
    d : int
        The number of features.
    n_public : int
        The number of distinct public points G was built from.
    n_oriented : int
        The number of oriented candidate hyperplanes.
    """

    def __init__(self, message: str, *, size: int, limit: int, d: int, n_public: int, n_oriented: int) -> None:
        super().__init__(message)
        self.size, self.limit, self.d = size, limit, d
        self.n_public = n_public  # distinct public points G was built from
        self.n_oriented = n_oriented  # |C̃|


def largest_public_sample(d: int, max_hypotheses: int = DEFAULT_MAX_HYPOTHESES) -> int:
    """The largest m such that ANY m distinct public points in d dimensions give |G| <= ``max_hypotheses``
    (support "paper": each subset of 1..d points spans at most one candidate hyperplane, two orientations,
    so |C̃| <= 2 sum_{k<=d} C(m, k), with equality in general position; |G| grows with |C̃|)."""

    def worst_size(m: int) -> int:
        n_oriented = 2 * sum(math.comb(m, k) for k in range(1, min(d, m) + 1))
        return 2 + sum(math.comb(n_oriented, j) for j in range(1, min(d, n_oriented) + 1)) if m else 1

    return largest_holding(lambda m: worst_size(m) <= max_hypotheses)


def check_public_mask(public_mask: Any, n: int, name: str = "public_mask") -> np.ndarray:
    """The privacy-status bits: a boolean array of length n (True = public). Required, never inferred."""
    if public_mask is None:
        raise ValueError(
            f"{name} is required: PPM learning needs the privacy-status bit of every example "
            "(True = public); it is never inferred from the labels"
        )
    arr = np.asarray(public_mask)
    if arr.dtype != np.bool_:
        example = arr.reshape(-1)[0] if arr.size else None
        raise ValueError(
            f"{name} must be boolean (True = public, False = private); got dtype {arr.dtype} "
            f"(first value {example!r}). Convert explicitly, e.g. np.asarray(mask, dtype=bool)"
        )
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) like y; got shape {arr.shape} (shape mismatch)")
    return arr


@dataclass
class LearnHalfResult:
    """One run of A_LearnHalf: the released hypothesis and public-only bookkeeping."""

    hypothesis: PolytopeComplement
    descriptor: tuple
    family: CandidateFamily
    G: ClassG
    public_used: np.ndarray  # indices (into X) of the public examples given to A_ConstrHalf
    seconds: dict  # non-private: timings of the steps (scoring time depends on the private data)
    selected_mistakes: int  # non-private: mistakes of the released member on all n examples


def _select_public(
    X: np.ndarray, public_mask: np.ndarray, max_public: int | None, rng: np.random.Generator
) -> np.ndarray:
    """Indices of the public examples passed to Alg 1; optionally capped at ``max_public`` distinct
    points, chosen uniformly at random (public-only and data-independent randomness: docs/theory/ppm.md#g10, #p6)."""
    idx = np.flatnonzero(public_mask)
    if max_public is None or idx.size == 0:
        return idx
    distinct, inverse = np.unique(X[idx], axis=0, return_inverse=True)
    if distinct.shape[0] <= max_public:
        return idx
    chosen = rng.choice(distinct.shape[0], size=max_public, replace=False)
    # keep every public copy of a chosen point (multiplicities are harmless: Alg 1 dedupes)
    return idx[np.isin(inverse.reshape(-1), chosen)]


def a_learn_half(
    X: np.ndarray,
    y: np.ndarray,
    public_mask: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    *,
    support: str = "paper",
    tol: float = DEFAULT_TOL,
    rank_tol: float = DEFAULT_RANK_TOL,
    max_public: int | None = None,
    max_hypotheses: int = DEFAULT_MAX_HYPOTHESES,
    inverted: bool = False,
) -> LearnHalfResult:
    """Algorithm 2 on validated arrays (y in {0,1} with 1 = private class; public_mask boolean)."""
    import time

    t0 = time.perf_counter()
    public_used = _select_public(X, public_mask, max_public, rng)
    family = a_constr_half(X[public_used], support=support, tol=tol, rank_tol=rank_tol)
    G = ClassG(family)
    if G.size > max_hypotheses:
        raise ClassTooLargeError(
            f"|G| = {G.size:.3g} exceeds max_hypotheses={max_hypotheses:.3g} (d={X.shape[1]}, "
            f"{family.points.shape[0]} distinct public points, |C̃|={family.size}); the cost grows like "
            "n_pub^(d^2). Cap the public sample with max_public=... (public-only; docs/theory/ppm.md#g10) "
            "or raise max_hypotheses",
            size=int(G.size),
            limit=int(max_hypotheses),
            d=int(X.shape[1]),
            n_public=int(family.points.shape[0]),
            n_oriented=int(family.size),
        )
    t1 = time.perf_counter()
    scored = score_class(G, X, y)
    hist = scored.histogram()  # private: never stored or released (docs/theory/ppm.md#p7)
    t2 = time.perf_counter()
    m_star, r = sample_from_histogram(hist, epsilon, rng)
    descriptor = scored.locate(m_star, r)
    hypothesis = G.hypothesis(descriptor, inverted=inverted)
    t3 = time.perf_counter()
    return LearnHalfResult(
        hypothesis=hypothesis,
        descriptor=descriptor,
        family=family,
        G=G,
        public_used=public_used,
        seconds={"construct": t1 - t0, "score": t2 - t1, "select": t3 - t2, "total": t3 - t0},
        selected_mistakes=int(m_star),
    )


def exact_log_probabilities(
    X: np.ndarray,
    y: np.ndarray,
    public_mask: np.ndarray,
    epsilon: float,
    *,
    support: str = "paper",
    tol: float = DEFAULT_TOL,
    rank_tol: float = DEFAULT_RANK_TOL,
) -> tuple[dict[tuple, float], CandidateFamily, ScoredClass]:
    """The exact output distribution of A_LearnHalf (tiny instances: enumerates every g ∈ G).

    Uses the production scorer and ``locate`` (so it audits the code the learner runs):
    log Pr[g] = -ε m(g)/2 - log Σ_m N_m e^{-εm/2}. Returns (descriptor -> log-probability, family, scored).
    ``epsilon = inf`` gives the uniform distribution over the minimisers.
    """
    eps = check_epsilon(epsilon, allow_inf=True)
    family = a_constr_half(X[np.flatnonzero(public_mask)], support=support, tol=tol, rank_tol=rank_tol)
    G = ClassG(family)
    scored = score_class(G, X, y)
    hist = scored.histogram()
    support_m = np.flatnonzero(hist)
    if math.isinf(eps):
        m0 = int(support_m[0])
        return {g: -math.log(int(hist[m0])) for g, m in scored.members() if m == m0}, family, scored
    logw = np.log(hist[support_m].astype(np.float64)) - eps * support_m / 2.0
    top = logw.max()
    log_z = top + math.log(np.exp(logw - top).sum())
    out = {g: -eps * m / 2.0 - log_z for g, m in scored.members()}
    if len(out) != G.size:
        raise AssertionError(f"enumerated {len(out)} distinct members, |G| = {G.size}")
    return out, family, scored


class PPMHalfspaces(PrivateEstimator):
    """The epsilon-DP PPM learner for halfspaces, with an improper output.

    Algorithm 2 (A_LearnHalf) of Bassily, Moran, Nandi, "Learning from Mixtures of Private and Public
    Populations" (docs/theory/ppm.md): the public examples are rows of ``X`` marked by
    ``public_mask``; no oracle call.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy parameter, > 0; ``inf`` is the exponential mechanism's non-private argmin (a
        debugging mode).
    private_label : {1, 0}, default 1
        1: the paper's convention, label 1 is private; 0: the flipped convention.
    label_determined : bool, default True
        True: public examples must carry the label ``1 - private_label``; False: relaxation (ii),
        public examples of both labels.
    support : {"paper", "affine-basis"}, default "paper"
        "paper": W ranges over the subsets of 1 to d public points; "affine-basis": the reduction of
        docs/theory/ppm.md, section "affine-basis".
    max_public : int or None, default None
        A cap on the number of distinct public points, chosen at random (public-only); None: no cap.
    max_hypotheses : int, default 5000000000
        Refuse classes G larger than this (:class:`ClassTooLargeError`).
    tol : float, default 1e-9
        The scale-relative tolerance of the geometric tests (public).
    rank_tol : float, default 1e-9
        The scale-relative tolerance of the rank tests (public).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default None
        The source of the mechanism's randomness.

    Attributes
    ----------
    release_ : Release
        The released hypothesis and the data-independent privacy record.
    hypothesis_ : PolytopeComplement
        The released (improper) hypothesis.
    selection_ : dict
        Public facts about G and the selected member.
    n_public_ : int
        The number of public examples.
    n_private_ : int
        The number of private examples.
    diagnostics_ : Diagnostics
        Non-private: ``seconds`` (step timings), ``selected_mistakes`` and the (empty) ledger. Reading
        it warns.
    """

    algorithm = "PPM-A_LearnHalf"
    diagnostic_names = ("seconds", "selected_mistakes")
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        "epsilon": (EPSILON, INFINITE_EPSILON),  # inf: the exponential mechanism's non-private argmin debug mode
        "private_label": (Interval("integer", 0, 1, "both"),),
        "label_determined": (BOOLEAN,),
        "support": (StrOptions(*SUPPORT_MODES),),
        "max_public": (None, POSITIVE_INTEGER),
        "max_hypotheses": (POSITIVE_INTEGER,),
        "tol": (Interval("real", 0.0, 1.0, "neither"),),
        "rank_tol": (Interval("real", 0.0, 1.0, "neither"),),
        "random_state": NO_VALIDATION,
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        private_label: int = 1,
        label_determined: bool = True,
        support: str = "paper",
        max_public: int | None = None,
        max_hypotheses: int = DEFAULT_MAX_HYPOTHESES,
        tol: float = DEFAULT_TOL,
        rank_tol: float = DEFAULT_RANK_TOL,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.private_label = private_label
        self.label_determined = label_determined
        self.support = support
        self.max_public = max_public
        self.max_hypotheses = max_hypotheses
        self.tol = tol
        self.rank_tol = rank_tol
        self.random_state = random_state

    #: pure epsilon-DP: the exponential mechanism has no delta
    delta = 0.0

    # ------------------------------------------------------------------ validation
    def _validate(self, X: Any, y: Any, public_mask: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._validate_params()
        eps = float(self.epsilon)
        X = self._validate_features(X, "X", reset=True)
        y = self._encode_labels(y, X.shape[0], "y")
        mask = check_public_mask(public_mask, X.shape[0])
        public_label = 1 - int(self.private_label)
        if self.label_determined and mask.any():
            bad = np.flatnonzero(y[mask] != public_label)
            if bad.size:
                i = int(np.flatnonzero(mask)[bad[0]])
                raise ValueError(
                    f"y[{i}] = {self.classes_[y[i]]!r} (class {int(y[i])}) but example {i} is public: under the label-determined model with "
                    f"private_label={self.private_label} public examples have label {public_label}. "
                    "Use label_determined=False for relaxation (ii) (public examples of both labels)"
                )
        self.epsilon_ = eps
        self.delta_ = 0.0
        # internal convention of the paper: label 1 = private class
        y_internal = y if self.private_label == 1 else (1 - y).astype(np.int8)
        return X, y_internal, mask

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X: Any, y: Any, public_mask: Any) -> PPMHalfspaces:
        """Run A_LearnHalf on (X, y) with the given privacy-status bits; returns self.

        Labels of private examples are not checked against the model: a neighbouring dataset may carry
        any label there, and an error would itself leak.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The features of every example, private and public.
        y : array-like of shape (n,)
            The labels, two classes.
        public_mask : array-like of bool, shape (n,)
            True where the example is public; required, never derived from ``y``.

        Returns
        -------
        PPMHalfspaces
            The fitted learner.
        """
        X, y_internal, mask = self._validate(X, y, public_mask)
        rng = make_rng(self.random_state)
        with Ledger() as ledger:  # the algorithm makes no oracle call; the ledger proves it
            result = a_learn_half(
                X,
                y_internal,
                mask,
                self.epsilon_,
                rng,
                support=self.support,
                tol=self.tol,
                rank_tol=self.rank_tol,
                max_public=self.max_public,
                max_hypotheses=self.max_hypotheses,
                inverted=(self.private_label == 0),
            )
        fam, G = result.family, result.G
        self.hypothesis_ = result.hypothesis
        self.n_public_ = int(mask.sum())
        self.n_private_ = int(X.shape[0] - self.n_public_)
        self.candidates_ = fam
        self.class_size_ = G.size
        self.selection_ = {
            "mechanism": "exponential mechanism, Pr[g] ∝ exp(-ε·mistakes(g)/2), exact two-pass sampler",
            "selected": _descriptor_json(result.descriptor),
            "selected_form": result.hypothesis.form,
            "selected_n_halfspaces": result.hypothesis.n_halfspaces,
            "class_size": int(G.size),
            "class_size_by_part": {k: int(v) for k, v in G.size_by_j().items()},
            "n_candidates": int(fam.size),
            "n_subsets": int(fam.n_subsets),
            "support_mode": fam.support_mode,
            "n_public_used": int(result.public_used.size),
            "n_distinct_public": int(fam.points.shape[0]),
            "aff_dim": None if fam.aff is None else int(fam.aff.dim),
            "membership_tol": float(fam.tau),
            "oracle_calls": len(ledger),
            "oracle_note": "A_LearnHalf makes no ERM-oracle call: Helly's theorem is used only in the "
            "proof of Lemma 4.5",
        }
        private = not math.isinf(self.epsilon_)
        privacy = {
            "epsilon": float(self.epsilon_),
            "delta": 0.0,
            "numerical_delta": 0.0,
            "guarantee": (
                f"pure {self.epsilon_:g}-DP w.r.t. the private portion (no oracle call)"
                if private
                else "none: epsilon=inf is the non-private debug mode (uniform over the minimisers)"
            ),
            "private": private,
            "mechanism": "exponential mechanism (McSherry-Talwar), score -mistakes over all n examples, "
            "sensitivity 1 (one private record replaced, label included)",
            "calibration": "Pr[g] ∝ exp(-eps * mistakes(g) / 2)",
            "calibration_source": "the paper: Lemma 4.1",
            "neighbouring": NEIGHBOURING,
            "reference": REFERENCE,
            "lemma": "Lemma 4.1: ε-DP w.r.t. the private portion for every realisation of the privacy bits "
            "and of the public portion",
            "not_protected": "the number and positions of private examples (under label-determined privacy, "
            "the number of private-label examples); public examples",
            "convention": f"private_label={self.private_label}, label_determined={bool(self.label_determined)}",
            "class_size": int(G.size),
            "oracle_calls_by_design": 0,
            "covers": COVERAGE,
        }
        if not private:
            warn_privacy_leak(
                "PPMHalfspaces(epsilon=inf) is the non-private debug mode: the release has no privacy guarantee"
            )
        self._publish(
            result.hypothesis,
            privacy,
            ledger,
            {
                "seconds": {k: float(v) for k, v in result.seconds.items()},
                "selected_mistakes": result.selected_mistakes,
            },
        )
        return self


def _descriptor_json(descriptor: tuple) -> Any:
    if descriptor in (ONES, AFF0):
        return descriptor[0]
    return [int(o) for o in descriptor]
