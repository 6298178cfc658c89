"""Shared estimator plumbing for the private learners of Block, Bun, Desai, Shetty and Wu,
"Oracle-Efficient Differentially Private Learning with Public Data" (seed 000).

One job: everything the four learner modules would otherwise each re-implement —

* parameter validation at the boundary (epsilon > 0, delta in [0, 1) and delta < 1/n, public
  points present and with the private feature count, labels in {0, 1});
* one ``numpy.random.Generator`` per fit, from ``random_state``;
* capture of this fit's oracle calls in a :class:`~oraclepriv.ledger.Ledger` (``ledger_``);
* the exactness gate: a private-data oracle call whose answer is not ``certified`` voids the
  privacy proofs (pitfall P4 of the implementation notes), so by default it **raises**
  :class:`UncertifiedOracleError`; ``on_uncertified="fallback"`` re-solves such a call with an
  exact backend and no time limit (so the proof applies); ``on_uncertified="flag"`` records it in
  ``privacy_`` instead (``privacy_["proof_applies"] = False``) for experiments with non-exact
  backends. The guarantees of the three modes: :mod:`oraclepriv.robust`;
* the privacy record ``privacy_`` and a JSON-friendly ``summary()``.

Documented choice for ``delta >= 1/n``: refuse (``ValueError``). A mechanism that publishes one
random record verbatim is (0, 1/n)-DP, so such a delta certifies nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import math
from typing import Any

import numpy as np

from oraclepriv.ledger import Ledger
from oraclepriv.oracle import HYPOTHESIS_CLASSES, Oracle, OracleResult, make_oracle
from oraclepriv.robust import ON_UNCERTIFIED_MODES, FallbackOracle, describe_mode, fallback_oracle
from oraclepriv.validation import as_features, as_labels, check_delta, check_positive

__all__ = [
    "NEIGHBOURING",
    "PrivateLearner",
    "UncertifiedOracleError",
    "NotFittedError",
    "check_epsilon",
    "check_delta_for_n",
    "check_public",
    "make_rng",
]

#: the neighbouring notion every learner here is private with respect to (paper, Def. 1)
NEIGHBOURING = "replace one private record; public data fixed"

ON_UNCERTIFIED = ON_UNCERTIFIED_MODES


class UncertifiedOracleError(RuntimeError):
    """A private-data oracle call returned an answer that is not certified optimal."""


class NotFittedError(RuntimeError):
    """``predict``/``summary`` called before ``fit``."""


def make_rng(random_state: Any) -> np.random.Generator:
    """One Generator per fit: None -> OS entropy; int/SeedSequence/Generator accepted."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        if isinstance(random_state, (int, np.integer)) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, a Generator or None; got {random_state!r}")
        return np.random.default_rng(random_state)
    raise ValueError(f"random_state must be None, a non-negative int, a SeedSequence or a Generator; got {random_state!r}")


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """epsilon: a finite number > 0."""
    return check_positive(value, name)


def check_delta_for_n(delta: float, n: int, name: str = "delta") -> float:
    """delta in [0, 1) and, if positive, delta < 1/n (refused otherwise: see module docstring)."""
    delta = check_delta(delta, name)
    if delta > 0 and delta >= 1.0 / n:
        raise ValueError(
            f"{name}={delta!r} is >= 1/n = {1.0 / n:.3g} for n={n} private records; such a delta "
            "allows publishing a private record verbatim. Use delta < 1/n (typically << 1/n)."
        )
    return delta


def check_public(X_public: Any, d: int, name: str = "X_public") -> np.ndarray:
    """Public points: present, finite, 2-D with the private data's number of features ``d``."""
    if X_public is None:
        raise ValueError(f"{name} is required: these learners need public (unlabeled) points; got None")
    Z = as_features(X_public, name)
    if Z.shape[1] != d:
        raise ValueError(
            f"{name} has {Z.shape[1]} features but X_private has {d} (shape {Z.shape}); "
            "public and private points must live in the same feature space"
        )
    return Z


