"""The real-data comparison's tasks (:mod:`oraclepriv.experiments.real_data`): scikit-learn's bundled binary tasks, a
fixed split per seed, and feature maps computed from the public sample only.

Per task and seed (a generator seeded by the task and the seed, never by the data):

1. the rows are permuted; the first ``test_size`` are the test split, the rest the train split;
2. the first ``public_size`` rows of the train split are the **public sample**: their labels are dropped, and they are
   not among the private records; the remaining train rows are the **private records** every learner trains on;
3. the features are scaled by statistics of the public sample alone (:class:`PublicScaling`): centred by the public
   means, divided by the public standard deviations (a feature constant on the public sample keeps its scale), then
   divided by the 95th percentile R of the public rows' norms, and every row is clipped into the unit ball, one record
   at a time. The scaled rows lie in the ball of radius 1, the data domain the margin learners and output perturbation
   are calibrated for;
4. the oracle learners get a low-dimensional map fixed before any private record is read: the scaled rows projected on
   the first k principal directions of the scaled public sample (centred on its mean; the projection itself is not
   centred, so projected rows stay in the unit ball).

Why the public sample and not documented ranges: the feature ranges printed in the datasets' descriptions (breast
cancer, wine, iris) are statistics of the whole data set, test and private rows included, so reading them would read
the private data; only the digits' 0..16 pixel range is known in advance. The public sample is private-data-free by
construction, the same for every task, and the public-data learners are given it anyway.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["TASKS", "BinaryTask", "PublicScaling", "Split", "load_task", "make_split", "stable_code", "task_sizes"]

#: the quantile of the public rows' norms that becomes the unit radius (rows beyond it are clipped)
RADIUS_QUANTILE = 0.95


@dataclass(frozen=True)
class BinaryTask:
    """A binary task made from one of scikit-learn's bundled data sets.

    Parameters
    ----------
    name : str
        The task's identifier in tables, seeds and file names.
    title : str
        Its name in figures and the README.
    loader : str
        The ``sklearn.datasets`` function that loads it (bundled with scikit-learn: no download).
    positive : tuple of int
        The original classes labelled 1.
    negative : tuple of int or None
        The original classes labelled 0; None means every other class.
    test_size : int or None
        Rows in the test split (every seed); None: 30% of the rows.
    public_size : int or None
        Rows of the train split that form the unlabelled public sample (every seed); None: a quarter of the train
        split, at least 20.
    """

    name: str
    title: str
    loader: str
    positive: tuple[int, ...]
    negative: tuple[int, ...] | None
    test_size: int | None = None
    public_size: int | None = None

    def sizes(self, rows: int) -> tuple[int, int]:
        """(test rows, public rows) for a task of ``rows`` rows (a count, not a statistic of the data)."""
        test = round(0.3 * rows) if self.test_size is None else self.test_size
        public = max(20, round(0.25 * (rows - test))) if self.public_size is None else self.public_size
        return test, public


TASKS: dict[str, BinaryTask] = {
    task.name: task
    for task in (
        # 569 rows: the split the comparison is usually quoted at, 400 train / 169 test; 100 train rows public
        BinaryTask("breast-cancer", "breast cancer (benign vs malignant)", "load_breast_cancer", (1,), None, 169, 100),
        BinaryTask("digits-3v8", "digits 3 vs 8", "load_digits", (8,), (3,)),
        BinaryTask("digits-1v7", "digits 1 vs 7", "load_digits", (7,), (1,)),
        BinaryTask("wine-0", "wine (class 0 vs rest)", "load_wine", (0,), None),
        BinaryTask("iris-vv", "iris (versicolor vs virginica)", "load_iris", (2,), (1,)),
    )
}


def stable_code(name: str) -> int:
    """A stable integer for a name (seed keys, independent of any list's order)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little")


@functools.lru_cache(maxsize=16)
def _rows(task: BinaryTask) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    X, target = getattr(datasets, task.loader)(return_X_y=True)
    keep = np.ones(len(target), dtype=bool) if task.negative is None else np.isin(target, task.positive + task.negative)
    X, y = np.asarray(X[keep], dtype=np.float64), np.isin(target[keep], task.positive).astype(np.int8)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def load_task(name: str) -> tuple[BinaryTask, np.ndarray, np.ndarray]:
    """The task called ``name`` and its rows and 0/1 labels (read-only arrays)."""
    if name not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {name!r}")
    task = TASKS[name]
    X, y = _rows(task)
    test, public = task.sizes(len(y))
    if test + public >= len(y):
        raise ValueError(f"task {name!r}: test_size + public_size = {test + public} >= {len(y)} rows")
    return task, X, y


@dataclass(frozen=True)
class PublicScaling:
    """Feature scaling and a low-dimensional map computed from the public sample only (module docstring).

    Parameters
    ----------
    mean : ndarray of shape (d,)
        The public sample's feature means.
    scale : ndarray of shape (d,)
        Its feature standard deviations (1 where a feature is constant on it).
    radius : float
        The 95th percentile of the standardised public rows' norms.
    directions : ndarray of shape (d, d)
        The principal directions of the scaled public sample, by decreasing variance (columns).
    """

    mean: np.ndarray
    scale: np.ndarray
    radius: float
    directions: np.ndarray

    @classmethod
    def from_public(cls, Z: np.ndarray) -> PublicScaling:
        """The scaling of the public rows ``Z`` (no other argument: nothing else can enter it)."""
        Z = np.asarray(Z, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[0] < 2:
            raise ValueError(f"the public sample needs at least 2 rows of features; got shape {Z.shape}")
        mean = Z.mean(axis=0)
        sd = Z.std(axis=0)
        scale = np.where(sd > 0, sd, 1.0)
        norms = np.linalg.norm((Z - mean) / scale, axis=1)
        radius = float(np.quantile(norms, RADIUS_QUANTILE))
        radius = radius if radius > 0 else 1.0
        scaled = _clip((Z - mean) / scale / radius)
        _, _, vt = np.linalg.svd(scaled - scaled.mean(axis=0), full_matrices=True)
        return cls(mean=mean, scale=scale, radius=radius, directions=vt.T)

    def unit_ball(self, X: np.ndarray) -> np.ndarray:
        """Every row standardised by the public statistics, divided by the radius, clipped into the unit ball."""
        return _clip((np.asarray(X, dtype=np.float64) - self.mean) / self.scale / self.radius)

    def low_dimensional(self, X: np.ndarray, k: int) -> np.ndarray:
        """The unit-ball rows projected on the first ``k`` principal directions (norms stay at most 1)."""
        if not 1 <= k <= self.directions.shape[1]:
            raise ValueError(f"components must be between 1 and {self.directions.shape[1]}; got {k!r}")
        return self.unit_ball(X) @ self.directions[:, :k]


def _clip(V: np.ndarray) -> np.ndarray:
    """Each row longer than 1 scaled down to norm 1 - 1e-12 (one record at a time; the margin below 1 keeps the
    rounded norm inside the closed unit ball)."""
    norms = np.linalg.norm(V, axis=1)
    return V / np.where(norms > 1.0, norms * (1.0 + 1e-12), 1.0)[:, None]


@dataclass(frozen=True)
class Split:
    """One seed's split of a task: private records, the unlabelled public sample, the test split, and the scaling.

    Parameters
    ----------
    X_private, y_private : ndarray
        The private records (raw features) and their labels.
    Z : ndarray
        The public sample (raw features, no labels).
    X_test, y_test : ndarray
        The test split.
    scaling : PublicScaling
        Computed from ``Z`` alone.
    """

    X_private: np.ndarray
    y_private: np.ndarray
    Z: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    scaling: PublicScaling

    def features(self, which: str, components: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(private rows, public rows, test rows) in the map ``which``: "all" (the unit ball) or "low" (the first
        ``components`` principal directions)."""
        if which == "all":
            f = self.scaling.unit_ball
            return f(self.X_private), f(self.Z), f(self.X_test)
        if which == "low":
            g = self.scaling.low_dimensional
            return g(self.X_private, components), g(self.Z, components), g(self.X_test, components)
        raise ValueError(f"which must be 'all' or 'low'; got {which!r}")


def make_split(name: str, seed: Any) -> Split:
    """The split of task ``name`` for the integer ``seed`` of the experiment's seed stream (module docstring)."""
    task, X, y = load_task(name)
    n_test, n_public = task.sizes(len(y))
    perm = np.random.default_rng(seed).permutation(len(y))
    test, train = perm[:n_test], perm[n_test:]
    public, private = train[:n_public], train[n_public:]
    Z = X[public]
    return Split(
        X_private=X[private],
        y_private=y[private],
        Z=Z,
        X_test=X[test],
        y_test=y[test],
        scaling=PublicScaling.from_public(Z),
    )


def task_sizes(name: str) -> dict[str, Any]:
    """A task's sizes for the README: rows, features, test, public and private rows, and the positive rate."""
    task, X, y = load_task(name)
    n_test, n_public = task.sizes(len(y))
    return {
        "task": name,
        "title": task.title,
        "rows": int(len(y)),
        "features": int(X.shape[1]),
        "test": n_test,
        "public": n_public,
        "private": int(len(y) - n_test - n_public),
        "positive_rate": float(np.mean(y)),
        "majority_rate": float(max(np.mean(y), 1 - np.mean(y))),
    }
