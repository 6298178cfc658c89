"""RRSPM's default number of public points on real data: the breast cancer measurement.

Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data",
Algorithm 4 (RRSPM), with ``public_size="auto"`` (docs/theory/block-et-al.md, "Choosing m"), on
scikit-learn's breast cancer data (benign vs malignant) restricted to the four features of the
instance ``bc-worst-4f`` (worst radius, texture, smoothness and concave points, as exact integers).
Each seed draws a random split into ``n_private`` private records, ``n_public`` public points (labels
dropped) and a test set (the rest), then fits on the private and public parts and scores on the test set:

* the majority class of the private labels (non-private);
* the exact ERM over halfspaces on the private records (non-private; certified optimal);
* RRSPM at eps with ``public_size="auto"`` (the default of ``oraclepriv learn``);
* RRSPM with every public point, and with a fixed ``public_size`` on a small grid, for context.

Each RRSPM fit has its own noise seed and public seed (:mod:`oraclepriv.learners._public_size`).
Run as section 4 of ``oraclepriv experiment rrspm-tradeoff`` (:mod:`oraclepriv.experiments.rrspm_tradeoff`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oraclepriv.execution import Progress
from oraclepriv.experiments.cells import run_cells
from oraclepriv.instances.generators import sklearn_data
from oraclepriv.instances.specs import REAL_TIER_SPECS
from oraclepriv.learners.rrspm import RRSPM
from oraclepriv.oracle import make_oracle
from oraclepriv.public_data import PublicData

__all__ = ["INSTANCE", "REAL_DATA_CONFIG", "breast_cancer_features", "public_size_rows", "public_size_table"]

#: the instance whose data set and features the measurement uses
INSTANCE = "bc-worst-4f"

REAL_DATA_CONFIG: dict[str, Any] = {
    "n_private": 300,
    "n_public": 100,
    "epsilon": 1.0,
    "seeds": 5,
    "fixed_public_sizes": (4, 8, 25, 50),
}


def breast_cancer_features() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(X, y, feature names) of the instance :data:`INSTANCE` (label 1 = benign)."""
    spec = next(s for s in REAL_TIER_SPECS if s.name == INSTANCE)
    params = dict(spec.params)
    X, y, names, _ = sklearn_data(str(params["dataset"]), features=tuple(params["features"]))
    return X, y, names


def _accuracy(hypothesis: Any, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.asarray(hypothesis.predict(X)) == y))


def _seed_rows(
    seed_index: int, seed: np.random.SeedSequence, n_private: int, n_public: int, epsilon: float, sizes: tuple[int, ...]
) -> list[dict[str, Any]]:
    """One seed: a random split, the two baselines and the RRSPM fits (a cell of :func:`public_size_rows`)."""
    X, y, _ = breast_cancer_features()
    split, *fit_seeds = seed.spawn(2 + 2 * (len(sizes) + 2))
    order = np.random.default_rng(split).permutation(len(y))
    private, public, test = order[:n_private], order[n_private : n_private + n_public], order[n_private + n_public :]
    Xp, yp, Z, Xt, yt = X[private], y[private], X[public], X[test], y[test]
    base = {"seed": seed_index, "n_private": n_private, "n_public_given": n_public, "n_test": len(test)}
    majority = int(np.mean(yp) >= 0.5)
    rows = [{**base, "method": "majority class (non-private)", "m": 0, "accuracy": float(np.mean(yt == majority))}]
    erm = make_oracle("halfspace").solve(Xp, yp, caller="public_size", step="erm-baseline")
    if not erm.certified:
        raise RuntimeError(f"seed {seed_index}: the non-private ERM was not certified optimal")
    rows.append({**base, "method": "exact ERM (non-private)", "m": 0, "accuracy": _accuracy(erm.hypothesis, Xt, yt)})
    settings: list[tuple[str, Any]] = [("RRSPM, public_size=auto (default)", "auto")]
    settings += [(f"RRSPM, public_size={size}", size) for size in sizes]
    settings.append((f"RRSPM, all {n_public} public points", None))
    streams = iter(fit_seeds)
    for label, size in settings:
        noise, public_seed = next(streams), next(streams)
        clf = RRSPM(
            epsilon=epsilon,
            hypothesis_class="halfspace",
            public_size=size,
            random_state=np.random.default_rng(noise),
            public_random_state=np.random.default_rng(public_seed),
        ).fit(Xp, yp, PublicData(Z))
        rows.append({**base, "method": label, "m": int(clf.privacy_["m"]), "accuracy": _accuracy(clf, Xt, yt)})
    return rows


def public_size_rows(
    cfg: dict[str, Any], seed: np.random.SeedSequence, n_jobs: int = 1, progress: Progress | None = None, cache=None
) -> list[dict[str, Any]]:
    """Every seed's rows (one per method), computed as cells (:func:`oraclepriv.experiments.cells.run_cells`)."""
    tasks = [
        (i, child, int(cfg["n_private"]), int(cfg["n_public"]), float(cfg["epsilon"]), tuple(cfg["fixed_public_sizes"]))
        for i, child in enumerate(seed.spawn(int(cfg["seeds"])))
    ]
    return run_cells(_seed_rows, tasks, n_jobs, progress, cache=cache)


def public_size_table(runs: Any) -> Any:
    """One row per method: public points used (min-max over seeds), mean / min / max test accuracy, every seed's."""
    order = list(dict.fromkeys(runs.method))
    table = (
        runs.groupby("method", sort=False)
        .agg(
            m_min=("m", "min"),
            m_max=("m", "max"),
            mean_accuracy=("accuracy", "mean"),
            min_accuracy=("accuracy", "min"),
            max_accuracy=("accuracy", "max"),
            accuracies=("accuracy", lambda a: " ".join(f"{v:.3f}" for v in a)),
        )
        .reindex(order)
        .reset_index()
    )
    table["public_points"] = [
        "-" if lo == hi == 0 else (str(lo) if lo == hi else f"{lo}-{hi}") for lo, hi in zip(table.m_min, table.m_max)
    ]
    return table.drop(columns=["m_min", "m_max"])
