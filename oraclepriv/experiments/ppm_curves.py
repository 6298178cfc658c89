"""Learning curves of the PPM halfspace learner (Bassily, Moran, Nandi, "Learning from Mixtures of Private
and Public Populations", Thms 4.9 / 4.10; docs/theory/ppm.md, case 14): excess population error vs total
sample size n, for d ∈ {1, 2}, ε ∈ {0.1, 1, ∞} and label noise η ∈ {0 (realizable), 0.1 (agnostic)},
with the non-private exact ERM halfspace (oracle protocol) as a baseline.

Data (label-determined privacy, public <=> y = 0, p assigned after the noise: docs/theory/ppm.md, M4):
    d = 1: x ~ U[0, 1],    target 1(x >= 0.3)
    d = 2: x ~ U[-1, 1]^2, target 1(x_1 + 0.5 x_2 >= 0.2)
With random classification noise η, err(h) = η + (1 - 2η)·P(h ≠ target) and the best halfspace has
error η, so the excess error is (1 - 2η)·P(h ≠ target): exact for d = 1 (interval arithmetic),
Monte Carlo on a fixed test set for d = 2. Errors are on the mixture D̃ (docs/theory/ppm.md, M1).

The class G and its exact score histogram depend on the data only, not on ε: each dataset is scored
once and the mechanism is then run ``draws`` times per ε (each draw is an independent run of
A_LearnHalf on that dataset).

Theory (shapes, not constants; the paper's Thms 4.9 / 4.10): realizable excess ~ d² log n / (ε n) → log-log slope -1;
agnostic excess ≲ sqrt(d² log n / n) + d² log n / (ε n) → slope -1/2 in the worst case. Random
classification noise is a benign (Massart) case where faster rates, close to -1, are possible, so the
agnostic -1/2 is an upper-bound shape, not a prediction of the measured slope.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.execution import Progress
from oraclepriv.experiments.stats import fit_slope

__all__ = ["run_ppm_curves", "DEFAULT_SIZES", "excess_error"]

DEFAULT_SIZES: dict[int, tuple[int, ...]] = {1: (100, 300, 1000, 3000, 10000), 2: (25, 50, 100, 200, 300)}
DEFAULT_REPETITIONS: dict[int, int] = {1: 20, 2: 10}
THEORY_SLOPE = {0.0: -1.0, 0.1: -0.5}
_TARGET_W = {1: (np.array([1.0]), 0.3), 2: (np.array([1.0, 0.5]), 0.2)}


def _sample(d: int, n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    w, b = _TARGET_W[d]
    X = rng.uniform(0, 1, size=(n, 1)) if d == 1 else rng.uniform(-1, 1, size=(n, d))
    y = (X @ w >= b).astype(np.int8)
    if noise:
        y[rng.random(n) < noise] ^= 1
    return X, y


def _zero_interval_d1(h) -> tuple[float, float]:
    """The 0-region of a d = 1 hypothesis as an interval [lo, hi] (up to measure zero)."""
    if hasattr(h, "form"):  # PPM PolytopeComplement
        if h.form == "ones" or not h.aff.is_full:  # empty, or a single point
            return 0.0, 0.0
        lo, hi = -math.inf, math.inf
        for a, t in zip(h.normals[:, 0], h.lower):
            if a > 0:
                lo = max(lo, t / a)
            else:
                hi = min(hi, t / a)
        return lo, hi
    w, b = float(h.w[0]), float(h.b)  # Halfspace: 1 iff w x + b >= 0
    if w == 0:
        return (0.0, 0.0) if b >= 0 else (-math.inf, math.inf)
    t = -b / w
    return (-math.inf, t) if w > 0 else (t, math.inf)


def _disagreement_d1(h) -> float:
    """Exact P_{x~U[0,1]}(h(x) ≠ 1(x >= 0.3)): |Z Δ [0, 0.3)| for the 0-region interval Z."""
    lo, hi = _zero_interval_d1(h)
    lo, hi = max(lo, 0.0), min(hi, 1.0)
    zero = max(0.0, hi - lo)
    overlap = max(0.0, min(hi, 0.3) - lo) if zero else 0.0
    return zero + 0.3 - 2 * overlap  # |Z Δ [0, 0.3)|


def excess_error(h, d: int, noise: float, X_test: np.ndarray | None) -> float:
    """(1 - 2η)·P(h ≠ target) under D̃: the excess over the best halfspace (error η)."""
    if d == 1:
        dis = _disagreement_d1(h)
    else:
        w, b = _TARGET_W[d]
        dis = float(np.mean(h.predict(X_test) != (X_test @ w >= b)))
    return (1 - 2 * noise) * dis


def run_ppm_curves(
    output_dir: str | Path,
    sizes: dict[int, Iterable[int]] | Iterable[int] | None = None,
    *,
    dims: Iterable[int] = (1, 2),
    epsilons: Iterable[float] = (0.1, 1.0, math.inf),
    noises: Iterable[float] = (0.0, 0.1),
    repetitions: dict[int, int] | int | None = None,
    draws: int = 5,
    n_test: int = 100_000,
    erm_baseline: bool = True,
    random_state: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the learning-curve sweep; write ``ppm_curves_runs.csv``, ``ppm_curves.csv`` (means),
    ``ppm_curves_slopes.csv`` and ``ppm_curves.png`` into ``output_dir``. Returns the frames and paths.

    ``sizes``: per-d dict, or one list used for every d (default :data:`DEFAULT_SIZES`).
    ``progress(samples done, samples)``: one step per (d, noise, n, repetition) sample. The sweep runs
    in this process: one random stream feeds every sample and draw in turn.
    """
    import pandas as pd

    from oraclepriv.oracle import make_oracle
    from oraclepriv.ppm import ClassG, a_constr_half, score_class
    from oraclepriv.ppm.exp_mech import check_epsilon, sample_from_histogram

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    dims = tuple(int(d) for d in dims)
    for d in dims:
        if d not in _TARGET_W:
            raise ValueError(f"dims must be a subset of {sorted(_TARGET_W)}; got {d!r}")
    epsilons = tuple(check_epsilon(e) for e in epsilons)
    noises = tuple(float(v) for v in noises)
    for v in noises:
        if not 0 <= v < 0.5:
            raise ValueError(f"noise levels must be in [0, 0.5); got {v!r}")
    if sizes is None:
        sizes = {d: DEFAULT_SIZES[d] for d in dims}
    elif not isinstance(sizes, dict):
        sizes = {d: tuple(sizes) for d in dims}
    sizes = {d: tuple(int(n) for n in sizes[d]) for d in dims}
    for d in dims:
        if any(n < 2 for n in sizes[d]):
            raise ValueError(f"sizes must be >= 2; got {sizes[d]} for d={d}")
    if repetitions is None:
        repetitions = {d: DEFAULT_REPETITIONS[d] for d in dims}
    elif not isinstance(repetitions, dict):
        repetitions = {d: int(repetitions) for d in dims}
    if int(draws) < 1:
        raise ValueError(f"draws must be >= 1; got {draws!r}")

    rng = np.random.default_rng(random_state)
    X_test = {d: rng.uniform(-1, 1, size=(n_test, d)) for d in dims if d != 1}
    rows = []
    start = time.perf_counter()
    total = sum(len(noises) * len(sizes[d]) * int(repetitions[d]) for d in dims)
    done = 0
    for d in dims:
        for noise in noises:
            for n in sizes[d]:
                for rep in range(int(repetitions[d])):
                    X, y = _sample(d, n, noise, rng)
                    public = y == 0  # label-determined privacy, assigned after the noise
                    G = ClassG(a_constr_half(X[public]))
                    t0 = time.perf_counter()
                    scored = score_class(G, X, y)
                    hist = scored.histogram()
                    score_seconds = time.perf_counter() - t0
                    base = {
                        "d": d,
                        "noise": noise,
                        "n": n,
                        "rep": rep,
                        "n_pub": int(public.sum()),
                        "class_size": int(G.size),
                        "score_seconds": score_seconds,
                    }
                    for eps in epsilons:
                        for draw in range(int(draws)):
                            m_star, r = sample_from_histogram(hist, eps, rng)
                            h = G.hypothesis(scored.locate(m_star, r))
                            rows.append(
                                {
                                    **base,
                                    "method": "ppm",
                                    "epsilon": eps,
                                    "draw": draw,
                                    "excess": excess_error(h, d, noise, X_test.get(d)),
                                }
                            )
                    if erm_baseline:
                        res = make_oracle("halfspace").solve(X, y, caller="ppm_curves", step="erm-baseline")
                        rows.append(
                            {
                                **base,
                                "method": "erm",
                                "epsilon": math.inf,
                                "draw": 0,
                                "excess": excess_error(res.hypothesis, d, noise, X_test.get(d)),
                            }
                        )
                    done += 1
                    if progress is not None:
                        progress(done, total)
    runs = pd.DataFrame(rows)
    means = runs.groupby(["method", "d", "noise", "epsilon", "n"], as_index=False).agg(
        mean_excess=("excess", "mean"),
        sem=("excess", "sem"),
        runs=("excess", "size"),
        mean_n_pub=("n_pub", "mean"),
        mean_class_size=("class_size", "mean"),
        mean_score_seconds=("score_seconds", "mean"),
    )
    means["n_times_excess"] = means["n"] * means["mean_excess"]
    slopes = []
    for (method, d, noise, eps), g in means.groupby(["method", "d", "noise", "epsilon"]):
        slopes.append(
            {
                "method": method,
                "d": d,
                "noise": noise,
                "epsilon": eps,
                "measured_slope": fit_slope(g["n"].to_numpy(), g["mean_excess"].to_numpy()),
                "theory_slope": THEORY_SLOPE.get(noise, -0.5),
                "sizes": " ".join(map(str, g["n"])),
            }
        )
    slopes = pd.DataFrame(slopes)
    paths = {
        "runs_csv": out / "ppm_curves_runs.csv",
        "means_csv": out / "ppm_curves.csv",
        "slopes_csv": out / "ppm_curves_slopes.csv",
        "png": out / "ppm_curves.png",
    }
    runs.to_csv(paths["runs_csv"], index=False)
    means.to_csv(paths["means_csv"], index=False)
    slopes.to_csv(paths["slopes_csv"], index=False)
    _plot(means, slopes, dims, noises, paths["png"])
    return {
        "runs": runs,
        "means": means,
        "slopes": slopes,
        "paths": {k: str(v) for k, v in paths.items()},
        "seconds": time.perf_counter() - start,
    }


