"""The statistics of the RRSPM experiments (:mod:`oraclepriv.experiments.rrspm_tradeoff`): the derived optima of
the public sample size m (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with
Public Data", Algorithm 4, Lemmas 22-23; docs/theory/block-et-al.md, "Choosing m for RRSPM"), the measured
optimum of an error curve over m with its bootstrap interval, and the tables the report prints: means over
repetitions, the trade-off's optimum against the predictions, its scaling with eps*n, and the sigma-smooth
shift's slopes against 1/sigma."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.experiments.scenarios import scenario
from oraclepriv.experiments.stats import fit_slope

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "predicted_m_star",
    "best_m",
    "m_needed",
    "MEAN_KEYS",
    "run_means",
    "optimum_table",
    "scaling_table",
    "shift_table",
    "shift_slopes",
]


def predicted_m_star(epsilon: float, n: int, d: int, sigma: float = 1.0) -> dict[str, float]:
    """The two derived optima ([D]: docs/theory/block-et-al.md, "Choosing m for RRSPM"; not printed in the
    paper), unspecified constants set to 1 (our choice):
    balancing Lemma 23's m^2/(eps n) against the epsilon-net d/(m sigma) gives (eps n d/sigma)^(1/3);
    against Lemma 22's sqrt(d/(m sigma^2)) gives (eps n sqrt(d)/sigma)^(2/5)."""
    return {
        "m_star_net": (epsilon * n * d / sigma) ** (1.0 / 3.0),
        "m_star_paper": (epsilon * n * math.sqrt(d) / sigma) ** 0.4,
    }


def best_m(
    ms: np.ndarray, errors: np.ndarray, *, n_boot: int = 500, rng: np.random.Generator | None = None
) -> dict[str, float]:
    """Empirical optimum of the mean error curve.

    ``errors``: (repetitions x len(ms)). Returns the grid argmin of the mean, a refined optimum (vertex
    of a parabola fitted to log(mean error) vs log m on the argmin and its two neighbours each side,
    used only when convex and inside the fitted range), and a bootstrap 10-90% interval of the grid argmin
    over repetitions.
    """
    ms = np.asarray(ms, float)
    errors = np.asarray(errors, float)
    mean = errors.mean(axis=0)
    i = int(np.argmin(mean))
    refined = ms[i]
    lo, hi = max(0, i - 2), min(len(ms), i + 3)
    if hi - lo >= 3 and np.all(mean[lo:hi] > 0):
        a, b, _ = np.polyfit(np.log(ms[lo:hi]), np.log(mean[lo:hi]), 2)
        if a > 0 and math.log(ms[lo]) <= -b / (2 * a) <= math.log(ms[hi - 1]):
            refined = math.exp(-b / (2 * a))
    rng = rng if rng is not None else np.random.default_rng(0)
    idx = rng.integers(0, errors.shape[0], size=(n_boot, errors.shape[0]))
    boot = ms[np.argmin(errors[idx].mean(axis=1), axis=1)]
    return {
        "best_m_grid": float(ms[i]),
        "best_m_refined": float(refined),
        "best_m_p10": float(np.percentile(boot, 10)),
        "best_m_p90": float(np.percentile(boot, 90)),
        "best_excess": float(mean[i]),
        "right_end_excess": float(mean[-1]),
        "left_end_excess": float(mean[0]),
    }


def m_needed(ms: np.ndarray, mean_errors: np.ndarray, target: float) -> float:
    """Smallest m at which the mean error curve first reaches ``target`` (log-log interpolation between
    the two grid points around the first crossing); nan if it never does."""
    ms = np.asarray(ms, float)
    e = np.asarray(mean_errors, float)
    below = np.flatnonzero(e <= target)
    if below.size == 0:
        return float("nan")
    j = int(below[0])
    if j == 0:
        return float(ms[0])
    x0, x1, y0, y1 = math.log(ms[j - 1]), math.log(ms[j]), math.log(e[j - 1]), math.log(max(e[j], 1e-300))
    if y1 == y0:
        return float(ms[j])
    return float(math.exp(x0 + (math.log(target) - y0) * (x1 - x0) / (y1 - y0)))


#: the columns a mean over repetitions is taken within (:func:`run_means`)
MEAN_KEYS = ["experiment", "method", "hypothesis", "nu_lo", "nu_hi", "sigma", "n", "epsilon", "m"]


