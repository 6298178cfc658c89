"""``e01loss``: the E01Loss library as a peer in the halfspace benchmark (not an oracle of the project).

E01Loss (X. He, M. A. Little, "E01Loss: A Python library for solving the exact 0-1 loss linear
classification problem", 2023, doi:10.5281/zenodo.7814259; the algorithms of He & Little, "An
efficient, provably exact, practical algorithm for the 0-1 loss linear classification problem")
is the published Python code for exact *unweighted* 0-1 loss linear classification: cell
enumeration over the arrangement of the points' dual hyperplanes (``algorithm="cell"``, the
default, O(n^(d+1)) time and O(n^(d+1)) memory) and incremental combinatorial generation with an
SVM upper bound, optionally with dominance purging (``"icg"``, ``"icg-purge"``). Researchers
benchmarking exact 0-1 loss methods compare against it, so ``oraclepriv bench mip`` runs it beside
the project's backends when it is installed (the optional extra ``[e01loss]``).

What its answers mean here. E01Loss returns a labeling it claims optimal, its 0-1 loss, and a
max-margin (w, b) fitted to that labeling. Its claim holds for data in general position (its own
documentation: duplicated points violate it) and nothing in it is a certificate this project can
check, so :meth:`E01LossBackend.restriction` says so and the protocol never marks an answer
``certified``. The bound reported is the claimed loss (times the common weight); the objective is,
as for every backend, the protocol's re-scoring of the returned (w, b), so a claim that the
returned halfspace does not attain shows as ``meets_bound = False``, and a claim that another
backend's halfspace beats is flagged by the benchmark's agreement check. Only problems whose
(reduced) weights are all equal are E01Loss's problem; others raise UnsupportedProblemError
(a "unsupported" row in the benchmark).

How it runs. E01Loss has no time limit and cell enumeration allocates arrays of n x C(n, d)
entries, so each call runs in a fresh Python child process (:data:`CHILD`: it imports numpy and
E01Loss only) with its address space capped at ``memory_gb`` GiB above what it starts with (Linux);
the parent waits until the call's deadline and then kills it (status ``time_limit``), and a Ctrl-C
or SIGTERM in the parent kills it too; a parent killed outright (SIGKILL) leaves it orphaned, and it
stops itself within half a second. A cell enumeration whose arrays alone would exceed
the cap is not started (status ``error``, the estimate in the message). ``details["e01loss_seconds"]``
is the library call's own time inside the child, without the process start (which the call's
``seconds`` include; measured in ``docs/solvers/e01loss.md``).
"""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
from oraclepriv.solvers.base import (
    Backend,
    BackendAnswer,
    Deadline,
    ReducedProblem,
    SolverNotInstalledError,
    UnsupportedProblemError,
)

from oraclepriv.hypotheses import Halfspace

__all__ = ["E01LossBackend", "ALGORITHMS", "TESTED_E01LOSS", "cell_enumeration_bytes"]

#: the E01Loss release this peer is tested with
TESTED_E01LOSS = "1.0.1"
#: ``algorithm`` option -> E01Loss function (module ``e01loss.exact_classify01loss``)
ALGORITHMS = {
    "cell": "exact_classify01loss_cell",
    "icg": "exact_classify01loss_comb",
    "icg-purge": "exact_classify01loss_purge",
}
#: default cap on the child's extra address space, GiB
MEMORY_GB = 2.0
#: the largest cap accepted, GiB (2^40 GiB = 2^70 bytes would overflow the C long of setrlimit)
MAX_MEMORY_GB = 2.0**30


def cell_enumeration_bytes(n: int, d: int) -> float:
    """A lower estimate of the memory E01Loss's cell enumeration needs: its list of the C(n, d)
    index tuples (about 8 (d + 8) bytes each) and two float arrays of n x C(n, d) (signed distances,
    signs), 8 bytes per entry."""
    vertices = math.comb(n, d)
    return float(vertices) * (8.0 * (d + 8) + 16.0 * n)