class PrivateLearner(ABC):
    """Base class of the private learners (scikit-learn estimator conventions).

    Subclasses implement ``_fit(X, y, Z, rng)`` which returns the released hypothesis and fills
    ``self._privacy`` with the mechanism's description; the base class does the validation,
    the Generator, the ledger and the privacy record.
    """

    #: name used as ``caller`` in the ledger
    algorithm: str = ""
    #: paper + algorithm number, for the privacy record
    reference: str = ""
    #: hypothesis classes this learner supports
    supported_classes: tuple[str, ...] = HYPOTHESIS_CLASSES

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.0,
        hypothesis: str = "halfspace",
        backend: str | None = None,
        time_limit: float | None = None,
        on_uncertified: str = "raise",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.hypothesis = hypothesis
        self.backend = backend
        self.time_limit = time_limit
        self.on_uncertified = on_uncertified
        self.random_state = random_state

    # ------------------------------------------------------------------ sklearn plumbing
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters (scikit-learn convention)."""
        import inspect

        names = [
            p.name
            for cls in type(self).__mro__
            if "__init__" in cls.__dict__
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.kind == p.KEYWORD_ONLY
        ]
        return {name: getattr(self, name) for name in dict.fromkeys(names)}

    def set_params(self, **params: Any) -> "PrivateLearner":
        valid = self.get_params()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"{type(self).__name__}: unknown parameter {key!r}; valid: {sorted(valid)}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # ------------------------------------------------------------------ validation
    def _validate_common(self, X_private: Any, y_private: Any, X_public: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.epsilon_ = check_epsilon(self.epsilon, "epsilon")
        if self.hypothesis not in self.supported_classes:
            raise ValueError(
                f"hypothesis={self.hypothesis!r} is not supported by {type(self).__name__}; "
                f"expected one of {list(self.supported_classes)}"
            )
        if self.on_uncertified not in ON_UNCERTIFIED:
            raise ValueError(f"on_uncertified must be one of {list(ON_UNCERTIFIED)}; got {self.on_uncertified!r}")
        if self.time_limit is not None:
            check_positive(self.time_limit, "time_limit")
        X = as_features(X_private, "X_private")
        y = as_labels(y_private, X.shape[0], "y_private")
        Z = check_public(X_public, X.shape[1])
        if self.hypothesis == "threshold" and X.shape[1] != 1:
            raise ValueError(f"hypothesis='threshold' needs one feature; X_private has {X.shape[1]}")
        self.delta_ = check_delta_for_n(self.delta, X.shape[0], "delta")
        return X, y, Z

    def _oracle(self) -> Oracle | FallbackOracle:
        if self.on_uncertified == "fallback":
            return fallback_oracle(self.hypothesis, self.backend, self.time_limit)
        options: dict[str, Any] = {}
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        return make_oracle(self.hypothesis, backend=self.backend, **options)

    # ------------------------------------------------------------------ the exactness gate
    def _require_exact(self, result: OracleResult, step: str) -> None:
        """Privacy of this step needs an exact argmin: raise (default) or flag an uncertified answer."""
        if result.certified:
            return
        message = (
            f"{self.algorithm}: oracle call {step!r} on private data was not certified optimal "
            f"(status={result.status!r}, objective={result.objective!r}, bound={result.bound!r}, "
            f"backend={result.backend!r}); the privacy proof needs an exact argmin (notes P4)"
        )
        if self.on_uncertified != "flag":  # "raise", and "fallback" whose exact fallback failed too
            raise UncertifiedOracleError(message)
        self._uncertified_steps.append(step)

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X_private: Any, y_private: Any, X_public: Any = None, **fit_params: Any) -> "PrivateLearner":
        """Fit on private labelled data and public unlabelled points ``X_public``; returns self."""
        X, y, Z = self._validate_common(X_private, y_private, X_public)
        rng = make_rng(self.random_state)
        self._uncertified_steps: list[str] = []
        self._privacy: dict[str, Any] = {}
        with Ledger() as ledger:
            hypothesis = self._fit(X, y, Z, rng, **fit_params)
        self.hypothesis_ = hypothesis
        self.ledger_ = ledger
        self.n_features_in_ = X.shape[1]
        self.n_private_ = X.shape[0]
        self.n_public_ = Z.shape[0]
        privacy = {
            "epsilon": self.epsilon_,
            "delta": self.delta_,
            "neighbouring": NEIGHBOURING,
            "reference": self.reference,
            **describe_mode(self.on_uncertified),
        }
        privacy.update(self._privacy)
        privacy["uncertified_private_calls"] = list(self._uncertified_steps)
        if self._uncertified_steps:
            privacy["proof_applies"] = False
        else:
            privacy.setdefault("proof_applies", True)
        self.privacy_ = privacy
        return self

    @abstractmethod
    def _fit(self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, **fit_params: Any) -> Any:
        """The algorithm: return the released hypothesis and fill ``self._privacy``."""

    def _check_fitted(self) -> None:
        if not hasattr(self, "hypothesis_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit(X_private, y_private, X_public=Z) first")

    def predict(self, X: Any) -> np.ndarray:
        """Labels in {0, 1} of the released hypothesis."""
        self._check_fitted()
        X = as_features(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features but the learner was fitted with {self.n_features_in_}")
        return np.asarray(self.hypothesis_.predict(X), dtype=np.int8)

    def summary(self) -> dict[str, Any]:
        """JSON-friendly record of the fit: hypothesis, oracle calls, privacy record."""
        self._check_fitted()
        hyp = self.hypothesis_.to_dict()  # a Hypothesis, or Algorithm 3's LinearPredictor
        return _jsonable(
            {
                "algorithm": self.algorithm,
                "params": {k: v for k, v in self.get_params().items() if k != "random_state" or _is_plain(v)},
                "hypothesis": hyp,
                "oracle_calls": [dict(r) for r in self.ledger_.records],
                "n_oracle_calls": len(self.ledger_),
                "oracle_seconds": self.ledger_.total_seconds(),
                "privacy": dict(self.privacy_),
            }
        )

    to_dict = summary


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, (int, float, str, bool))


def _jsonable(value: Any) -> Any:
    """Recursively convert numpy scalars/arrays and non-finite floats to JSON-friendly values."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    return repr(value)