def run_means(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over repetitions of the excess error, test error and projection agreement,
    per setting (:data:`MEAN_KEYS`), with the number of runs."""
    return runs.groupby(MEAN_KEYS, as_index=False).agg(
        mean_excess=("excess", "mean"),
        sem_excess=("excess", "sem"),
        mean_test_error=("test_error", "mean"),
        sem_test_error=("test_error", "sem"),
        mean_agreement=("agreement", "mean"),
        runs=("excess", "size"),
    )


def optimum_table(runs: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The m-n trade-off's measured optimum (:func:`best_m`, bootstrap on ``rng``) beside the derived predictions
    (:func:`predicted_m_star`), the non-private ERM's error and whether the curve is U-shaped, per (class, n,
    eps)."""
    import pandas as pd

    optimum = []
    tr = runs[(runs.experiment == "tradeoff")]
    for (hyp, n), g in tr.groupby(["hypothesis", "n"]):
        erm = g[g.method == "erm"]
        scen = scenario(str(hyp))
        for eps, ge in g[g.method == "rrspm"].groupby("epsilon"):
            table = ge.pivot(index="rep", columns="m", values="excess")
            best = best_m(table.columns.to_numpy(), table.to_numpy(), rng=rng)
            optimum.append(
                {
                    "hypothesis": hyp,
                    "d_vc": scen.vc_dim,
                    "sigma": 1.0,
                    "n": n,
                    "epsilon": eps,
                    **best,
                    **predicted_m_star(float(eps), int(n), scen.vc_dim, 1.0),
                    "u_shaped": bool(best["left_end_excess"] > best["best_excess"] < best["right_end_excess"]),
                    "erm_excess": float(erm.excess.mean()),
                    "erm_test_error": float(erm.test_error.mean()),
                    "repetitions": int(table.shape[0]),
                }
            )
    return pd.DataFrame(optimum)


def scaling_table(optimum: pd.DataFrame) -> pd.DataFrame:
    """How the measured optimum scales with eps*n (sigma = d = const within a class): the least-squares log-log
    slope per class, beside the derived exponents 1/3 (epsilon-net), 2/5 (paper rate) and 1/2 (the threshold
    heuristic of :mod:`oraclepriv.experiments.rrspm_tradeoff`)."""
    import pandas as pd

    scaling = []
    for hyp, g in optimum.groupby("hypothesis"):
        x = (g.epsilon * g.n).to_numpy(float)
        scaling.append(
            {
                "hypothesis": hyp,
                "points": len(g),
                "eps_n_range": f"{x.min():g}-{x.max():g}",
                "exponent_refined": fit_slope(x, g.best_m_refined.to_numpy()) if len(set(x)) > 1 else float("nan"),
                "exponent_grid": fit_slope(x, g.best_m_grid.to_numpy()) if len(set(x)) > 1 else float("nan"),
                "exponent_net": 1.0 / 3.0,
                "exponent_paper": 0.4,
                "exponent_heuristic": 0.5,
            }
        )
    return pd.DataFrame(scaling)


def shift_table(runs: pd.DataFrame, means: pd.DataFrame, cfg: dict[str, Any], rng: np.random.Generator) -> pd.DataFrame:
    """Per sigma of the shift experiment: the excess at the fixed m, the non-private ERM's excess, the optimum
    over m (:func:`best_m`, bootstrap on ``rng``) and the m needed for each target excess (:func:`m_needed`);
    sorted by 1/sigma."""
    import pandas as pd

    sh = means[(means.experiment == "shift") & (means.method == "rrspm")]
    sh_erm = means[(means.experiment == "shift") & (means.method == "erm")]
    sh_runs = runs[(runs.experiment == "shift") & (runs.method == "rrspm")]
    shift_rows = []
    for sigma, g in sh.groupby("sigma"):
        g = g.sort_values("m")
        fixed = g[g.m == cfg["shift_fixed_m"]]
        table = sh_runs[sh_runs.sigma == sigma].pivot(index="rep", columns="m", values="excess")
        best = best_m(table.columns.to_numpy(), table.to_numpy(), rng=rng)
        row = {
            "sigma": sigma,
            "inv_sigma": 1.0 / float(sigma),
            "fixed_m": cfg["shift_fixed_m"],
            "excess_at_fixed_m": float(fixed.mean_excess.iloc[0]) if len(fixed) else float("nan"),
            "sem_at_fixed_m": float(fixed.sem_excess.iloc[0]) if len(fixed) else float("nan"),
            "erm_excess": float(sh_erm[sh_erm.sigma == sigma].mean_excess.iloc[0]),
            "best_m_grid": best["best_m_grid"],
            "best_m_refined": best["best_m_refined"],
            "best_excess": best["best_excess"],
        }
        for a in cfg["shift_targets"]:
            row[f"m_needed_{a:g}"] = m_needed(g.m.to_numpy(), g.mean_excess.to_numpy(), a)
        shift_rows.append(row)
    return pd.DataFrame(shift_rows).sort_values("inv_sigma")


def shift_slopes(shift: pd.DataFrame, cfg: dict[str, Any]) -> pd.DataFrame:
    """The log-log slopes against 1/sigma of the shift table's columns (:func:`shift_table`), each beside what
    Lemma 22 and the derived optima predict."""
    import pandas as pd

    slopes = [
        {
            "quantity": f"excess at m={cfg['shift_fixed_m']} vs 1/sigma",
            "measured_slope": fit_slope(shift.inv_sigma.to_numpy(), shift.excess_at_fixed_m.to_numpy()),
            "theory": "1 (Lemma 22: P_nu <= P_mu / sigma)",
            "points": int(shift.excess_at_fixed_m.notna().sum()),
        }
    ]
    for a in cfg["shift_targets"]:
        col = shift[f"m_needed_{a:g}"].to_numpy()
        ok = np.isfinite(col)
        slopes.append(
            {
                "quantity": f"m needed for excess {a:g} vs 1/sigma",
                "measured_slope": fit_slope(shift.inv_sigma.to_numpy()[ok], col[ok]),
                "theory": "between 1 (epsilon-net, our derivation) and 2 (paper: m ~ 1/sigma^2)",
                "points": int(ok.sum()),
            }
        )
    inv = shift.inv_sigma.to_numpy()
    slopes += [
        {
            "quantity": f"best m (refined) at n={cfg['shift_n']} vs 1/sigma",
            "measured_slope": fit_slope(inv, shift.best_m_refined.to_numpy()),
            "theory": "2/5 (paper rate), 1/3 (epsilon-net), 1/2 (threshold heuristic); all our derivations",
            "points": len(inv),
        },
        {
            "quantity": f"best excess over m at n={cfg['shift_n']} vs 1/sigma",
            "measured_slope": fit_slope(inv, shift.best_excess.to_numpy()),
            "theory": "4/5 (paper rate), 2/3 (epsilon-net), 1/2 (threshold heuristic); all our derivations",
            "points": len(inv),
        },
    ]
    return pd.DataFrame(slopes)
