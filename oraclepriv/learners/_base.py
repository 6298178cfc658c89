"""Shared estimator plumbing for the private learners of Block, Bun, Desai, Shetty and Wu,
"Oracle-Efficient Differentially Private Learning with Public Data" (seed 000).

One job: everything the four learner modules would otherwise each re-implement —

* parameter validation at the boundary (epsilon > 0, delta in [0, 1) and delta < 1/n, public
  points present and with the private feature count, labels in {0, 1});
* one ``numpy.random.Generator`` per fit, from ``random_state``;
* capture of this fit's oracle calls in a :class:`~oraclepriv.ledger.Ledger`;
* the exactness gate: a private-data oracle call whose answer is not ``certified`` (optimal over
  the **whole** class) voids the privacy proofs, so by default it **raises**
  :class:`UncertifiedOracleError`; ``on_uncertified="fallback"`` re-solves such a call with an
  exact backend and no time limit (so the proof applies); ``on_uncertified="flag"`` keeps it (no
  guarantee; warns). A backend whose bound covers a restricted class only (``naive-highs``,
  ``certify="margin"``) is refused up front unless its answers are routed to the fallback. The
  guarantees of the three modes: :mod:`oraclepriv.robust`;
* the release boundary (:mod:`oraclepriv.release`): ``release_`` holds the released hypothesis and
  data-independent facts only (the guarantee, with the numerical delta of
  :mod:`oraclepriv.near_ties`); everything that depends on the private data beyond it goes to the
  non-private ``diagnostics_`` (which warns when read).

Documented choice for ``delta >= 1/n``: refuse (``ValueError``). A mechanism that publishes one
random record verbatim is (0, 1/n)-DP, so such a delta certifies nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import math
from typing import Any

import numpy as np

from oraclepriv.ledger import Ledger
from oraclepriv.near_ties import numerical_delta
from oraclepriv.oracle import HYPOTHESIS_CLASSES, Oracle, OracleResult, make_oracle
from oraclepriv.release import COVERAGE, Diagnostics, NotFittedError, Release, ReleaseMixin, warn_privacy_leak
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
    """A private-data oracle call returned an answer that is not certified optimal.

    The message names the step and the backend only; the call's objective, bound and status (which
    depend on the private data) are in ``result``, a non-private diagnostic.
    """

    def __init__(self, message: str, result: OracleResult | None = None) -> None:
        super().__init__(message)
        self.result = result


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


class PrivateLearner(ReleaseMixin, ABC):
    """Base class of the private learners (scikit-learn estimator conventions).

    Subclasses implement ``_fit(X, y, Z, rng)``, which returns the released hypothesis, fills
    ``self._privacy`` with the mechanism's data-independent description (including
    ``near_tie_probability`` when the proof needs exact argmins, :mod:`oraclepriv.near_ties`) and
    ``self._diagnostic_values`` with its non-private diagnostics; the base class does the
    validation, the Generator, the ledger, the release and the diagnostics.
    """

    #: name used as ``caller`` in the ledger
    algorithm: str = ""
    #: paper + algorithm number, for the privacy record
    reference: str = ""
    #: hypothesis classes this learner supports
    supported_classes: tuple[str, ...] = HYPOTHESIS_CLASSES
    #: does the privacy proof need every private-data oracle call to return an exact minimiser?
    needs_exact_oracle: bool = True
    diagnostic_names = ("uncertified_private_calls", "proof_applies", "fallbacks")

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.0,
        hypothesis_class: str = "halfspace",
        backend: str | None = None,
        backend_options: dict[str, Any] | None = None,
        time_limit: float | None = None,
        on_uncertified: str = "raise",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.hypothesis_class = hypothesis_class
        self.backend = backend
        self.backend_options = backend_options
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
        if self.hypothesis_class not in self.supported_classes:
            raise ValueError(
                f"hypothesis_class={self.hypothesis_class!r} is not supported by {type(self).__name__}; "
                f"expected one of {list(self.supported_classes)}"
            )
        if self.on_uncertified not in ON_UNCERTIFIED:
            raise ValueError(f"on_uncertified must be one of {list(ON_UNCERTIFIED)}; got {self.on_uncertified!r}")
        if self.time_limit is not None:
            check_positive(self.time_limit, "time_limit")
        X = as_features(X_private, "X_private")
        y = as_labels(y_private, X.shape[0], "y_private")
        Z = check_public(X_public, X.shape[1])
        if self.hypothesis_class == "threshold" and X.shape[1] != 1:
            raise ValueError(f"hypothesis_class='threshold' needs one feature; X_private has {X.shape[1]}")
        self.delta_ = check_delta_for_n(self.delta, X.shape[0], "delta")
        return X, y, Z

    def _check_backend_scope(self) -> None:
        """Refuse, before any work, a backend whose bound covers a restricted class only.

        Its answers are never certified over the whole class, so the exactness gate would reject
        every one: with ``on_uncertified="raise"`` that is an error now, not after the first call;
        ``"fallback"`` routes every such answer to the exact fallback; ``"flag"`` keeps them (no
        guarantee, warned).
        """
        if self.backend is None or self.on_uncertified != "raise":
            return
        restriction = make_oracle(self.hypothesis_class, backend=self.backend, **self._backend_options()).restriction()
        if restriction is not None:
            raise ValueError(
                f"backend={self.backend!r} proves its bounds only over {restriction}, not over all "
                f"{self.hypothesis_class}s; {type(self).__name__}'s privacy proof needs an exact minimiser over the whole "
                "class. Use an exact backend (e.g. backend=None), or on_uncertified='fallback' to re-solve its "
                "answers exactly"
            )

    def _backend_options(self) -> dict[str, Any]:
        """``backend_options`` checked: a dict of the backend's own keywords (rejected by name by the backend)."""
        options = self.backend_options
        if options is None:
            return {}
        if not isinstance(options, dict):
            raise ValueError(f"backend_options must be a dict of the backend's options or None; got {options!r}")
        if "time_limit" in options:
            raise ValueError("pass time_limit as the learner's time_limit parameter, not in backend_options")
        return dict(options)

    def _oracle(self) -> Oracle | FallbackOracle:
        if self.on_uncertified == "fallback":
            return fallback_oracle(self.hypothesis_class, self.backend, self.time_limit, **self._backend_options())
        options: dict[str, Any] = self._backend_options()
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        return make_oracle(self.hypothesis_class, backend=self.backend, **options)

    # ------------------------------------------------------------------ the exactness gate
    def _require_exact(self, result: Any, step: str) -> None:
        """Privacy of this step needs an exact argmin: raise (default) or flag an uncertified answer."""
        if result.certified:
            return
        if self.on_uncertified != "flag":  # "raise", and "fallback" whose exact fallback failed too
            restriction = getattr(result, "restriction", None)  # the convex oracle's results have none
            scope = "" if restriction is None else f" (its bound covers only {restriction})"
            raise UncertifiedOracleError(
                f"{self.algorithm}: oracle call {step!r} on private data was not certified optimal over the whole "
                f"class by backend {result.backend!r}{scope}; the privacy proof needs an exact argmin. The call's "
                "status, objective and bound are in this exception's .result (non-private diagnostics)",
                result,
            )
        self._uncertified_steps.append(step)

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X_private: Any, y_private: Any, X_public: Any = None, **fit_params: Any) -> "PrivateLearner":
        """Fit on private labelled data and public unlabelled points ``X_public``; returns self."""
        X, y, Z = self._validate_common(X_private, y_private, X_public)
        self._check_backend_scope()
        if self.needs_exact_oracle and self.on_uncertified == "flag":
            warn_privacy_leak(
                f"{type(self).__name__}(on_uncertified='flag') keeps uncertified oracle answers: the release carries "
                "no privacy guarantee (use 'raise' or 'fallback' for one)"
            )
        rng = make_rng(self.random_state)
        self._uncertified_steps: list[str] = []
        self._privacy: dict[str, Any] = {}
        self._diagnostic_values: dict[str, Any] = {}
        with Ledger() as ledger:
            hypothesis = self._fit(X, y, Z, rng, **fit_params)
        self.hypothesis_ = hypothesis
        self.n_features_in_ = X.shape[1]
        self.n_private_ = X.shape[0]
        self.n_public_ = Z.shape[0]
        self.release_ = Release(self.algorithm, hypothesis, self._release_record())
        self._diagnostics = Diagnostics(self.algorithm, ledger, {
            "uncertified_private_calls": list(self._uncertified_steps),
            "proof_applies": not self._uncertified_steps,
            "fallbacks": sum(str(r["step"]).endswith("/fallback") for r in ledger.records),
            **self._diagnostic_values,
        })
        return self

    def _release_record(self) -> dict[str, Any]:
        """The release's privacy record: data-independent facts only (see :mod:`oraclepriv.release`)."""
        mechanism_facts = dict(self._privacy)
        near_tie = float(mechanism_facts.get("near_tie_probability", 0.0))
        numeric = numerical_delta(self.epsilon_, near_tie) if near_tie > 0 else 0.0
        record: dict[str, Any] = {
            "epsilon": self.epsilon_,
            "delta": self.delta_,
            "numerical_delta": numeric,
            "neighbouring": NEIGHBOURING,
            "reference": self.reference,
            **describe_mode(self.on_uncertified),
            **mechanism_facts,
        }
        record["guarantee"] = self._guarantee(numeric)
        record["covers"] = COVERAGE
        return record

    def _guarantee(self, numeric_delta: float) -> str:
        """One sentence: the (eps, delta) the release has, and under what condition."""
        if self.needs_exact_oracle and self.on_uncertified == "flag":
            return ("none: on_uncertified='flag' keeps uncertified answers; the proof holds only for fits whose "
                    "private-data calls were all certified, and whether they were is a non-private diagnostic")
        claim = dp_claim(self.epsilon_, self.delta_, numeric_delta)
        if self.on_uncertified == "raise":
            return (f"{claim} if on every dataset a private-data call fails with probability <= gamma, plus (1 + e^eps) "
                    "gamma in delta (an assumption about the solver: an uncertified call aborts the fit)")
        if not self.needs_exact_oracle:
            return f"{claim} for any oracle answers (the proof does not use exactness)"
        return f"{claim} for any solver behaviour (every answer used is certified exact; running time not covered)"

    @abstractmethod
    def _fit(self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, **fit_params: Any) -> Any:
        """The algorithm: return the released hypothesis; fill ``self._privacy`` and ``self._diagnostic_values``."""

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


def dp_claim(epsilon: float, delta: float, numeric_delta: float = 0.0) -> str:
    """"pure 1-DP" / "(1, 1e-06)-DP", with the numerical delta's share spelled out when there is one."""
    if delta == 0 and numeric_delta == 0:
        return f"pure {epsilon:g}-DP"
    total = delta + numeric_delta
    if numeric_delta == 0:
        return f"({epsilon:g}, {total:.3g})-DP"
    return (f"({epsilon:g}, {total:.3g})-DP (delta {delta:.3g} by design + numerical delta {numeric_delta:.3g} from "
            "near-ties within the certification tolerance)")
