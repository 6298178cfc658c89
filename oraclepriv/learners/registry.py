"""The learner registry: every private learner the command line offers, under the name ``oraclepriv learn
--algorithm NAME`` takes, with what the command needs to build and fit it.

``oraclepriv learn`` reads this registry for its ``--algorithm`` choices, the lines of its help and the
estimator it fits, so adding a learner touches one place: its module, plus one :func:`register_learner`
call (below for the learners of this package; anywhere for a third party's, before the command line runs).

How the command's common flags reach an estimator is read off the estimator's constructor: a flag applies
when the estimator takes the parameter it sets (:data:`FLAG_PARAMETERS`), and is refused, naming the flag,
when it does not. What cannot be read off the signature is declared in the :class:`LearnerEntry`: where the
public points come from, which oracle the learner calls, and what ``--delta`` selects.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FLAG_PARAMETERS",
    "LearnerEntry",
    "learner_entries",
    "learner_entry",
    "register_learner",
    "registered_learner",
    "unregister_learner",
]

#: the common flags of ``oraclepriv learn`` -> the estimator parameter each sets (a flag applies to a learner
#: whose constructor takes that parameter)
FLAG_PARAMETERS: dict[str, str] = {
    "--epsilon": "epsilon",
    "--delta": "delta",
    "--hypothesis-class": "hypothesis_class",
    "--seed": "random_state",
    "--backend": "backend",
    "--time-limit": "time_limit",
    "--on-uncertified": "on_uncertified",
    "--public-size": "public_size",
    "--public-seed": "public_random_state",
    "--teachers": "n_teachers",
    "--allow-weak-guarantee": "allow_weak_guarantee",
    "--margin": "margin",
    "--radius": "radius",
    "--norm-bound": "norm_bound",
    "--accounting": "accounting",
    "--rounds": "rounds",
    "--jl-dim": "jl_dim",
}


@dataclass(frozen=True)
class LearnerEntry:
    """One learner of the command line.

    ``estimator``: a :class:`~oraclepriv.learners._base.PrivateEstimator` subclass, or ``"module:Class"``
    (imported on first use, so that the command line's help imports no learner).

    ``summary``: one line for ``--algorithm``'s help (the paper and algorithm, or what it does).

    ``data``: ``"public"`` — ``fit(X_private, y_private, X_public=PublicData(Z))``, the public points from
    ``--public``; ``"privacy-bits"`` — ``fit(X, y, public_mask)``, the mask from the data file's 0/1 column
    ``public``; ``"private"`` — ``fit(X, y)``, no public data (``--public`` is refused).

    ``oracle``: ``"0-1"`` (the exact 0-1 backends: ``--backend`` is built and checked by the 0-1 registry),
    ``"convex"`` (the convex oracle: its registry, and no time limit) or None (no oracle call).

    ``delta``: what ``--delta`` does. ``"given"``: passed as ``delta`` (omitted: the estimator's default);
    ``"gaussian"``: the same, and 0 is refused (the learner adds Gaussian noise, (eps, delta)-DP only);
    ``"selects-noise"``: a delta > 0 selects ``noise="gaussian"`` with it, none or 0 ``noise="laplace"`` and
    delta 0; ``"pure"``: the learner is pure eps-DP, a delta > 0 is refused.

    ``hypothesis_classes``: what ``--hypothesis-class`` takes (None: the estimator's ``supported_classes``).

    ``defaults``: estimator parameters the command sets when their flag is not given (e.g. ``n_teachers``).

    ``why_not``: for a flag that does not apply, why (shown in its refusal; default: the learner takes no
    such parameter).
    """

    name: str
    estimator: Any
    summary: str
    data: Literal["public", "privacy-bits", "private"] = "public"
    oracle: Literal["0-1", "convex"] | None = "0-1"
    delta: Literal["given", "gaussian", "selects-noise", "pure"] = "given"
    hypothesis_classes: tuple[str, ...] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    why_not: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name.startswith("-"):
            raise ValueError(f"a learner's name must be a non-empty string not starting with '-'; got {self.name!r}")
        if not isinstance(self.estimator, type) and not (isinstance(self.estimator, str) and ":" in self.estimator):
            raise ValueError(f"estimator must be a class or a 'module:Class' string; got {self.estimator!r}")
        unknown = sorted(set(self.why_not) - set(FLAG_PARAMETERS))
        if unknown:
            raise ValueError(
                f"why_not names flags the command does not have: {unknown}; its flags: {list(FLAG_PARAMETERS)}"
            )

    def estimator_class(self) -> type[Any]:
        """The estimator class (its module imported on first use)."""
        if isinstance(self.estimator, type):
            return self.estimator
        module_name, class_name = self.estimator.split(":")
        return getattr(importlib.import_module(module_name), class_name)

    def parameters(self) -> Mapping[str, inspect.Parameter]:
        """The estimator's constructor parameters (scikit-learn reads them from the same signature)."""
        return inspect.signature(self.estimator_class()).parameters

    def takes(self, flag: str) -> bool:
        """Whether the common ``flag`` applies to this learner (its estimator takes the parameter it sets)."""
        if flag == "--delta":
            return self.delta != "pure"
        if flag == "--hypothesis-class":
            return True  # a learner without the parameter still learns a class (PPM: halfspaces)
        return FLAG_PARAMETERS[flag] in self.parameters()

    def default(self, parameter: str) -> Any:
        """The estimator's default for ``parameter`` (what the command passes when its flag is not given)."""
        if parameter in self.defaults:
            return self.defaults[parameter]
        return self.parameters()[parameter].default

    def classes(self) -> tuple[str, ...]:
        """The hypothesis classes ``--hypothesis-class`` takes for this learner."""
        if self.hypothesis_classes is not None:
            return self.hypothesis_classes
        return tuple(getattr(self.estimator_class(), "supported_classes", ("halfspace",)))


_registry: dict[str, LearnerEntry] = {}


def register_learner(entry: LearnerEntry, *, replace: bool = False) -> None:
    """Offer ``entry`` to the command line under ``entry.name`` (``oraclepriv learn --algorithm NAME``)."""
    if not isinstance(entry, LearnerEntry):
        raise ValueError(f"register_learner takes a LearnerEntry; got {entry!r}")
    if entry.name in _registry and not replace:
        raise ValueError(f"a learner named {entry.name!r} is already registered; pass replace=True to replace it")
    _registry[entry.name] = entry


def unregister_learner(name: str) -> None:
    """Remove the learner registered under ``name``."""
    if name not in _registry:
        raise ValueError(f"no learner named {name!r} is registered; registered: {list(_registry)}")
    del _registry[name]


@contextlib.contextmanager
def registered_learner(entry: LearnerEntry) -> Iterator[LearnerEntry]:
    """``entry`` registered inside the block (replacing any learner of its name), then the previous state back."""
    previous = _registry.get(entry.name)
    _registry[entry.name] = entry
    try:
        yield entry
    finally:
        if previous is None:
            _registry.pop(entry.name, None)
        else:
            _registry[entry.name] = previous


def learner_entries() -> list[LearnerEntry]:
    """Every registered learner, in the order of registration (the order ``--help`` lists them)."""
    return list(_registry.values())


def learner_entry(name: str) -> LearnerEntry:
    """The learner registered under ``name``, or a ValueError listing the registered names."""
    if name not in _registry:
        raise ValueError(f"unknown learner {name!r}; registered learners: {list(_registry)}")
    return _registry[name]


for _entry in (
    LearnerEntry(
        "rrspm",
        "oraclepriv.learners.rrspm:RRSPM",
        "Block et al., Alg 4 (a delta > 0: Gaussian weights)",
        delta="selects-noise",
    ),
    LearnerEntry(
        "perturbation", "oraclepriv.learners.perturbation:Perturbation", "Block et al., Alg 2", delta="gaussian"
    ),
    LearnerEntry(
        "regularization",
        "oraclepriv.learners.regularization:Regularization",
        "Block et al., Alg 3 (bounded linear class)",
        oracle="convex",
        delta="gaussian",
    ),
    LearnerEntry(
        "subsample",
        "oraclepriv.learners.subsample:SubsampleAggregate",
        "subsample-and-aggregate, private for any oracle",
        delta="selects-noise",
        defaults={"n_teachers": 16},
        why_not={"--public-size": "uses every public point of --public"},
    ),
    LearnerEntry(
        "public-cover-em",
        "oraclepriv.learners.public_cover_em:PublicCoverEM",
        "exponential mechanism over the public labelings",
        oracle=None,
        delta="pure",
        why_not={"--backend": "makes no oracle call"},
    ),
    LearnerEntry(
        "ppm",
        "oraclepriv.learners.ppm:PPMHalfspaces",
        "Bassily-Moran-Nandi, Alg 2 (privacy bits: column 'public')",
        data="privacy-bits",
        oracle=None,
        delta="pure",
        hypothesis_classes=("halfspace",),
        why_not={
            "--backend": "makes no oracle call (exponential mechanism)",
            "--public-size": "reads its public examples from the data file's 'public' column",
        },
    ),
    LearnerEntry(
        "margin-erm",
        "oraclepriv.learners.margin:MarginERM",
        "Bassily-Mohri-Suresh, Alg 2 (no public data; rows in the unit ball)",
        oracle=None,
        delta="gaussian",
        hypothesis_classes=("halfspace",),
        data="private",
        why_not={"--backend": "makes no oracle call", "--public-size": "takes no public points"},
    ),
    LearnerEntry(
        "adaptive-margin-erm",
        "oraclepriv.learners.margin:AdaptiveMarginERM",
        "Bassily-Mohri-Suresh, Alg 6 (margin chosen privately)",
        oracle=None,
        delta="gaussian",
        hypothesis_classes=("halfspace",),
        data="private",
        why_not={
            "--backend": "makes no oracle call",
            "--public-size": "takes no public points",
            "--margin": "chooses the margin privately (Algorithm 6)",
        },
    ),
):
    register_learner(_entry)
