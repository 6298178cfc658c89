"""Private model selection: a grid search whose choice, and whose fits, are counted in its guarantee.

``GridSearchCV(RRSPM(...), {"epsilon": [0.5, 1, 2]})`` on private data publishes a model that no
guarantee covers: every candidate fit reads the same private records (their costs add up), and the
choice among them reads private validation scores. :class:`PrivateGridSearch` makes both private:

1. split the n private records, with the search's own randomness (independent of the data), into a
   training part of n_train records and a held-out part of n_hold = round(validation_fraction n);
2. fit every candidate of the grid on the training part, each with independent randomness: the K
   private fits compose **sequentially** on those records. They are counted by a private
   :class:`~oraclepriv.accountant.PrivacyAccountant` of their own, whose composition theorem gives
   (eps_fits, delta_fits) (basic composition, or with ``composition_slack`` > 0 the smallest of the
   tighter bounds of :mod:`oraclepriv.accountant`);
3. score each candidate's **released** hypothesis on the held-out part: c_k = the number of held-out
   records it classifies correctly. Replacing one held-out record changes every c_k by at most 1
   (accuracy on the held-out part has sensitivity 1/n_hold);
4. select k with probability proportional to exp(eps_sel c_k / 2), the exponential mechanism of
   McSherry and Talwar, "Mechanism Design via Differential Privacy" (eps_sel-DP for a score of
   sensitivity 1), drawn exactly by Gumbel-max; release candidate k's hypothesis (and k).

Guarantee, under replacement of one private record (docs/theory/private-selection.md): the replaced
record lies in exactly one part. In the training part it moves the law of the K released hypotheses
by (eps_fits, delta_fits) and the selection is post-processing (its held-out scores do not change);
in the held-out part the hypotheses do not move and the selection is eps_sel-DP. The parts are disjoint
(parallel composition), so the search is (max(eps_fits, eps_sel), delta_fits)-DP, under the conditions
each candidate's own release states. That total is what the release states and what the search charges
the active accountant (once: the candidates' fits charge only the search's own accountant).

The best candidate is not refitted on all n records: that refit would compose with everything else.

For candidates whose output law is explicit (``output_log_probabilities``, as
:class:`~oraclepriv.learners.PublicCoverEM` has), :meth:`PrivateGridSearch.output_log_probabilities`
computes the search's exact output law for a fixed split, so
:func:`oraclepriv.audit.exact.audit_exact_distribution` checks the guarantee exactly on small instances
(tests/test_selection.py).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.special import log_softmax, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_array, check_X_y

from oraclepriv.accountant import PrivacyAccountant, charge_fit
from oraclepriv.cover import PublicCover
from oraclepriv.io import jsonable
from oraclepriv.ledger import Ledger
from oraclepriv.public_data import PublicData, public_points
from oraclepriv.release import COVERAGE, Diagnostics, NotFittedError, Release, ReleaseMixin

__all__ = ["NEIGHBOURING", "PrivateGridSearch"]

#: the neighbouring notion of the search: the learners' (oraclepriv.learners._base.NEIGHBOURING)
NEIGHBOURING = "replace one private record; public data fixed"
REFERENCE = (
    "exponential mechanism over held-out accuracy (McSherry, Talwar, Mechanism Design via Differential Privacy); "
    "the candidates' fits composed by oraclepriv.accountant; parallel composition across the split"
)


class PrivateGridSearch(ReleaseMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Differentially private selection of a private learner's parameters (module docstring).

    Parameters
    ----------
    estimator : private learner
        An unfitted oraclepriv learner (its fits charge the active accountant); cloned per candidate.
    param_grid : dict or list of dicts
        The candidates, as scikit-learn's ``ParameterGrid`` reads them. ``random_state`` may not be in it:
        every candidate draws independent randomness from the search's ``random_state`` (shared noise
        would void the composition).
    selection_epsilon : float, default=1.0
        eps_sel of the exponential mechanism over the held-out correct counts (> 0, finite).
    validation_fraction : float, default=0.3
        Share of the private records held out for scoring, in (0, 1); at least one record on each side.
    composition_slack : float, default=0.0
        delta' of the accountant that composes the candidates' fits (0: basic composition).
    random_state : int, SeedSequence, Generator or None
        The split, the candidates' randomness and the selection's noise.


    Attributes
    ----------
    release_ : Release
        The selected hypothesis, with the total guarantee.
    best_index_ : int
        The selected candidate's index.
    best_params_ : dict
        Its parameters.
    best_estimator_ : estimator
        The selected candidate, fitted on the training part.
    candidate_params_ : list of dict
        Every candidate's parameters.
    train_indices_, holdout_indices_ : numpy.ndarray
        The split, a function of n and the seed only.
    diagnostics_ : Diagnostics
        Non-private: the held-out correct counts, the candidates' spends and their oracle calls.
        Reading it warns.

    See Also
    --------
    PrivacyAccountant : The budget a search's total is charged to.
    """

    algorithm: ClassVar[str] = "private-grid-search"
    diagnostic_names: ClassVar[tuple[str, ...]] = ("holdout_correct", "candidate_spends")

    def __init__(
        self,
        estimator: Any,
        param_grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]],
        *,
        selection_epsilon: float = 1.0,
        validation_fraction: float = 0.3,
        composition_slack: float = 0.0,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.selection_epsilon = selection_epsilon
        self.validation_fraction = validation_fraction
        self.composition_slack = composition_slack
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> list[dict[str, Any]]:
        eps = self.selection_epsilon
        if (
            isinstance(eps, bool)
            or not isinstance(eps, (int, float, np.integer, np.floating))
            or not 0 < eps < math.inf
        ):
            raise ValueError(f"selection_epsilon must be a finite number > 0; got {eps!r}")
        frac = self.validation_fraction
        if isinstance(frac, bool) or not isinstance(frac, (int, float, np.integer, np.floating)) or not 0 < frac < 1:
            raise ValueError(f"validation_fraction must be a number in (0, 1); got {frac!r}")
        slack = self.composition_slack
        if (
            isinstance(slack, bool)
            or not isinstance(slack, (int, float, np.integer, np.floating))
            or not 0 <= slack < 1
        ):
            raise ValueError(f"composition_slack must be a number in [0, 1); got {slack!r}")
        if not isinstance(self.estimator, ReleaseMixin) or not hasattr(self.estimator, "get_params"):
            raise ValueError(
                f"estimator must be an oraclepriv private learner (its fits publish a release and charge the privacy "
                f"accountant); got {type(self.estimator).__name__}"
            )
        grid = list(ParameterGrid(self.param_grid))
        if not grid:
            raise ValueError(f"param_grid={self.param_grid!r} holds no candidate")
        if any("random_state" in params for params in grid):
            raise ValueError(
                "param_grid may not set random_state: every candidate draws independent randomness from the "
                "search's random_state (candidates sharing noise do not compose as the guarantee says)"
            )
        return grid

    def _split(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(training indices, held-out indices): a uniform random split of range(n), data-independent."""
        n_hold = min(n - 1, max(1, int(round(float(self.validation_fraction) * n))))
        order = rng.permutation(n)
        return np.sort(order[n_hold:]), np.sort(order[:n_hold])

    def _selection_log_weights(self, correct: np.ndarray) -> np.ndarray:
        """The exponential mechanism's log-weights, eps_sel c_k / 2 (sensitivity 1 of a correct count)."""
        return float(self.selection_epsilon) * np.asarray(correct, dtype=np.float64) / 2.0

    def _validate(self, X: Any, y: Any, X_public: Any, fit_params: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
        X, y = check_X_y(X, y, dtype=np.float64, ensure_all_finite=True, ensure_min_samples=2, estimator=self)
        n = X.shape[0]
        for name, value in fit_params.items():
            if hasattr(value, "__len__") and not isinstance(value, (str, bytes)) and len(value) == n:
                raise ValueError(
                    f"fit parameter {name!r} has one entry per sample: PrivateGridSearch splits the private records "
                    "and scores the held-out ones as private, so per-sample side data are not supported"
                )
        extra = dict(fit_params)
        if X_public is not None:
            extra["X_public"] = PublicData(public_points(X_public, n, X.shape[1]))
        return X, y, extra

    def _candidate(self, params: dict[str, Any], random_state: Any = None) -> Any:
        estimator = clone(self.estimator).set_params(**params)
        if random_state is not None and "random_state" in estimator.get_params(deep=False):
            estimator.set_params(random_state=random_state)
        return estimator

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, X_public: Any = None, **fit_params: Any) -> PrivateGridSearch:
        """Fit every candidate on the training part, select one privately on the held-out part; returns self.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The private features.
        y : array-like of shape (n,)
            The private labels.
        X_public : PublicData, array-like or None, default None
            The public points, passed to every candidate's fit.
        **fit_params
            Other keyword arguments of the candidates' fit, passed unchanged; per-sample ones (one entry
            per record) are refused, since the search splits the records.

        Returns
        -------
        PrivateGridSearch
            The fitted search.
        """
        grid = self._check_params()
        X, y, extra = self._validate(X, y, X_public, fit_params)
        rng = _generator(self.random_state)
        train, hold = self._split(X.shape[0], rng)
        seeds = rng.spawn(len(grid))
        own = PrivacyAccountant(slack=float(self.composition_slack))
        fitted = []
        with Ledger() as ledger, own:
            for k, params in enumerate(grid):
                candidate = self._candidate(params, seeds[k])
                candidate.fit(X[train], y[train], **extra)
                if len(own) != k + 1 or not hasattr(candidate, "release_"):
                    raise ValueError(
                        f"estimator {type(self.estimator).__name__} published no charged release: PrivateGridSearch "
                        "needs an oraclepriv private learner, whose fits charge the privacy accountant"
                    )
                fitted.append(candidate)
        correct = np.array([int(np.sum(c.predict(X[hold]) == y[hold])) for c in fitted], dtype=np.int64)
        log_weights = self._selection_log_weights(correct)
        index = int(np.argmax(log_weights + rng.gumbel(size=log_weights.size)))  # Gumbel-max: exact EM sampling
        best = fitted[index]
        record = self._record(own, grid, index, len(train), len(hold))
        if record["delta"] > 0 and record["delta"] >= 1.0 / X.shape[0]:
            raise ValueError(
                f"the {len(grid)} candidates' deltas compose to {record['delta']:.3g}, >= 1/n = {1.0 / X.shape[0]:.3g} "
                f"for n={X.shape[0]} private records: such a delta allows publishing a record verbatim, so nothing is "
                "released. Use fewer candidates or candidates with a smaller delta"
            )
        charge_fit(self, record)  # the total, to the active accountant; refused: nothing published
        self.candidate_params_ = grid
        self.best_index_ = index
        self.best_params_ = grid[index]
        self.best_estimator_ = best
        self.classes_ = best.classes_
        self.n_features_in_ = X.shape[1]
        self.train_indices_, self.holdout_indices_ = train, hold
        self.release_ = Release(
            self.algorithm,
            best.release_.hypothesis,
            record,
            classes=best.release_.classes,
            n_features=best.release_.n_features,
        )
        self._diagnostics = Diagnostics(
            self.algorithm,
            ledger,
            {"holdout_correct": correct.tolist(), "candidate_spends": [(s.epsilon, s.delta) for s in own.spends]},
        )
        return self

    def _record(
        self, own: PrivacyAccountant, grid: list[dict[str, Any]], index: int, n_train: int, n_hold: int
    ) -> dict[str, Any]:
        """The release's privacy record: data-independent facts (the grid, the sizes, the composed costs)."""
        fits = own.total()
        eps_sel = float(self.selection_epsilon)
        epsilon, delta = max(fits.epsilon, eps_sel), fits.delta
        finite = math.isfinite(epsilon)
        claim = f"pure {epsilon:g}-DP" if delta == 0 else f"({epsilon:g}, {delta:.3g})-DP"
        guarantee = (
            f"{claim}: the {len(grid)} candidate fits on the same {n_train} training records compose to "
            f"({fits.epsilon:g}, {fits.delta:.3g}) by {fits.theorem}; the selection on the {n_hold} disjoint held-out "
            f"records is {eps_sel:g}-DP; disjoint parts compose in parallel (the maximum). Under the conditions each "
            "candidate's own guarantee states"
            if finite
            else "none: a candidate's release has no record-level (epsilon, delta) guarantee, so neither has the search"
        )
        return {
            "epsilon": epsilon,
            "delta": delta,
            "numerical_delta": 0.0,  # the candidates' numerical deltas are in their spends, so in delta
            "guarantee": guarantee,
            "private": finite,
            "neighbouring": NEIGHBOURING,
            "reference": REFERENCE,
            "mechanism": (
                f"exponential mechanism over {len(grid)} candidates, Pr[k] proportional to exp(eps_sel * c_k / 2), "
                "c_k = held-out records the k-th released hypothesis classifies correctly"
            ),
            "calibration": "score sensitivity 1 (a correct count; accuracy on the held-out part: 1/n_holdout)",
            "selection_epsilon": eps_sel,
            "fits_epsilon": fits.epsilon,
            "fits_delta": fits.delta,
            "fits_composition": fits.theorem,
            "composition_slack": float(self.composition_slack),
            "candidates": len(grid),
            "n_train": n_train,
            "n_holdout": n_hold,
            "selected_index": index,
            "selected_params": jsonable({k: _plain(v) for k, v in grid[index].items()}),
            "refit": "none: the selected candidate is the one fitted on the training part",
            "covers": COVERAGE,
        }

    # ------------------------------------------------------------------ predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "release_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' with appropriate arguments "
                "before using this estimator"
            )

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "release_")

    def predict(self, X: Any) -> np.ndarray:
        """Predict with the selected candidate's released hypothesis.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points.

        Returns
        -------
        numpy.ndarray of shape (n,)
            Class labels.
        """
        self._check_fitted()
        return self.best_estimator_.predict(check_array(X, dtype=np.float64))

    # ------------------------------------------------------------------ exact output law (audits)
    def output_log_probabilities(self, X: Any, y: Any, X_public: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """The exact law of the search's output (k, hypothesis of candidate k) on this data, for the split
        its ``random_state`` draws: one row per possible output, [k, the hypothesis's parameters as in
        :attr:`~oraclepriv.cover.PublicCover.params`, NaN-padded], and its log-probability.

        Needs labels in {0, 1}, a fixed ``random_state`` (int or SeedSequence) and candidates with an explicit
        law (``output_log_probabilities(X, y, X_public)`` and a ``hypothesis_class``). Computed by summing the
        selection's law over every combination of the other candidates' held-out correct counts.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The private features.
        y : array-like of shape (n,)
            The private labels, in {0, 1}.
        X_public : PublicData, array-like or None, default None
            The public points.

        Returns
        -------
        outputs : numpy.ndarray
            One row per possible output.
        log_probabilities : numpy.ndarray
            The log-probability of each.
        """
        grid = self._check_params()
        if self.random_state is None or isinstance(self.random_state, np.random.Generator):
            raise ValueError(
                f"output_log_probabilities needs random_state fixed to an int or SeedSequence (the split); got "
                f"{self.random_state!r}"
            )
        X, y, extra = self._validate(X, y, X_public, {})
        if not np.all((y == 0) | (y == 1)):
            raise ValueError("output_log_probabilities needs labels in {0, 1}")
        train, hold = self._split(X.shape[0], _generator(self.random_state))
        public = () if "X_public" not in extra else (extra["X_public"],)
        laws = []  # per candidate: (parameter rows, log-probabilities, held-out correct counts)
        for params in grid:
            candidate = self._candidate(params)
            if not hasattr(candidate, "output_log_probabilities"):
                raise ValueError(f"{type(candidate).__name__} has no explicit output law (output_log_probabilities)")
            rows, logp = candidate.output_log_probabilities(X[train], y[train], *public)
            cover = PublicCover(candidate.hypothesis_class, np.asarray(rows, dtype=np.float64), True, 0, X.shape[1], 0)
            correct = len(hold) - cover.errors(X[hold], y[hold])
            laws.append((np.asarray(rows, dtype=np.float64), np.asarray(logp, dtype=np.float64), correct))
        # each candidate's law of its correct count: distinct values and their log-probabilities
        count_laws = []
        for _, logp, correct in laws:
            values = np.unique(correct)
            count_laws.append((values, np.array([logsumexp(logp[correct == v]) for v in values])))
        width = 1 + max(rows.shape[1] for rows, _, _ in laws)
        out_rows, out_logp = [], []
        for k, (rows, logp, correct) in enumerate(laws):
            others = [count_laws[j] for j in range(len(laws)) if j != k]
            for value in np.unique(correct):
                terms = []  # log E over the other candidates' counts of Pr[select k | counts]
                for combo in itertools.product(*[range(len(v)) for v, _ in others]):
                    counts = [int(others[i][0][c]) for i, c in enumerate(combo)]
                    counts.insert(k, int(value))
                    weight = sum(float(others[i][1][c]) for i, c in enumerate(combo))
                    terms.append(weight + float(log_softmax(self._selection_log_weights(np.array(counts)))[k]))
                log_select = float(logsumexp(terms))
                for i in np.flatnonzero(correct == value):
                    row = np.full(width, np.nan)
                    row[0] = k
                    row[1 : 1 + rows.shape[1]] = rows[i]
                    out_rows.append(row)
                    out_logp.append(float(logp[i]) + log_select)
        return np.array(out_rows), np.array(out_logp)


def _generator(random_state: Any) -> np.random.Generator:
    """numpy's ``default_rng`` (None, a non-negative int, a SeedSequence or a Generator), its errors named."""
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError):
        raise ValueError(
            f"random_state must be None, a non-negative int, a SeedSequence or a Generator; got {random_state!r}"
        ) from None


def _plain(value: Any) -> Any:
    """A JSON-friendly form of a grid value (numbers and strings as they are, anything else by its repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    return repr(value)
