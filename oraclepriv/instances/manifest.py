"""Reading the library: the manifest (``instances/manifest.json``), its entries and the instance files."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.io import read_csv_problem

if TYPE_CHECKING:
    pass
from oraclepriv.instances.specs import instances_dir


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tolerance(weights: np.ndarray | None, n: int) -> float:
    """The oracle protocol's certification tolerance 1e-9 * max(1, sum |w_i|) (unit weights: n)."""
    return 1e-9 * max(1.0, float(np.abs(weights).sum()) if weights is not None else float(n))


def _is_number(value: Any) -> bool:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class ManifestError(ValueError):
    """A manifest (or learning_tasks.json) that cannot be used; the message names the file."""


def _read_entries(path: Path, fields: Mapping[str, type]) -> list[dict[str, Any]]:
    """A manifest (a JSON list of objects, each with ``fields`` of the given types), or a
    :class:`ManifestError` naming the file and what is wrong with it."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"manifest {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"manifest {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(entries, list):
        raise ManifestError(f"manifest {str(path)!r} must be a JSON list of entries; got a {type(entries).__name__}")
    for k, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ManifestError(f"manifest {str(path)!r}: entry {k} must be a JSON object; got {entry!r}")
        for field, kind in fields.items():
            if not isinstance(entry.get(field), kind):
                problem = "has no" if field not in entry else f"has a {type(entry[field]).__name__} as its"
                raise ManifestError(
                    f"manifest {str(path)!r}: entry {k} ({entry.get('name', 'unnamed')!r}) {problem} {field!r} "
                    f"field ({kind.__name__} expected)"
                )
    return entries


#: the fields every manifest entry must have for the library to be read at all (:func:`load_manifest`)
_IDENTITY_FIELDS = {"name": str, "file": str, "sha256": str}


def load_manifest(directory: Path | None = None) -> list[dict[str, Any]]:
    """The manifest entries (one dict per instance); a :class:`ManifestError` naming the file when it is not
    a JSON list of entries each with a name, file and sha256 (the other fields are checked by
    :func:`check_library`)."""
    directory = Path(directory) if directory is not None else instances_dir()
    return _read_entries(directory / "manifest.json", _IDENTITY_FIELDS)


def manifest_entry(name: str, directory: Path | None = None) -> dict[str, Any]:
    """The manifest entry of one instance; a clear error naming the instance if it is unknown."""
    entries = {e["name"]: e for e in load_manifest(directory)}
    if name not in entries:
        raise ValueError(f"unknown instance {name!r}; the library has: {sorted(entries)}")
    return entries[name]


def load_instance(
    name: str, directory: Path | None = None
) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:
    """(manifest entry, X, y, weights) of a bundled instance (unit weights when the file has none)."""
    directory = Path(directory) if directory is not None else instances_dir()
    entry = manifest_entry(name, directory)
    return (entry, *_instance_data(entry, directory))


def _instance_data(entry: dict[str, Any], directory: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, weights) of a manifest entry's file (unit weights when the file has none)."""
    data = read_csv_problem(directory / entry["file"])
    weights = data.weights if data.weights is not None else np.ones(len(data.y))
    return data.X, data.y, np.asarray(weights, dtype=np.float64)
