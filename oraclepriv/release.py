"""The release boundary: what a private fit publishes, and what it keeps as non-private diagnostics.

A differential-privacy proof covers one output: here, the released hypothesis (with the
data-independent facts needed to read it: epsilon, delta, the mechanism, its calibration, the
neighbouring notion, the oracle calls the algorithm makes by design). Everything else a fit can
report depends on the private data in ways no proof covers: oracle objectives and bounds (the
private call's objective reuses the noise), gaps, nodes, seconds, whether a call was certified or
fell back, which teachers failed, selection timings. Those are *diagnostics*:

* :class:`Release` — the published object; ``to_json()`` is what ``oraclepriv learn`` prints by
  default. Two fits on neighbouring datasets with the same seed and the same released hypothesis
  have byte-identical releases (tested under a solver that fails only on one of them). A release
  is saved and loaded on its own (:meth:`Release.save`, :func:`load_release`) and predicts
  (:meth:`Release.predict`) exactly as the fitted learner does.
* :class:`Diagnostics` — the non-private rest. A learner hands it out only through
  ``learner.diagnostics_`` (and ``learner.ledger_``), which warn with :class:`PrivacyLeakWarning`.

What leaves the process is what the proof covers. Pickling a fitted learner (``pickle``,
``joblib.dump``, and so ``copy.deepcopy``) drops its diagnostics: the ledger, the named diagnostic
values (SubsampleAggregate's un-noised centre among them) and the record of uncertified calls. They
are kept only when asked for (``learner.keep_diagnostics_on_pickle = True``), with a
:class:`PrivacyLeakWarning`. A fitted learner whose ``random_state`` is set (an integer, a
SeedSequence or a Generator) warns when it is pickled, and its release warns when saved: anyone who
knows the seed can replay the noise and, with it, undo the privacy of the release.

docs/release-boundary.md states what each learner's guarantee covers.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import sklearn.exceptions

from oraclepriv.hypotheses import hypothesis_from_dict
from oraclepriv.io import jsonable
from oraclepriv.ledger import Ledger
from oraclepriv.validation import as_features

__all__ = [
    "COVERAGE",
    "NON_PRIVATE_STATE",
    "Diagnostics",
    "NotFittedError",
    "PrivacyLeakWarning",
    "Release",
    "ReleaseMixin",
    "load_release",
    "reading_diagnostics",
    "warn_privacy_leak",
]

#: what every guarantee here covers, and what it does not
COVERAGE = (
    "the released hypothesis and this record only; not the non-private diagnostics "
    "(objectives, bounds, certificates, fallbacks, ledger rows), not running time"
)


class NotFittedError(sklearn.exceptions.NotFittedError):
    """A fitted attribute (``release_``, ``diagnostics_``, ``predict``, ...) was asked for before ``fit``.

    A subclass of scikit-learn's ``NotFittedError`` (itself a ``ValueError`` and ``AttributeError``),
    so code written for scikit-learn estimators catches it.
    """


class PrivacyLeakWarning(UserWarning):
    """Something that depends on private data beyond the release is read or shown, or a guarantee is weak.

    Raised as a warning when non-private diagnostics are read (``diagnostics_``, ``ledger_``), when a
    release from a seeded fit is saved, or when a guarantee is weaker than the record-level
    (epsilon, delta)-DP of the learner's paper (``on_uncertified="flag"``, ``epsilon=inf``, label-DP,
    a vacuous delta allowed). Silence it on purpose with :func:`reading_diagnostics`.
    """


def warn_privacy_leak(message: str, stacklevel: int = 3) -> None:
    """Emit a :class:`PrivacyLeakWarning` through Python's ``warnings`` module.

    Parameters
    ----------
    message : str
        What is read or shown, and why it is not covered.
    stacklevel : int, default 3
        As for :func:`warnings.warn`: 3 points at the caller of the function that warns.
    """
    warnings.warn(message, PrivacyLeakWarning, stacklevel=stacklevel)


@contextlib.contextmanager
def reading_diagnostics() -> Iterator[None]:
    """Read non-private diagnostics on purpose (experiments, benchmarks, the demo).

    The :class:`PrivacyLeakWarning` of ``diagnostics_`` and ``ledger_`` is silenced inside the block.
    What such code reports is a research measurement, never a private release.

    Yields
    ------
    None
        Inside the block, the warning is silenced.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


