"""The instances of the bundled library, each a generator with its seed and parameters (:class:`InstanceSpec`),
and the real-data tier (:data:`REAL_TIER`, ``oraclepriv bench mip --suite real``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    pass
from oraclepriv.instances.generators import GENERATORS, Generated


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


#: The real-data tier of the MIP benchmark (``oraclepriv bench mip --suite real``):
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
