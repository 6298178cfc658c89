"""Shared estimator plumbing for the private learners of Block, Bun, Desai, Shetty and Wu,
"Oracle-Efficient Differentially Private Learning with Public Data".

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

import copy
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import Tags
from sklearn.utils.validation import check_array, validate_data

from oraclepriv.accountant import charge_fit
from oraclepriv.exact_comparison import compared_exactly, exactly_compared
from oraclepriv.ledger import Ledger
from oraclepriv.near_ties import check_total_delta, numerical_delta
from oraclepriv.oracle import HYPOTHESIS_CLASSES, make_oracle
from oraclepriv.protocols import ERMOracle
from oraclepriv.public_data import public_points
from oraclepriv.public_fit import public_fit_inputs
from oraclepriv.release import COVERAGE, Diagnostics, NotFittedError, Release, ReleaseMixin, warn_privacy_leak
from oraclepriv.robust import ON_UNCERTIFIED_MODES, UncertifiedOracleError, describe_mode, fallback_oracle
from oraclepriv.solvers.base import Backend
from oraclepriv.validation import (
    DELTA,
    EPSILON,
    NO_VALIDATION,
    POSITIVE_INTEGER,
    POSITIVE_REAL,
    Alternatives,
    InstanceOf,
    StrOptions,
    check_delta_for_n,
    encode_binary_labels,
    validate_params,
)

__all__ = [
    "NEIGHBOURING",
    "OracleMixin",
    "PrivateEstimator",
    "PrivateLearner",
    "PublicDataEstimator",
    "UncertifiedOracleError",
    "NotFittedError",
    "make_rng",
]

#: the constraint of ``m`` (the first m public points), declared by the learners that take it
FIRST_M: Alternatives = (None, POSITIVE_INTEGER)

#: the neighbouring notion every learner here is private with respect to (paper, Def. 1)
NEIGHBOURING = "replace one private record; public data fixed"

ON_UNCERTIFIED = ON_UNCERTIFIED_MODES


def make_rng(random_state: Any) -> np.random.Generator:
    """One Generator per fit: None -> OS entropy; int/SeedSequence/Generator accepted."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        if isinstance(random_state, (int, np.integer)) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, a Generator or None; got {random_state!r}")
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state must be None, a non-negative int, a SeedSequence or a Generator; got {random_state!r}"
    )


