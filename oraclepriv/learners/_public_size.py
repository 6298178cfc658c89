"""How many public points a fit uses, and which: the ``public_size`` parameter.

The learners given public points (RRSPM, Perturbation, Regularization, PublicCoverEM) take

* ``public_size=None`` — every public point given, in the order given;
* ``public_size=M`` (an integer) — a uniform random subsample of M of them, without replacement
  (M larger than the points given is refused);
* ``public_size="auto"`` — the number the learner's accuracy theory gives for (n, d, eps)
  (:meth:`PublicSizeMixin.theory_public_size`; the derivations are in docs/theory/block-et-al.md,
  "Choosing m"), lowered where needed to the largest m whose total delta (design plus the numerical
  delta of :mod:`oraclepriv.near_ties`) stays below 1/n; a uniform random subsample of that many,
  or all the points when fewer are given.

**Public randomness.** The subsample is drawn from its own generator, made from
``public_random_state``, never from the generator of the mechanism's noise (``random_state``). Its
default, None, seeds it from the public points themselves (SHA-256 of their bytes): a function of
public data only, so that a fit is reproducible from ``random_state`` and the data alone. The release depends on which points were used, so the
subsample is published with it (``privacy_["public_subsample"]``, indices into ``X_public``). A draw
published from the noise's stream would expose that stream: numpy's bit generators are not
cryptographic, so their outputs determine their state and hence every later draw, the Laplace or
Gaussian weights included; and a subsample drawn from a generator seeded with the same integer as
the noise, or seeded from it, lets anyone who sees the published indices recover a small seed by
trying seeds until the indices match, and then replay the noise. The privacy proofs (Block, Bun,
Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data", Theorems 6
and 8) hold for every fixed set of public points; a subsample chosen independently of the private
data and of the noise is such a set, so the guarantee is unchanged. The generator given as
``public_random_state`` must therefore not be ``random_state`` itself, and an integer seed must differ
from ``random_state``'s (both refused).

The number of private records n enters the default: neighbouring datasets (replace one record)
have the same n, so a choice made from n, d, eps and the number of public points is data-independent.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, ClassVar

import numpy as np

from oraclepriv.integer_search import largest_holding
from oraclepriv.near_ties import numerical_delta
from oraclepriv.validation import NO_VALIDATION, POSITIVE_INTEGER, Alternatives, StrOptions, check_param

__all__ = [
    "PUBLIC_SIZE",
    "PUBLIC_SIZE_AUTO",
    "PublicSizeMixin",
    "check_public_size",
    "public_generator",
    "vc_dimension",
]

#: the value of ``public_size`` that asks for the theory's default
PUBLIC_SIZE_AUTO = "auto"
#: the constraint the learners that take ``public_size`` declare for it (scikit-learn's ``_parameter_constraints``
#: style): None (every public point), "auto" (the theory's number) or a positive integer
PUBLIC_SIZE: Alternatives = (None, StrOptions(PUBLIC_SIZE_AUTO), POSITIVE_INTEGER)
#: the constraints of the two parameters :class:`PublicSizeMixin` adds (``public_random_state`` is checked, against
#: ``random_state``, when the subsample is drawn: :func:`public_generator`)
PUBLIC_SIZE_CONSTRAINTS: dict[str, Alternatives] = {"public_size": PUBLIC_SIZE, "public_random_state": NO_VALIDATION}


def vc_dimension(hypothesis_class: str, n_features: int) -> int:
    """The VC dimension d the accuracy bounds use (an upper bound where the exact value is not known).

    Thresholds on the line: 1. Affine halfspaces in R^k: k + 1. Decision stumps on k features (both
    signs): the largest d with 2^d <= 2k(d + 1), the bound from their growth function (2k(m + 1)
    labelings of m points); it is 3 for k = 1 (true value 2) and 5 for k = 3 (true value 4).
    Bounded linear predictors in R^k (Regularization): k, the pseudo-dimension of linear functions.
    """
    k = int(n_features)
    if k < 1:
        raise ValueError(f"n_features must be a positive integer; got {n_features!r}")
    if hypothesis_class == "threshold":
        return 1
    if hypothesis_class == "halfspace":
        return k + 1
    if hypothesis_class == "stump":
        return largest_holding(lambda d: 2**d <= 2 * k * (d + 1))
    if hypothesis_class == "linear":
        return k
    raise ValueError(
        f"hypothesis_class must be 'threshold', 'stump', 'halfspace' or 'linear'; got {hypothesis_class!r}"
    )


def check_public_size(value: Any) -> int | str | None:
    """``public_size`` checked against :data:`PUBLIC_SIZE` (the learners' declared constraint) and returned
    as None, "auto" or an int."""
    check_param(value, "public_size", PUBLIC_SIZE)
    return value if value is None or isinstance(value, str) else int(value)


def public_generator(public_random_state: Any, random_state: Any, points: np.ndarray) -> np.random.Generator:
    """The generator of the public subsample, independent of the noise's (module docstring).

    None: seeded from the public ``points`` (SHA-256 of their shape and float64 bytes). An integer or
    SeedSequence seeds a new generator; a Generator is used as given. Refused: the noise's own
    Generator, and the noise's integer seed.
    """
    state = public_random_state
    if isinstance(state, np.random.Generator):
        if state is random_state:
            raise ValueError(
                "public_random_state is the same Generator as random_state: the public subsample is published, and "
                "drawing it from the noise's stream exposes that stream; give public_random_state its own generator "
                "or None"
            )
        return state
    if isinstance(state, (bool, np.bool_)):
        raise ValueError(
            f"public_random_state must be None, a non-negative int, a SeedSequence or a Generator; got {state!r}"
        )
    if isinstance(state, (int, np.integer)):
        if state < 0:
            raise ValueError(f"public_random_state must be a non-negative integer, a Generator or None; got {state!r}")
        if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool) and state == random_state:
            raise ValueError(
                f"public_random_state={state!r} is random_state's seed: the published subsample would be the noise's "
                "own first draws, from which the noise can be replayed; use another seed or None"
            )
        return np.random.default_rng(state)
    if state is None:
        data = np.ascontiguousarray(points, dtype=np.float64)
        digest = hashlib.sha256(repr(data.shape).encode() + data.tobytes()).digest()
        return np.random.default_rng(int.from_bytes(digest, "big"))
    if isinstance(state, np.random.SeedSequence):
        return np.random.default_rng(state)
    raise ValueError(
        f"public_random_state must be None, a non-negative int, a SeedSequence or a Generator; got {state!r}"
    )


class PublicSizeMixin:
    """``public_size`` and ``public_random_state`` for a :class:`~oraclepriv.learners._base.PublicDataEstimator`.

    The base fit calls :meth:`_public_points_used` after validation and before the algorithm; it
    returns the public points the algorithm sees and records the choice in the release. A learner
    supplies its default through :meth:`theory_public_size` and, when its privacy record carries a
    numerical delta, :meth:`_near_tie_probability_at` (so that ``"auto"`` stays below 1/n).
    """

    #: how the default is derived (one line, recorded with an automatic choice)
    public_size_rule: ClassVar[str] = ""

    public_size: Any
    public_random_state: Any
    random_state: Any
    epsilon_: float
    delta_: float
    _privacy: dict[str, Any]

    def theory_public_size(self, n: int, n_features: int) -> int:
        """The number of public points the learner's accuracy theory suggests for n private records in
        ``n_features`` dimensions (at the fit's epsilon); see docs/theory/block-et-al.md, "Choosing m".

        Every learner that mixes this class in defines its own rule (RRSPM, Perturbation, Regularization,
        PublicCoverEM); a new learner that does not is told so instead of getting a made-up default."""
        raise TypeError(
            f"{type(self).__name__} takes public_size but defines no theory_public_size(n, n_features): "
            'public_size="auto" needs the rule of its paper (docs/theory/block-et-al.md, "Choosing m")'
        )

    def _near_tie_probability_at(self, m: int, n: int, n_features: int) -> float:
        """The near-tie probability this learner's privacy record would carry with m public points (0: none)."""
        return 0.0

    def _total_delta_at(self, m: int, n: int, n_features: int) -> float:
        near_tie = self._near_tie_probability_at(m, n, n_features)
        return self.delta_ + (numerical_delta(self.epsilon_, near_tie) if near_tie > 0 else 0.0)

    def _public_size_cap(self, n_features: int) -> tuple[int, str] | None:
        """An upper limit on the public points used whatever ``public_size`` says, and its parameter (None: none)."""
        return None

    def _auto_public_size(self, n: int, n_features: int, available: int) -> int:
        """The theory's m, lowered to the largest m whose total delta is below 1/n (when some m is)."""
        target = max(1, min(int(self.theory_public_size(n, n_features)), available))
        fits = largest_holding(lambda m: m <= target and self._total_delta_at(m, n, n_features) < 1.0 / n)
        return fits if fits >= 1 else target  # even m = 1 is vacuous: the delta check names the other levers

    def _public_points_used(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        size = check_public_size(self.public_size)
        prefix = getattr(self, "m", None)  # RRSPM, Perturbation, Regularization: the first m public points
        if size is not None and prefix is not None:
            raise ValueError(
                f"m={prefix!r} (the first m public points) and public_size={self.public_size!r} (a random "
                "subsample) both choose the public points; give one of them"
            )
        available = Z.shape[0]
        cap = self._public_size_cap(X.shape[1])
        if size is None:
            if cap is None or cap[0] >= available:
                return Z
            m, rule = cap[0], f"all the public points given, at most {cap[1]}={cap[0]}"
        elif size == PUBLIC_SIZE_AUTO:
            m, rule = self._auto_public_size(X.shape[0], X.shape[1], available), f"auto: {self.public_size_rule}"
        else:
            if size > available:
                raise ValueError(
                    f"public_size={size} but X_public has only {available} points; use public_size <= {available}, "
                    "'auto' or None"
                )
            m, rule = int(size), "given"
        if size is not None and cap is not None and cap[0] < m:
            m, rule = cap[0], f"{rule}, at most {cap[1]}={cap[0]}"
        rng = public_generator(self.public_random_state, self.random_state, Z)
        chosen = np.sort(rng.choice(available, size=m, replace=False)) if m < available else np.arange(available)
        self._privacy.update(
            public_points_given=available, public_size_rule=rule, public_subsample=[int(i) for i in chosen]
        )
        return Z[chosen]


def balance_point(decreasing: Any, increasing: Any) -> int:
    """The largest integer m >= 1 with increasing(m) <= decreasing(m) (1 when none): where a term that falls
    with m meets one that grows, which is within a factor 2 of the minimum of their sum."""
    return max(1, largest_holding(lambda m: increasing(m) <= decreasing(m)))


def theorem_public_size(n: int, vc: int, *, lam: float = 0.5, beta: float = 0.05) -> int:
    """m = lam^2 max(d, ln(1/beta)) / (sigma^2 alpha^2) (Block et al., Theorems 6 and 7; ``perturbation_parameters``
    and ``regularization_parameters``) at sigma = 1 and alpha^2 = min(1, d/n): the accuracy that n private records
    resolve (uniform convergence, Theorem 9, constants 1). Computed without the square root, so that it is exact."""
    if not (isinstance(n, (int, np.integer)) and n >= 1 and isinstance(vc, (int, np.integer)) and vc >= 1):
        raise ValueError(f"n and the VC dimension must be positive integers; got n={n!r}, vc={vc!r}")
    inverse_alpha_sq = max(1.0, n / vc)
    return max(1, math.ceil(lam**2 * max(vc, math.log(1.0 / beta)) * inverse_alpha_sq))
