"""The tables of the oracle-cost experiment (:mod:`oraclepriv.experiments.oracle_cost`): per-call and per-fit frames,
the cost-of-noise ratios and the RRSPM / PublicCoverEM crossover with confidence intervals, and the error-vs-seconds
frontier.

Uncertainty: a repetition is the unit (calls within one fit share its data). The cost-of-noise ratio of a
(class, d, n, learner, backend) is the geometric mean over repetitions of each fit's geometric-mean ratio, with a
95% t-interval on the log scale (Student t, repetitions - 1 degrees of freedom). A call that hit the cap gives a
lower bound on its ratio; groups with such calls are flagged and their estimate is then a lower bound. The crossover
d is where the mean log time ratio RRSPM / PublicCoverEM, interpolated linearly in d, changes sign; its 95% interval
is a percentile bootstrap over repetitions (resampled within each d, 2000 draws).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LABELS",
    "call_frame",
    "crossover",
    "fit_frame",
    "learner_table",
    "noise_ratio_table",
    "pareto",
    "t_interval",
]

BOOTSTRAP = 2000
CELL_FIELDS = ("hypothesis_class", "d", "n", "m", "learner", "backend", "rep", "teachers", "subsample_m", "call_cap")
LABELS = {
    "erm": "non-private ERM",
    "rrspm": "RRSPM",
    "perturbation": "Perturbation",
    "subsample": "SubsampleAggregate",
    "rspm": "RSPM",
    "public_cover_em": "PublicCoverEM",
    "ppm": "PPM (label-determined privacy)",
    "regularization": "Regularization",
    "output_perturbation": "output perturbation (yardstick)",
    "margin_erm": "MarginERM (margin learner, Alg. 2)",
    "margin_erm_direct": "MarginERM, direct setting (our variant: one round, no resampling, no projection)",
    "adaptive_margin_erm": "AdaptiveMarginERM (margin learner, Alg. 6)",
}


def fit_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per cell: its coordinates and the fit's record."""
    import pandas as pd

    rows = [{**{k: r["spec"][k] for k in CELL_FIELDS}, **r["fit"]} for r in records]
    frame = pd.DataFrame(rows)
    return frame.rename(columns={"hypothesis_class": "class"}).sort_values(
        ["class", "d", "n", "learner", "backend", "rep"]
    )