class PrivateEstimator(ReleaseMixin, ClassifierMixin, BaseEstimator):
    """Privacy base of every private learner: epsilon, delta, random_state and the release.

    A scikit-learn classifier (``get_params``/``set_params``/``clone``, ``classes_``, ``score``,
    ``__sklearn_tags__``, scikit-learn's ``NotFittedError``) whose fit publishes exactly one
    :class:`~oraclepriv.release.Release`. Subclasses declare every constructor parameter in their own
    ``__init__`` (scikit-learn reads them from its signature). This base validates the parameters
    and features, encodes the labels, publishes the release with its privacy record and keeps the
    non-private diagnostics.

    :class:`PublicDataEstimator` adds the fit on private records plus public points; learners that
    call an ERM oracle add :class:`OracleMixin` (backend, options, time limit and the exactness
    gate). PPMHalfspaces, whose public examples are rows of ``X``, builds on this base directly.
    """

    #: name used as ``caller`` in the ledger and as the release's ``algorithm``
    algorithm: ClassVar[str] = ""
    #: paper + algorithm number, for the privacy record
    reference: ClassVar[str] = ""
    #: does the privacy proof need every private-data oracle call to return an exact minimiser?
    needs_exact_oracle: ClassVar[bool] = False
    diagnostic_names: ClassVar[tuple[str, ...]] = ("uncertified_private_calls", "proof_applies", "fallbacks")
    #: every constructor parameter -> the alternatives its value may take (scikit-learn's format; the
    #: constraints of :mod:`oraclepriv.validation`), checked by :meth:`_validate_params` at the start of fit
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {"epsilon": (EPSILON,), "random_state": NO_VALIDATION}

    epsilon: float
    delta: float
    random_state: Any

    # ------------------------------------------------------------------ scikit-learn plumbing
    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary learners
        tags.classifier_tags.poor_score = True  # private: noise costs accuracy on small samples
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "release_")

    def __sklearn_clone__(self) -> PrivateEstimator:
        """scikit-learn's clone, keeping ``theory`` (the derivation ``from_theory`` attached)."""
        clone = super().__sklearn_clone__()
        if hasattr(self, "theory"):
            clone.theory = copy.deepcopy(self.theory)
        return clone

    # ------------------------------------------------------------------ validation
    def _validate_params(self) -> None:
        """Check every constructor parameter against ``_parameter_constraints`` (one validator for every
        learner; errors name the learner, the parameter and the value). Overrides scikit-learn's method of
        the same name, whose constraint objects are private API."""
        validate_params(self.get_params(deep=False), self._parameter_constraints, type(self).__name__)

    def _check_constructor_params(self) -> None:
        """Validate the constructor parameters (called at the start of every fit)."""
        self._validate_params()
        self.epsilon_ = float(self.epsilon)

    def _validate_features(self, X: Any, name: str, *, reset: bool) -> np.ndarray:
        """2-D finite float64 features (scikit-learn's ``check_array``, messages naming ``name``);
        records (``reset``) or checks ``n_features_in_`` and ``feature_names_in_``."""
        arr = check_array(
            X, dtype=np.float64, accept_sparse=False, ensure_all_finite=True, input_name=name, estimator=self
        )
        validate_data(self, X, reset=reset, skip_check_array=True)
        return arr

    def _encode_labels(self, y: Any, n: int, name: str) -> np.ndarray:
        codes, classes, inferred = encode_binary_labels(y, n, name)
        if inferred:
            warn_privacy_leak(
                f"{type(self).__name__}: the class labels {[c.item() if hasattr(c, 'item') else c for c in classes]} "
                f"were read off {name}; they are published with the hypothesis (classes_). The label set is "
                "assumed public, as in scikit-learn; use labels in {0, 1} to fix it in advance"
            )
        self.classes_ = classes
        return codes

    def _publish(self, hypothesis: Any, privacy: dict[str, Any], ledger: Ledger, diagnostics: dict[str, Any]) -> None:
        """Set ``release_`` (with ``classes_`` when the labels are not 0/1) and the non-private diagnostics.

        First the release's (epsilon, total delta) is charged to the active privacy accountant
        (:mod:`oraclepriv.accountant`); past its budget that raises and nothing of this fit is published."""
        charge_fit(self, privacy, record_level=privacy.get("neighbouring") == NEIGHBOURING)
        fixed = self.classes_.dtype == np.int8 and np.array_equal(self.classes_, [0, 1])
        classes = None if fixed else tuple(self.classes_.tolist())
        self.release_ = Release(
            self.algorithm,
            hypothesis,
            privacy,
            classes=classes,
            seeded=getattr(self, "random_state", None) is not None,
            n_features=getattr(self, "n_features_in_", None),
        )
        self._diagnostics = Diagnostics(self.algorithm, ledger, diagnostics)

    def _release_record(self) -> dict[str, Any]:
        """The release's privacy record: data-independent facts only (see :mod:`oraclepriv.release`).

        A total delta >= 1/n is refused (:func:`oraclepriv.near_ties.check_total_delta`), or, with
        ``allow_weak_guarantee=True``, published with a guarantee that says it is vacuous (warns)."""
        mechanism_facts = dict(self._privacy)
        near_tie = float(mechanism_facts.get("near_tie_probability", 0.0))
        numeric = numerical_delta(self.epsilon_, near_tie) if near_tie > 0 else 0.0
        record: dict[str, Any] = {
            "epsilon": self.epsilon_,
            "delta": self.delta_,
            "numerical_delta": numeric,
            "neighbouring": NEIGHBOURING,
            "reference": self.reference,
            **self._mode_record(),
            **mechanism_facts,
        }
        record["guarantee"] = self._guarantee(numeric)
        m = mechanism_facts.get("m")
        if self._check_total_delta(numeric, int(self.n_private_), None if m is None else int(m)):
            record["vacuous"] = True
            record["guarantee"] = (
                f"VACUOUS: total delta {self.delta_ + numeric:.3g} >= 1/n = {1.0 / self.n_private_:.3g}, so no "
                f"meaningful privacy (released on allow_weak_guarantee=True); nominally {record['guarantee']}"
            )
            warn_privacy_leak(
                f"{type(self).__name__}(allow_weak_guarantee=True) released a fit whose total delta "
                f"{self.delta_ + numeric:.3g} is >= 1/n = {1.0 / self.n_private_:.3g}: its guarantee is vacuous"
            )
        record["covers"] = COVERAGE
        return record

    def _check_total_delta(self, numeric_delta: float, n: int, m: int | None = None) -> bool:
        """False below 1/n; True when vacuous and ``allow_weak_guarantee``; else raise (names the levers)."""
        return check_total_delta(
            type(self).__name__,
            self.delta_,
            numeric_delta,
            n,
            m=m,
            allow_weak=bool(getattr(self, "allow_weak_guarantee", False)),
            levers=self._weak_guarantee_levers(),
        )

    def _refuse_vacuous_guarantee(self, near_tie_probability: float, n: int, m: int) -> None:
        """Before any oracle call: refuse a fit whose total delta will be >= 1/n (see :meth:`_release_record`)."""
        numeric = numerical_delta(self.epsilon_, near_tie_probability) if near_tie_probability > 0 else 0.0
        self._check_total_delta(numeric, n, m)

    def _weak_guarantee_levers(self) -> tuple[str, ...]:
        """What lowers a too-large total delta, in this learner's parameters."""
        return (
            "fewer public points (public_size=M, or public_size='auto', which stays below 1/n where it can)",
            "hypothesis_class='threshold' or 'stump' (or data on one feature) with the default backend, whose "
            "answers are compared exactly (numerical delta 0)",
            "a smaller epsilon (the numerical delta carries a factor 1 + e^eps)",
            "or allow_weak_guarantee=True to release anyway, with a PrivacyLeakWarning and a guarantee marked vacuous",
        )

    def _mode_record(self) -> dict[str, Any]:
        """Record entries on how oracle failures are handled (none: no oracle)."""
        return {}

    def _guarantee(self, numeric_delta: float) -> str:
        """One sentence: the (eps, delta) the release has, and under what condition."""
        return f"{dp_claim(self.epsilon_, self.delta_, numeric_delta)} (no oracle call)"

    # ------------------------------------------------------------------ predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "release_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' with appropriate arguments "
                "before using this estimator"
            )

    def _check_predict_input(self, X: Any) -> np.ndarray:
        self._check_fitted()
        return self._validate_features(X, "X", reset=False)

    def predict(self, X: Any) -> np.ndarray:
        """Predict with the released hypothesis.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points, with the features the learner was fitted on.

        Returns
        -------
        numpy.ndarray of shape (n,)
            Class labels, entries of ``classes_``.
        """
        X = self._check_predict_input(X)
        codes = np.asarray(self.hypothesis_.predict(X), dtype=np.int8)
        return self.classes_[codes]


