"""The instance generators: synthetic families and real data bundled with scikit-learn.

Synthetic: separable data with label noise, heavy-tailed features, duplicated grid points with conflicting
labels, signed weights as RRSPM's first oracle call produces them, Gaussian blobs with label noise. Real:
datasets that ship inside scikit-learn (:func:`sklearn_data`), stored exactly as integers in units of 10^-k of
scikit-learn's values, or as rounded principal-component scores (:func:`principal_component_scores`); why these
changes of units leave the 0-1 problem unchanged is in the package docstring (:mod:`oraclepriv.instances`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    pass


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
