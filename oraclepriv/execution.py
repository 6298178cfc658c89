"""Where the parallel work of the audits, the verifier, the experiments and the benchmarks runs.

Every parallel command has one switch: ``--jobs N`` runs the work in N local processes (joblib's
loky pool), ``--parallel-backend dask --scheduler ADDRESS`` on a running dask.distributed cluster,
and ``--scheduler local`` on a :class:`distributed.LocalCluster` started for the command and closed
when it ends. :func:`execution` opens that environment once; the library's parallel call sites all go
through :func:`parallel_map`, which honours whatever joblib configuration is active (the one
:func:`execution` sets, or a caller's own ``joblib.parallel_config``), so no call site names a backend.

What ``n_jobs`` means:

* local processes (loky, or any joblib backend the caller configured): ``n_jobs`` workers; 1 runs
  in this process, without a pool; -1 means every CPU;
* dask: the tasks run on the cluster's worker threads, as many at once as it has. Work that a call
  site cuts into one share per worker (the audit's runs, the verifier's datasets) is cut into one
  share per worker thread. ``n_jobs`` only sizes a ``local`` cluster (N single-threaded worker
  processes; default: one per CPU); with a remote scheduler the cluster's size is set where its
  workers are started (``dask worker --nworkers``), and :func:`execution` refuses an ``n_jobs``.
  So a dask request never falls back to running here: with ``n_jobs=1`` and ``local`` it runs in
  one worker process.

Results never depend on where the work ran: every task's seed is fixed before dispatch, and
:func:`parallel_map` returns results in task order.

Progress: long-running library functions take ``progress``, a callable ``progress(done, total)``
(:data:`Progress`) called after each unit of work (a cell, a case, a task) with the count done so
far and the total; the command line turns it into a progress bar.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BACKENDS",
    "Execution",
    "ExecutionError",
    "Progress",
    "check_n_jobs",
    "check_options",
    "dask_active",
    "effective_workers",
    "execution",
    "parallel_map",
    "where",
]

log = logging.getLogger(__name__)

#: the values of ``--parallel-backend``
BACKENDS = ("loky", "dask")
#: ``progress(done, total)``: called after each unit of work
Progress = Callable[[int, int], None]
#: seconds to wait for a scheduler to answer, and for a cluster to have a worker
CONNECT_TIMEOUT = 10.0


class ExecutionError(ValueError):
    """The execution environment cannot be set up (a bad option combination, dask not installed, a
    scheduler that does not answer); the message is one line naming the option and its value."""


@dataclass(frozen=True)
class Execution:
    """The environment :func:`execution` opened: ``n_jobs`` is the number to hand to the library
    (the local process count, or the cluster's worker threads under dask)."""

    backend: str
    n_jobs: int
    scheduler: str | None = None
    client: Any = None

    def describe(self) -> str:
        if self.backend == "dask":
            return f"dask cluster at {self.scheduler} ({self.n_jobs} worker threads)"
        if self.n_jobs == -1:  # joblib's "every CPU": say how many that is here
            return f"{os.cpu_count() or 1} local processes (joblib, --jobs -1: every CPU)"
        return "this process" if self.n_jobs == 1 else f"{self.n_jobs} local processes (joblib)"


def check_n_jobs(n_jobs: Any) -> int:
    """n_jobs: a positive integer, or -1 for every CPU (joblib's convention)."""
    import numpy as np

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"n_jobs must be a positive integer or -1 (every CPU); got {n_jobs!r}")
    return int(n_jobs)


