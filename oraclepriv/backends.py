"""The backend registry: which exact ERM backends exist, which are installed, and how to add one.

Modelled on CVXPY's solver interface: every backend is a class (:class:`oraclepriv.solvers.base.Backend`)
with ``is_installed()`` (its solver packages can be imported); :func:`installed_backends` lists the
usable ones and :func:`oraclepriv.oracle.default_backend` only ever picks an installed one.

The registry maps names to backend classes, given as a class or as a lazy ``"module:Class"``
string (so that ``import oraclepriv`` imports no solver). Third parties add backends without
touching module state by hand:

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
from collections.abc import Iterator
from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oraclepriv.solvers.base import Backend

__all__ = [
    "ENTRY_POINT_GROUP",
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

_BUILTIN: dict[str, Any] = {
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
}
_registry: dict[str, Any] = dict(_BUILTIN)
_entry_points_loaded = False


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        _registry.setdefault(entry.name, entry.value)


def register_backend(name: str, backend: Any, *, replace: bool = False) -> None:
    """Register ``backend`` (a Backend subclass or a ``"module:Class"`` string) under ``name``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a backend name must be a non-empty string; got {name!r}")
    if not (isinstance(backend, str) and ":" in backend) and not isinstance(backend, type):
        raise ValueError(f"backend must be a Backend subclass or a 'module:Class' string; got {backend!r}")
    _load_entry_points()
    if name in _registry and not replace:
        raise ValueError(f"a backend named {name!r} is already registered; pass replace=True to replace it")
    _registry[name] = backend


def unregister_backend(name: str) -> None:
    """Remove a registered backend (built-in ones included)."""
    if name not in _registry:
        raise ValueError(f"no backend named {name!r} is registered; registered: {available_backends()}")
    del _registry[name]


@contextlib.contextmanager
def registered_backend(name: str, backend: Any) -> Iterator[str]:
    """Register ``backend`` under ``name`` inside the block (replacing any previous one), then restore."""
    _load_entry_points()
    previous = _registry.get(name)
    _registry[name] = backend
    try:
        yield name
    finally:
        if previous is None:
            _registry.pop(name, None)
        else:
            _registry[name] = previous


def available_backends() -> list[str]:
    """Every registered backend name (installed or not)."""
    _load_entry_points()
    return sorted(_registry)


def backend_class(name: str) -> type[Backend]:
    """The class registered under ``name`` (its module imported on first use)."""
    _load_entry_points()
    if name not in _registry:
        raise ValueError(f"unknown backend {name!r}; available backends: {available_backends()}")
    target = _registry[name]
    if isinstance(target, type):
        return target
    module_name, class_name = target.split(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def installed_backends(hypothesis_class: str | None = None) -> list[str]:
    """The registered backends whose solvers are installed (and that support ``hypothesis_class``, if given)."""
    out = []
    for name in available_backends():
        cls = backend_class(name)
        if cls.is_installed() and (hypothesis_class is None or hypothesis_class in cls.classes):
            out.append(name)
    return out


def registry_snapshot() -> dict[str, Any]:
    """The registrations, to hand to a worker process (:func:`restore_registry` there)."""
    _load_entry_points()
    return dict(_registry)


def restore_registry(snapshot: dict[str, Any]) -> None:
    """Make this process's registrations those of ``snapshot`` (in a worker)."""
    global _entry_points_loaded
    _registry.clear()
    _registry.update(snapshot)
    _entry_points_loaded = True


def split_backend_list(text: str) -> list[str]:
    """A comma-separated list of backend specs, where a spec's own options are comma-separated too:
    "scip-bc:strategy=partition,part_size=50,gurobi" -> ["scip-bc:strategy=partition,part_size=50", "gurobi"].
    An item of the form key=value without a ':' continues the spec before it (no backend name holds '=')."""
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
    """ "name" or "name:key=value,key=value" (e.g. "scip-bc:workers=2"): the backend and its options
    (values parsed as int, float, true/false, else kept as strings; the backend validates them). A key
    given twice is refused (one of the values would be ignored)."""
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
