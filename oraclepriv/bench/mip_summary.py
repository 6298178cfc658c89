"""The arithmetic of the MIP oracle benchmark's summary (``oraclepriv bench mip``): from the rows of a run
(:func:`oraclepriv.bench.mip.run_benchmark`) to one MIPLIB-style line per backend, the seeds' variability and the
performance profile's ratios. Formatting them is :mod:`oraclepriv.bench.mip_report`'s job.

Per backend, the summary follows MIPLIB conventions (Gleixner et al., "MIPLIB 2017", Math. Prog. Comp.
2021; Mittelmann's benchmarks):

* ``solved`` = number of answers that meet their proved bound (a run that stops at "optimal"
  without that is not solved); for a backend whose bound covers a restricted class only
  (``restriction``, e.g. the naive baseline), "solved" means optimal over that class, and is
  withdrawn when the agreement check (:mod:`oraclepriv.bench.mip_agreement`) shows the class missed
  the true optimum;
* shifted geometric mean of the time, ``SGM = exp(mean(ln(max(1, t_i + s)))) - s`` with shift
  s = 10 s, every unsolved run (time limit, uncertified, error) counted at the time limit;
* the ratios of a Dolan-More performance profile (Dolan & More, "Benchmarking optimization software with
  performance profiles", Math. Prog. 91, 2002): rho_s(tau) = fraction of instances on which
  backend s is certified within tau times the fastest certified backend.

The primal side (:mod:`oraclepriv.bench.primal` sets the row fields): for backends that return an
incumbent trace, the time to their final incumbent and Berthold's primal integral; for every backend,
on how many instances it found the best objective known.

Performance variability: with ``--seeds`` K > 1 a backend that takes a random seed runs once per seed
(:func:`oraclepriv.bench.mip.seeded_backends`), each seed a backend of its own in the tables;
:func:`variability` compares the seeds of one backend (solved counts and SGM per seed, instances solved
by some seeds only, the slowest seed's time over the fastest's, final objectives that differ).

This module reads rows and runs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "SGM_SHIFT",
    "shifted_geometric_mean",
    "solved",
    "scored_time",
    "summarize",
    "unseeded",
    "variability",
    "performance_profile",
]


#: the shift of the shifted geometric mean, in seconds (MIPLIB / Mittelmann)
SGM_SHIFT = 10.0


def shifted_geometric_mean(times: Iterable[float], shift: float = SGM_SHIFT) -> float:
    """exp(mean(ln(max(1, t + shift)))) - shift (MIPLIB / Mittelmann, shift 10 s)."""
    values = np.asarray(list(times), dtype=np.float64)
    if values.size == 0:
        return math.nan
    return float(math.exp(np.mean(np.log(np.maximum(1.0, values + shift)))) - shift)


def solved(row: dict[str, Any]) -> bool:
    """Meets its proved bound, and (after :func:`agreement_problems`) not a restricted certificate found wrong."""
    return bool(row["meets_bound"] and row.get("certificate_valid", True))


def scored_time(row: dict[str, Any]) -> float:
    """The time a row counts with: its seconds if solved, else the time limit."""
    return min(float(row["seconds"]), row["time_limit"]) if solved(row) else float(row["time_limit"])


def summarize(rows: list[dict[str, Any]], baseline: str | None = "naive-highs") -> list[dict[str, Any]]:
    """One MIPLIB-style summary per backend (and the SGM speed-up over ``baseline`` if it ran).
    Instances a backend does not support (status "unsupported") are left out of its summary.
    Call :func:`agreement_problems` first so that wrong restricted certificates do not count."""
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    out = []
    for b in backends:
        mine = [r for r in rows if r["backend"] == b and r["status"] != "unsupported"]
        out.append(
            {
                "backend": b,
                "instances": len(mine),
                "solved": sum(solved(r) for r in mine),
                "wrong_certificates": sum(r["meets_bound"] and not solved(r) for r in mine),
                "time_limit_hits": sum(r["status"] == "time_limit" for r in mine),
                "uncertified_other": sum(
                    (not r["meets_bound"]) and r["status"] not in ("time_limit", "error") for r in mine
                ),
                "errors": sum(r["status"] == "error" for r in mine),
                "sgm_seconds": shifted_geometric_mean(scored_time(r) for r in mine),
                "max_seconds_certified": max((r["seconds"] for r in mine if r["meets_bound"]), default=math.nan),
                **_primal_summary(mine),
            }
        )
    # speed-up over the baseline, on the instances both ran (SGM ratio, baseline / backend)
    supported = {(r["backend"], r["instance"]): r for r in rows if r["status"] != "unsupported"}
    for s in out:
        common = [name for (b, name) in supported if b == s["backend"] and (baseline, name) in supported]
        s["speedup_vs_baseline"] = None
        s["baseline"] = baseline
        if baseline in backends and common:
            base_sgm = shifted_geometric_mean(scored_time(supported[(baseline, n)]) for n in common)
            mine_sgm = shifted_geometric_mean(scored_time(supported[(s["backend"], n)]) for n in common)
            s["speedup_vs_baseline"] = base_sgm / mine_sgm if mine_sgm > 0 else None
    return out


def _primal_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One backend's primal side (:func:`oraclepriv.bench.primal.add_primal_measures` sets the row fields;
    rows without them count as untraced)."""
    traced = [r for r in rows if r.get("primal_integral") is not None]
    found = [
        r
        for r in rows
        if r.get("best_known") is not None
        and math.isfinite(r["objective"])
        and r["objective"] <= r["best_known"] + 1e-9 * max(1.0, abs(r["best_known"]))
    ]
    return {
        "best_known_found": len(found),
        "traced": len(traced),
        "mean_primal_integral": float(np.mean([r["primal_integral"] for r in traced])) if traced else None,
        "sgm_best_found_seconds": (shifted_geometric_mean(r["best_found_seconds"] for r in traced) if traced else None),
    }