def check_options(n_jobs: int | None, backend: str | None, scheduler: str | None) -> tuple[str, int | None]:
    """(backend, n_jobs) after the checks that need no connection: the names, the combination, ``n_jobs``,
    and that dask is installed when it is asked for. Raises :class:`ExecutionError`."""
    if backend is not None and backend not in BACKENDS:
        raise ExecutionError(f"--parallel-backend must be one of {list(BACKENDS)}; got {backend!r}")
    if scheduler is not None and not scheduler.strip():
        raise ExecutionError(f"--scheduler must be a scheduler address (tcp://HOST:PORT) or 'local'; got {scheduler!r}")
    if backend == "loky" and scheduler is not None:
        raise ExecutionError(
            f"--scheduler {scheduler!r} needs --parallel-backend dask (loky runs local processes only)"
        )
    backend = backend or ("dask" if scheduler is not None else "loky")
    if n_jobs is not None:
        try:
            n_jobs = check_n_jobs(n_jobs)
        except ValueError:
            raise ExecutionError(f"--jobs must be a positive integer or -1 (every CPU); got {n_jobs!r}") from None
    if backend == "dask":
        if scheduler not in (None, "local") and n_jobs is not None:
            raise ExecutionError(
                f"--jobs {n_jobs} does not apply with --scheduler {scheduler!r}: the cluster's worker threads run the "
                "tasks (size it where the workers start: dask worker ADDRESS --nworkers N --nthreads 1)"
            )
        _import_distributed()
    return backend, n_jobs


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ExecutionError(
            "--parallel-backend dask needs dask.distributed, which is not installed: "
            "python3 -m pip install 'oraclepriv[distributed]'"
        ) from None
    return distributed


@contextlib.contextmanager
def execution(
    n_jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    *,
    timeout: float | None = None,
) -> Iterator[Execution]:
    """Open the execution environment of a parallel command; yields the :class:`Execution`.

    ``backend``: "loky" (local processes, the default) or "dask" (implied by ``scheduler``);
    ``scheduler``: a running scheduler's address (``tcp://127.0.0.1:8786``) or "local" (a
    LocalCluster of ``n_jobs`` single-threaded worker processes, default one per CPU; also what
    "dask" without a scheduler starts). ``n_jobs``: see the module docstring; None means 1 for
    loky. Under dask, ``joblib.parallel_config(backend="dask")`` is active inside the block, and the
    client and any cluster started here are closed on the way out. Raises :class:`ExecutionError`
    before any work starts when the options do not fit together (:func:`check_options`), dask is
    not installed, the scheduler cannot be reached or has no worker within ``timeout`` seconds
    (default :data:`CONNECT_TIMEOUT`).
    """
    backend, n_jobs = check_options(n_jobs, backend, scheduler)
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    if backend == "loky":
        # joblib's default backend, or the caller's own joblib.parallel_config: nothing to set up
        yield Execution("loky", 1 if n_jobs is None else n_jobs)
        return
    local = scheduler is None or scheduler == "local"
    distributed = _import_distributed()
    import joblib

    with contextlib.ExitStack() as stack:
        if local:
            import dask

            workers = (os.cpu_count() or 1) if n_jobs in (None, -1) else int(n_jobs)
            # non-daemonic worker processes, so that a task may start processes of its own (scip-bc:workers=k)
            with dask.config.set({"distributed.worker.daemon": False}):
                cluster = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                    )
                )
            client = stack.enter_context(distributed.Client(cluster))
            log.info(
                "started a local dask cluster at %s: %d worker processes, 1 thread each",
                cluster.scheduler_address,
                workers,
            )
        else:
            try:
                client = stack.enter_context(distributed.Client(scheduler, timeout=timeout))
            except (OSError, TimeoutError, ValueError) as exc:
                reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
                raise ExecutionError(
                    f"--scheduler {scheduler!r}: cannot reach a dask scheduler there ({reason})"
                ) from None
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError):
                raise ExecutionError(
                    f"--scheduler {scheduler!r}: the scheduler has no worker (start one: dask worker {scheduler})"
                ) from None
        threads = sum(client.nthreads().values())
        address = client.scheduler.address
        log.info("connected to the dask scheduler at %s: %d worker threads", address, threads)
        stack.enter_context(joblib.parallel_config(backend="dask", client=client, wait_for_workers_timeout=timeout))
        yield Execution("dask", threads, address, client)
        log.debug("closing the dask client%s", " and the local cluster" if local else "")


