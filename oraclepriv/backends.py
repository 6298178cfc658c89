"""The backend registries: which backends exist, which are installed, and how to add one.

Modelled on CVXPY's solver interface: every backend is a class with ``is_installed()`` (its solver
packages can be imported, CVXPY's convention); :func:`installed_backends` lists the usable ones and
:func:`oraclepriv.oracle.default_backend` only ever picks an installed one.

One mechanism, :class:`BackendRegistry`, holds two registries:

* :data:`ZERO_ONE_BACKENDS`, the exact weighted 0-1 ERM backends (:class:`oraclepriv.solvers.base.Backend`
  subclasses) :func:`oraclepriv.oracle.make_oracle` looks up; the module's functions
  (:func:`register_backend`, :func:`backend_class`, ...) act on it;
* :data:`CONVEX_BACKENDS`, the backends of the convex oracle of Algorithm 3 (Block, Bun, Desai, Shetty,
  Wu, "Oracle-Efficient Differentially Private Learning with Public Data"), which
  :class:`oraclepriv.convex_oracle.ConvexOracle` looks up.

A registry maps names to classes, given as a class or as a lazy ``"module:Class"`` string (so that
``import oraclepriv`` imports no solver), and deprecated names to the names they stand for. Third parties
add backends without touching module state by hand:

* :func:`register_backend` (and :func:`registered_backend`, a context manager for a temporary one,
  used by the audits for their deliberately broken solvers);
* the entry-point group ``oraclepriv.backends`` (``name = "package.module:Class"``), loaded on
  first use.

Worker processes receive the parent's registrations with :func:`registry_snapshot` /
:func:`restore_registry`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Iterator, Mapping
from importlib import metadata
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oraclepriv.solvers.base import Backend

__all__ = [
    "CONVEX_BACKENDS",
    "ENTRY_POINT_GROUP",
    "ZERO_ONE_BACKENDS",
    "BackendRegistry",
    "available_backends",
    "backend_class",
    "installed_backends",
    "parse_backend_spec",
    "split_backend_list",
    "register_backend",
    "registered_backend",
    "registry_snapshot",
    "restore_registry",
    "unregister_backend",
]

ENTRY_POINT_GROUP = "oraclepriv.backends"


class BackendRegistry:
    """Backend names -> backend classes, imported on first use.

    ``builtin``: the names a fresh registry holds, each a class or a ``"module:Class"`` string;
    ``entry_point_group``: a group of package entry points that add names on first use (None: none);
    ``aliases``: deprecated names -> the names they stand for (the caller warns; :meth:`canonical`).
    """

    def __init__(
        self,
        kind: str,
        builtin: Mapping[str, Any],
        *,
        entry_point_group: str | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self.kind = kind
        self._targets: dict[str, Any] = dict(builtin)
        self._entry_point_group = entry_point_group
        self._entry_points_loaded = entry_point_group is None
        self.aliases: Mapping[str, str] = MappingProxyType(dict(aliases or {}))

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for entry in metadata.entry_points(group=str(self._entry_point_group)):
            self._targets.setdefault(entry.name, entry.value)

    def register(self, name: str, backend: Any, *, replace: bool = False) -> None:
        """Register ``backend`` (a class or a ``"module:Class"`` string) under ``name``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a backend name must be a non-empty string; got {name!r}")
        if not (isinstance(backend, str) and ":" in backend) and not isinstance(backend, type):
            raise ValueError(f"backend must be a Backend subclass or a 'module:Class' string; got {backend!r}")
        self._load_entry_points()
        if name in self._targets and not replace:
            raise ValueError(f"a backend named {name!r} is already registered; pass replace=True to replace it")
        self._targets[name] = backend

    def unregister(self, name: str) -> None:
        """Remove a registered backend (built-in ones included)."""
        self._load_entry_points()
        if name not in self._targets:
            raise ValueError(f"no backend named {name!r} is registered; registered: {self.names()}")
        del self._targets[name]

    @contextlib.contextmanager
    def registered(self, name: str, backend: Any) -> Iterator[str]:
        """Register ``backend`` under ``name`` inside the block (replacing any previous one), then restore."""
        self._load_entry_points()
        previous = self._targets.get(name)
        self._targets[name] = backend
        try:
            yield name
        finally:
            if previous is None:
                self._targets.pop(name, None)
            else:
                self._targets[name] = previous

    def names(self) -> list[str]:
        """Every registered name (installed or not), sorted; deprecated aliases are not listed."""
        self._load_entry_points()
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def canonical(self, name: str) -> str:
        """The registered name ``name`` stands for: itself, or the name a deprecated alias points to."""
        return self.aliases.get(name, name)

    def get(self, name: str) -> type:
        """The class registered under ``name`` (its module imported on first use)."""
        self._load_entry_points()
        if name not in self._targets:
            raise ValueError(f"unknown backend {name!r}; available backends: {self.names()}")
        target = self._targets[name]
        if isinstance(target, type):
            return target
        module_name, class_name = target.split(":")
        return getattr(importlib.import_module(module_name), class_name)

    def is_installed(self, name: str) -> bool:
        """Whether the solver packages of the backend registered under ``name`` can be imported: the class's
        ``is_installed()``, or, for a class without one, every package in its ``requires`` (none: True)."""
        cls = self.get(name)
        check = getattr(cls, "is_installed", None)
        if check is not None:
            return bool(check())
        return all(importlib.util.find_spec(package) is not None for package in getattr(cls, "requires", ()))

    def installed(self, hypothesis_class: str | None = None) -> list[str]:
        """The registered names whose solvers are installed (and whose class lists ``hypothesis_class`` in its
        ``classes``, if given)."""
        return [
            name
            for name in self.names()
            if self.is_installed(name)
            and (hypothesis_class is None or hypothesis_class in getattr(self.get(name), "classes", ()))
        ]

    def snapshot(self) -> dict[str, Any]:
        """The registrations, to hand to a worker process (:meth:`restore` there)."""
        self._load_entry_points()
        return dict(self._targets)

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Make this registry's registrations those of ``snapshot`` (in a worker)."""
        self._targets.clear()
        self._targets.update(snapshot)
        self._entry_points_loaded = True


