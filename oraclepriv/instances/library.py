"""Building the library (``oraclepriv instances build``) and recording benchmark answers into its manifest
(``oraclepriv instances record``): best values never regress, a new best objective only with the hypothesis that
attains it, a bound only when proved over the whole class."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.io import jsonable, write_csv_problem

if TYPE_CHECKING:
    from oraclepriv.execution import Progress
from oraclepriv.instances.checks import _manifest_problems, _witness_problem
from oraclepriv.instances.generators import _LOADER_OPTIONS, ABOVE_MEDIAN, PCA_DECIMALS, SKLEARN_DATASETS, sklearn_data
from oraclepriv.instances.manifest import ManifestError, _instance_data, _is_number, _sha256, _tolerance, load_manifest
from oraclepriv.instances.specs import INSTANCE_SPECS, REAL_TIER, InstanceSpec, generate, instances_dir


def _source(spec: InstanceSpec) -> dict[str, Any]:
    """Manifest fields describing where the data come from."""
    if spec.generator != "sklearn":
        return {"params": spec.kwargs}
    import sklearn

    kwargs = spec.kwargs
    pca = kwargs.get("pca")
    _, _, names, decimals = sklearn_data(kwargs["dataset"], kwargs.get("features"))
    loader, positive, keep = SKLEARN_DATASETS[kwargs["dataset"]]
    options = ", ".join(f"{k}={v!r}" for k, v in _LOADER_OPTIONS.get(loader, {}).items())
    if positive == ABOVE_MEDIAN:
        label = "label 1 = target above its median"
    else:
        label = f"label 1 = {'classes' if isinstance(positive, tuple) else 'class'} {positive}"
    source = {
        "params": {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()},
        "source": f"scikit-learn {sklearn.__version__} sklearn.datasets.{loader}({options}); {label}"
        + ("" if keep is None else f", rows of classes {list(keep)} only"),
        "features": names,
        "feature_units": [f"1e-{k}" if k else "1" for k in decimals],
    }
    if pca is not None:  # the file's columns are the components; the source features are projected_from
        source["features"] = [f"PC{j + 1}" for j in range(pca)]
        source["feature_units"] = [f"1e-{PCA_DECIMALS}"] * pca
        source["projected_from"] = names
        source["projection"] = (
            f"the first {pca} principal components of projected_from, z-scored (constant ones dropped), each "
            "component's largest loading positive, scores in units of 1e-3 (instances.principal_component_scores)"
        )
    return source


#: manifest fields of the best known objective (a re-scored hypothesis), who found it, at what time limit,
#: and the hypothesis itself (``best_hypothesis``, its ``to_dict``: a witness anyone can re-score)
_OBJECTIVE_FIELDS = ("best_objective", "solved_by", "solved_time_limit", "best_hypothesis")


#: manifest fields of the best proved lower bound (over the whole class) and who proved it, at what time limit
_BOUND_FIELDS = ("best_bound", "bound_by", "bound_time_limit")


def _merge_best(entry: dict[str, Any], previous: dict[str, Any] | None, tolerance: float = 1e-9) -> dict[str, Any]:
    """The better of a new result and a previous manifest entry for the same file: the lower objective
    and the higher bound, each with who found or proved it and at what time limit (so best known values
    never regress when a rebuild uses a shorter time limit or a slower backend); ``proved_optimal``
    when they meet within ``tolerance`` (and only then: it is derived from the two values, never carried
    over from a backend's claim), and ``gap`` = max(0, best objective - best bound).

    A bound above the objective of a hypothesis is a false proof and raises ``ValueError``."""
    merged = dict(entry)
    if previous and "bound_by" not in previous and previous.get("proved_optimal"):
        # an entry written before bound_by existed: its solved_by found *and* proved the optimum
        previous = {**previous, "bound_by": previous.get("solved_by")}
    if previous and previous.get("sha256") == entry["sha256"]:
        # a tie keeps the previous value when it names who found it (the first finder is credited)
        old, new = previous.get("best_objective"), entry.get("best_objective")
        tie = old is not None and new is not None and abs(old - new) <= tolerance
        if old is not None and (new is None or old < new - tolerance or (tie and previous.get("solved_by"))):
            merged.update({k: previous.get(k) for k in _OBJECTIVE_FIELDS})
        if tie and merged.get("best_hypothesis") is None:  # whoever keeps the credit, a witness is kept or added
            merged["best_hypothesis"] = entry.get("best_hypothesis") or previous.get("best_hypothesis")
        old, new = previous.get("best_bound"), entry.get("best_bound")
        if old is not None and (new is None or old > new or (old == new and previous.get("bound_by"))):
            merged.update({k: previous.get(k) for k in _BOUND_FIELDS})
    objective, bound = merged.get("best_objective"), merged.get("best_bound")
    merged["gap"] = None if objective is None or bound is None else max(0.0, objective - bound)
    if objective is not None and bound is not None and bound > objective + tolerance:
        raise ValueError(
            f"{entry['name']}: the bound {bound!r} ({merged.get('bound_by')}) exceeds the objective {objective!r} "
            f"of a hypothesis found by {merged.get('solved_by')}: a false proof"
        )
    # proved means the best objective meets the best whole-class bound; a backend's word alone proves nothing
    merged["proved_optimal"] = bool(objective is not None and bound is not None and objective <= bound + tolerance)
    return merged


def _result_fields(
    backend: str,
    objective: float,
    bound: float,
    certified: bool,
    time_limit: float | None,
    restricted: bool = False,
    hypothesis: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Manifest fields of one oracle answer: its re-scored objective (with ``hypothesis``, the dict of the
    hypothesis that attains it) always counts; its bound only when proved over the whole class (not
    ``restricted``) and finite."""
    whole_class_bound = not restricted and math.isfinite(bound)
    return {
        "best_objective": objective if math.isfinite(objective) else None,
        "solved_by": backend if math.isfinite(objective) else None,
        "solved_time_limit": time_limit if math.isfinite(objective) else None,
        "best_hypothesis": jsonable(hypothesis) if math.isfinite(objective) and hypothesis is not None else None,
        "best_bound": bound if whole_class_bound else None,
        "bound_by": backend if whole_class_bound else None,
        "bound_time_limit": time_limit if whole_class_bound else None,
        "proved_optimal": bool(certified and not restricted),
    }


def build_library(
    out: Path | None = None,
    solve: bool = True,
    time_limit: float = 60.0,
    progress: Progress | None = None,
    names: Iterable[str] | None = None,
) -> list[dict]:
    """Regenerate instance files and the manifest.

    With ``solve``, every instance is solved by the default exact oracle
    (:func:`oraclepriv.oracle.default_backend`: ``sweep`` for thresholds/stumps, ``enumerate`` for
    halfspaces in d = 1, ``portfolio`` up to d = 8, a MIP backend above), stopped after
    ``time_limit`` seconds (the combinatorial ``sweep`` and ``enumerate`` run to the end). ``best_objective`` is the re-scored objective of the best hypothesis
    known and ``solved_by`` / ``solved_time_limit`` the backend that found it and its time limit;
    ``best_bound`` is the best lower bound proved over the whole class, with ``bound_by`` /
    ``bound_time_limit``; ``proved_optimal`` says they meet (certified), ``gap`` how far apart
    they are (an *open* instance has ``proved_optimal`` false). Entries of an existing manifest for
    the same file are merged (:func:`_merge_best`) so best known values never regress, with or
    without ``solve``. ``names`` regenerates (and solves) only those instances and keeps the other
    entries of the existing manifest as they are. ``progress(instances done, instances)``.
    """
    from oraclepriv.oracle import make_oracle

    out = Path(out) if out is not None else instances_dir()
    out.mkdir(parents=True, exist_ok=True)
    previous: dict[str, dict] = {}
    if (out / "manifest.json").is_file():
        previous = {e["name"]: e for e in json.loads((out / "manifest.json").read_text(encoding="utf-8"))}
    chosen = None if names is None else set(names)
    unknown = sorted((chosen or set()) - {spec.name for spec in INSTANCE_SPECS})
    if unknown:
        raise ValueError(f"unknown instance(s) {unknown}; the library has: {[s.name for s in INSTANCE_SPECS]}")
    todo = [spec for spec in INSTANCE_SPECS if chosen is None or spec.name in chosen]
    missing = [spec.name for spec in INSTANCE_SPECS if spec not in todo and spec.name not in previous]
    if missing:
        raise ValueError(f"{out / 'manifest.json'} has no entries for {missing} to keep; rebuild without names")
    manifest = []
    for spec in INSTANCE_SPECS:
        if spec not in todo:
            manifest.append(previous[spec.name])
            continue
        X, y, weights = generate(spec)
        path = out / spec.filename
        write_csv_problem(path, X, y, weights)
        entry = {
            "name": spec.name,
            "file": spec.filename,
            "class": spec.hypothesis_class,
            "n": spec.n,
            "d": spec.d,
            "generator": spec.generator,
            "seed": spec.seed,
            **_source(spec),
            **({"tier": "real"} if spec.name in REAL_TIER else {}),
            "signed_weights": bool(weights is not None and np.any(weights < 0)),
            "sha256": _sha256(path),
            **_result_fields("", math.nan, -math.inf, False, None),
        }
        if solve:
            result = make_oracle(spec.hypothesis_class, time_limit=time_limit).solve(
                X, y, weights, caller="instances", step="build"
            )
            exact = result.backend in ("sweep", "enumerate")  # combinatorial: no time limit applies
            entry.update(
                _result_fields(
                    result.backend,
                    result.objective,
                    result.bound,
                    result.certified,
                    None if exact else time_limit,
                    result.restriction is not None,
                    result.hypothesis.to_dict(),
                )
            )
        manifest.append(_merge_best(entry, previous.get(spec.name), _tolerance(weights, spec.n)))
        if progress is not None:
            progress(len([e for e in manifest if e["name"] in {s.name for s in todo}]), len(todo))
    _write_manifest(out, manifest)
    return manifest


def _write_manifest(directory: Path, manifest: list[dict[str, Any]]) -> None:
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


#: keys every row of a ``bench mip`` rows.json has, which :func:`record_results` needs
_ROW_KEYS = ("instance", "class", "backend", "status", "objective", "bound", "certified", "restriction")


#: row statuses that carry no answer (:func:`record_results` skips them)
_NO_ANSWER = ("error", "unsupported")


def record_results(rows: Iterable[dict[str, Any]], directory: Path | None = None) -> list[dict[str, Any]]:
    """Merge oracle answers into the manifest: best objectives and bounds never regress (:func:`_merge_best`).

    ``rows`` are rows of ``oraclepriv bench mip`` (``rows.json``: instance, class, backend, status, objective,
    bound, certified, restriction, time_limit, hypothesis). Every re-scored objective counts (it is a
    hypothesis's loss, whatever the backend's class); a row's ``hypothesis`` must re-score to its
    objective and be in the instance's class (:func:`_witness_problem`), and it becomes the witness of a
    new best. A row whose objective would be a new best but that has no ``hypothesis`` is refused: a best
    known objective is recorded only with a hypothesis that attains it. A bound counts only when proved
    over the whole class (``restriction`` null, the row's ``class`` the instance's) and finite, and never
    above a known objective (a false proof); ``proved_optimal`` follows from the merged objective and
    bound, not from the row's ``certified`` (which must agree with its own objective, bound and restriction).
    Error and unsupported rows are skipped. Any bad row (a missing key, a value of the wrong type, one of
    the refusals above, an instance the manifest does not hold) raises ``ValueError`` naming the row (counted
    from 1) and
    the manifest is left as it was: a rows file is recorded whole or not at all. A manifest with problems
    in its fields raises :class:`ManifestError`. Returns the new manifest (also written).
    """
    directory = Path(directory) if directory is not None else instances_dir()
    manifest = load_manifest(directory)
    problems = _manifest_problems(manifest, directory / "manifest.json")
    if problems:
        raise ManifestError(
            f"manifest {str(directory / 'manifest.json')!r} has {len(problems)} problem(s) (`oraclepriv instances "
            f"check` lists them), the first: {problems[0]}"
        )
    index = {entry["name"]: k for k, entry in enumerate(manifest)}
    for number, row in enumerate(rows, start=1):  # counted from 1, as a reader of the rows file counts
        if not isinstance(row, dict):
            raise ValueError(f"row {number} must be an object (a row of bench mip's rows.json); got {row!r}")
        missing = [key for key in _ROW_KEYS if key not in row]
        if missing:
            raise ValueError(f"row {number} lacks the keys {missing} (every row of a bench mip rows.json has them)")
        for key in ("instance", "backend", "status"):
            if not isinstance(row[key], str) or not row[key].strip():
                raise ValueError(f"row {number}: {key!r} must be a non-empty string; got {row[key]!r}")
        if row["status"] in _NO_ANSWER:
            continue
        name = row["instance"]
        if name not in index:
            raise ValueError(f"row {number} is of unknown instance {name!r}; the manifest has: {sorted(index)}")
        label = f"row {number} ({name}, backend {row['backend']!r})"
        k = index[name]
        hypothesis_class = manifest[k]["class"]
        if row["class"] != hypothesis_class:  # its bound would be over another class
            raise ValueError(f"{label}: 'class' is {row['class']!r}, but {name} is a {hypothesis_class} instance")
        objective, bound = _row_number(row, "objective", label), _row_number(row, "bound", label)
        certified, restriction = row["certified"], row["restriction"]
        if not isinstance(certified, bool):
            raise ValueError(f"{label}: 'certified' must be true or false; got {certified!r}")
        if restriction is not None and (not isinstance(restriction, str) or not restriction.strip()):
            raise ValueError(
                f"{label}: 'restriction' must be null (a bound over the whole class) or a non-empty string; "
                f"got {restriction!r}"
            )
        time_limit = row.get("time_limit")
        if time_limit is not None and not (_is_number(time_limit) and time_limit > 0):
            raise ValueError(f"{label}: 'time_limit' must be a positive number or null; got {time_limit!r}")
        hypothesis = row.get("hypothesis")
        if hypothesis is not None and not isinstance(hypothesis, dict):
            raise ValueError(
                f"{label}: 'hypothesis' must be an object (a hypothesis's to_dict) or null; got {hypothesis!r}"
            )
        data = _instance_data(manifest[k], directory)
        tolerance = _tolerance(data[2], len(data[1]))
        if certified and (restriction is not None or not objective <= bound + tolerance):
            raise ValueError(
                f"{label}: 'certified' is true, but "
                + (
                    f"its restriction {restriction!r} says the bound holds over a smaller class only"
                    if restriction is not None
                    else f"its objective {objective!r} does not meet its bound {bound!r} (tolerance {tolerance:.3g})"
                )
            )
        best = manifest[k].get("best_objective")
        if hypothesis is None and math.isfinite(objective) and (best is None or objective < best - tolerance):
            raise ValueError(
                f"{label}: objective {objective!r} would be the new best known objective (now {best!r}), but the row "
                "has no 'hypothesis' to re-score: a best objective is recorded only with the hypothesis that attains it"
            )
        if hypothesis is not None:  # the witness must attain the objective the row reports
            problem = _witness_problem(name, hypothesis, objective, *data, hypothesis_class, field="hypothesis")
            if problem:
                raise ValueError(f"{label}: {problem}")
        new = {
            **manifest[k],
            **_result_fields(
                row["backend"], objective, bound, certified, time_limit, restriction is not None, hypothesis
            ),
        }
        manifest[k] = _merge_best(new, manifest[k], tolerance)
    _write_manifest(directory, manifest)
    return manifest


def _row_number(row: dict[str, Any], key: str, label: str) -> float:
    """A float from a rows.json value (non-finite values are stored there as "inf" / "-inf" / null), or a
    ValueError naming the row and the key."""
    value = row[key]
    if value is None:
        return math.nan
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f'{label}: {key!r} must be a number (null, "inf" or "-inf" when not finite); got {value!r}')