def dask_active() -> bool:
    """Whether joblib's active configuration sends work to a dask cluster."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return type(backend).__name__ == "DaskDistributedBackend"


def effective_workers(n_jobs: int) -> int:
    """How many workers run at once for ``n_jobs``: the cluster's worker threads under dask, the
    process count otherwise (-1: every CPU). Call sites cut their work into shares by it."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    if type(backend).__name__ == "DaskDistributedBackend":
        return max(1, backend.effective_n_jobs(-1))
    from joblib import effective_n_jobs

    return max(1, effective_n_jobs(n_jobs))


def _indexed(function: Callable[..., Any], index: int, task: Sequence[Any]) -> tuple[int, Any]:
    return index, function(*task)


def parallel_map(
    function: Callable[..., Any],
    tasks: Sequence[Sequence[Any]],
    n_jobs: int = 1,
    progress: Progress | None = None,
    *,
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """``[function(*task) for task in tasks]``, in task order, each task one unit of joblib work.

    Serial in this process when ``n_jobs`` is 1 and no dask cluster is active; otherwise through
    joblib with the active backend (loky by default, dask inside :func:`execution`), one task per
    dispatch so that long tasks spread evenly. As each task finishes (in the order they finish):
    ``on_result(index, result)``, then ``progress(done, total)``. ``function`` and the tasks must
    pickle (module-level functions; lambdas and local classes are shipped by value).
    """
    tasks = list(tasks)
    total = len(tasks)
    name = getattr(function, "__qualname__", repr(function))
    if n_jobs == 1 and not dask_active():
        log.debug("%s: %d tasks in this process", name, total)
        out = []
        for done, task in enumerate(tasks, start=1):
            out.append(function(*task))
            if on_result is not None:
                on_result(done - 1, out[-1])
            if progress is not None:
                progress(done, total)
        return out
    from joblib import Parallel, delayed

    log.debug("%s: dispatching %d tasks (n_jobs=%s, dask=%s)", name, total, n_jobs, dask_active())
    results: list[Any] = [None] * total
    with _quiet_worker_recycling():
        stream = Parallel(n_jobs=n_jobs, batch_size=1, return_as="generator_unordered")(
            delayed(_indexed)(function, i, task) for i, task in enumerate(tasks)
        )
        for done, (index, value) in enumerate(stream, start=1):
            results[index] = value
            if on_result is not None:
                on_result(index, value)
            if progress is not None:
                progress(done, total)
    return results


#: the start of loky's warning when it replaces a worker between two tasks
_WORKER_RECYCLED = "A worker stopped while some jobs were given to the executor"


@contextlib.contextmanager
def _quiet_worker_recycling() -> Iterator[None]:
    """Silence loky's "A worker stopped while some jobs were given to the executor" warning inside the block.

    loky replaces a worker whose memory has grown past its threshold (about 300 MB, which a halfspace search's
    arrays reach) between two tasks, and reports it with that generic warning, which reads like a failure on a
    user's terminal; nothing is lost, the pending tasks run on the new worker (joblib issues 869 and 883, loky pull
    request 641, which gives the recycling its own message). A worker that dies inside a task is not affected: joblib
    raises ``TerminatedWorkerError`` for it. The warning comes from loky's manager thread, so the filter is the
    process's (``warnings.catch_warnings`` restores it when the block ends)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_WORKER_RECYCLED, category=UserWarning)
        yield


def where() -> dict[str, Any]:
    """Where this code runs: host name, process id, dask worker address (None outside a dask
    worker) and the machine's 1-minute load average now (None where the OS has none)."""
    from oraclepriv.provenance import load_averages

    worker = None
    distributed = sys.modules.get("distributed")  # loaded in every dask worker; not imported here for nothing
    if distributed is not None:
        try:
            worker = distributed.get_worker().address
        except ValueError:  # not inside a dask worker
            pass
    loads = load_averages()
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "worker": worker,
        "load_1min": None if loads is None else float(loads[0]),
    }
