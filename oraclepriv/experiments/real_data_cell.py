"""The learners of the real-data comparison (:mod:`oraclepriv.experiments.real_data`) and one cell: one learner, fitted
on one seed's split of one task at one epsilon, scored on the test split, timed, within a time cap.

The learner table, :data:`LEARNERS`, holds one :class:`Entry` per learner and feature map. Each runs at one setting
fixed in advance by a rule of (n, d, epsilon), never tuned on the private data (tuning would spend privacy the
comparison does not account), so the accuracies are each learner's out-of-the-box ones:

* the oracle learners of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public
  Data" -- RRSPM (Algorithm 4, ``public_size="auto"``: the theory's m), Perturbation (Algorithm 2, J = 3, eta = 0.1,
  delta = 1e-6, ``public_size="auto"``) -- and SubsampleAggregate (k = clip(n / 10, 2, 128) teachers, Laplace, on
  max(2, min(public, k / 4)) public points), all with an exact oracle in the low-dimensional map (``features="low"``:
  an exact 0-1 oracle cannot run in d = 30);
* PublicCoverEM (the exponential mechanism over the public cover; Wang, Lei, Fienberg, "Learning with Differential
  Privacy: Stability, Learnability and the Sufficiency and Necessity of ERM Principle", Algorithm 1; Bassily, Mohri,
  Suresh, "Differentially Private Learning with Margin Guarantees", Algorithm 5), ``public_size="auto"``, low map;
* PPM (Bassily, Moran, Nandi, "Learning from Mixtures of Private and Public Populations", Algorithm 2) in the low map
  (d <= 2): its privacy model is label-determined (the records of class 0 are public), weaker than the record-level
  DP of the others, so it is shown (kind "label-determined") but never ranked among the private learners;
* output-perturbation logistic regression (Chaudhuri, Monteleoni, Sarwate, "Differentially Private Empirical Risk
  Minimization", Algorithm 1), lambda = 1 / sqrt(n), data norm 1, on all features and in the low map;
* the margin learners of Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees": MarginERM
  (Algorithm 2, margin rho fixed in advance) on all features and in the low map, and AdaptiveMarginERM (Algorithm 6,
  rho chosen privately) on all features, each with the data radius 1 of the scaled rows (no public data, no oracle),
  at the paper's defaults; and both again on all features with the settings of ``config["margin_direct"]``
  (``accounting="direct-gaussian", rounds=1, jl_dim=None``: our accounting, one run of the stand-in solver on the
  records themselves with all of epsilon, no projection; docs/theory/margin-learners.md);
* the references: the majority class of the private labels, the exact non-private 0-1 ERM in the low map, and
  non-private L2 logistic regression (scikit-learn's default C = 1) on all features and in the low map.

Statuses: "ok"; "uncertified" (a private-data oracle call did not certify within the call cap: the fit aborts, nothing
is released); "capped" (the cell's wall-clock cap ran out); "error" (an exception, its message kept). A fit that is
not "ok" keeps its row and its seconds, with no accuracy.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from oraclepriv.experiments.real_data_sets import make_split
from oraclepriv.public_data import PublicData
from oraclepriv.release import PrivacyLeakWarning

__all__ = ["ALL", "LEARNERS", "LOW", "Context", "Entry", "CellTimeout", "run_cell", "time_cap"]

#: the feature maps: every feature in the unit ball, or its first principal directions (real_data_sets)
ALL, LOW = "all", "low"
#: the kinds of learner: ranked among the private learners, a label-determined-privacy learner, a non-private one
PRIVATE, LABEL_DETERMINED, REFERENCE = "private", "label-determined", "reference"


@dataclass(frozen=True)
class Context:
    """What a learner of the table gets: the data in its feature map, epsilon, its seed and the configuration.

    Parameters
    ----------
    X, y : ndarray
        The private records in the entry's feature map and their labels.
    Z : ndarray
        The public sample in the same map.
    epsilon : float
        The privacy parameter (nan for the references).
    seed : int
        The learner's seed (its noise).
    config : dict
        The experiment's configuration (call cap, backend, the learners' fixed parameters).
    """

    X: np.ndarray
    y: np.ndarray
    Z: np.ndarray
    epsilon: float
    seed: int
    config: dict[str, Any]

    @property
    def n(self) -> int:
        """The number of private records."""
        return int(self.X.shape[0])

    def oracle_options(self) -> dict[str, Any]:
        """The oracle learners' common keywords: the halfspace class, the backend, its call cap, the seed."""
        cfg = self.config
        return {
            "hypothesis_class": "halfspace",
            "backend": cfg["backend"],
            "time_limit": float(cfg["call_cap"]),
            "random_state": self.seed,
        }