def _plot(means, slopes, dims, noises, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(len(dims), len(noises), figsize=(5.2 * len(noises), 4.2 * len(dims)), squeeze=False)
    for i, d in enumerate(dims):
        for j, noise in enumerate(noises):
            ax = axes[i][j]
            sub = means[(means.d == d) & (means.noise == noise)]
            for (method, eps), g in sub.groupby(["method", "epsilon"]):
                g = g[g.mean_excess > 0].sort_values("n")
                if g.empty:
                    continue
                sl = slopes[
                    (slopes.method == method) & (slopes.d == d) & (slopes.noise == noise) & (slopes.epsilon == eps)
                ]
                slope = float(sl.measured_slope.iloc[0]) if len(sl) else float("nan")
                label = (
                    "ERM halfspace (non-private)" if method == "erm" else f"PPM ε={eps:g}"
                ) + f"  slope {slope:.2f}"
                ax.errorbar(
                    g.n,
                    g.mean_excess,
                    yerr=g["sem"].fillna(0),
                    marker="o" if method == "ppm" else "s",
                    linestyle="-" if method == "ppm" else "--",
                    capsize=2,
                    label=label,
                )
            if not sub.empty:
                n0 = float(sub.n.min())
                ref = sub[sub.mean_excess > 0].mean_excess.max() if (sub.mean_excess > 0).any() else 1.0
                ns = np.array([n0, float(sub.n.max())])
                theory = THEORY_SLOPE.get(noise, -0.5)
                ax.plot(ns, ref * (ns / n0) ** theory, color="grey", linestyle=":", label=f"theory slope {theory:g}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ticks = sorted(set(int(v) for v in sub.n)) if not sub.empty else []
            ax.set_xticks(ticks, [str(t) for t in ticks])
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_xlabel("total sample size n")
            ax.set_ylabel("excess error on the mixture")
            ax.set_title(f"d={d}, {'realizable' if noise == 0 else f'label noise η={noise:g}'}")
            ax.legend(fontsize=7)
    fig.suptitle("PPM learning of halfspaces (Bassily, Moran, Nandi, Alg 2): learning curves")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