def call_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per oracle call: the cell's coordinates and the call's record (twin included)."""
    import pandas as pd

    rows = [{**{k: r["spec"][k] for k in CELL_FIELDS}, **call} for r in records for call in r["calls"]]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.rename(columns={"hypothesis_class": "class"}).sort_values(
        ["class", "d", "n", "learner", "backend", "rep", "index"]
    )


def t_interval(values: Any, log: bool = False) -> tuple[float, float, float]:
    """(mean, low, high): a 95% Student-t interval of the mean (on the log scale when ``log``; then the geometric
    mean and its interval). With one value the interval is (nan, nan)."""
    from scipy import stats

    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if log:
        v = np.log(v[v > 0])
    if v.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(v.mean())
    if v.size < 2:
        low = high = math.nan
    else:
        half = float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
        low, high = mean - half, mean + half
    if log:
        return (
            math.exp(mean),
            math.exp(low) if math.isfinite(low) else low,
            math.exp(high) if math.isfinite(high) else high,
        )
    return mean, low, high


GROUP = ["class", "d", "n", "learner", "backend"]


def noise_ratio_table(calls: pd.DataFrame) -> pd.DataFrame:
    """Cost of noise per (class, d, n, learner, backend, kind) over the calls whose twin was solved."""
    import pandas as pd

    if calls.empty or "twin_kind" not in calls:
        return pd.DataFrame()
    solved = calls[calls.twin_kind == "solved"].copy()
    if solved.empty:
        return pd.DataFrame()
    solved["log_ratio"] = np.log(solved.noise_ratio.astype(float))
    solved["censored"] = solved.ratio_censored.fillna("").astype(str) != ""
    rows = []
    for keys, g in solved.groupby(GROUP + ["kind"], sort=True):
        per_fit = g.groupby("rep").log_ratio.mean()
        gm, lo, hi = t_interval(np.exp(per_fit.to_numpy()), log=True)
        lower = g.ratio_censored.fillna("").str.contains("lower")
        rows.append(
            {
                **dict(zip(GROUP + ["kind"], keys)),
                "fits": int(per_fit.size),
                "calls": int(len(g)),
                "censored_calls": int(g.censored.sum()),
                "ratio_is_lower_bound": bool(lower.any()),
                "ratio": gm,
                "ratio_low": lo,
                "ratio_high": hi,
                "median_call_seconds": float(g.seconds.median()),
                "median_twin_seconds": float(g.twin_seconds.median()),
                "certified_calls": int(g.certified.sum()),
                "certified_twins": int(g.twin_certified.sum()),
            }
        )
    return pd.DataFrame(rows)


def learner_table(fits: pd.DataFrame) -> pd.DataFrame:
    """Per (class, d, n, learner, backend): outcomes, seconds (geometric mean, 95% t-interval on the log scale),
    calls, and excess error (mean over the released fits, 95% t-interval with its lower end clipped at 0)."""
    import pandas as pd

    rows = []
    for keys, g in fits.groupby(GROUP, sort=True):
        ok = g[g.status == "ok"]
        tot = t_interval(g.total_seconds, log=True)  # seconds: geometric mean, interval on the log scale
        exc = t_interval(ok.excess)
        exc = (exc[0], max(0.0, exc[1]) if math.isfinite(exc[1]) else exc[1], exc[2])  # an error is >= 0
        rows.append(
            {
                **dict(zip(GROUP, keys)),
                "m": int(g.m.iloc[0]),
                "reps": int(len(g)),
                "released": int(len(ok)),
                "uncertified": int((g.status == "uncertified").sum()),
                "refused_or_skipped": int(g.status.isin(["refused", "skipped"]).sum()),
                "errors": int((g.status == "error").sum()),
                "total_seconds": tot[0],
                "total_low": tot[1],
                "total_high": tot[2],
                "oracle_seconds": float(g.oracle_seconds.mean()),
                "oracle_share": float(g.oracle_seconds.sum() / g.total_seconds.sum())
                if g.total_seconds.sum() > 0
                else math.nan,
                "non_oracle_seconds": float(g.non_oracle_seconds.mean()),
                "calls": float(g.calls.mean()),
                "calls_by_design": g.calls_by_design.dropna().iloc[0] if g.calls_by_design.notna().any() else math.nan,
                "excess": exc[0],
                "excess_low": exc[1],
                "excess_high": exc[2],
                "excess_method": ",".join(sorted(set(ok.excess_method.dropna()) - {""})),
                "reason": next((r for r in g.reason if r), ""),
            }
        )
    return pd.DataFrame(rows)


def pareto(table: pd.DataFrame) -> pd.DataFrame:
    """Per (class, d): every private learner's (mean seconds, mean excess) at each (n, backend) where it released in
    every repetition, and whether it is on the frontier (no private point both faster and at least as accurate)."""
    import pandas as pd

    pts = table[(table.released == table.reps) & (table.reps > 0) & table.excess.notna()].copy()
    out = []
    for (cls, d), g in pts.groupby(["class", "d"], sort=True):
        g = g.sort_values(["total_seconds", "excess"])
        best = math.inf
        for r in g.itertuples():
            private = r.learner != "erm"
            on = private and r.excess < best
            if on:
                best = r.excess
            out.append(
                {
                    "class": cls,
                    "d": int(d),
                    "learner": r.learner,
                    "backend": r.backend,
                    "n": int(r.n),
                    "seconds": r.total_seconds,
                    "excess": r.excess,
                    "on_frontier": bool(on),
                }
            )
    return pd.DataFrame(out)


def _em_rate(fits: pd.DataFrame) -> float:
    """Seconds per candidate of PublicCoverEM's halfspace covers: the median over the repetitions of the largest
    cover measured in this run (used to extrapolate the refused covers' time; labelled as extrapolated)."""
    from oraclepriv.cover import candidate_count

    em = fits[(fits.learner == "public_cover_em") & (fits["class"] == "halfspace") & (fits.status == "ok")].copy()
    if em.empty:
        return math.nan
    em["candidates"] = [candidate_count(int(m), int(d)) for m, d in zip(em.m, em.d)]
    top = em[em.candidates == em.candidates.max()]
    return float(np.median(top.total_seconds / top.candidates))


def crossover_backend(fits: pd.DataFrame) -> str:
    """The backend RRSPM is compared on: the default ``portfolio`` where the run has RRSPM fits on it, else
    ``scip-bc`` (runs made before the portfolio was planned)."""
    rr = fits[(fits["class"] == "halfspace") & (fits.learner == "rrspm")]
    return "portfolio" if (rr.backend == "portfolio").any() else "scip-bc"


def crossover(fits: pd.DataFrame, backend: str = "scip-bc", rng_seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """RRSPM (on ``backend``) vs PublicCoverEM on halfspaces, per n: seconds per d (geometric means; PublicCoverEM's refused
    covers extrapolated at the run's seconds per candidate), the crossover d with its bootstrap interval, and the
    excess errors. An RRSPM fit that hit the cap released nothing and its seconds are a lower bound: a d where that
    leaves the comparison open is undetermined (:func:`_log_gap`). Returns (per-d rows, per-n crossover rows)."""
    import pandas as pd

    from oraclepriv.cover import candidate_count

    hs = fits[fits["class"] == "halfspace"]
    rate = _em_rate(fits)
    per_d, per_n = [], []
    rng = np.random.default_rng(rng_seed)
    for n in sorted(set(hs[(hs.learner == "rrspm") & (hs.backend == backend)].n)):
        times: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for d in sorted(set(hs.d)):
            rr = hs[(hs.learner == "rrspm") & (hs.backend == backend) & (hs.n == n) & (hs.d == d)]
            em = hs[(hs.learner == "public_cover_em") & (hs.n == n) & (hs.d == d)]
            if rr.empty or em.empty:
                continue
            m = int(em.m.iloc[0])
            extrapolated = bool((em.status == "refused").all())
            em_t = np.full(len(em), candidate_count(m, int(d)) * rate) if extrapolated else em.total_seconds.to_numpy()
            rr_t = rr.total_seconds.to_numpy()
            times[int(d)] = (rr_t, (rr.status != "ok").to_numpy(), em_t)
            per_d.append(
                {
                    "n": int(n),
                    "d": int(d),
                    "m": m,
                    "backend": backend,
                    "rrspm_seconds": float(np.exp(np.mean(np.log(rr_t)))),  # geometric, as the crossover
                    "rrspm_released": int((rr.status == "ok").sum()),
                    "reps": int(len(rr)),
                    "rrspm_excess": float(rr[rr.status == "ok"].excess.mean())
                    if (rr.status == "ok").any()
                    else math.nan,
                    "em_seconds": float(np.exp(np.mean(np.log(em_t)))),
                    "em_extrapolated": extrapolated,
                    "em_candidates": candidate_count(m, int(d)),
                    "em_excess": float(em[em.status == "ok"].excess.mean()) if (em.status == "ok").any() else math.nan,
                    "log_time_ratio": _log_gap(*times[int(d)]),  # nan: undetermined (RRSPM capped)
                }
            )
        if len(times) < 2:
            continue
        ds = sorted(times)
        point = _crossing(ds, {d: _log_gap(*t) for d, t in times.items()})
        crossings: list[float] = []
        for _ in range(BOOTSTRAP):
            diff = {}
            for d in ds:
                rr_t, capped, em_t = times[d]
                i = rng.integers(0, rr_t.size, rr_t.size)
                diff[d] = _log_gap(rr_t[i], capped[i], em_t[rng.integers(0, em_t.size, em_t.size)])
            crossings.append(_crossing(ds, diff))
        draws = np.asarray(crossings, dtype=float)
        found = draws[np.isfinite(draws)]
        per_n.append(
            {
                "n": int(n),
                "backend": backend,
                "crossover_d": point,
                "low": float(np.percentile(found, 2.5)) if found.size else math.nan,
                "high": float(np.percentile(found, 97.5)) if found.size else math.nan,
                "bootstrap_share_with_crossing": float(found.size / draws.size),
                "d_range": f"{ds[0]}-{ds[-1]}",
            }
        )
    return pd.DataFrame(per_d), pd.DataFrame(per_n)


def _log_gap(rr_t: np.ndarray, capped: np.ndarray, em_t: np.ndarray) -> float:
    """mean log RRSPM seconds - mean log PublicCoverEM seconds; with capped RRSPM fits (their seconds are lower
    bounds) the gap is known only when it is already > 0 (PublicCoverEM cheaper), else nan (undetermined)."""
    gap = float(np.mean(np.log(rr_t))) - float(np.mean(np.log(em_t)))
    return gap if gap > 0 or not capped.any() else math.nan


def _crossing(ds: list[int], diff: dict[int, float]) -> float:
    """The d from which on RRSPM is cheaper: after the last grid d where log(RRSPM / EM) is determined and > 0 (EM
    cheaper), the next grid d must be determined (<= 0 then), and the crossing is linearly interpolated between the
    two; nan if EM is never cheaper, if it is cheaper at the last d, or if the d right after is undetermined. Later
    undetermined d's (RRSPM capped, its lower bound still below EM's time) do not count against it. An earlier
    crossing that EM's time undoes again at a larger d is not a crossover: the curves can cross more than once."""
    cheaper_em = [i for i, d in enumerate(ds) if math.isfinite(diff[d]) and diff[d] > 0]
    if not cheaper_em or cheaper_em[-1] + 1 >= len(ds):
        return math.nan
    a, b = ds[cheaper_em[-1]], ds[cheaper_em[-1] + 1]
    if not math.isfinite(diff[b]):
        return math.nan
    return a + (b - a) * diff[a] / (diff[a] - diff[b])