#: the child process: reads (function, X, labels, memory cap, caller's pid) as a pickle on stdin, caps its address
#: space, calls E01Loss and prints one JSON object on stdout. It imports numpy and E01Loss only (not
#: this package), and as a fresh interpreter it re-runs nothing of the caller's script.
CHILD = r"""
import json, os, pickle, sys, threading, time
job = pickle.load(sys.stdin.buffer)
def orphaned():  # the caller killed outright (SIGKILL), even before this line: stop too
    while os.getppid() == job["caller"]:
        time.sleep(0.5)
    os._exit(1)
threading.Thread(target=orphaned, daemon=True).start()
try:
    import resource
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + job["memory"], resource.getrlimit(resource.RLIMIT_AS)[1]))
except (ImportError, OSError, ValueError, AttributeError):
    pass  # no rlimit or no /proc here: run uncapped
def reply(**out):
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()
try:
    import numpy as np
    from e01loss import exact_classify01loss
    start = time.perf_counter()
    out = getattr(exact_classify01loss, job["function"])(job["X"], job["labels"], display=False, max_margin=True)
    seconds = time.perf_counter() - start
    if out is None:
        reply(error="E01Loss returned nothing (it does so when n <= d)", seconds=seconds)
    else:
        _, loss, w, b = out
        reply(loss=float(loss), w=[float(v) for v in np.asarray(w, dtype=float).ravel()],
              b=float(np.asarray(b, dtype=float).ravel()[0]), seconds=seconds)
except MemoryError:
    reply(error="E01Loss ran out of its memory cap (%.3g GiB)" % (job["memory"] / 2**30))
except KeyboardInterrupt:
    pass
except BaseException as exc:
    reply(error="E01Loss failed: %s: %s" % (type(exc).__name__, exc))
"""