def unseeded(spec: str) -> tuple[str, int | None]:
    """A backend spec without its ``random_seed`` option, and that seed (None when it sets none):
    "scip-bc:local_search=0,random_seed=2" -> ("scip-bc:local_search=0", 2)."""
    from oraclepriv.backends import parse_backend_spec

    name, options = parse_backend_spec(spec)
    seed = options.pop("random_seed", None)
    if seed is None:
        return spec, None
    rest = [item for item in spec.partition(":")[2].split(",") if item and not item.startswith("random_seed=")]
    return (f"{name}:{','.join(rest)}" if rest else name), int(seed)


def variability(rows: list[dict[str, Any]], summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For every backend run under two or more random seeds (rows labelled by their seeded specs), how
    much the seed changed (module docstring): per seed its solved count and SGM time (from ``summary``),
    on the instances every seed ran: how many some seeds solve and others do not, the median and the
    largest ratio slowest / fastest seed's seconds where all solve, and how many end with different
    re-scored objectives. Empty when no backend ran under several seeds."""
    by_spec = {s["backend"]: s for s in summary}
    groups: dict[str, list[tuple[int, str]]] = {}
    for spec in by_spec:
        base, seed = unseeded(spec)
        if seed is not None:
            groups.setdefault(base, []).append((seed, spec))
    out = []
    for base, members in groups.items():
        if len(members) < 2:
            continue
        members.sort()
        specs = [spec for _, spec in members]
        cells: dict[str, dict[str, dict[str, Any]]] = {}
        for r in rows:
            if r["backend"] in specs and r["status"] != "unsupported":
                cells.setdefault(r["instance"], {})[r["backend"]] = r
        common = {name: runs for name, runs in cells.items() if len(runs) == len(specs)}
        unstable = 0
        time_ratios: list[float] = []
        objectives_differ = 0
        for runs in common.values():
            done = [solved(r) for r in runs.values()]
            if any(done) and not all(done):
                unstable += 1
            if all(done):
                seconds = [max(float(r["seconds"]), 1e-3) for r in runs.values()]
                time_ratios.append(max(seconds) / min(seconds))
            values = [float(r["objective"]) for r in runs.values()]
            finite = [v for v in values if math.isfinite(v)]  # a seed that errored has no objective
            tol = 1e-9 * max(1.0, max((abs(v) for v in finite), default=1.0))
            objectives_differ += len(finite) < len(values) or max(finite) - min(finite) > tol
        out.append(
            {
                "backend": base,
                "seeds": [seed for seed, _ in members],
                "instances": len(common),
                "solved_per_seed": [by_spec[spec]["solved"] for spec in specs],
                "sgm_seconds_per_seed": [by_spec[spec]["sgm_seconds"] for spec in specs],
                "solved_by_some_seeds_only": unstable,
                "solved_by_all_seeds": len(time_ratios),
                "median_time_ratio": float(np.median(time_ratios)) if time_ratios else None,
                "max_time_ratio": max(time_ratios) if time_ratios else None,
                "final_objectives_differ": objectives_differ,
            }
        )
    return out


def performance_profile(rows: list[dict[str, Any]]) -> tuple[list[str], np.ndarray]:
    """(backends, ratios[instance, backend]): time / fastest certified time; inf when uncertified."""
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    names = list(dict.fromkeys(r["instance"] for r in rows))
    t = np.full((len(names), len(backends)), np.inf)
    for r in rows:
        if solved(r):
            t[names.index(r["instance"]), backends.index(r["backend"])] = max(float(r["seconds"]), 1e-3)
    best = t.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        ratios = np.where(np.isfinite(best), t / best, np.inf)
    return backends, ratios
