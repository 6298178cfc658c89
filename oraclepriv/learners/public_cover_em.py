"""PublicCoverEM — the exponential mechanism over the labelings of the public points.

The statistically strong, computationally inefficient baseline in the data model of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient
Differentially Private Learning with Public Data"
(private labelled records plus public unlabelled points): Wang, Lei, Fienberg, "Learning with
Differential Privacy: Stability, Learnability and the Sufficiency and Necessity of ERM Principle"
(JMLR 17, 2016), Algorithm 1 with Examples 3 and 7 (the exponential mechanism over a
finite cover built without private data), and Bassily, Mohri, Suresh, "Differentially Private
Learning with Margin Guarantees" (NeurIPS 2022), Algorithm 5 (the cover taken from the
points themselves). The construction and its guarantees: ``docs/theory/public-cover-em.md``.

1. C = one representative hypothesis for every labeling of the public points Z that the class
   realizes (:func:`oraclepriv.cover.public_cover`; uses Z only);
2. err(c) = number of private records c misclassifies;
3. release c with probability proportional to exp(-eps err(c) / (2 Delta)) (Gumbel-max sampling
   in log space).

Privacy: pure eps-DP under replacement of one private record, for *any* cover computed from public
data. Replacing one record changes every err(c) by at most Delta = 1 (``sensitivity="tight"``), so
each weight moves by a factor in [e^{-eps/2}, e^{eps/2}] and so does the normaliser (McSherry and
Talwar 2007). ``sensitivity="paper"`` uses Delta = 2, the 2/n convention of Wang, Lei, Fienberg's Algorithm 1 (docs/theory/public-cover-em.md#sensitivity)
(valid, half the privacy loss, and half as accurate). The output law is explicit, so the audit is
exact: :func:`oraclepriv.audit.exact.audit_exact_distribution` computes it on neighbouring datasets
and reports the largest log-ratio (``oraclepriv audit public-cover``).

Label-DP variant (``cover="private-features"``; Bassily, Mohri, Suresh's Algorithm 5, specialised to {0,1}-valued classes (docs/theory/public-cover-em.md#label-dp)): the cover is
built from the private features themselves and only the labels are protected. Neighbouring is then
"change one private label", a weaker notion than the record-level one of every other learner here
(``privacy_["neighbouring"]`` says so); the exact audit passes it on label flips and shows that it
is not private when a record's features change (the cover itself moves).

Accuracy (Dwork and Roth, Thm 3.11): with probability >= 1 - beta,
err(c) <= min_C err + (2 Delta / eps)(ln |C| + ln(1/beta)); |C| <= 2 sum_{i<=d} C(m - 1, i) for
halfspaces. Cost: no oracle call, but the cover is exponential in d for halfspaces
(C(m, d) 2^(d+1) hypotheses scored; ``max_candidates`` bounds it, ``max_public`` subsamples Z).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from oraclepriv.cover import DEFAULT_MAX_CANDIDATES, PublicCover, largest_halfspace_cover, public_cover
from oraclepriv.learners._base import PublicDataEstimator
from oraclepriv.learners._public_size import (
    PUBLIC_SIZE_CONSTRAINTS,
    PublicSizeMixin,
    balance_point,
    check_public_size,
    vc_dimension,
)
from oraclepriv.learners.rrspm import log_projection_bound
from oraclepriv.public_data import PublicData
from oraclepriv.release import warn_privacy_leak
from oraclepriv.validation import BOOLEAN, POSITIVE_INTEGER, Alternatives, StrOptions

__all__ = [
    "PublicCoverEM",
    "SENSITIVITIES",
    "COVERS",
    "LABEL_DP_NEIGHBOURING",
    "cover_em_public_size",
    "em_log_probabilities",
]

#: Delta of the mistake count under replacement of one record: "tight" 1, "paper" 2 (Wang, Lei, Fienberg, Alg. 1)
SENSITIVITIES = {"tight": 1.0, "paper": 2.0}
#: where the cover comes from: the public points (record-level DP) or the private features (label-DP)
COVERS = ("public", "private-features")
LABEL_DP_NEIGHBOURING = "change one private label; private features and public data fixed (label-DP)"


def em_log_probabilities(log_weights: np.ndarray) -> np.ndarray:
    """Normalised log-probabilities of the exponential mechanism from unnormalised log-weights."""
    lw = np.asarray(log_weights, dtype=np.float64)
    top = float(lw.max())
    return lw - (top + math.log(float(np.exp(lw - top).sum())))


def cover_em_public_size(n: int, hypothesis_class: str, n_features: int, epsilon: float, sensitivity: float) -> int:
    """The default number of public points for PublicCoverEM (docs/theory/block-et-al.md, "Choosing m";
    our derivation, constants 1, sigma = 1): where the projection term sqrt(d/m) (as in Block et al.,
    Lemma 22: the best labeling of Z against the best hypothesis) meets the exponential mechanism's
    slack 2 Delta ln|C(m)| / (eps n) (Dwork and Roth, Theorem 3.11), |C(m)| the number of labelings the
    class induces on m points. Halfspace covers are also kept within the default ``max_candidates``.
    """
    vc = vc_dimension(hypothesis_class, n_features)
    m = balance_point(
        lambda m: math.sqrt(vc / m),
        lambda m: 2.0 * sensitivity * log_projection_bound(hypothesis_class, m, n_features) / (epsilon * n),
    )
    return m


class PublicCoverEM(PublicSizeMixin, PublicDataEstimator):
    """The exponential mechanism over the public cover: pure epsilon-DP, no oracle call.

    One representative hypothesis per labeling of the public points that the class realizes, each
    released with probability proportional to ``exp(-eps err / (2 Delta))``, err its number of
    private mistakes: Wang, Lei, Fienberg, "Learning with Differential Privacy: Stability,
    Learnability and the Sufficiency and Necessity of ERM Principle" (Algorithm 1 with Examples 3 and
    7), and Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees"
    (Algorithm 5). The construction and its guarantees: docs/theory/public-cover-em.md.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy parameter, > 0.
    hypothesis_class : {"threshold", "stump", "halfspace"}, default "halfspace"
        The class the cover represents.
    cover : {"public", "private-features"}, default "public"
        "public": the cover of the public points, epsilon-DP for replacing a record;
        "private-features": the cover of the private features, epsilon-label-DP only (fit without
        ``X_public``).
    sensitivity : {"tight", "paper"}, default "tight"
        Delta = 1, or Delta = 2 (the 2/n convention of Wang, Lei, Fienberg's Algorithm 1).
    dedup : bool, default True
        Stumps only: one candidate per distinct labeling of the public points, or every (feature,
        sign, cut); halfspace covers are always de-duplicated.
    public_size : int, "auto" or None, default None
        None: every public point given; an int M: a uniform random subsample of M; "auto":
        :func:`cover_em_public_size`, within ``max_candidates`` for halfspaces.
    public_random_state : int, numpy.random.Generator or None, default None
        The seed of the public subsample, never the mechanism's; None: seeded from the public points.
    max_public : int or None, default None
        Use at most this many public points (a uniform subsample drawn with the public generator,
        independent of the private data and of the mechanism's noise); None uses all.
    max_candidates : int, default 4000000
        Refuse halfspace covers that would score more candidates than this
        (:class:`~oraclepriv.cover.CoverTooLargeError`).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default None
        The source of the mechanism's randomness (the Gumbel noise).

    Attributes
    ----------
    release_ : Release
        The released hypothesis and the data-independent privacy record.
    hypothesis_ : Hypothesis
        The released hypothesis.
    cover_ : list of Hypothesis
        The public cover (public information).
    candidate_index_ : int
        Which member of the cover was released.
    diagnostics_ : Diagnostics
        Non-private: ``errors`` (every candidate's private mistake count) and the (empty) ledger.
        Reading it warns.

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv import PublicData
    >>> from oraclepriv.learners import PublicCoverEM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> learner = PublicCoverEM(epsilon=1.0, random_state=0).fit(X, y, X_public=PublicData(rng.normal(size=(6, 2))))
    >>> learner.release_.privacy["epsilon"]
    1.0
    """

    algorithm = "public-cover-em"
    reference = (
        "exponential mechanism over a public cover: Wang, Lei, Fienberg (JMLR 2016) Algorithm 1 "
        "with Examples 3 and 7; Bassily, Mohri, Suresh (NeurIPS 2022) Algorithm 5"
    )
    supported_classes = ("threshold", "stump", "halfspace")
    diagnostic_names = PublicDataEstimator.diagnostic_names + ("errors",)
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PublicDataEstimator._parameter_constraints,
        **PUBLIC_SIZE_CONSTRAINTS,
        "hypothesis_class": (StrOptions(*supported_classes),),
        "cover": (StrOptions(*COVERS),),
        "sensitivity": (StrOptions(*SENSITIVITIES),),
        "dedup": (BOOLEAN,),
        "max_public": (None, POSITIVE_INTEGER),
        "max_candidates": (POSITIVE_INTEGER,),
    }
    public_size_rule = (
        "PublicCoverEM: the largest m with 2 Delta ln|C(m)|/(eps n) <= sqrt(d/m), d the VC dimension, within "
        "max_candidates for halfspaces (docs/theory/block-et-al.md, Choosing m)"
    )

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        hypothesis_class: str = "halfspace",
        cover: str = "public",
        sensitivity: str = "tight",
        dedup: bool = True,
        public_size: int | str | None = None,
        public_random_state: Any = None,
        max_public: int | None = None,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.hypothesis_class = hypothesis_class
        self.cover = cover
        self.sensitivity = sensitivity
        self.dedup = dedup
        self.public_size = public_size
        self.public_random_state = public_random_state
        self.max_public = max_public
        self.max_candidates = max_candidates
        self.random_state = random_state

    #: pure epsilon-DP: the exponential mechanism has no delta
    delta = 0.0

    def _validate_common(
        self, X_private: Any, y_private: Any, X_public: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.cover == "private-features":  # any other value: checked with every parameter by the base class
            if X_public is not None:
                raise ValueError(
                    "cover='private-features' builds the cover from the private features (label-DP); "
                    "do not pass X_public"
                )
            X_public = PublicData(X_private)
        X, y, Z = super()._validate_common(X_private, y_private, X_public)
        if self.hypothesis_class == "threshold" and X.shape[1] != 1:
            raise ValueError(f"hypothesis_class='threshold' needs one feature; X_private has {X.shape[1]}")
        return X, y, Z

    # ------------------------------------------------------------------ the mechanism
    def _sensitivity(self) -> float:
        return SENSITIVITIES[self.sensitivity]

    def theory_public_size(self, n: int, n_features: int) -> int:
        """:func:`cover_em_public_size`, and for halfspaces at most the largest m whose cover fits ``max_candidates``."""
        m = cover_em_public_size(n, self.hypothesis_class, n_features, self.epsilon_, self._sensitivity())
        if self.hypothesis_class == "halfspace":
            m = min(m, max(1, largest_halfspace_cover(n_features, int(self.max_candidates))))
        return m

    def _public_size_cap(self, n_features: int) -> tuple[int, str] | None:
        return None if self.max_public is None else (int(self.max_public), "max_public")

    def _candidates(self, X: np.ndarray, y: np.ndarray, Z: np.ndarray) -> PublicCover:
        """Step 1: the cover, from the public points only (X and y are not used: a control
        subclass overrides this to show what the audit does when they are). With
        cover="private-features", Z is the private features (label-DP)."""
        return public_cover(Z, self.hypothesis_class, dedup=self.dedup, max_candidates=self.max_candidates)

    def _log_weights(self, errors: np.ndarray) -> np.ndarray:
        """Step 3's unnormalised log-weights, -eps err / (2 Delta)."""
        return -self.epsilon_ * errors / (2.0 * self._delta_count)

    def _fit(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        self._delta_count = self._sensitivity()
        cover = self._candidates(X, y, Z)  # Z: the public points chosen by public_size / max_public
        errors = cover.errors(X, y)
        log_weights = self._log_weights(errors)
        index = int(np.argmax(log_weights + rng.gumbel(size=log_weights.size)))  # Gumbel-max: exact EM sampling
        self.cover_ = cover
        self.candidate_index_ = index
        self._diagnostic_values["errors"] = errors  # every candidate's private mistake count: NOT private
        beta = 0.05
        self._privacy.update(
            {
                "mechanism": (
                    f"exponential mechanism over {cover.size} {self.hypothesis_class} labelings of {cover.n_public} public "
                    f"points, weights exp(-eps * mistakes / (2 * {self._delta_count:g}))"
                ),
                "calibration": f"weights exp(-eps * mistakes / (2 * {self._delta_count:g}))",
                "calibration_source": (
                    "McSherry-Talwar exponential mechanism, mistake-count sensitivity 1 under replacement"
                    if self.sensitivity == "tight"
                    else "the 2/n convention of Wang, Lei, Fienberg, Alg. 1"
                ),
                "sensitivity": self.sensitivity,
                "mistake_count_sensitivity": self._delta_count,
                "cover_size": cover.size,
                "cover_complete": cover.complete,
                "cover_built_from": "public points only"
                if self.cover == "public"
                else "the private features (label-DP)",
                "accuracy_slack_beta_0.05": 2.0
                * self._delta_count
                / self.epsilon_
                * (math.log(cover.size) + math.log(1 / beta)),
                "oracle_calls_by_design": 0,
                "on_uncertified": "n/a",
                "robustness": "no oracle call: the guarantee does not depend on any solver",
            }
        )
        if self.cover == "private-features":
            self._privacy["neighbouring"] = LABEL_DP_NEIGHBOURING
            warn_privacy_leak(
                "PublicCoverEM(cover='private-features') is eps-label-DP only: its cover is built from the private "
                "features, so replacing a whole record is not protected"
            )
        return cover.hypothesis_at(index)

    def _guarantee(self, numeric_delta: float) -> str:
        """Pure eps-DP for any cover built from public data (no oracle); label-DP for the private-features cover."""
        if self.cover == "private-features":
            return (
                f"pure {self.epsilon_:g}-label-DP (changing one private label); NOT record-level DP: the cover "
                "comes from the private features"
            )
        return f"pure {self.epsilon_:g}-DP for any cover built from the public points (no oracle call)"

    def fit(self, X_private: Any, y_private: Any, X_public: Any = None, *, public_labels: Any = None) -> PublicCoverEM:
        """Fit on private records and public points; returns self.

        Parameters
        ----------
        X_private : array-like of shape (n, d)
            The private features.
        y_private : array-like of shape (n,)
            The private labels, two classes.
        X_public : PublicData, array-like of shape (m, d) or None, default None
            The public points; None with ``cover="private-features"`` (required otherwise).
        public_labels : None, default None
            Not taken (this learner draws no public labels); present for the common fit signature.

        Returns
        -------
        PublicCoverEM
            The fitted learner.
        """
        super().fit(X_private, y_private, X_public, public_labels=public_labels)
        if self.cover == "private-features":
            self.n_public_ = 0
        return self

    # ------------------------------------------------------------------ exact output law (audits)
    def output_log_probabilities(
        self, X_private: Any, y_private: Any, X_public: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The exact law of the released hypothesis on this data: (params of every candidate, one
        row each, as in :attr:`PublicCover.params`; their log-probabilities). Needs the whole public
        set (``max_public`` None or not binding), since a random public subsample makes the law a mixture."""
        X, y, Z = self._validate_common(X_private, y_private, X_public)
        self._delta_count = self._sensitivity()
        if self.max_public is not None and Z.shape[0] > self.max_public:
            raise ValueError(
                f"output_log_probabilities needs the whole public set: max_public={self.max_public} < {Z.shape[0]} "
                "public points makes the output law a mixture over subsamples"
            )
        if check_public_size(self.public_size) is not None:
            raise ValueError(
                f"output_log_probabilities needs the whole public set: public_size={self.public_size!r} draws a random "
                "subsample, which makes the output law a mixture over subsamples; use public_size=None"
            )
        cover = self._candidates(X, y, Z)
        return cover.params, em_log_probabilities(self._log_weights(cover.errors(X, y)))
