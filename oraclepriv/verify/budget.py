"""What a verification run will take, estimated before it starts, and the limits it is held to.

:func:`oraclepriv.verify.verifier.verify_learner` computes c_D(L) for every realisable labeling L of the m
noisy points and every dataset (D and each neighbour), then one law per distinct cost vector. After the
learner's fit, before any labeling, cost or law is computed, it estimates the run from the problem's size (its
memory from the counts alone, then its time with a few timed calls) and refuses it (:class:`TooLargeError`,
naming the limit and what to change) when the estimate is over ``max_seconds`` or ``max_memory``; once the
realisable labelings are known it estimates again with their number, before any cost or law is computed.

Counts. n private records in d features; U datasets (D and at most n (1 + 2 c) neighbours for c candidate
points); K realisable labelings, bounded before they are known by :func:`labeling_count_bound` (the count for
points in general position, which no placement of m points exceeds); R oracle calls to find them
(:func:`oraclepriv.noisy_argmin.costs.realisable_labelings`: 2^min(m, 5), then 2 K_{j-1} to add point j);
w workers.

Time (seconds), with unit times measured on this problem just before (the mean of two calls after a first,
untimed one, which carries one-off set-up):

    T = spent + t_p (R + K) + U (t_d + K t_c) / w + [sampled mode] U draws t_draw / w

where ``spent`` is the time already taken (the learner's fit and the probes), t_p one oracle call on the m
points (a realisability question or a release), t_c one c_D(L) call on the n + m rows, t_d the per-dataset
work that does not grow with K (the brute-force cross-check, or a learner's own cost function), and t_draw the
seconds per draw of the argmin at this (m, K), from a calibration run of
:func:`oraclepriv.noisy_argmin.laws.sampled_argmin_law`. Exact mode's polytope integration (m <= 5) is not
in T.

Memory (bytes): the arrays the run holds at its peak,

    M = U (B_nb + 32 K) + K (m + B_out) + (2 + w) n (8 d + 1) + w L(m, K),

a record per neighbour (B_nb = :data:`NEIGHBOUR_BYTES`) and K costs per dataset, kept along with their
distinct vectors' laws (four arrays of K); the labelings and one released outcome per labeling
(B_out = :data:`OUTCOME_BYTES`); the data; and one law at a time per worker, L =
:func:`oraclepriv.noisy_argmin.laws.sampled_law_memory` (its draws are streamed in chunks of a few MiB, so L
does not grow with the draws) or, in exact mode, the vertex enumeration's
8 C(K - 1 + 2m, m) (2 m^2 + 4 m). The interpreter and its imported modules are not in M.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oraclepriv.noisy_argmin.costs import FIRST_LEVEL
from oraclepriv.noisy_argmin.laws import sampled_argmin_law, sampled_law_memory

__all__ = [
    "DEFAULT_MAX_SECONDS",
    "Estimate",
    "TooLargeError",
    "calibrate_draw_seconds",
    "default_max_memory",
    "typical_seconds",
    "format_bytes",
    "labeling_count_bound",
    "parse_bytes",
    "realisability_calls",
]

#: a run estimated to take longer is refused unless ``max_seconds`` is raised
DEFAULT_MAX_SECONDS = 3600.0
#: bytes held per neighbour: its record, its key and its entries in the tables of costs and laws
NEIGHBOUR_BYTES = 1024
#: bytes held per labeling for its released outcome (the hypothesis as JSON, and its dictionary entries)
OUTCOME_BYTES = 512
#: draws of the calibration of t_draw: enough to time several chunks, few enough to take a small fraction of a second
CALIBRATION_WORK = 2**20

#: the levers of a refusal, in the Python API's terms (the command line passes its flags instead)
PYTHON_NAMES: dict[str, str] = {
    "draws": "draws=",
    "points": "fewer noisy points (the public points of RRSPM)",
    "records": "fewer private records or candidate points (others=)",
    "workers": "n_jobs=",
    "max_seconds": "max_seconds=",
    "max_memory": "max_memory=",
}


def labeling_count_bound(hypothesis_class: str, m: int, d: int) -> int:
    """The most labelings a class induces on m points in R^d, attained by points in general position.

    Thresholds: m + 1. Stumps: 2 + 2 d (m - 1) (per feature and sign, the m - 1 cuts between distinct values, and
    the two constant labelings). Halfspaces: 2 sum_{i=0}^{d} C(m - 1, i), Cover's function counting theorem for
    the affine halfspaces of R^d (T. M. Cover, "Geometrical and Statistical Properties of Systems of Linear
    Inequalities with Applications in Pattern Recognition"), exact for points in general position and an upper
    bound for any m points. Each is capped at 2^m.

    Parameters
    ----------
    hypothesis_class : {"threshold", "stump", "halfspace"}
        The class.
    m : int
        The number of points, >= 0.
    d : int
        The dimension, >= 1.

    Returns
    -------
    int
        The bound.

    Raises
    ------
    ValueError
        For an unknown class, m < 0 or d < 1.

    Examples
    --------
    >>> labeling_count_bound("halfspace", m=4, d=2)
    14
    """
    if m < 0 or d < 1:
        raise ValueError(f"need m >= 0 points in d >= 1 dimensions; got m={m!r}, d={d!r}")
    if m == 0:
        return 1
    if hypothesis_class == "threshold":
        count = m + 1
    elif hypothesis_class == "stump":
        count = 2 + 2 * d * (m - 1)
    elif hypothesis_class == "halfspace":
        count = 2 * sum(math.comb(m - 1, i) for i in range(min(d, m - 1) + 1))
    else:
        raise ValueError(f"hypothesis_class must be 'threshold', 'stump' or 'halfspace'; got {hypothesis_class!r}")
    return min(count, 2**m)


def realisability_calls(hypothesis_class: str, m: int, d: int) -> int:
    """The oracle calls :func:`~oraclepriv.noisy_argmin.costs.realisable_labelings` makes at most on m points:
    2^min(m, 5) for the first level, then 2 K_{j-1} to add point j, with K_j at most :func:`labeling_count_bound`.

    Parameters
    ----------
    hypothesis_class : {"threshold", "stump", "halfspace"}
        The class.
    m : int
        The number of points, >= 0.
    d : int
        The dimension, >= 1.

    Returns
    -------
    int
        The bound on the number of calls.
    """
    first = min(m, FIRST_LEVEL)
    return 2**first + sum(2 * labeling_count_bound(hypothesis_class, j - 1, d) for j in range(first + 1, m + 1))


def available_memory() -> int:
    """Bytes of memory available to a new allocation: MemAvailable of /proc/meminfo where there is one (it counts
    the page cache the kernel would give back), else the free physical pages."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30  # no way to ask: a size most machines that run this have


def default_max_memory() -> int:
    """The default ``max_memory``: half of the memory available when the run starts (:func:`available_memory`)."""
    return available_memory() // 2


_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(text: str) -> int:
    """A size as people write it: a number and a unit K, M, G or T (powers of 1024; "B" and "iB" optional), e.g.
    ``512M``, ``4G``, ``1.5GiB``; a bare number is a count of bytes."""
    cleaned = str(text).strip().lower().replace(" ", "")
    for suffix in ("ib", "b"):
        if cleaned.endswith(suffix) and cleaned[: -len(suffix)][-1:] in "kmgt":
            cleaned = cleaned[: -len(suffix)]
            break
    unit = cleaned[-1:] if cleaned[-1:] in "kmgt" else ""
    number = cleaned[: len(cleaned) - len(unit)] if unit else cleaned.rstrip("b")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"expected a size such as 512M, 4G or 1.5GiB; got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a size must be a finite number > 0; got {text!r}")
    return int(value * _UNITS[unit])


