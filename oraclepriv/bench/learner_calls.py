"""The learners' tier of ``oraclepriv bench mip`` (``--suite learners``): oracle calls recorded from real fits.

The private learners of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private
Learning with Public Data" make oracle calls that plain ERM never poses: RRSPM (Algorithm 4) solves
ERM on the n private points (weight 1) plus m public points Z with random labels and weights
Lap(2m/eps); Perturbation (Algorithm 2) the same with Gaussian weights. This module builds the
benchmark instances from those calls as the learners really make them, and pairs each with its
noise-free twin, the non-private ERM on the same private data, so that the benchmark shows the
*cost of noise* (seconds of the private call / seconds of the twin, same backend, same run).

How a call is captured: the learner is fitted with a recording backend
(:class:`RecordingBackend`, registered for the fit with
:func:`oraclepriv.backends.registered_backend`) that keeps a copy of every problem the protocol
hands it, and the fit's ledger (:class:`oraclepriv.ledger.Ledger`) names each call's step; the
weights are never re-derived by hand. The recorder answers without searching (a constant
hypothesis with no bound, so the fit runs with ``on_uncertified="flag"``), which keeps the tier
deterministic: only calls whose inputs are fixed before any oracle answer are kept (RRSPM's
``private-erm``, Perturbation's ``perturbed-erm-1``); the final Perturb calls depend on earlier
answers and are not part of the tier. What the backend receives is the *reduced* problem (labels
flipped where a weight was negative, weights |w|; ``docs/theory/sign-reduction.md``), so the
instance is stored in that form: the same problem for every hypothesis up to a constant, and
exactly what a backend sees in the fit.

Not in the tier: RSPM (its identification sets exist for thresholds and stumps only) and
SubsampleAggregate (its teachers are noise-free ERMs on blocks of private data, their own twins).

Names: ``{learner}-d{d}-n{n}-m{m}-s{seed}-private`` and ``...-erm`` for the pair;
:func:`cost_of_noise` pairs the benchmark rows by that prefix and :func:`cost_of_noise_markdown`
reports the ratios with the load averages the rows recorded.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem

if TYPE_CHECKING:  # the learners are imported when a run needs them
    from oraclepriv.learners import RRSPM, Perturbation

__all__ = [
    "FULL_GRID",
    "HIGH_D_GRID",
    "LARGE_N_GRID",
    "LEARNER_GRID",
    "QUICK_GRID",
    "RecordingBackend",
    "LearnerCall",
    "population",
    "record_calls",
    "learner_calls",
    "learner_instances",
    "cost_of_noise",
    "cost_of_noise_markdown",
    "write_cost_of_noise",
]

#: (learner, d, n, m, seed) of the tier: RRSPM at d = 5, n = 200 for every m, plus RRSPM at d = 3 and
#: d = 8 and one Perturbation call, to show how far the methods carry; then the high-dimensional tier
#: (:data:`HIGH_D_GRID`) and the large-n calls (:data:`LARGE_N_GRID`)
LEARNER_GRID: tuple[tuple[str, int, int, int, int], ...] = (
    *(("rrspm", 5, 200, m, s) for m in (5, 10, 20, 40) for s in (0, 1, 2)),
    *(("rrspm", d, 100, m, 0) for d in (3, 8) for m in (10, 40)),
    ("perturbation", 5, 200, 20, 0),
)
#: the public points per private sample size of the high-dimensional tier: 16 at n = 200 (the oracle-cost
#: study's setting), then about RRSPM's default (eps n sqrt(d))^(2/5) at eps = 1, d = 8
HIGH_D_PUBLIC = {200: 16, 1000: 32, 5000: 64}
#: RRSPM and Perturbation at d in {6, 8, 10} and n in {200, 1000, 5000}: three seeds at n = 200, one above
HIGH_D_GRID: tuple[tuple[str, int, int, int, int], ...] = tuple(
    (learner, d, n, HIGH_D_PUBLIC[n], s)
    for learner in ("rrspm", "perturbation")
    for n in (200, 1000, 5000)
    for d in (6, 8, 10)
    for s in ((0, 1, 2) if n == 200 and learner == "rrspm" else (0,))
)
#: RRSPM where the private sample is large: d = 5 at n = 20,000 (m = 100) and d = 8 at n = 2000 (m = 32)
LARGE_N_GRID: tuple[tuple[str, int, int, int, int], ...] = (
    *(("rrspm", 5, 20_000, 100, s) for s in (0, 1, 2)),
    *(("rrspm", 8, 2000, 32, s) for s in (0, 1, 2)),
)
#: every call ``bench mip --suite learners`` runs (``--instances`` picks some by name)
FULL_GRID: tuple[tuple[str, int, int, int, int], ...] = LEARNER_GRID + HIGH_D_GRID + LARGE_N_GRID
#: ``--quick``: tiny sizes for smoke tests
QUICK_GRID: tuple[tuple[str, int, int, int, int], ...] = (("rrspm", 3, 40, 5, 0), ("perturbation", 3, 40, 5, 0))
#: label noise of the population (fraction of labels flipped), as in the oracle-cost experiment
LABEL_NOISE = 0.1
#: the steps whose inputs do not depend on an earlier oracle answer (module docstring)
RECORDED_STEPS = {"rrspm": "private-erm", "perturbation": "perturbed-erm-1"}


class RecordingBackend(Backend):
    """A backend that records every problem it receives and answers without searching.

    Answers the constant-1 halfspace with no bound (status ``time_limit``), so a fit using it must
    run with ``on_uncertified="flag"``. The problems (copies: the learners' buffers are zeroed
    after the fit) accumulate in :attr:`problems`, a class attribute that :func:`record_calls`
    resets around each fit.
    """

    name = "learner-recorder"
    classes = frozenset({"halfspace"})
    certificate = "none: records the problem and answers a constant (benchmark construction only)"
    problems: list[ReducedProblem] = []

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        from oraclepriv.hypotheses import Halfspace

        RecordingBackend.problems.append(
            ReducedProblem(problem.hypothesis_class, problem.X.copy(), problem.y.copy(), problem.w.copy())
        )
        return BackendAnswer(Halfspace(tuple([0.0] * problem.d), 1.0), bound=-math.inf, status="time_limit")


@dataclass
class LearnerCall:
    """One recorded call: its step, the reduced problem, and the private data of its noise-free twin."""

    learner: str
    step: str
    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    X_private: np.ndarray
    y_private: np.ndarray


def population(d: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points from N(0, I_d) labelled by 1[u.x >= 0.3], u = (1, ..., 1)/sqrt(d), with
    :data:`LABEL_NOISE` of the labels flipped (the oracle-cost experiment's population)."""
    X = rng.standard_normal((n, d))
    y = (X @ np.full(d, 1.0 / math.sqrt(d)) >= 0.3).astype(np.int8)
    flip = rng.random(n) < LABEL_NOISE
    return X, np.where(flip, 1 - y, y).astype(np.int8)