#: the exact weighted 0-1 ERM backends (:func:`oraclepriv.oracle.make_oracle`)
ZERO_ONE_BACKENDS = BackendRegistry(
    "0-1",
    {
        "sweep": "oraclepriv.solvers.combinatorial.sweep:SweepBackend",
        "enumerate": "oraclepriv.solvers.combinatorial.enumerate:EnumerateBackend",
        "highs": "oraclepriv.solvers.mip.highs:HighsBackend",
        "scip": "oraclepriv.solvers.mip.scip:ScipBackend",
        "scip-bc": "oraclepriv.solvers.branch_and_cut.scip_bc:ScipBcBackend",
        "direction-bb": "oraclepriv.solvers.combinatorial.direction_bb:DirectionBbBackend",
        "portfolio": "oraclepriv.solvers.portfolio:PortfolioBackend",
        "naive-highs": "oraclepriv.solvers.peers.naive:NaiveHighsBackend",
        "pyomo": "oraclepriv.solvers.mip.pyomo:PyomoBackend",
        "cpsat": "oraclepriv.solvers.mip.cpsat:CpSatBackend",
        "gurobi": "oraclepriv.solvers.peers.gurobi:GurobiBackend",
        "gurobi-bc": "oraclepriv.solvers.branch_and_cut.gurobi_bc:GurobiBcBackend",
        "e01loss": "oraclepriv.solvers.peers.e01loss:E01LossBackend",
    },
    entry_point_group=ENTRY_POINT_GROUP,
)

#: the convex oracle's backends (:class:`oraclepriv.convex_oracle.ConvexOracle`). The key is the name the
#: backend records for its calls; "scipy", the key from when the backend was SciPy's SLSQP, is a deprecated
#: alias of it for one release (no SciPy solver runs in the regularized ERM now)
CONVEX_BACKENDS = BackendRegistry(
    "convex",
    {"highs-qp+kkt": "oraclepriv.solvers.convex_linear:ConvexLinearBackend"},
    aliases={"scipy": "highs-qp+kkt"},
)


def register_backend(name: str, backend: Any, *, replace: bool = False) -> None:
    """Register a backend under a name, for :func:`oraclepriv.make_oracle` and the command line.

    Parameters
    ----------
    name : str
        The name, non-empty (e.g. "my-solver").
    backend : type or str
        A :class:`~oraclepriv.solvers.base.Backend` subclass, or a ``"module:Class"`` string imported
        on first use.
    replace : bool, default False
        Replace a backend already registered under ``name``; False refuses it.

    Raises
    ------
    ValueError
        For an empty name, a backend that is neither a class nor a ``"module:Class"`` string, or a
        name already taken without ``replace=True``.

    See Also
    --------
    registered_backend : A registration for the duration of a ``with`` block.
    """
    ZERO_ONE_BACKENDS.register(name, backend, replace=replace)