class E01LossBackend(Backend):
    """E01Loss (He & Little) as a benchmark peer for unweighted halfspace 0-1 ERM; never certified.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; the child process is killed at the deadline.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        algorithm : {"cell", "icg", "icg-purge"}, default "cell"
            E01Loss's cell enumeration, incremental combinatorial generation, or generation with
            dominance purging (module docstring).
        memory_gb : float, default 2.0
            Cap on the child process's extra address space, in GiB.

    Raises
    ------
    ValueError
        An unknown option or an invalid value, named in the message.
    oraclepriv.solvers.base.UnsupportedProblemError
        From ``solve``: the reduced weights are not all equal (E01Loss minimises the unweighted loss).

    References
    ----------
    .. [1] X. He, M. A. Little, "E01Loss: A Python library for solving the exact 0-1 loss linear
       classification problem", 2023, doi:10.5281/zenodo.7814259.
    .. [2] X. He, M. A. Little, "An efficient, provably exact, practical algorithm for the 0-1 loss
       linear classification problem", 2023.
    """

    name = "e01loss"
    requires = ("e01loss", "cvxopt")
    classes = frozenset({"halfspace"})
    options = frozenset({"algorithm", "memory_gb"})
    certificate = (
        "E01Loss peer: bound = the 0-1 loss E01Loss claims optimal (exact for data in general position by its "
        "authors' proof; no certificate checked here), so answers are never certified"
    )

    def restriction(self, hypothesis_class: str) -> str | None:
        """Always: E01Loss's claim, for data in general position, is not a certificate checked here."""
        return "data in general position, by E01Loss's own claim (not verified by oraclepriv)"

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.algorithm = self.choice_option("algorithm", "cell", ALGORITHMS)
        memory = self.config.get("memory_gb", MEMORY_GB)
        if isinstance(memory, bool) or not isinstance(memory, (int, float)) or not (0 < memory <= MAX_MEMORY_GB):
            raise ValueError(
                f"backend 'e01loss': memory_gb must be a positive number of GiB, at most {MAX_MEMORY_GB:g}; got {memory!r}"
            )
        self.memory_gb = float(memory)
        if not self.is_installed():  # checked without importing it: E01Loss runs only in the child process
            raise SolverNotInstalledError(
                f"backend 'e01loss' needs the packages {list(self.requires)} (tested with e01loss=={TESTED_E01LOSS}; "
                f"install them with: pip install 'e01loss=={TESTED_E01LOSS}' cvxopt, or the project's extra [e01loss])"
            )

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        X, y, w = problem.X, problem.y, problem.w
        positive = w[w > 0]
        if positive.size and not np.all(positive == positive[0]):
            raise UnsupportedProblemError(
                "backend 'e01loss' minimises the unweighted 0-1 loss: the weights (after the sign reduction) must "
                f"all be equal; got values from {float(positive.min())!r} to {float(positive.max())!r}"
            )
        keep = w > 0  # zero-weight points do not count in the loss
        unit = float(positive[0]) if positive.size else 0.0
        X_fit, y_fit = X[keep], y[keep]
        constant = _best_constant(y_fit, problem.d)
        details: dict[str, Any] = {
            "algorithm": self.algorithm,
            "memory_gb": self.memory_gb,
            "points": int(X_fit.shape[0]),
        }
        if X_fit.shape[0] <= problem.d:  # E01Loss returns nothing here; nothing to compare
            details["error"] = f"E01Loss returns nothing when n <= d (n = {X_fit.shape[0]}, d = {problem.d})"
            return BackendAnswer(constant, bound=-math.inf, status="error", details=details)
        memory_bytes = int(self.memory_gb * 2**30)
        if self.algorithm == "cell":
            need = cell_enumeration_bytes(X_fit.shape[0], problem.d)
            details["cell_enumeration_bytes"] = need
            if need > memory_bytes:
                details["error"] = (
                    f"E01Loss's cell enumeration needs at least {need / 2**30:.3g} GiB for n = {X_fit.shape[0]}, "
                    f"d = {problem.d} (C(n, d) vertices x n points), above memory_gb = {self.memory_gb:g}; not started"
                )
                return BackendAnswer(constant, bound=-math.inf, status="error", details=details)
        labels = np.where(y_fit == 1, 1, -1).astype(np.int64)
        reply = self._run_child(X_fit, labels, memory_bytes, deadline)
        if reply is None:
            details["e01loss_stopped"] = "at the deadline"
            return BackendAnswer(constant, bound=-math.inf, status="time_limit", details=details)
        details["e01loss_seconds"] = reply.get("seconds")
        if "error" in reply:
            details["error"] = reply["error"]
            return BackendAnswer(constant, bound=-math.inf, status="error", details=details)
        w_fit, b_fit = np.asarray(reply["w"]), reply["b"]
        details["e01loss_claimed_loss"] = reply["loss"]
        if w_fit.shape != (problem.d,) or not (np.all(np.isfinite(w_fit)) and math.isfinite(b_fit)):
            details["error"] = (
                f"E01Loss's halfspace is not a finite vector of length {problem.d}: w = {reply['w']}, b = {b_fit}"
            )
            return BackendAnswer(constant, bound=-math.inf, status="error", details=details)
        hypothesis = Halfspace(tuple(float(v) for v in w_fit), float(b_fit))
        return BackendAnswer(hypothesis, bound=unit * reply["loss"], status="optimal", details=details)

    def _run_child(
        self, X: np.ndarray, labels: np.ndarray, memory_bytes: int, deadline: Deadline
    ) -> dict[str, Any] | None:
        """E01Loss in a child process until the deadline: its reply, or None when the deadline came first.
        The child is killed on the way out, whatever ends the wait (the deadline, Ctrl-C, SIGTERM)."""
        job = pickle.dumps(
            {
                "function": ALGORITHMS[self.algorithm],
                "X": X,
                "labels": labels,
                "memory": memory_bytes,
                "caller": os.getpid(),
            }
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            try:
                out, err = proc.communicate(job, timeout=deadline.remaining())
            except subprocess.TimeoutExpired:
                return None
            try:
                return json.loads(out)
            except ValueError:
                tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
                return {
                    "error": f"the E01Loss process ended without an answer (exit code {proc.returncode}): {tail[0]}"
                }
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


def _best_constant(y: np.ndarray, d: int) -> Halfspace:
    """The constant halfspace predicting the majority label (what is returned when E01Loss gives nothing)."""
    ones = int(np.sum(y == 1))
    return Halfspace(tuple([0.0] * d), 1.0 if ones >= y.size - ones else -1.0)