@dataclass(frozen=True)
class Release:
    """What a private fit publishes under its privacy claim (docs/release-boundary.md).

    A fitted learner holds it as ``release_``; :meth:`save` and :func:`load_release` carry it to
    where it is used.

    Parameters
    ----------
    algorithm : str
        The learner's name (e.g. "RRSPM").
    hypothesis : Hypothesis
        The released hypothesis (an object with ``predict`` and ``to_dict``).
    privacy : mapping
        Data-independent facts only (functions of the parameters, n and m): epsilon, delta,
        numerical_delta, guarantee, mechanism, calibration, neighbouring, reference, oracle calls by
        design, on_uncertified and what the guarantee covers. Stored read-only.
    classes : tuple or None, default None
        The class labels the hypothesis's 0/1 outputs stand for, when they are not 0 and 1.
    seeded : bool, default False
        True when the fit's noise came from a given ``random_state``: :meth:`save` then warns that the
        noise can be replayed from the seed. Not published, not compared.
    n_features : int or None, default None
        The number of features the learner was fitted on (public: the data's dimension, not its values);
        :meth:`predict` refuses rows of another width. None: not recorded (a release saved without it).

    Examples
    --------
    >>> from oraclepriv import Threshold
    >>> release = Release("example", Threshold(0.5), {"epsilon": 1.0, "delta": 0.0})
    >>> release.predict([[0.0], [1.0]])
    array([0, 1], dtype=int8)
    >>> Release.from_json(release.to_json()) == release
    True
    """

    algorithm: str
    hypothesis: Any
    privacy: Mapping[str, Any]
    #: the class labels the hypothesis's 0/1 outputs stand for, when they are not 0 and 1
    classes: Any = None
    seeded: bool = field(default=False, compare=False)
    n_features: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "privacy", MappingProxyType(dict(self.privacy)))
        if self.n_features is not None and (
            isinstance(self.n_features, bool)
            or not isinstance(self.n_features, (int, np.integer))
            or self.n_features < 1
        ):
            raise ValueError(f"a release's n_features must be a positive integer or None; got {self.n_features!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle through the constructor (the read-only privacy view itself does not pickle)."""
        return (
            Release,
            (self.algorithm, self.hypothesis, dict(self.privacy), self.classes, self.seeded, self.n_features),
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Release:
        """The release a :meth:`to_dict` dict describes.

        Parameters
        ----------
        data : mapping
            The keys "algorithm", "hypothesis" and "privacy", "classes" when the labels are not 0
            and 1, and "n_features" when recorded; the hypothesis is read by
            :func:`oraclepriv.hypotheses.hypothesis_from_dict`.

        Returns
        -------
        Release
            The release.

        Raises
        ------
        ValueError
            For missing or unknown keys, or values of the wrong kind.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"a release is a JSON object; got {type(data).__name__}")
        missing = [key for key in ("algorithm", "hypothesis", "privacy") if key not in data]
        if missing:
            raise ValueError(f"a release needs the keys 'algorithm', 'hypothesis' and 'privacy'; missing {missing}")
        unknown = sorted(set(data) - {"algorithm", "hypothesis", "privacy", "classes", "n_features"})
        if unknown:
            raise ValueError(
                f"a release has the keys algorithm, hypothesis, privacy, classes and n_features; got also {unknown}"
            )
        if not isinstance(data["privacy"], Mapping) or not isinstance(data["hypothesis"], Mapping):
            raise ValueError("a release's 'hypothesis' and 'privacy' are JSON objects")
        classes = data.get("classes")
        if classes is not None and (not isinstance(classes, list) or len(classes) != 2):
            raise ValueError(f"a release's 'classes' lists the two class labels; got {classes!r}")
        hypothesis = hypothesis_from_dict(dict(data["hypothesis"]))
        return cls(
            str(data["algorithm"]),
            hypothesis,
            dict(data["privacy"]),
            None if classes is None else tuple(classes),
            n_features=data.get("n_features"),
        )

    @classmethod
    def from_json(cls, text: str) -> Release:
        """The release a :meth:`to_json` text describes; it predicts as the saved one does.

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        Release
            The release.

        Raises
        ------
        ValueError
            When the text is not JSON or not a release.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a release: the text is not JSON ({exc})") from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        """Write the release to a file, as one line of canonical JSON (:meth:`to_json`).

        Warns (:class:`PrivacyLeakWarning`) when the fit's seed could replay the noise.

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write.
        """
        if self.seeded:
            warn_privacy_leak(
                f"this {self.algorithm} release comes from a fit with a given random_state: anyone who knows the seed "
                "can replay the noise and undo the release's privacy. Fit with random_state=None for a release you "
                "publish"
            )
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    def predict(self, X: Any) -> np.ndarray:
        """The class labels the released hypothesis gives the rows of ``X``, as the fitted learner's ``predict``.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points.

        Returns
        -------
        numpy.ndarray of shape (n,)
            The labels: 0 and 1, or the entries of ``classes``.
        """
        X = as_features(X, "X")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} feature(s), but this {self.algorithm} release was fitted on {self.n_features}"
            )
        codes = np.asarray(self.hypothesis.predict(X), dtype=np.int8)
        if self.classes is None:
            return codes
        return np.asarray(self.classes)[codes]

    def to_dict(self) -> dict[str, Any]:
        """The release as a JSON-friendly dict.

        Returns
        -------
        dict
            The keys "algorithm", "hypothesis" and "privacy", "classes" for labels other than 0/1, and
            "n_features" when recorded.
        """
        out = {"algorithm": self.algorithm, "hypothesis": self.hypothesis.to_dict(), "privacy": dict(self.privacy)}
        if self.classes is not None:
            out["classes"] = [c.item() if hasattr(c, "item") else c for c in self.classes]
        if self.n_features is not None:
            out["n_features"] = int(self.n_features)
        return jsonable(out)

    def to_json(self, indent: int | None = None) -> str:
        """The release as canonical JSON (sorted keys): the bytes ``oraclepriv learn --json`` prints.

        Parameters
        ----------
        indent : int or None, default None
            As for :func:`json.dumps`; None: one line.

        Returns
        -------
        str
            The JSON text.
        """
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent, allow_nan=False)


def load_release(path: str | Path) -> Release:
    """The release saved in a file, ready to predict.

    Parameters
    ----------
    path : str or pathlib.Path
        A file written by :meth:`Release.save`, or the output of ``oraclepriv learn --json``.

    Returns
    -------
    Release
        The release.

    Raises
    ------
    ValueError
        When the file cannot be read or does not hold a release; the message names the path.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read a release from {str(path)!r}: {exc.strerror or exc}") from None
    try:
        return Release.from_json(text)
    except ValueError as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None


@dataclass
class Diagnostics(Mapping[str, Any]):
    """NON-PRIVATE facts about one fit: functions of the private data that no privacy proof covers.

    A read-only mapping of named values (``diagnostics["projection_agreement"]``) plus the fit's
    oracle-call ledger (``diagnostics.ledger``; the papers count these calls, so the ledger stays the
    research tool it is). Asking for a name the fit did not record raises ``KeyError`` naming it.
    Publishing any of it voids the guarantee of the release.

    Parameters
    ----------
    algorithm : str
        The learner's name.
    ledger : Ledger
        The fit's oracle calls.
    entries : dict, default {}
        The named values.
    """

    algorithm: str
    ledger: Ledger
    entries: dict[str, Any] = field(default_factory=dict)

    NOTICE: ClassVar[str] = "NON-PRIVATE diagnostics: depend on the private data; no privacy proof covers them"

    def __getitem__(self, name: str) -> Any:
        if name not in self.entries:
            raise KeyError(
                f"diagnostic {name!r} was not recorded by this {self.algorithm} fit; recorded: {sorted(self.entries)}"
            )
        return self.entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"Diagnostics({self.algorithm}: {sorted(self.entries)}, {len(self.ledger)} oracle calls; NON-PRIVATE)"

    def to_dict(self, names: list[str] | None = None) -> dict[str, Any]:
        """The diagnostics as a JSON-friendly dict.

        Parameters
        ----------
        names : list of str or None, default None
            The values to include; None: all of them.

        Returns
        -------
        dict
            The notice that they are not private, the ledger rows and the named values.
        """
        if names is None:
            names = list(self.entries)
        chosen = {name: self[name] for name in names}
        return jsonable({"notice": self.NOTICE, "oracle_calls": [dict(r) for r in self.ledger.records], **chosen})


#: instance attributes that hold non-private diagnostics: dropped when a fitted learner is pickled
NON_PRIVATE_STATE = ("_diagnostics", "_diagnostic_values", "_uncertified_steps")


class ReleaseMixin:
    """The release / diagnostics accessors every private learner shares, and what its pickle holds.

    A fit sets ``self.release_`` (a :class:`Release`) and ``self._diagnostics`` (a
    :class:`Diagnostics`); this mixin exposes them with the warnings the release boundary needs, and
    leaves the diagnostics out of the learner's pickle (module docstring) unless
    ``keep_diagnostics_on_pickle`` is set on the learner.
    """

    #: names of the diagnostics a fit of this learner records (besides its ledger)
    diagnostic_names: ClassVar[tuple[str, ...]] = ()
    #: set to True on a learner to keep its NON-PRIVATE diagnostics in its pickle (warns when pickled)
    keep_diagnostics_on_pickle: bool = False
    #: set by ``fit``
    release_: Release
    _diagnostics: Diagnostics

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` before a fit (learners override it to name their fit signature)."""
        if not hasattr(self, "release_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")

    def __getstate__(self) -> dict[str, Any]:
        """The learner's state without its non-private diagnostics (kept only when asked for, with a warning)."""
        inherited: Any = super().__getstate__()  # BaseEstimator's; None for an instance without attributes
        state = dict(inherited or vars(self))
        if "release_" not in state:
            return state  # not fitted: parameters only
        name = type(self).__name__
        seed = getattr(self, "random_state", None)
        if seed is not None:
            warn_privacy_leak(
                f"pickling a fitted {name} with random_state={_shown(seed)}: anyone who knows the seed can replay the "
                "noise of its release and undo its privacy. Fit with random_state=None for a model you ship"
            )
        if state.get("keep_diagnostics_on_pickle", type(self).keep_diagnostics_on_pickle):
            warn_privacy_leak(
                f"pickling a fitted {name} with keep_diagnostics_on_pickle=True: the pickle holds its NON-PRIVATE "
                "diagnostics (the ledger's objectives, un-noised intermediates), which no privacy proof covers"
            )
            return state
        for key in NON_PRIVATE_STATE:
            state.pop(key, None)
        return state

    @property
    def diagnostics_(self) -> Diagnostics:
        """NON-PRIVATE diagnostics of the last fit (warns: publishing them voids the guarantee)."""
        self._check_fitted()
        self._check_diagnostics_kept()
        warn_privacy_leak(
            f"{type(self).__name__}.diagnostics_ depends on the private data beyond the release; no privacy "
            "proof covers it. Do not publish it."
        )
        return self._diagnostics

    @property
    def ledger_(self) -> Ledger:
        """This fit's oracle calls: NON-PRIVATE diagnostics (objectives, certificates, seconds); warns."""
        self._check_fitted()
        self._check_diagnostics_kept()
        warn_privacy_leak(
            f"{type(self).__name__}.ledger_ rows (objectives, bounds, certificates, seconds) depend on the private "
            "data; they are non-private diagnostics. Do not publish them."
        )
        return self._diagnostics.ledger

    def _check_diagnostics_kept(self) -> None:
        if "_diagnostics" not in vars(self):
            raise AttributeError(
                f"this fitted {type(self).__name__} has no diagnostics: they were dropped when it was pickled (set "
                "keep_diagnostics_on_pickle = True on the learner before pickling to keep them)"
            )

    @property
    def privacy_(self) -> Mapping[str, Any]:
        """The release's privacy record (data-independent; the same as ``release_.privacy``)."""
        self._check_fitted()
        return self.release_.privacy

    def summary(self) -> dict[str, Any]:
        """The release as a JSON-friendly dict (what ``oraclepriv learn`` prints); no diagnostics.

        Returns
        -------
        dict
            :meth:`Release.to_dict` of ``release_``.
        """
        self._check_fitted()
        return self.release_.to_dict()

    to_dict = summary


def _shown(seed: Any) -> str:
    """A random_state in a message: integers as they are, other seeds by their type."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return str(int(seed))
    return f"a {type(seed).__name__}"
