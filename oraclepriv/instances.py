"""Benchmark instances: deterministic generators, the bundled library and its manifest.

Each instance is a CSV file in the format of :mod:`oraclepriv.io` plus a manifest entry
(name, class, n, d, generator, seed, parameters, sha256 of the file, best known objective with
the hypothesis that attains it (``best_hypothesis``, a witness anyone can re-score, as MIPLIB ships
solutions), the best proved lower bound, each with the backend that found or proved it and its
time limit, whether the objective is proved optimal, and the gap).
``oraclepriv instances build`` regenerates every file from its generator and seed and re-solves
every instance (exact combinatorial oracles where they apply, a time-limited MIP otherwise: an
instance the MIP does not close is kept as *open*, with its best known objective and bound);
:func:`record_results` merges the rows of an ``oraclepriv bench mip`` run into the manifest the
same way (best values never regress; a new best objective is recorded only with a hypothesis that attains
it, which becomes the witness; a bound only when proved over the whole class; ``oraclepriv instances record
ROWS.json``); ``oraclepriv instances check`` verifies the manifest's fields, the checksums, that every
entry agrees with its file and with itself (best bound <= best objective, gap, proved_optimal), and
re-scores every witness (:func:`check_library`, :func:`check_witnesses`);
``oraclepriv instances export-mps`` writes an instance's MIP model as MPS so other solvers can
be benchmarked on the same models.

Families: synthetic (separable + label noise, heavy-tailed, duplicated grid points, signed
weights as RRSPM's first oracle call produces them, in d = 2 and at MIP sizes d = 5) and real
data that ships inside scikit-learn (:func:`sklearn_data`): breast cancer (malignant vs benign),
wine (class 0 vs rest), iris (versicolor vs virginica on the two petal features, not separable).
Real-data features are stored exactly, as integers in units of 10^-k of scikit-learn's values
(k per feature, the number of decimals in the source; iris petals in mm). Both hypothesis
classes are invariant under these per-feature scalings (a stump's order, a halfspace's
labelings), so nothing about the learning problem changes; the data just become exact integers
(a grid on which ``cpsat`` is exact). The same holds for any affine map of the features
(standardisation included): a halfspace composed with an invertible affine map is a halfspace,
so the class's labelings, and the 0-1 problem, are unchanged.

The real-data tier (:data:`REAL_TIER`, ``oraclepriv bench mip --suite real``, issue #17):
halfspace instances in d = 4..10 a user would bring. Real data at full size (breast cancer,
wine cultivars, iris species, digit pairs and even vs odd, diabetes progression above its
median) on feature groups in their exact units, or on principal-component projections
(:func:`principal_component_scores`). A projection to k < d components *does* change the data
(and rounding the scores to 10^-3 can merge nearby points): it is part of the instance's
definition, and the stored file is the instance. Beside them, noisy synthetic families in
d = 4..8 (Gaussian blobs with 20% label noise, heavy-tailed features, duplicated grid points
with conflicting labels and signed integer weights, RRSPM's signed Laplace weights), their
features rounded to 4 decimals by :func:`generate`. The manifest says for each instance the best
known objective and bound, who found and proved them at what time limit, and whether it is open.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.io import jsonable, read_csv_problem, write_csv_problem

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
    "record_results",
    "REAL_TIER",
    "REAL_TIER_SPECS",
    "real_tier",
    "check_library",
    "check_witnesses",
    "CLASSES",
    "WITNESS_CLASSES",
    "ManifestError",
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


def duplicated_grid(rng: np.random.Generator, n: int, d: int, radius: int = 3) -> Generated:
    """Integer-grid points in {-radius..radius}^d: many duplicates (with conflicting labels), collinear
    and coplanar points; integer signed weights including zeros. In d >= 4 a small ``radius`` keeps
    the duplicates frequent ((2 radius + 1)^d cells for n points)."""
    X = rng.integers(-radius, radius + 1, size=(n, d)).astype(np.float64)
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


def noisy_blobs(rng: np.random.Generator, n: int, d: int, noise: float = 0.2, separation: float = 2.0) -> Generated:
    """Two Gaussian blobs N(+-(separation / 2) u, I_d) (u a random unit direction), n // 2 points in
    blob 0 and the rest in blob 1, label = blob; then exactly round(noise * n) labels, chosen without
    replacement, are flipped. Unit weights. The blobs overlap (Bayes error Phi(-separation / 2)) and
    the flips are adversarial to every halfspace, so the optimum is far from 0."""
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    y = (np.arange(n) >= n // 2).astype(np.int8)
    X = rng.normal(size=(n, d)) + np.outer(np.where(y == 1, 0.5, -0.5) * separation, u)
    flips = rng.choice(n, size=int(round(noise * n)), replace=False)
    y[flips] = 1 - y[flips]
    return X, y, None


#: label 1 = the regression target above its median (:data:`SKLEARN_DATASETS`)
ABOVE_MEDIAN = "above median"

#: real data sets shipped inside scikit-learn: loader name, positive class(es) (label 1) and the
#: classes kept (None = all); the label is 1 for ``positive`` (one class or a tuple of classes) and
#: 0 for the other kept classes; :data:`ABOVE_MEDIAN` binarises a regression target at its median.
SKLEARN_DATASETS: dict[str, tuple[str, int | tuple[int, ...] | str, tuple[int, ...] | None]] = {
    "breast_cancer": ("load_breast_cancer", 1, None),  # 1 = benign (357), 0 = malignant (212)
    "wine": ("load_wine", 0, None),  # class 0 (59) vs classes 1 and 2 (119)
    "wine_class1": ("load_wine", 1, None),  # class 1 (71) vs classes 0 and 2 (107)
    "iris_versicolor_virginica": ("load_iris", 2, (1, 2)),  # virginica (50) vs versicolor (50)
    "iris_versicolor": ("load_iris", 1, None),  # versicolor (50) vs setosa and virginica (100)
    "iris_virginica": ("load_iris", 2, None),  # virginica (50) vs setosa and versicolor (100)
    "digits_3_8": ("load_digits", 8, (3, 8)),  # 8 (174) vs 3 (183)
    "digits_2_3": ("load_digits", 3, (2, 3)),  # 3 (183) vs 2 (177)
    "digits_1_8": ("load_digits", 8, (1, 8)),  # 8 (174) vs 1 (182)
    "digits_4_9": ("load_digits", 9, (4, 9)),  # 9 (180) vs 4 (181)
    "digits_even_odd": ("load_digits", (0, 2, 4, 6, 8), None),  # even (899) vs odd (898)
    # the raw clinical units (scaled=False): age, sex, bmi, ..., with their own decimals
    "diabetes_above_median": ("load_diabetes", ABOVE_MEDIAN, None),  # progression > 140.5 (221 of 442)
}
_LOADER_OPTIONS: dict[str, dict[str, Any]] = {"load_diabetes": {"scaled": False}}

#: decimals kept of a principal-component score (PCA projections are stored in units of 10^-3)
PCA_DECIMALS = 3


def _decimals(column: np.ndarray, max_decimals: int = 8) -> int:
    """The smallest k with round(x * 10^k) / 10^k == x for every value (the source's decimals)."""
    for k in range(max_decimals + 1):
        if np.all(np.round(column * 10.0**k) / 10.0**k == column):
            return k
    raise ValueError(f"a column has more than {max_decimals} decimals; cannot store it exactly as integers")


def principal_component_scores(raw: np.ndarray, k: int, decimals: int = PCA_DECIMALS) -> np.ndarray:
    """The first ``k`` principal-component scores of the z-scored columns of ``raw``, as exact integers
    in units of 10^-decimals.

    Every column is centred and divided by its standard deviation (constant columns, e.g. digits'
    blank border pixels, are dropped); the components are the right singular vectors of that
    matrix, each with the sign that makes its largest-magnitude loading positive (so the result
    does not depend on the LAPACK build's sign choice), and the scores are rounded to ``decimals``
    decimals. Unlike a per-feature scaling this *changes* the 0-1 problem (k < d directions are
    kept, and rounding can merge nearby points): the projection is part of the instance's
    definition, and the stored file is the instance.
    """
    centred = raw - raw.mean(axis=0)
    std = centred.std(axis=0)
    z = centred[:, std > 0] / std[std > 0]
    _, _, components = np.linalg.svd(z, full_matrices=False)
    components = components[:k]
    largest = np.abs(components).argmax(axis=1)
    components = components * np.sign(components[np.arange(k), largest])[:, None]
    return np.round((z @ components.T) * 10.0**decimals) + 0.0  # + 0.0: no "-0.0" in the file


def _binary_labels(target: np.ndarray, positive: int | tuple[int, ...] | str) -> np.ndarray:
    """Label 1 for the positive class(es), or for a regression target above its median."""
    if positive == ABOVE_MEDIAN:
        return (target > np.median(target)).astype(np.int8)
    return np.isin(target, positive).astype(np.int8)


def sklearn_data(
    dataset: str, features: tuple[str, ...] | None = None, pca: int | None = None
) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
    """(X, y, feature names, decimals) of a binary problem from a data set bundled with scikit-learn.

    X holds exact integers: column j is round(x_j * 10^k_j) with k_j = ``decimals[j]`` (the
    number of decimals of that feature in scikit-learn's copy). ``features`` selects columns by
    name (default: all). ``pca = k`` replaces the selected columns by their first k principal
    components (:func:`principal_component_scores`, named PC1..PCk, k_j = :data:`PCA_DECIMALS`).
    """
    import sklearn.datasets

    if dataset not in SKLEARN_DATASETS:
        raise ValueError(f"unknown data set {dataset!r}; available: {sorted(SKLEARN_DATASETS)}")
    loader, positive, keep = SKLEARN_DATASETS[dataset]
    bunch = getattr(sklearn.datasets, loader)(**_LOADER_OPTIONS.get(loader, {}))
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
    y = _binary_labels(np.asarray(bunch.target)[rows], positive)
    if pca is not None:
        return principal_component_scores(raw, pca), y, [f"PC{j + 1}" for j in range(pca)], [PCA_DECIMALS] * pca
    decimals = [_decimals(raw[:, j]) for j in range(raw.shape[1])]
    X = np.column_stack([np.round(raw[:, j] * 10.0**k) for j, k in enumerate(decimals)])
    return X, y, [names[c] for c in columns], decimals


def real_data(
    rng: np.random.Generator,
    n: int,
    d: int,
    dataset: str = "",
    features: tuple[str, ...] | None = None,
    pca: int | None = None,
) -> Generated:
    """A scikit-learn data set as an instance (unit weights); ``rng`` is unused (the data are fixed)."""
    X, y, _, _ = sklearn_data(dataset, features, pca)
    if X.shape != (n, d):
        raise ValueError(
            f"data set {dataset!r} with features {features}, pca {pca} has shape {X.shape}, the spec says ({n}, {d})"
        )
    return X, y, None


GENERATORS: dict[str, Callable[..., Generated]] = {
    "noisy_halfspace": noisy_halfspace,
    "rrspm_signed": rrspm_signed,
    "duplicated_grid": duplicated_grid,
    "heavy_tailed": heavy_tailed,
    "noisy_blobs": noisy_blobs,
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

_BC_WORST_4 = ("worst radius", "worst texture", "worst smoothness", "worst concave points")
_BC_ERROR_6 = (
    "radius error",
    "texture error",
    "smoothness error",
    "compactness error",
    "concave points error",
    "symmetry error",
)
_WINE_4 = ("alcohol", "malic_acid", "ash", "alcalinity_of_ash")
_WINE_6 = (*_WINE_4, "magnesium", "total_phenols")
_IRIS_ALL = ("sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)")
_DIABETES_4 = ("bmi", "bp", "s3", "s5")


def _real(name: str, n: int, d: int, dataset: str, **params: Any) -> InstanceSpec:
    """A halfspace instance on a scikit-learn data set (``features`` and/or ``pca`` in ``params``)."""
    return InstanceSpec(name, "halfspace", "sklearn", n, d, 0, (("dataset", dataset), *params.items()))


#: The real-data tier of the MIP benchmark (issue #17, ``oraclepriv bench mip --suite real``):
#: halfspace instances with d = 4..10 that a user would bring. Real data at full size from the data
#: sets bundled with scikit-learn (feature groups in their own exact units, or principal-component
#: projections, :func:`principal_component_scores`), and noisy synthetic families whose features
#: are rounded to 4 decimals (``decimals``, applied by :func:`generate`) to keep the files small.
#: The tier also holds the library's older ``breast-cancer-5f`` (:data:`REAL_TIER`).
REAL_TIER_SPECS: tuple[InstanceSpec, ...] = (
    # breast cancer (569 rows): benign (label 1) vs malignant
    _real("bc-worst-4f", 569, 4, "breast_cancer", features=_BC_WORST_4),
    _real("bc-error-6f", 569, 6, "breast_cancer", features=_BC_ERROR_6),
    _real("bc-pca4", 569, 4, "breast_cancer", pca=4),
    _real("bc-pca8", 569, 8, "breast_cancer", pca=8),
    # wine (178 rows): one cultivar vs the other two
    _real("wine-c1-4f", 178, 4, "wine_class1", features=_WINE_4),
    _real("wine-c1-6f", 178, 6, "wine_class1", features=_WINE_6),
    _real("wine-c0-pca4", 178, 4, "wine", pca=4),
    _real("wine-c1-pca5", 178, 5, "wine_class1", pca=5),
    # iris (150 rows): one species vs the other two, on all four measurements
    _real("iris-versicolor-4f", 150, 4, "iris_versicolor", features=_IRIS_ALL),
    _real("iris-virginica-4f", 150, 4, "iris_virginica", features=_IRIS_ALL),
    # handwritten digits (8x8 pixels): digit pairs and even vs odd, on principal components of the pixels
    _real("digits-3v8-pca5", 357, 5, "digits_3_8", pca=5),
    _real("digits-2v3-pca6", 360, 6, "digits_2_3", pca=6),
    _real("digits-1v8-pca8", 356, 8, "digits_1_8", pca=8),
    _real("digits-4v9-pca4", 361, 4, "digits_4_9", pca=4),
    _real("digits-even-odd-pca5", 1797, 5, "digits_even_odd", pca=5),
    # diabetes (442 rows): disease progression after one year above its median
    _real("diabetes-4f", 442, 4, "diabetes_above_median", features=_DIABETES_4),
    _real("diabetes-10f", 442, 10, "diabetes_above_median"),
    # noisy synthetic families
    InstanceSpec("blobs-4d-n300", "halfspace", "noisy_blobs", 300, 4, 31, (("decimals", 4),)),
    InstanceSpec("blobs-5d-n200", "halfspace", "noisy_blobs", 200, 5, 32, (("decimals", 4),)),
    InstanceSpec("blobs-8d-n120", "halfspace", "noisy_blobs", 120, 8, 33, (("decimals", 4),)),
    InstanceSpec("heavy-4d-n200", "halfspace", "heavy_tailed", 200, 4, 34, (("decimals", 4),)),
    InstanceSpec("heavy-6d-n150", "halfspace", "heavy_tailed", 150, 6, 35, (("decimals", 4),)),
    InstanceSpec("grid-4d-n200", "halfspace", "duplicated_grid", 200, 4, 36, (("radius", 1),)),
    InstanceSpec("rrspm-5d-n200-m40", "halfspace", "rrspm_signed", 200, 5, 37, (("m", 40), ("decimals", 4))),
    InstanceSpec("rrspm-8d-n150-m10", "halfspace", "rrspm_signed", 150, 8, 38, (("m", 10), ("decimals", 4))),
)

#: names of the real-data tier's instances (the benchmark suite ``real``)
REAL_TIER: tuple[str, ...] = ("breast-cancer-5f", *(spec.name for spec in REAL_TIER_SPECS))

INSTANCE_SPECS += REAL_TIER_SPECS

#: the quick subset of the tier: members with d <= 5 and n <= 200, the two smallest (n * d, then name)
QUICK_TIER_SIZE = 2


def real_tier(quick: bool = False) -> list[str]:
    """The real-data tier's instance names (:data:`REAL_TIER`), in library order; ``quick``: the
    :data:`QUICK_TIER_SIZE` smallest members with d <= 5 and n <= 200 (a smoke run, seconds per backend)."""
    specs = [spec for spec in INSTANCE_SPECS if spec.name in REAL_TIER]
    if not quick:
        return [spec.name for spec in specs]
    small = sorted((spec for spec in specs if spec.d <= 5 and spec.n <= 200), key=lambda s: (s.n * s.d, s.name))
    return [spec.name for spec in small[:QUICK_TIER_SIZE]]


DEFAULT_INSTANCE = "rrspm-2d-n300"


def instances_dir() -> Path:
    """The bundled instances' folder: ``instances/`` in a checkout, installed as the package data of
    ``oraclepriv.instance_data`` (read through ``importlib.resources``, so it works from a wheel too)."""
    from importlib import resources

    return Path(str(resources.files("oraclepriv.instance_data")))


def generate(spec: InstanceSpec) -> Generated:
    """(X, y, weights) of an instance: its generator seeded with ``spec.seed``; a ``decimals`` parameter
    rounds the features to that many decimals afterwards (part of the instance's definition)."""
    rng = np.random.default_rng(spec.seed)
    kwargs = spec.kwargs
    decimals = kwargs.pop("decimals", None)
    X, y, weights = GENERATORS[spec.generator](rng, spec.n, spec.d, **kwargs)
    if decimals is not None:
        X = np.round(X, decimals) + 0.0
    return X, y, weights


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def _tolerance(weights: np.ndarray | None, n: int) -> float:
    """The oracle protocol's certification tolerance 1e-9 * max(1, sum |w_i|) (unit weights: n)."""
    return 1e-9 * max(1.0, float(np.abs(weights).sum()) if weights is not None else float(n))


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
    the refusals above, an instance the manifest does not hold) raises ``ValueError`` naming the row and
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
    for number, row in enumerate(rows):
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


def _is_number(value: Any) -> bool:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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


class ManifestError(ValueError):
    """A manifest (or learning_tasks.json) that cannot be used; the message names the file."""


def _read_entries(path: Path, fields: dict[str, type]) -> list[dict[str, Any]]:
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


# ---------------------------------------------------------------------------------------------
# reading instances and exporting their MIP models


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
