"""The shape of the margin bounds of Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees",
measured: :class:`~oraclepriv.learners.margin.MarginERM` (Algorithm 2 with Algorithm 4) on a synthetic margin
distribution, against the sample size m and against epsilon, with the slopes the bounds predict beside the measured
ones (docs/theory/margin-learners.md, "Utility").

Data: d = 20, w* = e_1 (||w*|| = Lambda = 1), x = (y u, sqrt(1 - u^2) v) scaled by 0.999, u ~ U[rho, 1], v uniform on
the unit sphere of R^(d-1), y uniform in {-1, +1}: every record has margin y <w*, x> >= 0.999 rho with rho = 0.25 and
norm < r = 1, so min over ||w|| <= 1 of the empirical rho-hinge loss is (up to the factor 0.999) 0 and each measured
loss is an excess.

Measured per run: the test 0-1 error of the release (20 000 fresh records), the left side of Theorem 3.2 minus its
min-hinge term (here 0); and the excess empirical rho-hinge loss of the release on its training records, the left side
of Lemma 3.1 (the projection is the identity here: d = 20 is below the k of "auto" for every m of the grid).

Predicted shapes (constants 1; only the slopes are compared): Theorem 3.2,
    sqrt(log(1/beta)/m) + (Lambda r/rho) (1/sqrt(m) + sqrt(log(m/beta) log(1/beta)) log^(3/4)(1/delta)/sqrt(eps m)),
about -1/2 in m and in epsilon; Lemma 3.1 with k = d,
    (Lambda r/rho) (1/sqrt(m) + sqrt(k) log^(3/2)(1/delta) log(1/beta) / (eps m)),
between -1/2 and -1. Both are upper bounds: a measured slope steeper than the predicted one agrees with them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.execution import Progress
from oraclepriv.experiments.margin_utility_design import (
    CONFIDENCE,
    DELTA,
    FULL,
    MARGIN,
    N_STEPS,
    N_TEST,
    QUICK,
    SWEEP_SIZE,
    lemma_3_1_shape,
    sample_margin_data,
    theorem_3_2_shape,
)
from oraclepriv.experiments.stats import fit_slope

__all__ = ["run_margin_utility", "sample_margin_data", "theorem_3_2_shape", "lemma_3_1_shape"]


def _one_run(m: int, epsilon: float, seed: int, X_test: np.ndarray, y_test: np.ndarray) -> dict[str, Any]:
    from oraclepriv.learners.margin import MarginERM
    from oraclepriv.learners.margin_solver import mean_hinge_loss

    rng = np.random.default_rng(seed)
    X, y = sample_margin_data(m, rng)
    start = time.perf_counter()
    clf = MarginERM(
        epsilon=epsilon,
        delta=DELTA,
        margin=MARGIN,
        radius=1.0,
        confidence=CONFIDENCE,
        fit_intercept=False,
        n_steps=N_STEPS,
        random_state=seed,
    ).fit(X, y)
    seconds = time.perf_counter() - start
    hinge = float(mean_hinge_loss(clf.coef_[0], X, 2.0 * y - 1.0, MARGIN)[0])
    return {
        "m": m,
        "epsilon": epsilon,
        "seed": seed,
        "test_error": float(np.mean(clf.predict(X_test) != y_test)),
        "hinge_excess": hinge,
        "jl_dim": int(clf.release_.privacy["jl_dim"]),
        "seconds": seconds,
    }


def run_margin_utility(
    out_dir: str | Path, quick: bool = False, random_state: int = 0, progress: Progress | None = None
) -> dict[str, Any]:
    """Run the sweep; write ``margin_utility_runs.csv``, ``margin_utility.csv`` (means), ``margin_utility_slopes.csv``,
    ``margin_utility.png`` and ``README.md`` into ``out_dir``; return the frames, the paths and the seconds.

    Parameters
    ----------
    out_dir : str or Path
        The folder (created if missing).
    quick : bool, default False
        The small grid (m up to 10 000, 3 repetitions) instead of the full one (m up to 100 000, 10 repetitions).
    random_state : int, default 0
        The seed of the test set and of every run's seed.
    progress : callable, optional
        ``progress(fits done, fits)``, called after every fit.

    Returns
    -------
    dict
        ``runs``, ``means``, ``slopes`` (pandas DataFrames), ``paths`` and ``seconds``.
    """
    import pandas as pd

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    grid, repetitions = (QUICK, 3) if quick else (FULL, 10)
    start = time.perf_counter()
    rng = np.random.default_rng(random_state)
    X_test, y_test = sample_margin_data(N_TEST, rng)
    cells: list[tuple[str, int, float]] = [("m", int(m), float(e)) for e in grid["epsilons"] for m in grid["sizes"]]
    cells += [("epsilon", SWEEP_SIZE["quick" if quick else "full"], float(e)) for e in grid["sweep"]]
    rows: list[dict[str, Any]] = []
    total = len(cells) * repetitions
    for sweep, m, epsilon in cells:
        for rep in range(repetitions):
            seed = int(rng.integers(2**62))
            rows.append({"sweep": sweep, "rep": rep, **_one_run(m, epsilon, seed, X_test, y_test)})
            if progress is not None:
                progress(len(rows), total)
    runs = pd.DataFrame(rows)
    means = runs.groupby(["sweep", "m", "epsilon"], as_index=False).agg(
        test_error=("test_error", "mean"),
        test_error_sem=("test_error", "sem"),
        hinge_excess=("hinge_excess", "mean"),
        hinge_excess_sem=("hinge_excess", "sem"),
        jl_dim=("jl_dim", "first"),
        seconds=("seconds", "mean"),
        runs=("seed", "size"),
    )
    slopes = _slopes(means)
    paths = {
        "runs_csv": out / "margin_utility_runs.csv",
        "means_csv": out / "margin_utility.csv",
        "slopes_csv": out / "margin_utility_slopes.csv",
        "png": out / "margin_utility.png",
        "readme": out / "README.md",
    }
    runs.to_csv(paths["runs_csv"], index=False)
    means.to_csv(paths["means_csv"], index=False)
    slopes.to_csv(paths["slopes_csv"], index=False)
    from oraclepriv.experiments.margin_utility_report import plot_margin_utility, write_margin_utility_readme

    plot_margin_utility(means, slopes, paths["png"])
    seconds = time.perf_counter() - start
    write_margin_utility_readme(paths["readme"], slopes, quick=quick, random_state=random_state)
    return {
        "runs": runs,
        "means": means,
        "slopes": slopes,
        "paths": {k: str(v) for k, v in paths.items()},
        "seconds": seconds,
    }


def _slopes(means: Any) -> Any:
    """Measured and predicted log-log slopes: each quantity against m (per epsilon) and against epsilon."""
    import pandas as pd

    rows = []
    for (sweep, fixed), g in means.groupby(["sweep", means["epsilon"].where(means["sweep"] == "m", means["m"])]):
        g = g.sort_values("m" if sweep == "m" else "epsilon")
        x = g["m" if sweep == "m" else "epsilon"].to_numpy(dtype=float)
        ms, eps = g["m"].to_numpy(dtype=float), g["epsilon"].to_numpy(dtype=float)
        for quantity, shape, bound in (
            ("test_error", theorem_3_2_shape(ms, eps), "Theorem 3.2"),
            ("hinge_excess", lemma_3_1_shape(ms, eps), "Lemma 3.1 (k = d)"),
        ):
            rows.append(
                {
                    "against": sweep,
                    "fixed": f"epsilon={fixed:g}" if sweep == "m" else f"m={int(fixed)}",
                    "quantity": quantity,
                    "bound": bound,
                    "measured_slope": fit_slope(x, g[quantity].to_numpy()),
                    "predicted_slope": fit_slope(x, shape),
                    "range": f"{x.min():g}-{x.max():g}",
                }
            )
    return pd.DataFrame(rows)
