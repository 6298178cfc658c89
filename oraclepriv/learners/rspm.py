"""RSPM — Algorithm 5 (Report Separator-Perturbed Minimum) of Neel, Roth and Wu, "How to Use
Heuristics for Differential Privacy" (FOCS 2019), as restated by Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data", Appendix C.1.

    1. U = {U_1, ..., U_m}, a universal identification set of the class on the data domain
       (:mod:`oraclepriv.identification`: any two different functions differ on U);
    2. xi_i ~ Lap(2m/eps), Ytilde_i ~ Uni{0, 1};
    3. fhat = ERM over  sum_{private} 1[f(X_i) != Y_i] + sum_i xi_i 1[f(U_i) != Ytilde_i]
       — ONE oracle call with signed weights, which must be exact (the learner's gate).

It is RRSPM (Algorithm 4) with the identification set in place of the public points and no
projection step: since U identifies the class, fhat's labeling of U already determines fhat as a
function on the domain. The release is that function's canonical representative on the grid
(:func:`oraclepriv.identification.snap_to_grid`), computed from fhat(U) alone — the oracle's own
parameters (e.g. a cut midway between two *training* values) would otherwise depend on the private
data beyond what the proof covers. Privacy: pure eps-DP (the report-noisy-min argument over the
labelings of U: the coupling of Block et al., Lemmas 17-21 / Theorem 8, with U in place of the public
points); the numerical delta of :mod:`oraclepriv.near_ties` is 0 with the default backend (sweep),
whose answer is compared exactly (:mod:`oraclepriv.exact_comparison`). Exactly 1 oracle call. The
algorithm as implemented: docs/theory/block-et-al.md, section "Algorithm 5: RSPM".

The data domain is a finite grid (one set of values per feature); private records must lie on it.
Identification sets are provided for thresholds and stumps; a user-given set is checked to separate
the class on the grid (:func:`oraclepriv.identification.check_identification_set`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from oraclepriv.exact_comparison import compared_exactly
from oraclepriv.identification import check_grid, check_identification_set, identification_set, snap_to_grid
from oraclepriv.learners._base import PrivateLearner
from oraclepriv.learners.rrspm import noisy_private_erm
from oraclepriv.near_ties import laplace_near_tie_probability
from oraclepriv.public_data import PublicData
from oraclepriv.validation import NO_VALIDATION, Alternatives, StrOptions, as_features, as_labels

__all__ = ["RSPM"]


class RSPM(PrivateLearner):
    """RSPM (Algorithm 5): epsilon-DP learning over a finite grid domain with a universal identification set.

    Report Separator-Perturbed Minimum of Neel, Roth, Wu, "How to Use Heuristics for Differential
    Privacy", as restated by Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private
    Learning with Public Data" (Appendix C.1). One exact oracle call. ``fit(X_private, y_private)``
    takes no public data: the identification set plays their part.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy parameter, > 0.
    hypothesis_class : {"threshold", "stump"}, default "stump"
        The class the oracle minimises over.
    grid : sequence of sequences of float
        One sequence of values per feature: the data domain (required); private records must lie on it.
    identification_set : array-like of shape (m, d) or None, default None
        Points that tell every two functions of the class apart on the grid; None: the provided set for
        the grid. Checked either way.
    backend : str, backend class or instance, or None, default None
        The exact ERM backend; None: the oracle's default installed exact backend.
    backend_options : dict or None, default None
        Keyword options of the backend.
    time_limit : float or None, default None
        Seconds per oracle call.
    on_uncertified : {"raise", "fallback", "flag"}, default "raise"
        What an uncertified private-data oracle answer does (:mod:`oraclepriv.robust`).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default None
        The source of the mechanism's randomness.

    Attributes
    ----------
    release_ : Release
        The released function and the data-independent privacy record.
    hypothesis_ : Hypothesis
        The canonical representative on the grid of the function fhat, computed from fhat(U) alone.
    identification_set_ : numpy.ndarray
        The identification set U used.
    public_labels_ : numpy.ndarray
        The random labels Ytilde of U.
    diagnostics_ : Diagnostics
        Non-private: the ledger of the one call. Reading it warns.

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv.learners import RSPM
    >>> grid = [np.linspace(0.0, 1.0, 5)]
    >>> X = np.array([[0.0], [0.25], [0.75], [1.0]] * 5)
    >>> y = np.array([0, 0, 1, 1] * 5)
    >>> learner = RSPM(epsilon=1.0, hypothesis_class="threshold", grid=grid, random_state=0).fit(X, y)
    >>> learner.predict([[0.0], [1.0]]).shape
    (2,)
    """

    algorithm = "RSPM"
    reference = (
        "Neel, Roth, Wu (FOCS 2019), RSPM; as Algorithm 5 of Block et al. (Appendix C.1); "
        "privacy: report-noisy-min over the labelings of the identification set"
    )
    supported_classes = ("threshold", "stump")
    accepts_public_labels: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **{name: c for name, c in PrivateLearner._parameter_constraints.items() if name != "delta"},  # pure eps-DP
        "hypothesis_class": (StrOptions(*supported_classes),),
        "grid": NO_VALIDATION,  # checked with the data (oraclepriv.identification.check_grid)
        "identification_set": NO_VALIDATION,  # checked against the grid (check_identification_set)
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        hypothesis_class: str = "stump",
        grid: Any = None,
        identification_set: Any = None,
        backend: str | None = None,
        backend_options: dict[str, Any] | None = None,
        time_limit: float | None = None,
        on_uncertified: str = "raise",
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=0.0,
            hypothesis_class=hypothesis_class,
            backend=backend,
            backend_options=backend_options,
            time_limit=time_limit,
            on_uncertified=on_uncertified,
            random_state=random_state,
        )
        self.grid = grid
        self.identification_set = identification_set

    def _validate_common(
        self, X_private: Any, y_private: Any, X_public: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if X_public is not None:
            raise ValueError("RSPM takes no public data (its points are the identification set); do not pass X_public")
        self._validate_params()  # before hypothesis_class picks the identification set
        X = self._validate_features(X_private, "X_private", reset=True)
        grid = self.grid
        if grid is not None and len(grid) > 0 and all(np.ndim(v) == 0 for v in grid):
            grid = [grid] * X.shape[1]  # one list of values: the same grid on every feature
        self.grid_ = check_grid(grid, self.hypothesis_class)  # also refuses classes without grid identification sets
        if self.identification_set is None:
            U = identification_set(self.hypothesis_class, self.grid_)
        else:
            U = as_features(self.identification_set, "identification_set")
            check_identification_set(U, self.hypothesis_class, self.grid_)
        if X.shape[1] != len(self.grid_):
            raise ValueError(f"X_private has {X.shape[1]} features but the grid has {len(self.grid_)}")
        _check_on_grid(X, self.grid_)
        return super()._validate_common(X_private, y_private, PublicData(U))

    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        """Each weight on the identification set is Lap(2m/eps) (Algorithm 5, step 2)."""
        return "laplace", 2.0 * m / self.epsilon_

    def _release(
        self,
        oracle: Any,
        U: np.ndarray,
        projection: np.ndarray,
        rng: np.random.Generator,
        *,
        fhat: Any,
        X: np.ndarray,
        y: np.ndarray,
    ) -> Any:
        """The grid function with labels ``projection`` on U; no oracle call, nothing else read."""
        del oracle, rng, fhat, X, y
        labels = np.asarray(projection, dtype=np.int8)
        for member_labels, member in self._members(U):
            if member_labels == labels.tobytes():
                return member
        raise ValueError(f"no function of the class labels the identification set as {labels.tolist()}")

    def _members(self, U: np.ndarray):
        from oraclepriv.identification import grid_members

        return [(member.predict(U).tobytes(), member) for member in grid_members(self.grid_, self.hypothesis_class)]

    def _fit(
        self, X: np.ndarray, y: np.ndarray, U: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        m = U.shape[0]
        ytilde = (
            np.asarray(rng.integers(0, 2, size=m), dtype=np.int8)
            if public_labels is None
            else as_labels(public_labels, m, "public_labels")
        )
        family, scale = self.noise_law(m, X.shape[1])
        xi = np.asarray(rng.laplace(0.0, scale, m))
        result = noisy_private_erm(self, self._oracle(), X, y, U, ytilde, xi)
        projection = np.asarray(result.hypothesis.predict(U), dtype=np.int8)
        released = self._release(None, U, projection, rng, fhat=result.hypothesis, X=X, y=y)
        assert released == snap_to_grid(result.hypothesis, U, self.grid_, self.hypothesis_class)
        self.identification_set_ = U
        self.noisy_points_ = U
        self.public_labels_ = ytilde
        self._privacy.update(
            mechanism="RSPM: Laplace-weighted ERM over the private records and the identification set "
            "(report-noisy-min over its labelings); release = the canonical grid function",
            noise=family,
            noise_scale=scale,
            calibration="Lap(2m/eps) on the identification set's weights",
            calibration_source="the paper: Algorithm 5 (Neel-Roth-Wu), the coupling of RRSPM's Theorem 8",
            m=m,
            identification_set_size=m,
            oracle_calls_by_design=1,
            # the sweep's answer is compared exactly (oraclepriv.exact_comparison): near-ties cost nothing
            near_tie_probability=0.0
            if compared_exactly(self.hypothesis_class, X.shape[1], self.backend)
            else laplace_near_tie_probability(m, scale, float(X.shape[0])),
        )
        return released


def _check_on_grid(X: np.ndarray, grid: list[np.ndarray]) -> None:
    """Every private value on its feature's grid, or a ValueError naming the first row and feature off it and how
    many rows are: never the value itself, which is private data."""
    for j, values in enumerate(grid):
        bad = np.flatnonzero(~np.isin(X[:, j], values))
        if bad.size:
            raise ValueError(
                f"X_private row {int(bad[0])} feature {j} is not a grid value of that feature ({bad.size} of the "
                f"{X.shape[0]} rows are off that feature's grid of {len(values)} values); RSPM's domain is the grid"
            )
