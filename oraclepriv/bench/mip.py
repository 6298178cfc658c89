"""The MIP oracle benchmark (``oraclepriv bench mip``), MIPLIB-style: its suites, its backends and
running it, cell by cell, resumably. The rows are summarised by
:mod:`oraclepriv.bench.mip_summary`, checked for agreement by :mod:`oraclepriv.bench.mip_agreement` and written
out by :mod:`oraclepriv.bench.mip_report`.

Per instance and backend one fresh oracle call (model build included, as a user pays it) with a
time limit; a row records status, certified (optimal over the whole class), meets_bound and
restriction (a bound that covers a restricted class only, e.g. the naive baseline's), objective
(re-scored by the hypothesis), bound, gap, seconds and nodes, and for backends that keep one, the
incumbent trace that :mod:`oraclepriv.bench.primal` reads.

Suites: ``noisy-halfspaces`` (the default: separable halfspace data with 10% of the labels flipped, from
:mod:`oraclepriv.bench.mip_suite`, n in {100, 200, 400} x d in {2, 5, 10}, unit weights), ``library`` (every
instance of the bundled library, all classes), ``real`` (its real-data tier), ``learners`` (the private
learners' recorded oracle calls) and ``small-d`` (the noisy-halfspaces family at n in {50, 100, 200, 400} x
d in {2, 3}, the range of the combinatorial methods and of the E01Loss peer). ``quick`` shrinks them to tiny
sizes for smoke tests. ``issue``, the default suite's former name, is a deprecated alias
(:data:`SUITE_ALIASES`). Instead of a suite, :func:`load_files` takes a user's own CSV files (``--data``), and
:func:`seeded_backends` runs seedable backends under several random seeds (``--seeds``).

The grid: every (instance, backend) cell is one task, run where :mod:`oraclepriv.execution` says
(in this process, in local processes, or on a dask cluster), with one solver thread
(``threads=1`` unless the backend spec sets it), so that cells running side by side on separate
cores measure what a single core does. Each row records where it ran (host, process, dask worker)
and the machine's 1-minute load average when the cell started: a load above the number of cores
means the cell shared its core, and its time is not a clean measurement (docs/cluster.md).

Interrupted runs lose no cells: the command line appends each finished cell's row to ``cells.jsonl`` in the
output folder (:func:`append_cell`) while a ``PARTIAL`` marker says the folder is incomplete; a rerun with the
same options takes the rows found there (:func:`load_cells`, passed to :func:`run_benchmark` as ``done``) and
computes only the missing cells. The summary files (:data:`oraclepriv.bench.mip_report.OUTPUTS`) are
written only once every cell has a row.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.backends import parse_backend_spec
from oraclepriv.execution import Progress, parallel_map, where
from oraclepriv.io import read_resume_file
from oraclepriv.solvers.runtime.deadline import check_time_limit

__all__ = [
    "BenchInstance",
    "SUITES",
    "DEFAULT_SUITE",
    "SUITE_ALIASES",
    "canonical_suite",
    "QUICK_TIME_LIMIT",
    "default_backends",
    "load_suite",
    "load_files",
    "select_instances",
    "check_backends",
    "seeded_backends",
    "MAX_SEEDS",
    "check_repeat",
    "run_call",
    "run_one",
    "run_benchmark",
    "CELLS",
    "cell_key",
    "cell_keys",
    "append_cell",
    "load_cells",
]

log = logging.getLogger(__name__)

SUITES = ("noisy-halfspaces", "library", "real", "learners", "small-d")
#: the suite ``oraclepriv bench mip`` runs without ``--suite``
DEFAULT_SUITE = "noisy-halfspaces"
#: deprecated suite names and the suite each names; an alias warns (FutureWarning) and is removed one
#: release after it was deprecated
SUITE_ALIASES = {"issue": "noisy-halfspaces"}
#: the ``small-d`` suite: the noisy-halfspaces family in the dimensions where the combinatorial methods
#: (``enumerate``, ``direction-bb``, the E01Loss peer) are designed to work
SMALL_D_NS, SMALL_D_DS = (50, 100, 200, 400), (2, 3)
#: exact halfspace backends beyond enumerate's range (the MIP models and ``direction-bb``), and the
#: peers (the naive model, Gurobi, E01Loss), in the order they are tried by default, each where installed
_MIP_BACKENDS = (
    "highs",
    "scip",
    "pyomo",
    "cpsat",
    "scip-bc",
    "direction-bb",
    "portfolio",
    "naive-highs",
    "gurobi",
    "gurobi-bc",
    "e01loss",
)
#: agreement tolerance relative to max(1, sum |w|): ten times the protocol's certification tolerance
AGREEMENT_RTOL = 1e-8
QUICK_TIME_LIMIT = 5.0


@dataclass
class BenchInstance:
    name: str
    hypothesis_class: str
    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    best_known: float | None = None  # library: manifest best objective
    proved: bool = False  # library: manifest says best_known is proved optimal
    proved_by: str | None = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def tolerance(self) -> float:
        return AGREEMENT_RTOL * max(1.0, float(np.abs(self.w).sum()))

    @property
    def data_key(self) -> str:
        """A digest of the class, points, labels and weights: a resumed run takes a finished cell only for the
        same data (two folders of ``--data`` may hold different files of one name)."""
        from oraclepriv.solvers.base import fingerprint

        weights = hashlib.blake2b(np.ascontiguousarray(self.w, dtype=np.float64).tobytes(), digest_size=16)
        return fingerprint(self.hypothesis_class, self.X, self.y, (weights.hexdigest(),))


def default_backends() -> list[str]:
    """The MIP backends installed here (``naive-highs`` included when present)."""
    from oraclepriv.backends import installed_backends

    installed = installed_backends()
    return [b for b in _MIP_BACKENDS if b in installed]


def canonical_suite(suite: str) -> str:
    """The suite a name stands for: the name itself, or for a deprecated alias (:data:`SUITE_ALIASES`) the
    suite it was renamed to, with a FutureWarning naming both."""
    if suite in SUITE_ALIASES:
        new = SUITE_ALIASES[suite]
        warnings.warn(
            f"the benchmark suite {suite!r} is now called {new!r}; the old name will be removed in the next release",
            FutureWarning,
            stacklevel=3,
        )
        return new
    return suite


def load_suite(suite: str, quick: bool = False) -> list[BenchInstance]:
    """The instances of a suite (see the module docstring); a deprecated name warns (:func:`canonical_suite`)."""
    suite = canonical_suite(suite)
    if suite == "noisy-halfspaces":
        from oraclepriv.bench.mip_suite import halfspace_suite

        suite_instances = halfspace_suite(ns=(30, 60), ds=(2, 3)) if quick else halfspace_suite()
        return [BenchInstance(name, "halfspace", X, y, w) for name, X, y, w in suite_instances]
    if suite == "small-d":
        from oraclepriv.bench.mip_suite import halfspace_suite

        ns = (20, 40) if quick else SMALL_D_NS
        return [BenchInstance(name, "halfspace", X, y, w) for name, X, y, w in halfspace_suite(ns, SMALL_D_DS)]
    if suite == "library":
        from oraclepriv.instances import load_instance, load_manifest

        out = []
        for entry in load_manifest():
            if quick and not (entry["n"] <= 100 and entry["d"] <= 3):
                continue
            _, X, y, w = load_instance(entry["name"])
            out.append(
                BenchInstance(
                    entry["name"],
                    entry["class"],
                    X,
                    y,
                    w,
                    entry.get("best_objective"),
                    bool(entry.get("proved_optimal")),
                    entry.get("solved_by"),
                )
            )
        return out
    if suite == "real":  # the library's real-data tier, defined in oraclepriv.instances
        from oraclepriv.instances import real_tier

        names = set(real_tier(quick))
        return [instance for instance in load_suite("library") if instance.name in names]
    if suite == "learners":
        from oraclepriv.bench.learner_calls import FULL_GRID, QUICK_GRID, learner_instances

        grid = QUICK_GRID if quick else FULL_GRID
        return [BenchInstance(name, "halfspace", X, y, w) for name, X, y, w in learner_instances(grid)]
    raise ValueError(f"unknown suite {suite!r}; expected one of {list(SUITES)}")


def load_files(path: Path | str, hypothesis_class: str = "halfspace") -> list[BenchInstance]:
    """A user's own instances: one CSV file, or every ``*.csv`` in a folder (sorted by name), in the format
    ``oraclepriv erm`` reads (feature columns, label column ``y``, optional ``weight`` column of any sign);
    each is an instance of ``hypothesis_class`` named by its file's stem, with no best known objective
    (the agreement check still compares the backends' answers). A ValueError names the path when it holds
    no CSV file, or (from the reader) the file, column and row of bad data."""
    from oraclepriv.io import read_csv_problem

    path = Path(path)
    if not path.exists():
        raise ValueError(f"--data {str(path)!r} does not exist")
    files = sorted(f for f in path.glob("*.csv") if f.is_file()) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"--data {str(path)!r} holds no .csv file")
    if hypothesis_class not in ("threshold", "stump", "halfspace"):
        raise ValueError(
            f"--hypothesis-class must be one of ['threshold', 'stump', 'halfspace']; got {hypothesis_class!r}"
        )
    out = []
    for file in files:
        problem = read_csv_problem(file)
        if hypothesis_class == "threshold" and problem.X.shape[1] != 1:
            raise ValueError(
                f"--hypothesis-class threshold needs data with one feature; {str(file)!r} has {problem.X.shape[1]} "
                f"({', '.join(problem.feature_names)})"
            )
        out.append(BenchInstance(file.stem, hypothesis_class, problem.X, problem.y, problem.weights_or_ones()))
    return out


def select_instances(instances: list[BenchInstance], names: Iterable[str] | None) -> list[BenchInstance]:
    """The instances of a suite named in ``names`` (all when None), in the suite's order; a name the suite
    does not hold, or a repeated one, is a ValueError naming it and the suite's names."""
    if names is None:
        return instances
    names = [str(name).strip() for name in names]
    known = [instance.name for instance in instances]
    unknown = [name for name in names if name not in known]
    if unknown or not names or len(set(names)) < len(names):
        problem = (
            f"unknown instance(s) {unknown}"
            if unknown
            else ("no instance named" if not names else f"a repeated name in {names}")
        )
        raise ValueError(f"--instances: {problem}; the suite has {known}")
    return [instance for instance in instances if instance.name in set(names)]


def check_backends(backends: Iterable[str]) -> list[str]:
    """The backend specs of ``--backends``, checked before any cell runs: at least one, each known, none
    repeated, and each spec's options accepted by its backend; a ValueError names ``--backends`` and the
    offending spec."""
    from oraclepriv.backends import available_backends
    from oraclepriv.oracle import make_oracle

    backends = list(backends)
    if not backends:
        raise ValueError("--backends must name at least one backend")
    unknown = [b for b in backends if parse_backend_spec(b)[0] not in available_backends()]
    if unknown:
        raise ValueError(f"--backends: unknown backend(s) {unknown}; available backends: {available_backends()}")
    if len(set(backends)) != len(backends):
        repeated = sorted({b for b in backends if backends.count(b) > 1})
        raise ValueError(f"--backends must not repeat a backend; got {repeated} more than once")
    for spec in backends:  # bad options fail here, by name, not as error rows after the first instance
        name, options = parse_backend_spec(spec)
        if options:
            try:
                make_oracle("halfspace", backend=name, **options)
            except ValueError as exc:
                raise ValueError(f"--backends {spec!r}: {exc}") from None
    return backends


#: the most random seeds ``--seeds`` runs per backend
MAX_SEEDS = 100


def seeded_backends(backends: Iterable[str], seeds: int) -> list[str]:
    """Every spec of a backend that takes a ``random_seed`` option, once per seed 0 .. ``seeds`` - 1
    ("scip-bc" -> "scip-bc:random_seed=0", "scip-bc:random_seed=1", ...); the others once. With
    ``seeds`` = 1 the specs are unchanged (the solvers' default seeds). Performance variability: the
    same exact search takes other paths, times and incumbents under another seed (Lodi and Tramontani,
    "Performance variability in mixed-integer programming", TutORials 2013); the report compares the
    seeds of one backend (:func:`oraclepriv.bench.mip_summary.variability`). A ValueError when ``seeds``
    is out of range, a spec already sets its seed, or ``seeds`` > 1 and no backend takes one."""
    from oraclepriv.backends import backend_class

    backends = list(backends)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS:
        raise ValueError(f"--seeds must be an integer in [1, {MAX_SEEDS}]; got {seeds!r}")
    if seeds == 1:
        return backends
    out: list[str] = []
    for spec in backends:
        name, options = parse_backend_spec(spec)
        if "random_seed" not in backend_class(name).options:
            out.append(spec)
            continue
        if "random_seed" in options:
            raise ValueError(f"--backends {spec!r} sets its random_seed; --seeds {seeds} would run other seeds")
        base = spec.rstrip(":,")  # "scip-bc:" names scip-bc without options
        joiner = "," if options else ":"
        out += [f"{base}{joiner}random_seed={k}" for k in range(seeds)]
    if out == backends:
        raise ValueError(f"--seeds {seeds}: none of the backends {backends} takes a random seed")
    return out


def _single_threaded(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``threads=1`` added when the backend takes a thread count and the spec sets none."""
    from oraclepriv.backends import backend_class

    if "threads" not in options and "threads" in getattr(backend_class(name), "options", ()):
        return {**options, "threads": 1}
    return options


def run_one(instance: BenchInstance, backend: str, time_limit: float, repeat: int = 1) -> dict[str, Any]:
    """One cell: the oracle call run ``repeat`` times in a row (:func:`run_call`). The row is the last
    run's, with ``seconds`` the median of the runs (``seconds_runs``: each run's) so that calls of a few
    hundredths of a second are not timed by one sample. Only a call that ended optimal is repeated (a
    call stopped by the time limit took the limit, and its bound depends on how far it got); a repeat
    that ends with another status, objective or bound than the first is said in ``error``, and the
    repeats stop there."""
    check_repeat(repeat)
    rows = [run_call(instance, backend, time_limit)]
    while len(rows) < repeat and rows[-1]["status"] == "optimal":
        rows.append(run_call(instance, backend, time_limit))
        first, last = rows[0], rows[-1]
        if any(
            last[k] != first[k] and not (isinstance(last[k], float) and math.isnan(last[k]) and math.isnan(first[k]))
            for k in ("status", "objective", "bound")
        ):
            last["error"] = (
                (f"{last['error']}; " if last["error"] else "")
                + f"run {len(rows)} of {repeat} differs from run 1: status {first['status']} -> {last['status']}, objective {first['objective']!r} -> {last['objective']!r}, bound {first['bound']!r} -> {last['bound']!r}"
            )
            break
    row = rows[-1]
    row["repeat"] = int(repeat)
    row["seconds_runs"] = [r["seconds"] for r in rows]
    row["seconds"] = float(np.median(row["seconds_runs"]))
    return row


def check_repeat(repeat: Any) -> int:
    """``repeat`` as a count of runs per cell (an integer >= 1), or ValueError naming it."""
    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 1:
        raise ValueError(f"repeat must be an integer >= 1; got {repeat!r}")
    return int(repeat)


_kernels_ready_seconds: float | None = None


def kernels_ready() -> float:
    """Make the compiled kernels (``enumerate``'s sweeps, ``sweep``'s weight pass, ``direction-bb``'s crossing pairs)
    ready in this process before its first timed call, as ``oraclepriv warm`` does, so that no cell's seconds carry a
    load from numba's cache (or a compilation) that only the first call of a process pays; the seconds it took the
    first time (0 after, and without numba, whose absence the calls' details then state)."""
    global _kernels_ready_seconds
    if _kernels_ready_seconds is not None:
        return 0.0
    from oraclepriv.solvers.combinatorial.compiled_kernels import compiled_kernels

    start = time.perf_counter()
    try:
        for kernel in compiled_kernels():
            kernel.make_ready()
    except ImportError:
        pass
    _kernels_ready_seconds = time.perf_counter() - start
    return _kernels_ready_seconds


def run_call(instance: BenchInstance, backend: str, time_limit: float) -> dict[str, Any]:
    """One oracle call, with one solver thread (:func:`_single_threaded`), the compiled kernels ready
    (:func:`kernels_ready`); errors become a row with status "error" (the benchmark goes on). The row says where it
    ran, the load when it started and the seconds the kernels took to get ready before it (``kernels_seconds``,
    untimed)."""
    from oraclepriv.oracle import make_oracle

    kernels_seconds = kernels_ready()
    row: dict[str, Any] = {
        "kernels_seconds": kernels_seconds,
        "instance": instance.name,
        "data_key": instance.data_key,
        "class": instance.hypothesis_class,
        "n": instance.n,
        "d": instance.d,
        "backend": backend,
        "time_limit": time_limit,
        **where(),
    }
    from oraclepriv.solvers.base import UnsupportedProblemError

    start = time.perf_counter()
    try:
        name, options = parse_backend_spec(backend)
        options = _single_threaded(name, options)
        result = make_oracle(instance.hypothesis_class, backend=name, time_limit=time_limit, **options).solve(
            instance.X, instance.y, instance.w, caller="bench-mip", step=instance.name
        )
    except UnsupportedProblemError as exc:  # e.g. naive-highs on a stump instance: not applicable
        row.update(
            status="unsupported",
            certified=False,
            meets_bound=False,
            restriction=None,
            objective=math.nan,
            bound=-math.inf,
            gap=math.inf,
            seconds=0.0,
            nodes=None,
            overrun_seconds=None,
            error=str(exc),
        )
        return row
    except (ValueError, ImportError, RuntimeError) as exc:  # unsupported problem, missing solver, solver failure
        row.update(
            status="error",
            certified=False,
            meets_bound=False,
            restriction=None,
            objective=math.nan,
            bound=-math.inf,
            gap=math.inf,
            seconds=time.perf_counter() - start,
            nodes=None,
            overrun_seconds=None,
            error=f"{type(exc).__name__}: {exc}",
        )
        return row
    row.update(
        status=result.status,
        certified=bool(result.certified),
        meets_bound=bool(result.meets_bound),
        restriction=result.restriction,
        objective=float(result.objective),
        bound=float(result.bound),
        gap=float(result.gap),
        seconds=float(result.seconds),
        nodes=result.nodes,
        overrun_seconds=result.details.get("overrun_seconds"),
        # a backend that answers with status "error" says why in its details (e.g. a licence's size limit)
        error=str(result.details.get("error", "")),
        # the answer's hypothesis (rows.json only): the witness of its objective, for the library's manifest
        hypothesis=result.hypothesis.to_dict(),
        # improving incumbents with their time (rows.json only; None: the backend keeps no trace)
        incumbents=result.details.get("incumbents"),
    )
    return row


def run_benchmark(
    instances: list[BenchInstance],
    backends: list[str],
    time_limit: float,
    *,
    n_jobs: int = 1,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    progress: Progress | None = None,
    done: Iterable[dict[str, Any]] = (),
    repeat: int = 1,
) -> list[dict[str, Any]]:
    """Every backend on every instance, each (instance, backend) cell one task on ``n_jobs`` workers
    (module docstring), its call run ``repeat`` times (:func:`run_one`); rows in instance-major order.
    ``on_row`` sees each row as its cell finishes (in that order when the cells run side by side),
    ``progress(cells done, cells)`` after it.

    ``done``: rows of cells finished before (an interrupted run's :func:`load_cells`); a cell with the same
    :func:`cell_key` is not run again and its row is taken as it is (``on_row`` does not see it)."""
    from oraclepriv.execution import check_n_jobs

    backends = check_backends(backends)
    check_time_limit(time_limit, "time_limit")
    n_jobs = check_n_jobs(n_jobs)
    repeat = check_repeat(repeat)
    finished = {cell_key(row): row for row in done}
    cells = [(instance, backend, float(time_limit), repeat) for instance in instances for backend in backends]
    keys = cell_keys(instances, backends, time_limit, repeat)
    todo = [cell for cell, key in zip(cells, keys, strict=True) if key not in finished]
    skipped = len(cells) - len(todo)
    report = progress
    if progress is not None and skipped:
        progress(skipped, len(cells))

        def report(k: int, _total: int) -> None:
            progress(skipped + k, len(cells))

    computed = iter(
        parallel_map(run_one, todo, n_jobs, report, on_result=None if on_row is None else (lambda _, row: on_row(row)))
    )
    rows = [finished[key] if key in finished else next(computed) for key in keys]
    for row in rows:
        log.debug(
            "%s / %s ran on %s pid %s%s (load %s): %s in %.3f s",
            row["instance"],
            row["backend"],
            row["host"],
            row["pid"],
            f" worker {row['worker']}" if row["worker"] else "",
            row["load_1min"],
            row["status"],
            row["seconds"],
        )
    return rows


# ---------------------------------------------------------------------------------------------
# the cells of an unfinished run

#: the rows of the cells finished so far, one JSON line each (kept while the run is incomplete)
CELLS = "cells.jsonl"


def cell_key(row: dict[str, Any]) -> tuple[str, str, str, float, int]:
    """What identifies a cell across runs: (instance, its data's digest, backend, time limit, runs per cell).
    A row without a data digest is computed again rather than trusted."""
    return (
        str(row["instance"]),
        str(row.get("data_key", "")),
        str(row["backend"]),
        float(row["time_limit"]),
        int(row.get("repeat", 1)),
    )


def cell_keys(
    instances: Iterable[BenchInstance], backends: Iterable[str], time_limit: float, repeat: int = 1
) -> list[tuple[str, str, str, float, int]]:
    """The :func:`cell_key` of every (instance, backend) cell of a run, instance-major."""
    backends = list(backends)
    return [
        (instance.name, instance.data_key, backend, float(time_limit), int(repeat))
        for instance in instances
        for backend in backends
    ]


def append_cell(path: Path | str, row: dict[str, Any]) -> None:
    """One finished cell's row as a JSON line (infinities and NaN as JSON5-style literals, read back
    exactly by :func:`load_cells`), flushed at once so that an interrupt loses no finished cell."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, default=_plain) + "\n")
        fh.flush()


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {value!r}")


def load_cells(path: Path | str) -> list[dict[str, Any]]:
    """The rows in a :data:`CELLS` file (none if there is no file); a truncated last line (a run killed
    mid-write) is ignored, and of two rows of one cell the later wins. A file that cannot be read is a
    ValueError naming it (:func:`oraclepriv.io.read_resume_file`)."""
    text = read_resume_file(path)
    if text is None:
        return []
    rows: dict[tuple[str, str, str, float, int], dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
            rows[cell_key(row)] = row
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
    return list(rows.values())