# ------------------------------------------------------------------------------------------ the learners
def _rrspm(c: Context) -> Any:
    from oraclepriv.learners import RRSPM

    return RRSPM(epsilon=c.epsilon, public_size="auto", **c.oracle_options()).fit(c.X, c.y, X_public=PublicData(c.Z))


def _perturbation(c: Context) -> Any:
    from oraclepriv.learners import Perturbation

    p = c.config["perturbation"]
    est = Perturbation(
        epsilon=c.epsilon, delta=p["delta"], J=p["J"], eta=p["eta"], public_size="auto", **c.oracle_options()
    )
    return est.fit(c.X, c.y, X_public=PublicData(c.Z))


def subsample_sizes(n: int, public: int, records_per_teacher: int, max_teachers: int) -> tuple[int, int]:
    """SubsampleAggregate's (teachers, public points): k = clip(n / records_per_teacher, 2, max_teachers) and
    max(2, min(public, k // 4)) points, so that the Laplace noise's scale m / (k eps) stays at most 1 / (4 eps)."""
    k = int(min(max_teachers, max(2, n // records_per_teacher)))
    return k, max(2, min(public, k // 4))


def _subsample(c: Context) -> Any:
    from oraclepriv.learners import SubsampleAggregate

    s = c.config["subsample"]
    k, m = subsample_sizes(c.n, c.Z.shape[0], s["records_per_teacher"], s["max_teachers"])
    est = SubsampleAggregate(n_teachers=k, noise="laplace", delta=0.0, epsilon=c.epsilon, **c.oracle_options())
    return est.fit(c.X, c.y, X_public=PublicData(c.Z[:m]))


def _public_cover_em(c: Context) -> Any:
    from oraclepriv.learners import PublicCoverEM

    est = PublicCoverEM(
        epsilon=c.epsilon, public_size="auto", max_candidates=int(c.config["max_candidates"]), random_state=c.seed
    )
    return est.fit(c.X, c.y, X_public=PublicData(c.Z))


def _ppm(c: Context) -> Any:
    from oraclepriv.learners import PPMHalfspaces

    est = PPMHalfspaces(epsilon=c.epsilon, max_public=int(c.config["ppm_max_public"]), random_state=c.seed)
    return est.fit(c.X, c.y, c.y == 0)  # label-determined privacy: the class-0 records are the public ones


def _output_perturbation(c: Context) -> Any:
    from oraclepriv.learners import OutputPerturbationLogistic

    est = OutputPerturbationLogistic(
        epsilon=c.epsilon, regularization=1.0 / math.sqrt(c.n), data_norm=1.0, random_state=c.seed
    )
    return est.fit(c.X, c.y)


def _margin_settings(c: Context, direct: bool) -> dict[str, Any]:
    """The margin learners' common keywords: the shared settings, plus the direct setting's when ``direct``."""
    p = c.config["margin_learners"]
    settings = {"epsilon": c.epsilon, "delta": p["delta"], "radius": 1.0, "norm_bound": p["norm_bound"]}
    return {**settings, "random_state": c.seed, **(c.config["margin_direct"] if direct else {})}


def _margin_erm(c: Context, direct: bool = False) -> Any:
    from oraclepriv.learners import MarginERM

    margin = c.config["margin_learners"]["margin"]
    return MarginERM(margin=margin, **_margin_settings(c, direct)).fit(c.X, c.y)


def _adaptive_margin_erm(c: Context, direct: bool = False) -> Any:
    from oraclepriv.learners import AdaptiveMarginERM

    return AdaptiveMarginERM(**_margin_settings(c, direct)).fit(c.X, c.y)


def _margin_erm_direct(c: Context) -> Any:
    return _margin_erm(c, direct=True)


def _adaptive_margin_erm_direct(c: Context) -> Any:
    return _adaptive_margin_erm(c, direct=True)


class _Constant:
    """The majority class of the private labels, as a predictor."""

    def __init__(self, label: int) -> None:
        self.label = int(label)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.full(X.shape[0], self.label, dtype=np.int8)


def _majority(c: Context) -> Any:
    return _Constant(int(2 * int(c.y.sum()) >= c.n))


class _Exact:
    """The exact 0-1 ERM's halfspace as a predictor (``certified`` says whether the oracle proved it optimal)."""

    def __init__(self, result: Any) -> None:
        self.hypothesis_ = result.hypothesis
        self.certified = bool(result.certified)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.hypothesis_.predict(X))


def _erm(c: Context) -> Any:
    from oraclepriv.oracle import make_oracle

    oracle = make_oracle("halfspace", backend=c.config["backend"], time_limit=float(c.config["call_cap"]))
    return _Exact(oracle.solve(c.X, c.y, caller="real-data", step="erm"))


def _logistic(c: Context) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, max_iter=1000).fit(c.X, c.y)


@dataclass(frozen=True)
class Entry:
    """One row of the learner table.

    Parameters
    ----------
    name : str
        The learner's identifier in the cells and tables (with its map, e.g. ``output_perturbation_all``).
    label : str
        Its name in figures and the README.
    features : {"all", "low"}
        The feature map it is fitted in.
    kind : {"private", "label-determined", "reference"}
        Ranked among the private learners, shown apart (label-determined privacy), or a non-private reference
        (fitted once per split, no epsilon).
    fit : callable
        ``fit(context)``: the fitted estimator (anything with ``predict``).
    own_settings : tuple of str, default ()
        The configuration keys only this learner (and its siblings) read: they enter the fingerprint of its cells
        alone, so adding them to the configuration keeps every other learner's stored cells valid.
    """

    name: str
    label: str
    features: str
    kind: str
    fit: Callable[[Context], Any]
    own_settings: tuple[str, ...] = ()


LEARNERS: dict[str, Entry] = {
    e.name: e
    for e in (
        Entry("rrspm", "RRSPM (Alg. 4)", LOW, PRIVATE, _rrspm),
        Entry("perturbation", "Perturbation (Alg. 2)", LOW, PRIVATE, _perturbation),
        Entry("subsample", "SubsampleAggregate", LOW, PRIVATE, _subsample),
        Entry("public_cover_em", "PublicCoverEM", LOW, PRIVATE, _public_cover_em),
        Entry("output_perturbation_low", "output perturbation (low map)", LOW, PRIVATE, _output_perturbation),
        Entry("output_perturbation_all", "output perturbation (all features)", ALL, PRIVATE, _output_perturbation),
        Entry("margin_erm_all", "MarginERM (all features)", ALL, PRIVATE, _margin_erm),
        Entry("margin_erm_low", "MarginERM (low map)", LOW, PRIVATE, _margin_erm),
        Entry("adaptive_margin_erm_all", "AdaptiveMarginERM (all features)", ALL, PRIVATE, _adaptive_margin_erm),
        Entry(
            "margin_erm_direct_all",
            "MarginERM (direct, all features)",
            ALL,
            PRIVATE,
            _margin_erm_direct,
            own_settings=("margin_direct",),
        ),
        Entry(
            "adaptive_margin_erm_direct_all",
            "AdaptiveMarginERM (direct, all features)",
            ALL,
            PRIVATE,
            _adaptive_margin_erm_direct,
            own_settings=("margin_direct",),
        ),
        Entry("ppm", "PPM (label-determined privacy)", LOW, LABEL_DETERMINED, _ppm),
        Entry("majority", "majority class", LOW, REFERENCE, _majority),
        Entry("erm", "exact ERM (low map, non-private)", LOW, REFERENCE, _erm),
        Entry("logistic_low", "logistic regression (low map, non-private)", LOW, REFERENCE, _logistic),
        Entry("logistic_all", "logistic regression (all features, non-private)", ALL, REFERENCE, _logistic),
    )
}


# ------------------------------------------------------------------------------------------ the time cap
class CellTimeout(Exception):
    """The cell's wall-clock cap ran out."""


@contextlib.contextmanager
def time_cap(seconds: float) -> Iterator[bool]:
    """Interrupt the block with :class:`CellTimeout` after ``seconds`` (a real-time timer; yields True). Where no
    timer can be set (not POSIX, or not the main thread) the block runs to its end and yields False: the caller
    then marks an overrun afterwards."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield False
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise CellTimeout(f"the cell's cap of {seconds:g} s ran out")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------------------------------ one cell
def _guarantee(est: Any) -> tuple[float, float, int | None, int | None]:
    """(epsilon, delta including the numerical delta, public points used, oracle calls) of a fitted private
    learner, from its ``privacy_`` record (nan / None where it has none)."""
    privacy = getattr(est, "privacy_", None)
    if not isinstance(privacy, Mapping):
        return math.nan, math.nan, None, None
    used = privacy.get("m")
    if used is None and privacy.get("public_subsample") is not None:
        used = len(privacy["public_subsample"])
    delta = float(privacy.get("delta", 0.0) or 0.0) + float(privacy.get("numerical_delta", 0.0) or 0.0)
    calls = privacy.get("oracle_calls_by_design")
    return (
        float(privacy.get("epsilon", math.nan)),
        delta,
        None if used is None else int(used),
        None if calls is None else int(calls),
    )


def run_cell(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """One cell: ``spec`` names the task, split seed (``rep``, ``split_seed``), learner, epsilon (nan for a
    reference), the learner's seed and the configuration; returns its one row (test accuracy, seconds, status,
    the guarantee the learner states)."""
    entry = LEARNERS[spec["learner"]]
    cfg = spec["config"]
    split = make_split(spec["task"], spec["split_seed"])
    X, Z, T = split.features(entry.features, int(cfg["components"]))
    row: dict[str, Any] = {
        "key": spec["key"],
        "fingerprint": spec["fingerprint"],
        "task": spec["task"],
        "rep": int(spec["rep"]),
        "epsilon": float(spec["epsilon"]),
        "learner": entry.name,
        "kind": entry.kind,
        "features": entry.features,
        "d": int(X.shape[1]),
        "n_private": int(X.shape[0]),
        "n_public": int(Z.shape[0]),
        "n_test": int(T.shape[0]),
        "status": "ok",
        "reason": "",
        "seconds": math.nan,
        "accuracy": math.nan,
        "public_used": None,
        "guarantee_epsilon": math.nan,
        "guarantee_delta": math.nan,
        "calls_by_design": None,
    }
    context = Context(X=X, y=split.y_private, Z=Z, epsilon=float(spec["epsilon"]), seed=int(spec["seed"]), config=cfg)
    cap = float(cfg["cell_cap"])
    est = None
    enforced = False
    start = time.perf_counter()
    with warnings.catch_warnings():
        # the experiment reads the learners' privacy records and timings on purpose (research measurements)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        try:
            with time_cap(cap) as enforced:
                est = entry.fit(context)
        except CellTimeout as exc:
            row.update(status="capped", reason=str(exc))
        except Exception as exc:  # recorded, never dropped: the row says what happened
            from oraclepriv.learners import UncertifiedOracleError

            if isinstance(exc, UncertifiedOracleError):
                row.update(status="uncertified", reason=str(exc).split(";")[0][:500])
            else:
                row.update(status="error", reason="".join(traceback.format_exception_only(exc)).strip()[:500])
        row["seconds"] = time.perf_counter() - start
        if est is not None and not enforced and row["seconds"] > cap:
            row.update(status="capped", reason=f"the fit took {row['seconds']:.1f} s, over the cell's cap of {cap:g} s")
            est = None
        if est is not None:
            if isinstance(est, _Exact) and not est.certified:
                row.update(status="uncertified", reason="the ERM call was not certified within the call cap")
            row["accuracy"] = float(np.mean(np.asarray(est.predict(T)).astype(int) == split.y_test))
            eps, delta, used, calls = _guarantee(est)
            row.update(guarantee_epsilon=eps, guarantee_delta=delta, public_used=used, calls_by_design=calls)
    return [row]