def _learner(name: str, m: int, seed: int) -> RRSPM | Perturbation:
    """The learner whose calls are recorded: every private call goes to :class:`RecordingBackend`, whose
    uncertified answers the learner flags instead of refusing."""
    from oraclepriv.learners import RRSPM, Perturbation

    backend = RecordingBackend.name
    if name == "rrspm":
        # allow_weak_guarantee: at n = 20,000 and m = 100 the numerical delta of a floating-point backend reaches
        # 1/n and the fit would be refused before its calls; the tier keeps the call, never the release
        return RRSPM(
            epsilon=1.0,
            hypothesis_class="halfspace",
            m=m,
            backend=backend,
            on_uncertified="flag",
            random_state=seed,
            allow_weak_guarantee=True,
        )
    if name == "perturbation":
        return Perturbation(
            epsilon=1.0,
            delta=1e-6,
            hypothesis_class="halfspace",
            m=m,
            J=3,
            eta=0.1,
            backend=backend,
            on_uncertified="flag",
            random_state=seed,
        )
    raise ValueError(f"unknown learner {name!r}; expected one of {sorted(RECORDED_STEPS)}")


def record_calls(learner: Any, X: np.ndarray, y: np.ndarray, Z: np.ndarray) -> list[tuple[str, ReducedProblem]]:
    """Fit ``learner`` (whose backend is :class:`RecordingBackend`) and return (step, problem) of every
    oracle call, in order: the steps from the fit's ledger, the problems from the recorder."""
    from oraclepriv.backends import registered_backend
    from oraclepriv.ledger import Ledger

    RecordingBackend.problems = []
    with registered_backend(RecordingBackend.name, RecordingBackend), warnings.catch_warnings(), Ledger() as ledger:
        warnings.simplefilter("ignore")  # the flagged (unanswered) calls warn by design
        learner.fit(X, y, X_public=Z)
    steps = [str(record["step"]) for record in ledger.records]
    problems, RecordingBackend.problems = RecordingBackend.problems, []
    if len(steps) != len(problems):
        raise RuntimeError(f"the ledger has {len(steps)} calls but the recorder saw {len(problems)}")
    return list(zip(steps, problems))


def learner_calls(learner: str, d: int, n: int, m: int, seed: int) -> LearnerCall:
    """The recorded call of ``learner`` (:data:`RECORDED_STEPS`) on private data (d, n) and m public
    points, everything seeded by (d, n, m, seed) (deterministic)."""
    rng = np.random.default_rng([d, n, seed])  # the private data: shared by every m and learner
    X, y = population(d, n, rng)
    Z, _ = population(d, m, np.random.default_rng([d, n, m, seed, 1]))
    step = RECORDED_STEPS[learner]
    calls = dict(record_calls(_learner(learner, m, seed), X, y, Z))
    problem = calls[step]
    return LearnerCall(learner, step, problem.X, problem.y, problem.w, X, y)