def unregister_backend(name: str) -> None:
    """Remove a registered backend (built-in ones included).

    Parameters
    ----------
    name : str
        The registered name.

    Raises
    ------
    ValueError
        When no backend is registered under ``name``.
    """
    ZERO_ONE_BACKENDS.unregister(name)


def registered_backend(name: str, backend: Any) -> contextlib.AbstractContextManager[str]:
    """Register a backend for the duration of a ``with`` block, then restore the previous registration.

    Parameters
    ----------
    name : str
        The name; a backend registered under it before is replaced inside the block.
    backend : type or str
        A :class:`~oraclepriv.solvers.base.Backend` subclass or a ``"module:Class"`` string.

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager whose ``with`` block sees the registration; it yields the name.
    """
    return ZERO_ONE_BACKENDS.registered(name, backend)


def available_backends() -> list[str]:
    """Every registered backend name, installed or not.

    Returns
    -------
    list of str
        The names, sorted; the built-in ones, those added by :func:`register_backend` and those of
        the ``oraclepriv.backends`` entry-point group.
    """
    return ZERO_ONE_BACKENDS.names()


def backend_class(name: str) -> type[Backend]:
    """The class registered under a name, its module imported on first use.

    Parameters
    ----------
    name : str
        The registered name.

    Returns
    -------
    type
        The :class:`~oraclepriv.solvers.base.Backend` subclass.

    Raises
    ------
    ValueError
        When no backend is registered under ``name``.

    Examples
    --------
    >>> backend_class("sweep").__name__
    'SweepBackend'
    """
    return ZERO_ONE_BACKENDS.get(name)


def installed_backends(hypothesis_class: str | None = None) -> list[str]:
    """The registered backends whose solver packages are installed.

    Parameters
    ----------
    hypothesis_class : str or None, default None
        Keep only the backends that support this class ("threshold", "stump" or "halfspace").

    Returns
    -------
    list of str
        The names, sorted.

    Examples
    --------
    >>> "sweep" in installed_backends("stump")
    True
    """
    return ZERO_ONE_BACKENDS.installed(hypothesis_class)


def registry_snapshot() -> dict[str, Any]:
    """The registrations, to hand to a worker process (:func:`restore_registry` there).

    Returns
    -------
    dict
        Name to backend class or ``"module:Class"`` string.
    """
    return ZERO_ONE_BACKENDS.snapshot()


def restore_registry(snapshot: dict[str, Any]) -> None:
    """Make this process's registrations those of a snapshot (in a worker process).

    Parameters
    ----------
    snapshot : dict
        What :func:`registry_snapshot` returned in the parent process.
    """
    ZERO_ONE_BACKENDS.restore(snapshot)


def split_backend_list(text: str) -> list[str]:
    """Split a comma-separated list of backend specs, where a spec's own options are comma-separated too.

    An item of the form key=value without a ':' continues the spec before it (no backend name holds '=').

    Parameters
    ----------
    text : str
        The list, as the command line's ``--backends`` takes it.

    Returns
    -------
    list of str
        One spec per backend.

    Examples
    --------
    >>> split_backend_list("scip-bc:strategy=partition,part_size=50,gurobi")
    ['scip-bc:strategy=partition,part_size=50', 'gurobi']
    """
    specs: list[str] = []
    for item in (part.strip() for part in str(text).split(",")):
        if not item:
            continue
        if "=" in item and ":" not in item and specs and ":" in specs[-1]:
            specs[-1] += "," + item
        else:
            specs.append(item)
    return specs


def parse_backend_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The backend name and options of a spec "name" or "name:key=value,key=value".

    Values are parsed as int, float, true/false, else kept as strings; the backend validates them.

    Parameters
    ----------
    spec : str
        The spec, e.g. "scip-bc:workers=2".

    Returns
    -------
    name : str
        The backend name.
    options : dict
        The options.

    Raises
    ------
    ValueError
        For an option that is not key=value, or a key given twice (one value would be ignored).

    Examples
    --------
    >>> parse_backend_spec("scip-bc:workers=2,presolve=false")
    ('scip-bc', {'workers': 2, 'presolve': False})
    """
    name, _, rest = str(spec).partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ValueError(f"backend spec {spec!r}: options must look like key=value; got {item!r}")
        value: Any = raw
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                continue
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        if key in options:
            raise ValueError(f"backend spec {spec!r}: option {key!r} is given twice")
        options[key] = value
    return name, options