class PublicDataEstimator(PrivateEstimator, ABC):
    """A private learner fitted on private labelled records and public unlabelled points.

    ``fit(X_private, y_private, X_public)``: the public points come as a
    :class:`~oraclepriv.public_data.PublicData` (or a plain array whose length differs from the
    private sample's; :mod:`oraclepriv.public_data` explains the slicing hazard this avoids).
    """

    #: does ``fit`` take ``public_labels`` (the proof holds for any fixed labels of the public points)?
    accepts_public_labels: ClassVar[bool] = False

    def _validate_common(
        self, X_private: Any, y_private: Any, X_public: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._check_constructor_params()
        X = self._validate_features(X_private, "X_private", reset=True)
        y = self._encode_labels(y_private, X.shape[0], "y_private")
        Z = public_points(X_public, X.shape[0], X.shape[1])
        self.delta_ = check_delta_for_n(self.delta, X.shape[0], "delta")
        return X, y, Z

    # ------------------------------------------------------------------ fit
    def fit(
        self, X_private: Any, y_private: Any, X_public: Any = None, *, public_labels: Any = None
    ) -> PublicDataEstimator:
        """Fit on private labelled records and public unlabelled points; returns self.

        The fit publishes one :class:`~oraclepriv.release.Release` (``release_``), charged to the
        active :class:`~oraclepriv.accountant.PrivacyAccountant` if there is one.

        Parameters
        ----------
        X_private : array-like of shape (n, d)
            The private features.
        y_private : array-like of shape (n,)
            The private labels, two classes.
        X_public : PublicData, array-like of shape (m, d) or None, default None
            The public points: a :class:`~oraclepriv.public_data.PublicData` (never sliced by
            scikit-learn's cross-validation) or a plain array with a different number of rows than
            ``X_private``. Required by every learner but RSPM, which takes none.
        public_labels : array-like of shape (m,) or None, default None
            Fixed labels of the public points, for the learners whose proof holds for any fixed labels
            (RRSPM and RSPM; the audits use it); None: drawn at random.

        Returns
        -------
        PrivateLearner
            The fitted learner.

        Raises
        ------
        ValueError
            For bad parameters or data (each error names the argument and the value).
        TypeError
            For ``public_labels`` given to a learner that draws no public labels.
        UncertifiedOracleError
            With ``on_uncertified="raise"``, when a private-data oracle call is not certified.
        oraclepriv.BudgetExceededError
            When the fit would exceed the active accountant's budget; nothing is published.
        """
        if public_labels is not None and not self.accepts_public_labels:
            raise TypeError(f"{type(self).__name__}.fit takes no public_labels (it draws no public labels)")
        X_private, X_public = public_fit_inputs(self, X_private, X_public)  # pipelines: oraclepriv.public_fit
        X, y, Z = self._validate_common(X_private, y_private, X_public)
        self._before_fit()
        rng = make_rng(self.random_state)
        self._uncertified_steps: list[str] = []
        self._privacy: dict[str, Any] = {}
        self._diagnostic_values: dict[str, Any] = {}
        Z = self._public_points_used(X, Z)
        with Ledger() as ledger:
            hypothesis = self._fit(X, y, Z, rng, public_labels)
        self.hypothesis_ = hypothesis
        self.n_private_ = X.shape[0]
        self.n_public_ = Z.shape[0]
        self._publish(
            hypothesis,
            self._release_record(),
            ledger,
            {
                "uncertified_private_calls": list(self._uncertified_steps),
                "proof_applies": not self._uncertified_steps,
                "fallbacks": sum(str(r["step"]).endswith("/fallback") for r in ledger.records),
                **self._diagnostic_values,
            },
        )
        return self

    def _before_fit(self) -> None:
        """Checks that need validated data but run before any work (the oracle mixin's backend scope)."""

    def _public_points_used(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """The public points the algorithm sees (all of them here; ``public_size``:
        :mod:`oraclepriv.learners._public_size`), recorded in ``self._privacy`` when chosen."""
        return Z

    @abstractmethod
    def _fit(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        """The algorithm: return the released hypothesis; fill ``self._privacy`` and ``self._diagnostic_values``.
        ``public_labels`` is None unless the learner ``accepts_public_labels``."""


class OracleMixin:
    """What a learner that calls an ERM oracle adds to :class:`PrivateEstimator`.

    Parameters ``hypothesis_class``, ``backend``, ``backend_options``, ``time_limit`` and
    ``on_uncertified``; the oracle factory and the exactness gate. A private-data oracle call whose
    answer is not ``certified`` (optimal over the **whole** class) voids the privacy proofs, so by
    default it raises :class:`UncertifiedOracleError`; ``"fallback"`` re-solves it with an exact
    backend and no time limit; ``"flag"`` keeps it (no guarantee; warns). The guarantees of the
    three modes: :mod:`oraclepriv.robust`.
    """

    #: hypothesis classes this learner supports
    supported_classes: ClassVar[tuple[str, ...]] = HYPOTHESIS_CLASSES
    needs_exact_oracle: ClassVar[bool] = True

    algorithm: ClassVar[str]
    hypothesis_class: str
    backend: Any
    backend_options: dict[str, Any] | None
    time_limit: float | None
    on_uncertified: str
    epsilon_: float
    delta_: float
    _uncertified_steps: list[str]

    def _validate_common(
        self, X_private: Any, y_private: Any, X_public: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, y, Z = super()._validate_common(X_private, y_private, X_public)  # type: ignore[misc]
        if self.hypothesis_class == "threshold" and X.shape[1] != 1:
            raise ValueError(f"hypothesis_class='threshold' needs one feature; X_private has {X.shape[1]}")
        return X, y, Z

    def _before_fit(self) -> None:
        self._check_backend_scope()
        if self.needs_exact_oracle and self.on_uncertified == "flag":
            warn_privacy_leak(
                f"{type(self).__name__}(on_uncertified='flag') keeps uncertified oracle answers: the release carries "
                "no privacy guarantee (use 'raise' or 'fallback' for one)"
            )

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
        if "time_limit" in options:
            raise ValueError("pass time_limit as the learner's time_limit parameter, not in backend_options")
        return dict(options)

    def _fresh_backend(self) -> Any:
        """``backend`` for one oracle: a configured instance is a template, copied fresh
        (:meth:`~oraclepriv.solvers.base.Backend.fresh`) so no solver state crosses fits or teachers' blocks."""
        return self.backend.fresh() if isinstance(self.backend, Backend) else self.backend

    def _oracle(self) -> ERMOracle:
        """A new oracle for this fit (or this teacher), on a fresh backend; on the exhaustive backends (sweep,
        enumerate on one feature) its certified answers are exact minimisers (:mod:`oraclepriv.exact_comparison`)."""
        backend = self._fresh_backend()
        if self.on_uncertified == "fallback":
            return exactly_compared(
                fallback_oracle(self.hypothesis_class, backend, self.time_limit, **self._backend_options()), backend
            )
        options: dict[str, Any] = self._backend_options()
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        return exactly_compared(make_oracle(self.hypothesis_class, backend=backend, **options), backend)

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

    def _mode_record(self) -> dict[str, Any]:
        record = describe_mode(self.on_uncertified)
        if self.needs_exact_oracle and compared_exactly(
            self.hypothesis_class, getattr(self, "n_features_in_", None), self.backend
        ):
            record["comparison"] = (
                "exact: every certified answer is checked against the class's optimum in integer arithmetic and "
                "replaced by an exact minimiser if it is not one, so near-ties cost nothing (numerical delta 0)"
            )
        return record

    def _guarantee(self, numeric_delta: float) -> str:
        """One sentence: the (eps, delta) the release has, and under what condition."""
        if self.needs_exact_oracle and self.on_uncertified == "flag":
            return (
                "none: on_uncertified='flag' keeps uncertified answers; the proof holds only for fits whose "
                "private-data calls were all certified, and whether they were is a non-private diagnostic"
            )
        claim = dp_claim(self.epsilon_, self.delta_, numeric_delta)
        if self.on_uncertified == "raise":
            return (
                f"{claim} if on every dataset a private-data call fails (an uncertified answer or an exception) with "
                "probability <= gamma, plus (1 + e^eps) gamma in delta (an assumption about the solver: a failed "
                "call aborts the fit)"
            )
        if not self.needs_exact_oracle:
            return (
                f"{claim} for any oracle answers (the proof does not use exactness; a call that raises counts as a "
                "failed one)"
            )
        return (
            f"{claim} for any behaviour of the primary backend (wrong, uncertified or raising: such calls are re-solved "
            "by the exact fallback, so every answer used is certified exact); not covered: a failure of the exact "
            "fallback itself, which aborts the fit, and running time"
        )


class PrivateLearner(OracleMixin, PublicDataEstimator):
    """Base class of the learners that call an ERM oracle (Block et al.'s algorithms and their kin).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter, > 0.
    delta : float, default=0.0
        Privacy parameter in [0, 1), < 1/n when positive.
    hypothesis_class : {"threshold", "stump", "halfspace"}, default="halfspace"
        The class the oracle minimises over (a learner may support fewer).
    backend : str, backend class or instance, or None
        The exact ERM backend (None: the protocol's default installed exact backend). An instance is a
        configuration template: every oracle solves on a fresh copy of it (no state crosses fits).
    backend_options : dict or None
        Keyword options of the backend.
    time_limit : float or None
        Seconds per oracle call.
    on_uncertified : {"raise", "fallback", "flag"}, default="raise"
        What an uncertified private-data oracle answer does (:mod:`oraclepriv.robust`).
    random_state : int, SeedSequence, Generator or None
        Source of the mechanism's randomness.
    """

    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PublicDataEstimator._parameter_constraints,
        "delta": (DELTA,),
        "hypothesis_class": (StrOptions(*OracleMixin.supported_classes),),
        "backend": NO_VALIDATION,  # a name, class or instance: the backend registry says which exist
        "backend_options": (InstanceOf((dict,), "a dict of the backend's options"), None),
        "time_limit": (None, POSITIVE_REAL),
        "on_uncertified": (StrOptions(*ON_UNCERTIFIED),),
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.0,
        hypothesis_class: str = "halfspace",
        backend: Any = None,
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


def dp_claim(epsilon: float, delta: float, numeric_delta: float = 0.0) -> str:
    """ "pure 1-DP" / "(1, 1e-06)-DP", with the numerical delta's share spelled out when there is one."""
    if delta == 0 and numeric_delta == 0:
        return f"pure {epsilon:g}-DP"
    total = delta + numeric_delta
    if numeric_delta == 0:
        return f"({epsilon:g}, {total:.3g})-DP"
    return (
        f"({epsilon:g}, {total:.3g})-DP (delta {delta:.3g} by design + numerical delta {numeric_delta:.3g} from "
        "near-ties within the certification tolerance)"
    )