def learner_instances(
    grid: Iterable[tuple[str, int, int, int, int]] = FULL_GRID,
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, X, y, w) of every instance of the tier: each recorded call followed by its twin."""
    out = []
    for learner, d, n, m, seed in grid:
        call = learner_calls(learner, d, n, m, seed)
        prefix = f"{learner}-d{d}-n{n}-m{m}-s{seed}"
        out.append((f"{prefix}-private", call.X, call.y, call.w))
        out.append((f"{prefix}-erm", call.X_private, call.y_private, np.ones(call.y_private.size)))
    return out


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def cost_of_noise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (pair, backend): seconds of the private call / seconds of its twin, from ``bench mip`` rows.

    A private call that is not certified counts at its seconds (the time limit): its ratio is then a
    lower bound (``censored``). The loads are the 1-minute load averages the two rows recorded."""
    index = {(r["instance"], r["backend"]): r for r in rows}
    out = []
    for (name, backend), private in index.items():
        if not name.endswith("-private"):
            continue
        prefix = name[: -len("-private")]
        twin = index.get((f"{prefix}-erm", backend))
        if twin is None:
            continue
        out.append(
            {
                "pair": prefix,
                "backend": backend,
                "private_seconds": float(private["seconds"]),
                "erm_seconds": float(twin["seconds"]),
                "ratio": float(private["seconds"]) / max(float(twin["seconds"]), 1e-3),
                "private_certified": bool(private["certified"]),
                "erm_certified": bool(twin["certified"]),
                "censored": not private["certified"],
                "loads": (private.get("load_1min"), twin.get("load_1min")),
            }
        )
    return out


def cost_of_noise_markdown(rows: list[dict[str, Any]], target: str = "rrspm-d5-n200") -> str:
    """The cost-of-noise table (one line per pair and backend) and, per backend, the certified private
    calls and the median ratio over the pairs whose name starts with ``target`` and over all pairs."""
    pairs = cost_of_noise(rows)
    lines = [
        "| pair | backend | private s | ERM s | ratio | private certified | loads (private, ERM) |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in pairs:
        loads = ", ".join("-" if v is None else f"{v:.2f}" for v in p["loads"])
        lines.append(
            f"| {p['pair']} | {p['backend']} | {p['private_seconds']:.3g} | {p['erm_seconds']:.3g} | "
            f"{'>= ' if p['censored'] else ''}{p['ratio']:.3g} | {'yes' if p['private_certified'] else 'no'} | {loads} |"
        )
    lines += [
        "",
        f"| backend | {target} private calls certified | median ratio ({target}) | median ratio (all pairs) |",
        "|---|---|---|---|",
    ]
    for backend in dict.fromkeys(p["backend"] for p in pairs):
        mine = [p for p in pairs if p["backend"] == backend]
        tier = [p for p in mine if p["pair"].startswith(target + "-")]
        lines.append(
            f"| {backend} | {sum(p['private_certified'] for p in tier)}/{len(tier)} | "
            f"{_median([p['ratio'] for p in tier]):.3g} | {_median([p['ratio'] for p in mine]):.3g} |"
        )
    lines += [
        "",
        "Per cell (learner, d, n; over its m and seeds): private calls certified, the slowest private call, the median "
        "ratio (a lower bound, marked >=, when a censored ratio is among the middle ones or below)",
        "",
        "| cell | backend | private certified | slowest private s | median ratio |",
        "|---|---|---|---|---|",
    ]
    for (cell, backend), members in _by_cell(pairs).items():
        ratio = _median([p["ratio"] for p in members])
        # a censored ratio can only grow: the median is exact only when every censored one lies above the middle
        upper_middle = sorted(p["ratio"] for p in members)[len(members) // 2]
        censored = any(p["censored"] and p["ratio"] <= upper_middle for p in members)
        lines.append(
            f"| {cell} | {backend} | {sum(p['private_certified'] for p in members)}/{len(members)} | "
            f"{max(p['private_seconds'] for p in members):.3g} | {'>= ' if censored else ''}{ratio:.3g} |"
        )
    return "\n".join(lines) + "\n"


def _by_cell(pairs: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The pairs grouped by (cell, backend), the cell being the pair's name up to its ``-m{m}`` part."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in pairs:
        cell = p["pair"].rsplit("-m", 1)[0]
        out.setdefault((cell, p["backend"]), []).append(p)
    return out


def write_cost_of_noise(out: Path | str) -> Path:
    """``cost-of-noise.md`` beside the ``rows.json`` of a ``bench mip --suite learners`` run in ``out``."""
    out = Path(out)
    rows = json.loads((out / "rows.json").read_text(encoding="utf-8"))
    path = out / "cost-of-noise.md"
    repeat = max((int(r.get("repeat", 1)) for r in rows), default=1)
    timing = (
        f"Each call ran {repeat} times in a row (once if it did not end optimal); its seconds are the median of the "
        "runs.\n\n"
        if repeat > 1
        else "Each call ran once.\n\n"
    )
    path.write_text(
        "# Cost of noise: seconds of each private call / seconds of its noise-free twin (same backend, same run)\n\n"
        + timing
        + cost_of_noise_markdown(rows),
        encoding="utf-8",
    )
    return path
