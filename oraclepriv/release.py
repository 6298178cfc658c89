"""The release boundary: what a private fit publishes, and what it keeps as non-private diagnostics.

A differential-privacy proof covers one output: here, the released hypothesis (with the
data-independent facts needed to read it: epsilon, delta, the mechanism, its calibration, the
neighbouring notion, the oracle calls the algorithm makes by design). Everything else a fit can
report depends on the private data in ways no proof covers: oracle objectives and bounds (the
private call's objective reuses the noise), gaps, nodes, seconds, whether a call was certified or
fell back, which teachers failed, selection timings. Those are *diagnostics*:

* :class:`Release` — the published object; ``to_json()`` is what ``oraclepriv learn`` prints by
  default. Two fits on neighbouring datasets with the same seed and the same released hypothesis
  have byte-identical releases (tested under a solver that fails only on one of them).
* :class:`Diagnostics` — the non-private rest. A learner hands it out only through
  ``learner.diagnostics_`` (and ``learner.ledger_``), which warn with :class:`PrivacyLeakWarning`.

docs/release-boundary.md states what each learner's guarantee covers.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import sklearn.exceptions

from oraclepriv.io import jsonable
from oraclepriv.ledger import Ledger

__all__ = [
    "COVERAGE",
    "Diagnostics",
    "NotFittedError",
    "PrivacyLeakWarning",
    "Release",
    "ReleaseMixin",
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
    so code written for scikit-learn estimators catches it."""


class PrivacyLeakWarning(UserWarning):
    """Something that depends on private data beyond the release is read or shown, or a guarantee
    is weaker than the record-level (eps, delta)-DP of the learner's paper (flag mode, eps = inf,
    label-DP)."""


def warn_privacy_leak(message: str, stacklevel: int = 3) -> None:
    """Emit a :class:`PrivacyLeakWarning` (through Python's ``warnings`` module)."""
    warnings.warn(message, PrivacyLeakWarning, stacklevel=stacklevel)


@contextlib.contextmanager
def reading_diagnostics() -> Iterator[None]:
    """Read non-private diagnostics on purpose (experiments, benchmarks, the demo): the
    :class:`PrivacyLeakWarning` of ``diagnostics_`` / ``ledger_`` is silenced inside the block.
    What such code reports is a research measurement, never a private release."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


@dataclass(frozen=True)
class Release:
    """What a private fit publishes under its privacy claim.

    ``hypothesis`` is the released hypothesis (an object with ``predict`` and ``to_dict``);
    ``privacy`` holds data-independent facts only (functions of the parameters, n and m):
    epsilon, delta, numerical_delta, guarantee, mechanism, calibration, neighbouring, reference,
    oracle calls by design, on_uncertified and what the guarantee covers.
    """

    algorithm: str
    hypothesis: Any
    privacy: Mapping[str, Any]
    #: the class labels the hypothesis's 0/1 outputs stand for, when they are not 0 and 1
    classes: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "privacy", MappingProxyType(dict(self.privacy)))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle through the constructor (the read-only privacy view itself does not pickle)."""
        return (Release, (self.algorithm, self.hypothesis, dict(self.privacy), self.classes))

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly: {"algorithm", "hypothesis", "privacy"} (and "classes" for labels other than 0/1)."""
        out = {"algorithm": self.algorithm, "hypothesis": self.hypothesis.to_dict(), "privacy": dict(self.privacy)}
        if self.classes is not None:
            out["classes"] = [c.item() if hasattr(c, "item") else c for c in self.classes]
        return jsonable(out)

    def to_json(self, indent: int | None = None) -> str:
        """Canonical JSON (sorted keys): the bytes ``oraclepriv learn --json`` prints."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent, allow_nan=False)


@dataclass
class Diagnostics(Mapping[str, Any]):
    """NON-PRIVATE facts about one fit: functions of the private data that no privacy proof covers.

    A read-only mapping of named values (``diagnostics["projection_agreement"]``) plus the fit's
    oracle-call ledger (``diagnostics.ledger``; the papers count these calls, so the ledger stays the
    research tool it is). Asking for a name the fit did not record raises ``KeyError`` naming it.
    Publishing any of it voids the guarantee of the release.
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
        """JSON-friendly: the notice, the ledger rows and the named values (all of them by default)."""
        if names is None:
            names = list(self.entries)
        chosen = {name: self[name] for name in names}
        return jsonable({"notice": self.NOTICE, "oracle_calls": [dict(r) for r in self.ledger.records], **chosen})


class ReleaseMixin:
    """The release / diagnostics accessors every private learner shares.

    A fit sets ``self.release_`` (a :class:`Release`) and ``self._diagnostics`` (a
    :class:`Diagnostics`); this mixin exposes them with the warnings the release boundary needs.
    """

    #: names of the diagnostics a fit of this learner records (besides its ledger)
    diagnostic_names: ClassVar[tuple[str, ...]] = ()
    #: set by ``fit``
    release_: Release
    _diagnostics: Diagnostics

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` before a fit (learners override it to name their fit signature)."""
        if not hasattr(self, "release_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")

    @property
    def diagnostics_(self) -> Diagnostics:
        """NON-PRIVATE diagnostics of the last fit (warns: publishing them voids the guarantee)."""
        self._check_fitted()
        warn_privacy_leak(
            f"{type(self).__name__}.diagnostics_ depends on the private data beyond the release; no privacy "
            "proof covers it. Do not publish it."
        )
        return self._diagnostics

    @property
    def ledger_(self) -> Ledger:
        """This fit's oracle calls: NON-PRIVATE diagnostics (objectives, certificates, seconds); warns."""
        self._check_fitted()
        warn_privacy_leak(
            f"{type(self).__name__}.ledger_ rows (objectives, bounds, certificates, seconds) depend on the private "
            "data; they are non-private diagnostics. Do not publish them."
        )
        return self._diagnostics.ledger

    @property
    def privacy_(self) -> Mapping[str, Any]:
        """The release's privacy record (data-independent; the same as ``release_.privacy``)."""
        self._check_fitted()
        return self.release_.privacy

    def summary(self) -> dict[str, Any]:
        """The release as a JSON-friendly dict (what ``oraclepriv learn`` prints); no diagnostics."""
        self._check_fitted()
        return self.release_.to_dict()

    to_dict = summary
