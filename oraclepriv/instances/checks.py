"""The checks behind ``oraclepriv instances check``: the manifest's fields, its relations (best bound <= best
objective, gap, proved_optimal), the files against their checksums, and the witnesses re-scored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    pass
from oraclepriv.instances.manifest import _instance_data, _is_number, _read_entries, _sha256, _tolerance, load_manifest
from oraclepriv.instances.specs import instances_dir


def _witness_problem(
    name: str,
    hypothesis: dict[str, Any],
    objective: float,
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None,
    hypothesis_class: str | None = None,
    field: str = "best_hypothesis",
) -> str | None:
    """None if the hypothesis (a ``to_dict``) is in the instance's ``hypothesis_class`` (or a class inside it,
    :data:`WITNESS_CLASSES`) and re-scores on the instance to ``objective`` within the protocol's tolerance;
    else what is wrong (naming the instance and ``field``)."""
    from oraclepriv.hypotheses import hypothesis_from_dict

    try:
        h = hypothesis_from_dict(hypothesis)
        if hypothesis_class is not None and h.hypothesis_class not in WITNESS_CLASSES[hypothesis_class]:
            return (
                f"{name}: {field} is a {h.hypothesis_class}, not in the instance's class {hypothesis_class!r} "
                f"(witnesses of a {hypothesis_class} instance: {list(WITNESS_CLASSES[hypothesis_class])})"
            )
        loss = h.loss(X, y, weights)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"{name}: {field} {hypothesis!r} cannot be read or applied: {exc}"
    if not abs(loss - objective) <= _tolerance(weights, len(y)):
        return f"{name}: {field} re-scores to {loss!r}, not the recorded objective {objective!r}"
    return None


#: the hypothesis classes of instances
CLASSES = ("threshold", "stump", "halfspace")


#: the classes of hypotheses that can witness an instance's objective: its class and those inside it (a
#: threshold is a stump on the one feature, a stump an axis-parallel halfspace)
WITNESS_CLASSES: dict[str, tuple[str, ...]] = {
    "threshold": ("threshold",),
    "stump": ("stump", "threshold"),
    "halfspace": ("halfspace", "stump", "threshold"),
}


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _finite_or_null(value: Any) -> bool:
    return value is None or _is_number(value)


def _name_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


def _time_limit_or_null(value: Any) -> bool:
    return value is None or (_is_number(value) and value > 0)


#: the manifest's fields besides name, file and sha256 (which :func:`load_manifest` requires): field ->
#: (required, what a valid value is, the test); an optional field may be absent (= null, or false)
_FIELD_RULES: dict[str, tuple[bool, str, Callable[[Any], bool]]] = {
    "class": (True, f"one of {list(CLASSES)}", lambda v: isinstance(v, str) and v in CLASSES),
    "n": (True, "a positive integer", _positive_int),
    "d": (True, "a positive integer", _positive_int),
    "best_objective": (False, "a finite number or null", _finite_or_null),
    "best_bound": (False, "a finite number or null", _finite_or_null),
    "gap": (False, "a finite number >= 0 or null", lambda v: v is None or (_is_number(v) and v >= 0)),
    "proved_optimal": (False, "true or false", lambda v: isinstance(v, bool)),
    "signed_weights": (False, "true or false", lambda v: isinstance(v, bool)),
    "solved_by": (False, "a backend name or null", _name_or_null),
    "bound_by": (False, "a backend name or null", _name_or_null),
    "solved_time_limit": (False, "a positive number or null", _time_limit_or_null),
    "bound_time_limit": (False, "a positive number or null", _time_limit_or_null),
    "best_hypothesis": (
        False,
        "an object (a hypothesis's to_dict) or null",
        lambda v: v is None or isinstance(v, dict),
    ),
}


def _field_problems(entry: dict[str, Any]) -> list[str]:
    """One line per field of a manifest entry that is missing (when required) or has a bad type or value."""
    problems = []
    for field, (required, expected, valid) in _FIELD_RULES.items():
        if field not in entry:
            if required:
                problems.append(f"{entry['name']}: field {field!r} is missing ({expected} expected)")
        elif not valid(entry[field]):
            problems.append(f"{entry['name']}: field {field!r} must be {expected}; got {entry[field]!r}")
    return problems


def _manifest_problems(manifest: list[dict[str, Any]], path: Path) -> list[str]:
    """Problems of a manifest read by :func:`load_manifest` that need no instance file: no entries, two
    entries with one name, and every bad field (:func:`_field_problems`)."""
    if not manifest:
        return [f"manifest {str(path)!r} lists no instances"]
    problems = []
    names = [entry["name"] for entry in manifest]
    for name in sorted({name for name in names if names.count(name) > 1}):
        problems.append(f"{name}: {names.count(name)} entries of the manifest have this name")
    for entry in manifest:
        problems += _field_problems(entry)
    return problems


def _consistency_problems(entry: dict[str, Any], X: np.ndarray, weights: np.ndarray, tolerance: float) -> list[str]:
    """How a manifest entry with valid fields disagrees with its instance file (shape, signed weights) or
    with itself: a bound above the best objective (a false proof), a ``gap`` that is not
    max(0, best_objective - best_bound), ``proved_optimal`` other than "they meet within ``tolerance``",
    an objective or bound that does not say who found or proved it."""
    name, problems = entry["name"], []
    if X.shape != (entry["n"], entry["d"]):
        problems.append(
            f"{name}: the file {entry['file']} holds {X.shape[0]} points in {X.shape[1]} dimensions, the manifest "
            f"says n = {entry['n']}, d = {entry['d']}"
        )
    signed = bool(np.any(weights < 0))
    if "signed_weights" in entry and entry["signed_weights"] != signed:
        problems.append(
            f"{name}: signed_weights is {entry['signed_weights']}, but the file has "
            f"{'some' if signed else 'no'} negative weights"
        )
    objective, bound, gap = entry.get("best_objective"), entry.get("best_bound"), entry.get("gap")
    proved = entry.get("proved_optimal", False)
    if objective is not None and entry.get("solved_by") is None:
        problems.append(f"{name}: best_objective {objective!r} has no solved_by (who found it)")
    if bound is not None and entry.get("bound_by") is None:
        problems.append(f"{name}: best_bound {bound!r} has no bound_by (who proved it)")
    if objective is None or bound is None:
        if gap is not None:
            problems.append(
                f"{name}: gap {gap!r} without both a best_objective ({objective!r}) and a best_bound ({bound!r})"
            )
        if proved:
            problems.append(f"{name}: proved_optimal is true without both a best_objective and a best_bound")
        return problems
    if bound > objective + tolerance:
        problems.append(
            f"{name}: best_bound {bound!r} exceeds best_objective {objective!r} by {bound - objective:.6g} "
            f"(tolerance {tolerance:.3g}): a false proof"
        )
        return problems  # gap and proved_optimal mean nothing for an impossible pair
    expected = max(0.0, objective - bound)
    if gap is None or abs(gap - expected) > tolerance:
        problems.append(
            f"{name}: gap {gap!r} is not max(0, best_objective - best_bound) = {expected!r} (tolerance {tolerance:.3g})"
        )
    meet = objective <= bound + tolerance
    if proved and not meet:
        problems.append(
            f"{name}: proved_optimal is true, but best_objective {objective!r} is {objective - bound:.6g} above "
            f"best_bound {bound!r} (tolerance {tolerance:.3g})"
        )
    elif meet and not proved:
        problems.append(
            f"{name}: proved_optimal is false, but best_objective {objective!r} and best_bound {bound!r} meet "
            f"(tolerance {tolerance:.3g})"
        )
    return problems


def check_witnesses(directory: Path | None = None) -> list[str]:
    """Problems found in the manifest's results, one line each naming the instance and the field: a bad
    field (:func:`_field_problems`; such an entry is not checked further), an entry that disagrees with its
    file or with itself (:func:`_consistency_problems`), a ``best_hypothesis`` that does not re-score to
    ``best_objective`` on its instance or is not in its class, or a best objective recorded without one."""
    directory = Path(directory) if directory is not None else instances_dir()
    problems = []
    for entry in load_manifest(directory):
        fields = _field_problems(entry)
        if fields:
            problems += fields
            continue
        X, y, weights = _instance_data(entry, directory)
        tolerance = _tolerance(weights, len(y))
        problems += _consistency_problems(entry, X, weights, tolerance)
        if entry.get("best_objective") is None:
            continue
        if entry.get("best_hypothesis") is None:
            problems.append(f"{entry['name']}: best_objective {entry['best_objective']!r} has no best_hypothesis")
            continue
        problem = _witness_problem(
            entry["name"], entry["best_hypothesis"], entry["best_objective"], X, y, weights, entry["class"]
        )
        if problem:
            problems.append(problem)
    return problems


def check_library(directory: Path | None = None) -> list[str]:
    """Problems found: a manifest without instances, with two entries of one name or with bad fields
    (:func:`_manifest_problems`), files missing or differing from their manifest checksum. A manifest
    that is not a list of entries naming their files raises :class:`ManifestError`."""
    directory = Path(directory) if directory is not None else instances_dir()
    problems = []
    tasks_path = directory / "learning_tasks.json"
    if tasks_path.is_file():
        for entry in _read_entries(tasks_path, {"name": str, "sha256": dict}):
            for file, digest in entry["sha256"].items():
                if not (directory / file).is_file():
                    problems.append(f"{entry['name']}: file {directory / file} is missing")
                elif _sha256(directory / file) != digest:
                    problems.append(f"{entry['name']}: checksum mismatch for {directory / file}")
    manifest = load_manifest(directory)
    problems += _manifest_problems(manifest, directory / "manifest.json")
    for entry in manifest:
        path = directory / entry["file"]
        if not path.is_file():
            problems.append(f"{entry['name']}: file {path} is missing")
        elif _sha256(path) != entry["sha256"]:
            problems.append(f"{entry['name']}: checksum mismatch for {path}")
    return problems
