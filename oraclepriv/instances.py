"""Benchmark instances: deterministic generators, the bundled library and its manifest.

Each instance is a CSV file in the format of :mod:`oraclepriv.io` plus a manifest entry
(name, class, n, d, generator, seed, parameters, sha256 of the file, best known objective, the
best proved lower bound, whether the objective is proved optimal and by which backend).
``oraclepriv instances build`` regenerates every file from its generator and seed and re-solves
every instance (exact combinatorial oracles where they apply, a time-limited MIP otherwise: an
instance the MIP does not close is kept as *open*, with its best known objective and bound);
``oraclepriv instances check`` verifies the checksums; ``oraclepriv instances export-mps``
writes an instance's MIP model as MPS so other solvers can be benchmarked on the same models.

Families: synthetic (separable + label noise, heavy-tailed, duplicated grid points, signed
weights as RRSPM's first oracle call produces them, in d = 2 and at MIP sizes d = 5) and real
data that ships inside scikit-learn (:func:`sklearn_data`): breast cancer (malignant vs benign),
wine (class 0 vs rest), iris (versicolor vs virginica on the two petal features, not separable).
Real-data features are stored exactly, as integers in units of 10^-k of scikit-learn's values
(k per feature, the number of decimals in the source; iris petals in mm). Both hypothesis
classes are invariant under these per-feature scalings (a stump's order, a halfspace's
labelings), so nothing about the learning problem changes; the data just become exact integers
(a grid on which ``cpsat`` is exact).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.io import read_csv_problem, write_csv_problem

if TYPE_CHECKING:
    from oraclepriv.execution import Progress

__all__ = [
    "InstanceSpec",
    "INSTANCE_SPECS",
    "DEFAULT_INSTANCE",
    "EXPORT_BACKENDS",
    "FORMULATIONS",
    "generate",
    "build_library",
    "check_library",
    "instances_dir",
    "load_manifest",
    "manifest_entry",
    "load_instance",
    "instance_milp",
    "export_mps",
    "sklearn_data",
    "LEARNING_TASKS",
    "build_learning_tasks",
    "generate_task",
    "load_learning_task",
]

Generated = tuple[np.ndarray, np.ndarray, np.ndarray | None]


def noisy_halfspace(rng: np.random.Generator, n: int, d: int, noise: float = 0.1) -> Generated:
    """Gaussian points labelled by a random halfspace, each label flipped with prob. ``noise``; unit weights."""
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w + 0.2 >= 0).astype(np.int8)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y, None


def rrspm_signed(rng: np.random.Generator, n: int, d: int, m: int = 20, epsilon: float = 1.0) -> Generated:
    """The first oracle call of RRSPM (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially
    Private Learning with Public Data", Alg. 4): n - m private points with unit weights
    and noisy-halfspace labels, plus m public points with uniform random labels and
    Laplace(scale 2m/epsilon) weights (negative about half the time)."""
    n_private = n - m
    X_private, y_private, _ = noisy_halfspace(rng, n_private, d)
    Z = rng.normal(size=(m, d))
    y_tilde = rng.integers(0, 2, size=m).astype(np.int8)
    xi = rng.laplace(0.0, 2.0 * m / epsilon, size=m)
    X = np.vstack((X_private, Z))
    y = np.concatenate((y_private, y_tilde))
    weights = np.concatenate((np.ones(n_private), xi))
    return X, y, weights


def duplicated_grid(rng: np.random.Generator, n: int, d: int) -> Generated:
    """Integer-grid points in {-3..3}^d: many duplicates (with conflicting labels), collinear and
    coplanar points; integer signed weights including zeros."""
    X = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    y = ((X.sum(axis=1) + rng.integers(-2, 3, size=n)) >= 0).astype(np.int8)
    weights = rng.integers(-3, 6, size=n).astype(np.float64)
    return X, y, weights


def heavy_tailed(rng: np.random.Generator, n: int, d: int) -> Generated:
    """Student-t (2 degrees of freedom) features, noisy-halfspace labels, unit weights."""
    X = rng.standard_t(2.0, size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w >= 0).astype(np.int8)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y, None


#: real data sets shipped inside scikit-learn: loader name, positive class (label 1) and the
#: classes kept (None = all); the label is 1 for ``positive`` and 0 for the other kept classes.
SKLEARN_DATASETS: dict[str, tuple[str, int, tuple[int, ...] | None]] = {
    "breast_cancer": ("load_breast_cancer", 1, None),  # 1 = benign (357), 0 = malignant (212)
    "wine": ("load_wine", 0, None),  # class 0 (59) vs classes 1 and 2 (119)
    "iris_versicolor_virginica": ("load_iris", 2, (1, 2)),  # virginica (50) vs versicolor (50)
}


def _decimals(column: np.ndarray, max_decimals: int = 8) -> int:
    """The smallest k with round(x * 10^k) / 10^k == x for every value (the source's decimals)."""
    for k in range(max_decimals + 1):
        if np.all(np.round(column * 10.0**k) / 10.0**k == column):
            return k
    raise ValueError(f"a column has more than {max_decimals} decimals; cannot store it exactly as integers")


def sklearn_data(
    dataset: str, features: tuple[str, ...] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
    """(X, y, feature names, decimals) of a binary problem from a data set bundled with scikit-learn.

    X holds exact integers: column j is round(x_j * 10^k_j) with k_j = ``decimals[j]`` (the
    number of decimals of that feature in scikit-learn's copy). ``features`` selects columns by
    name (default: all).
    """
    import sklearn.datasets

    if dataset not in SKLEARN_DATASETS:
        raise ValueError(f"unknown data set {dataset!r}; available: {sorted(SKLEARN_DATASETS)}")
    loader, positive, keep = SKLEARN_DATASETS[dataset]
    bunch = getattr(sklearn.datasets, loader)()
    names = [str(f) for f in bunch.feature_names]
    if features is not None:
        missing = [f for f in features if f not in names]
        if missing:
            raise ValueError(f"data set {dataset!r} has no feature(s) {missing}; features: {names}")
        columns = [names.index(f) for f in features]
    else:
        columns = list(range(len(names)))
    rows = np.ones(len(bunch.target), dtype=bool) if keep is None else np.isin(bunch.target, keep)
    raw = np.asarray(bunch.data, dtype=np.float64)[rows][:, columns]
    decimals = [_decimals(raw[:, j]) for j in range(raw.shape[1])]
    X = np.column_stack([np.round(raw[:, j] * 10.0**k) for j, k in enumerate(decimals)])
    y = (bunch.target[rows] == positive).astype(np.int8)
    return X, y, [names[c] for c in columns], decimals


def real_data(
    rng: np.random.Generator, n: int, d: int, dataset: str = "", features: tuple[str, ...] | None = None
) -> Generated:
    """A scikit-learn data set as an instance (unit weights); ``rng`` is unused (the data are fixed)."""
    X, y, _, _ = sklearn_data(dataset, features)
    if X.shape != (n, d):
        raise ValueError(f"data set {dataset!r} with features {features} has shape {X.shape}, the spec says ({n}, {d})")
    return X, y, None


GENERATORS: dict[str, Callable[..., Generated]] = {
    "noisy_halfspace": noisy_halfspace,
    "rrspm_signed": rrspm_signed,
    "duplicated_grid": duplicated_grid,
    "heavy_tailed": heavy_tailed,
    "sklearn": real_data,
}


@dataclass(frozen=True)
class InstanceSpec:
    name: str
    hypothesis_class: str
    generator: str
    n: int
    d: int
    seed: int
    #: extra keyword arguments of the generator, as (key, value) pairs (hashable)
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def filename(self) -> str:
        return f"{self.name}.csv"

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)


_BC_2 = ("mean radius", "mean texture")
_BC_5 = ("mean radius", "mean texture", "mean smoothness", "mean concave points", "mean symmetry")
_IRIS_PETALS = ("petal length (cm)", "petal width (cm)")
_WINE_2 = ("alcohol", "flavanoids")


INSTANCE_SPECS: tuple[InstanceSpec, ...] = (
    InstanceSpec("rrspm-2d-n300", "halfspace", "rrspm_signed", 300, 2, 1),
    InstanceSpec("noisy-2d-n500", "halfspace", "noisy_halfspace", 500, 2, 2),
    InstanceSpec("grid-2d-n200", "halfspace", "duplicated_grid", 200, 2, 3),
    InstanceSpec("grid-3d-n80", "halfspace", "duplicated_grid", 80, 3, 4),
    InstanceSpec("heavy-3d-n60", "halfspace", "heavy_tailed", 60, 3, 5),
    InstanceSpec("rrspm-stump-5d-n2000", "stump", "rrspm_signed", 2000, 5, 6),
    InstanceSpec("noisy-threshold-n1000", "threshold", "noisy_halfspace", 1000, 1, 7),
    # signed weights as RRSPM's first oracle call produces them, at MIP sizes (d = 5)
    InstanceSpec("rrspm-5d-n100", "halfspace", "rrspm_signed", 100, 5, 11),
    InstanceSpec("rrspm-5d-n200", "halfspace", "rrspm_signed", 200, 5, 12),
    # real data shipped inside scikit-learn (fixed data: the seed is unused)
    InstanceSpec("breast-cancer-stump", "stump", "sklearn", 569, 30, 0, (("dataset", "breast_cancer"),)),
    InstanceSpec(
        "breast-cancer-2f", "halfspace", "sklearn", 569, 2, 0, (("dataset", "breast_cancer"), ("features", _BC_2))
    ),
    InstanceSpec(
        "breast-cancer-5f", "halfspace", "sklearn", 569, 5, 0, (("dataset", "breast_cancer"), ("features", _BC_5))
    ),
    InstanceSpec("wine-class0-stump", "stump", "sklearn", 178, 13, 0, (("dataset", "wine"),)),
    InstanceSpec("wine-class0-2f", "halfspace", "sklearn", 178, 2, 0, (("dataset", "wine"), ("features", _WINE_2))),
    InstanceSpec(
        "iris-vv-stump",
        "stump",
        "sklearn",
        100,
        2,
        0,
        (("dataset", "iris_versicolor_virginica"), ("features", _IRIS_PETALS)),
    ),
    InstanceSpec(
        "iris-vv-2f",
        "halfspace",
        "sklearn",
        100,
        2,
        0,
        (("dataset", "iris_versicolor_virginica"), ("features", _IRIS_PETALS)),
    ),
)

DEFAULT_INSTANCE = "rrspm-2d-n300"


def instances_dir() -> Path:
    """The bundled instances' folder: ``instances/`` in a checkout, installed as the package data of
    ``oraclepriv.instance_data`` (read through ``importlib.resources``, so it works from a wheel too)."""
    from importlib import resources

    return Path(str(resources.files("oraclepriv.instance_data")))


def generate(spec: InstanceSpec) -> Generated:
    rng = np.random.default_rng(spec.seed)
    return GENERATORS[spec.generator](rng, spec.n, spec.d, **spec.kwargs)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _source(spec: InstanceSpec) -> dict[str, Any]:
    """Manifest fields describing where the data come from."""
    if spec.generator != "sklearn":
        return {"params": spec.kwargs}
    import sklearn

    kwargs = spec.kwargs
    _, _, names, decimals = sklearn_data(kwargs["dataset"], kwargs.get("features"))
    loader, positive, keep = SKLEARN_DATASETS[kwargs["dataset"]]
    return {
        "params": {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()},
        "source": f"scikit-learn {sklearn.__version__} sklearn.datasets.{loader}(); label 1 = class {positive}"
        + ("" if keep is None else f", rows of classes {list(keep)} only"),
        "features": names,
        "feature_units": [f"1e-{k}" if k else "1" for k in decimals],
    }


def _merge_best(entry: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Keep the better of a new solve and a previous manifest entry for the same file (best known
    objectives never regress when a rebuild uses a shorter time limit or a slower backend)."""
    if not previous or previous.get("sha256") != entry["sha256"] or previous.get("best_objective") is None:
        return entry
    if entry["best_objective"] is None:
        return {
            **entry,
            **{k: previous.get(k) for k in ("best_objective", "best_bound", "proved_optimal", "solved_by")},
        }
    merged = dict(entry)
    if previous["best_objective"] < entry["best_objective"] - 1e-9 * max(1.0, abs(entry["best_objective"])):
        merged["best_objective"] = previous["best_objective"]
        merged["solved_by"] = previous.get("solved_by")
    prev_bound = previous.get("best_bound")
    if prev_bound is not None and (merged.get("best_bound") is None or prev_bound > merged["best_bound"]):
        merged["best_bound"] = prev_bound
    if previous.get("proved_optimal") and not entry["proved_optimal"]:
        merged.update(
            best_objective=previous["best_objective"], proved_optimal=True, solved_by=previous.get("solved_by")
        )
    return merged


def build_library(
    out: Path | None = None, solve: bool = True, time_limit: float = 60.0, progress: Progress | None = None
) -> list[dict]:
    """Regenerate every instance file and the manifest.

    With ``solve``, every instance is solved by the default exact oracle (``sweep`` for
    thresholds/stumps, ``enumerate`` for halfspaces with d <= 2, else a MIP backend stopped after
    ``time_limit`` seconds). ``best_objective`` is the re-scored objective of the best hypothesis
    known, ``best_bound`` the best proved lower bound, ``proved_optimal`` whether they meet
    (certified), ``solved_by`` the backend that found (and, if proved, proved) it. Entries of an
    existing manifest for the same file are merged so best known values never regress.
    ``progress(instances done, instances)``.
    """
    from oraclepriv.oracle import make_oracle

    out = Path(out) if out is not None else instances_dir()
    out.mkdir(parents=True, exist_ok=True)
    previous: dict[str, dict] = {}
    if (out / "manifest.json").is_file():
        previous = {e["name"]: e for e in json.loads((out / "manifest.json").read_text(encoding="utf-8"))}
    manifest = []
    for spec in INSTANCE_SPECS:
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
            "signed_weights": bool(weights is not None and np.any(weights < 0)),
            "sha256": _sha256(path),
            "best_objective": None,
            "best_bound": None,
            "proved_optimal": False,
            "solved_by": None,
        }
        if solve:
            oracle = make_oracle(spec.hypothesis_class, time_limit=time_limit)
            result = oracle.solve(X, y, weights, caller="instances", step="build")
            entry.update(
                best_objective=result.objective,
                best_bound=result.bound if math.isfinite(result.bound) else None,
                proved_optimal=result.certified,
                solved_by=result.backend,
            )
            entry = _merge_best(entry, previous.get(spec.name))
        manifest.append(entry)
        if progress is not None:
            progress(len(manifest), len(INSTANCE_SPECS))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def check_library(directory: Path | None = None) -> list[str]:
    """Problems found: files missing or differing from their manifest checksum / generator output."""
    directory = Path(directory) if directory is not None else instances_dir()
    problems = []
    tasks_path = directory / "learning_tasks.json"
    if tasks_path.is_file():
        for entry in json.loads(tasks_path.read_text(encoding="utf-8")):
            for file, digest in entry["sha256"].items():
                if not (directory / file).is_file():
                    problems.append(f"{entry['name']}: file {directory / file} is missing")
                elif _sha256(directory / file) != digest:
                    problems.append(f"{entry['name']}: checksum mismatch for {directory / file}")
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest:
        path = directory / entry["file"]
        if not path.is_file():
            problems.append(f"{entry['name']}: file {path} is missing")
        elif _sha256(path) != entry["sha256"]:
            problems.append(f"{entry['name']}: checksum mismatch for {path}")
    return problems


# ---------------------------------------------------------------------------------------------
# reading instances and exporting their MIP models


def load_manifest(directory: Path | None = None) -> list[dict[str, Any]]:
    """The manifest entries (one dict per instance)."""
    directory = Path(directory) if directory is not None else instances_dir()
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


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
    data = read_csv_problem(directory / entry["file"])
    weights = data.weights if data.weights is not None else np.ones(len(data.y))
    return entry, data.X, data.y, np.asarray(weights, dtype=np.float64)


#: MIP formulations an instance can be exported as (see ``oraclepriv.solvers.milp``)
FORMULATIONS = ("relaxed", "margin", "staircase")
EXPORT_BACKENDS = ("highs", "scip", "pyomo")


def instance_milp(name: str, formulation: str | None = None, gamma: float | None = None, directory: Path | None = None):
    """(MilpArrays with the instance's costs, objective offset, formulation details) of an instance.

    The signed weights are reduced once (``oraclepriv.oracle.reduce_signed_weights``) exactly as
    the oracle protocol does, so ``min cost.x + offset`` is the model of the *signed* problem:

    * halfspaces, ``formulation="relaxed"`` (default): the margin-free relaxation the MIP backends
      certify with (:class:`oraclepriv.solvers.milp.HalfspaceRelaxedMilp`); its optimum + offset is a lower
      bound on the instance's optimum and equals it on data in general position;
    * halfspaces, ``"margin"``: the big-M model with margin gamma (:class:`HalfspaceMarginMilp`),
      exact over halfspaces with margin >= gamma on [-1, 1]-scaled data;
    * thresholds/stumps (``"staircase"``, the only choice): the exact staircase model.
    """
    from dataclasses import replace

    from oraclepriv.oracle import reduce_signed_weights
    from oraclepriv.solvers.milp import DEFAULT_GAMMA, HalfspaceMarginMilp, HalfspaceRelaxedMilp, StumpMilp

    entry, X, y, w = load_instance(name, directory)
    cls = entry["class"]
    allowed = ("relaxed", "margin") if cls == "halfspace" else ("staircase",)
    formulation = formulation or allowed[0]
    if formulation not in allowed:
        raise ValueError(
            f"formulation must be one of {list(allowed)} for the {cls} instance {name!r}; got {formulation!r}"
        )
    y_reduced, w_abs, sign_offset = reduce_signed_weights(y, w)
    if formulation == "relaxed":
        form = HalfspaceRelaxedMilp(X, y_reduced)
    elif formulation == "margin":
        form = HalfspaceMarginMilp(X, y_reduced, DEFAULT_GAMMA if gamma is None else gamma)
    else:
        form = StumpMilp(X, cls)
    cost, form_offset = form.costs(y_reduced, w_abs)
    milp = replace(form.milp, cost=np.asarray(cost, dtype=np.float64))
    return milp, float(sign_offset + form_offset), form.details()


def export_mps(
    name: str,
    path: Path | str,
    backend: str = "highs",
    formulation: str | None = None,
    directory: Path | None = None,
) -> dict[str, Any]:
    """Write an instance's MIP model (objective = the signed loss, offset included) as free MPS.

    ``backend`` chooses the writer: ``highs`` (highspy ``writeModel``), ``scip`` (OR-Tools
    ``ExportModelAsMpsFormat``) or ``pyomo`` (Pyomo's MPS writer). Returns a summary (path,
    columns, rows, integer columns, objective offset, formulation).
    """
    if backend not in EXPORT_BACKENDS:
        raise ValueError(f"backend must be one of {list(EXPORT_BACKENDS)} for MPS export; got {backend!r}")
    path = Path(path)
    if path.suffix.lower() != ".mps":
        raise ValueError(f"the output file must end in .mps; got {str(path)!r}")
    milp, offset, details = instance_milp(name, formulation, directory=directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    if backend == "highs":
        from oraclepriv.solvers.highs import HighsModel, import_highspy

        highspy = import_highspy()
        model = HighsModel(highspy, milp)
        model.h.changeObjectiveOffset(offset)
        # kWarning only says that generic names (c0.., r0..) were generated
        if model.h.writeModel(str(path)) not in (highspy.HighsStatus.kOk, highspy.HighsStatus.kWarning):
            raise RuntimeError(f"HiGHS could not write {str(path)!r}")
    elif backend == "scip":
        from oraclepriv.solvers.scip import ScipModel, import_pywraplp

        model = ScipModel(import_pywraplp(), milp)
        model.objective.SetOffset(offset)
        path.write_text(model.solver.ExportModelAsMpsFormat(False, False), encoding="utf-8")
    else:
        from oraclepriv.solvers.pyomo import PyomoModel

        model = PyomoModel(milp)
        model.model.obj.expr = model.model.obj.expr + offset
        model.write(str(path))
    return {
        "instance": name,
        "path": str(path),
        "backend": backend,
        "formulation": details["formulation"],
        "num_cols": milp.num_cols,
        "num_rows": milp.num_rows,
        "num_integer": int(milp.integer.sum()),
        "objective_offset": offset,
    }


# ---------------------------------------------------------------------------------------------
# learning tasks for the private learners: private labelled data + public unlabelled points


@dataclass(frozen=True)
class LearningTaskSpec:
    """A private/public pair for the learners of Block et al. (Algorithms 2-4): n private points with
    labels from a
    noisy rule, m public points from the same marginal (sigma = 1), d features. ``l1_ball`` scales
    every point into the unit l1 ball (the input domain of Algorithm 3's bounded linear class)."""

    name: str
    n: int
    m: int
    d: int
    seed: int
    l1_ball: bool = False

    @property
    def private_file(self) -> str:
        return f"{self.name}-private.csv"

    @property
    def public_file(self) -> str:
        return f"{self.name}-public.csv"


LEARNING_TASKS: tuple[LearningTaskSpec, ...] = (
    LearningTaskSpec("task-5d-n20000", 20_000, 50, 5, 21),
    LearningTaskSpec("task-2d-n2000", 2_000, 20, 2, 22),
    LearningTaskSpec("task-l1-3d-n300", 300, 50, 3, 23, l1_ball=True),
)


def generate_task(spec: LearningTaskSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X_private, y_private, X_public): uniform points in [-1,1]^d, labels 1[x.w > 0] flipped w.p. 0.1."""
    rng = np.random.default_rng(spec.seed)
    X = rng.uniform(-1.0, 1.0, (spec.n, spec.d))
    Z = rng.uniform(-1.0, 1.0, (spec.m, spec.d))
    if spec.l1_ball:
        X /= np.maximum(1.0, np.abs(X).sum(axis=1, keepdims=True))
        Z /= np.maximum(1.0, np.abs(Z).sum(axis=1, keepdims=True))
    w = np.linspace(1.0, -0.5, spec.d)
    y = ((X @ w > 0) ^ (rng.random(spec.n) < 0.1)).astype(np.int8)
    return X, y, Z


def build_learning_tasks(out: Path | None = None) -> list[dict[str, Any]]:
    """Write every learning task's two files and ``learning_tasks.json`` (with sha256 checksums)."""
    out = Path(out) if out is not None else instances_dir()
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for spec in LEARNING_TASKS:
        X, y, Z = generate_task(spec)
        write_csv_problem(out / spec.private_file, X, y)
        write_csv_problem(out / spec.public_file, Z, None)
        entries.append(
            {
                "name": spec.name,
                "private_file": spec.private_file,
                "public_file": spec.public_file,
                "n": spec.n,
                "m": spec.m,
                "d": spec.d,
                "seed": spec.seed,
                "l1_ball": spec.l1_ball,
                "sha256": {f: _sha256(out / f) for f in (spec.private_file, spec.public_file)},
            }
        )
    (out / "learning_tasks.json").write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    return entries


def load_learning_task(name: str, directory: Path | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X_private, y_private, X_public) of a bundled learning task."""
    directory = Path(directory) if directory is not None else instances_dir()
    entries = {e["name"]: e for e in json.loads((directory / "learning_tasks.json").read_text(encoding="utf-8"))}
    if name not in entries:
        raise ValueError(f"unknown learning task {name!r}; bundled: {sorted(entries)}")
    entry = entries[name]
    private = read_csv_problem(directory / entry["private_file"])
    public = read_csv_problem(directory / entry["public_file"], require_labels=False)
    return private.X, private.y, public.X