def format_bytes(count: float) -> str:
    """``count`` bytes in the largest binary unit that keeps it at least 1 (``1.5 GiB``)."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count:.0f} B"


def _format_seconds(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "forever"
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:,.0f} days"
    if seconds >= 7200:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def typical_seconds(call: Callable[[], object], repeat: int = 2) -> float:
    """Seconds of one run of ``call``: the mean of ``repeat`` runs after a first one, which pays one-off set-up
    (imports, a backend's start) and is not timed; with ``repeat=0``, the first run's time."""
    start = time.perf_counter()
    call()
    if repeat <= 0:
        return time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - start) / repeat


def calibrate_draw_seconds(m: int, n_labelings: int, family: str, scale: float, draws: int) -> float:
    """Seconds per draw of :func:`~oraclepriv.noisy_argmin.laws.sampled_argmin_law` on m points and K labelings,
    measured on stand-in costs and labelings of that shape (the time does not depend on their values), with at
    most ``draws`` draws (so that the calibration takes no more memory than the run)."""
    K = int(n_labelings)
    bits = np.arange(min(m, 62))
    labelings = np.zeros((K, m), dtype=np.int8)
    labelings[:, : len(bits)] = (np.arange(K)[:, None] >> bits[None, :]) & 1
    costs = (np.arange(K) % 3).astype(np.float64)
    count = int(min(draws, 50_000, max(256, CALIBRATION_WORK // (m + K + 1))))
    rng = np.random.default_rng(0)
    return typical_seconds(lambda: sampled_argmin_law(costs, labelings, family, scale, count, rng)) / count


def exact_law_memory(m: int, n_labelings: int) -> int:
    """Peak bytes of one exact Laplace law: the vertex enumeration solves every m-subset of the K - 1 + 2m
    constraints at once, 8 C(K - 1 + 2m, m) (2 m^2 + 4 m)."""
    return 8 * math.comb(max(n_labelings - 1, 0) + 2 * m, m) * (2 * m * m + 4 * m)


@dataclass(frozen=True)
class Estimate:
    """The time and memory a verification run will take (module docstring for the formulas)."""

    mode: str
    n: int
    d: int
    m: int
    n_labelings: int
    labelings_known: bool
    n_datasets: int
    draws: int
    workers: int
    realisability_calls: int
    spent_seconds: float
    point_call_seconds: float
    labeling_seconds: float
    dataset_seconds: float
    draw_seconds: float

    @property
    def oracle_seconds(self) -> float:
        """Seconds of the oracle calls still to make: realisability (unless done) and releases, then the costs."""
        K, U, w = self.n_labelings, self.n_datasets, self.workers
        calls = (0 if self.labelings_known else self.realisability_calls) + K
        return self.point_call_seconds * calls + U * (self.dataset_seconds + K * self.labeling_seconds) / w

    @property
    def law_seconds(self) -> float:
        """Seconds of the sampled laws: one per dataset at most, ``draws`` draws each (0 in exact mode)."""
        if self.mode != "sampled":
            return 0.0
        return self.n_datasets * self.draws * self.draw_seconds / self.workers

    @property
    def seconds(self) -> float:
        """The whole run's estimated seconds, including those already spent."""
        return self.spent_seconds + self.oracle_seconds + self.law_seconds

    @property
    def law_memory(self) -> int:
        if self.mode == "sampled":
            return sampled_law_memory(self.m, self.n_labelings, self.draws)
        return exact_law_memory(self.m, self.n_labelings)

    @property
    def memory_bytes(self) -> int:
        """The run's estimated peak of arrays and records (the interpreter not counted)."""
        K, U, w = self.n_labelings, self.n_datasets, self.workers
        return int(
            U * (NEIGHBOUR_BYTES + 32 * K)
            + K * (self.m + OUTCOME_BYTES)
            + (2 + w) * self.n * (8 * self.d + 1)
            + w * self.law_memory
        )

    def to_dict(self) -> dict[str, float | int | bool]:
        """The estimate as numbers (reported beside a run's measured seconds)."""
        return {
            "estimated_seconds": self.seconds,
            "estimated_memory_bytes": self.memory_bytes,
            "estimated_labelings": self.n_labelings,
            "estimated_datasets": self.n_datasets,
        }

    def describe(self) -> str:
        """The terms of the estimate in words (the refusal quotes it)."""
        labelings = (
            f"{self.n_labelings:,} realisable labelings"
            if self.labelings_known
            else f"up to {self.n_labelings:,} realisable labelings of the {self.m} points (found with up to "
            f"{self.realisability_calls:,} oracle calls at {_format_seconds(self.point_call_seconds)} each)"
        )
        parts = [
            f"{labelings}; {self.n_datasets:,} datasets (D and its neighbours) x {self.n_labelings:,} labelings = "
            f"{self.n_datasets * self.n_labelings:,} cost calls at {_format_seconds(self.labeling_seconds)} each"
        ]
        if self.mode == "sampled":
            parts.append(
                f"up to {self.n_datasets:,} laws x {self.draws:,} draws at {_format_seconds(self.draw_seconds)} per draw"
            )
        return "; ".join(parts) + f"; on {self.workers} worker{'s' if self.workers != 1 else ''}"

    def draws_within(self, max_seconds: float) -> int:
        """The most draws per cost vector that keep the sampled run within ``max_seconds`` (0: none do)."""
        if self.mode != "sampled" or self.draw_seconds <= 0:
            return self.draws
        room = max_seconds - self.spent_seconds - self.oracle_seconds
        per_draw = self.n_datasets * self.draw_seconds / self.workers
        return max(0, int(room / per_draw))


class TooLargeError(ValueError):
    """A verification refused before it started: its estimate (:class:`Estimate`) is over a limit.

    ``str()`` names the levers by the Python API's parameters; :meth:`render` takes other names (the command
    line's flags).

    Parameters
    ----------
    estimate : Estimate
        The run's estimated time and memory.
    max_seconds : float
        The time limit it is compared with.
    max_memory : int
        The memory limit it is compared with, in bytes.
    memory_default : bool
        Whether the memory limit is the default (half the memory available).
    """

    def __init__(self, estimate: Estimate, max_seconds: float, max_memory: int, memory_default: bool):
        self.estimate = estimate
        self.max_seconds = max_seconds
        self.max_memory = max_memory
        self.memory_default = memory_default
        super().__init__(self.render(PYTHON_NAMES))

    @property
    def over_time(self) -> bool:
        return self.estimate.seconds > self.max_seconds

    @property
    def over_memory(self) -> bool:
        return self.estimate.memory_bytes > self.max_memory

    def render(self, names: Mapping[str, str]) -> str:
        """The refusal in one paragraph, its levers named by ``names`` (keys as in :data:`PYTHON_NAMES`)."""
        e = self.estimate
        limits = []
        if self.over_memory:
            source = ", half the memory this machine has available" if self.memory_default else ""
            limits.append(
                f"its memory, about {format_bytes(e.memory_bytes)}, is over the limit of "
                f"{format_bytes(self.max_memory)} ({names['max_memory']}{source})"
            )
        if self.over_time:
            limits.append(
                f"its time, about {_format_seconds(e.seconds)}, is over the limit of "
                f"{_format_seconds(self.max_seconds)} ({names['max_seconds']})"
            )
        levers = [f"{names['points']}: m = {e.m} now", f"{names['records']}: n = {e.n} now"]
        if e.mode == "sampled" and self.over_time:
            fit = e.draws_within(self.max_seconds)
            levers.insert(
                0,
                f"fewer draws ({names['draws']}{e.draws:,} now"
                + (f", about {fit:,} fit the time limit)" if 0 < fit < e.draws else ")"),
            )
        if self.over_time:
            levers.append(f"more workers ({names['workers']}{e.workers} now)")
        if self.over_memory and e.workers > 1:
            levers.append(f"fewer workers ({names['workers']}{e.workers} now: each holds a law)")
        exceeded = [k for k, over in (("max_seconds", self.over_time), ("max_memory", self.over_memory)) if over]
        levers.append(f"or a larger {' and '.join(names[k] for k in exceeded)}")
        return (
            f"this verification was not started: {' and '.join(limits)}. Estimated from {e.describe()}. "
            f"To run it: {'; '.join(levers)}"
        )
