"""``oraclepriv.solvers.runtime.heap``: direction-bb keeps freed memory instead of page-faulting it back.

The check runs the same direction-bb search in fresh processes, with the setting left to the
backend and with it switched off, and compares their minor page faults (``getrusage``): with the
heap kept, the search's temporaries are reused and the faults drop by far more than a factor of
two (about 30 000 against 700 over four searches here). A setting that did nothing would fail it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest
from oraclepriv.solvers.runtime import heap

WORKLOAD = """
import json, resource
import numpy as np
from oraclepriv.solvers.base import ReducedProblem
from oraclepriv.solvers.combinatorial.direction_bb import DirectionBbBackend
from oraclepriv.solvers.runtime.heap import keep_freed_memory

def problem(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + X[:, 1] - X[:, 3] > 0).astype(np.int8)
    y[rng.random(n) < 0.1] ^= 1
    w = np.where(np.arange(n) < n // 6, np.abs(rng.laplace(0, 40, n)), 1.0)
    return ReducedProblem("halfspace", X, y, w)

DirectionBbBackend(time_limit=60).solve(problem(100, 0))  # warm-up: imports and first allocations
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
answers = [DirectionBbBackend(time_limit=60).solve(problem(n, seed)) for seed, n in enumerate((240, 160, 320, 200))]
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
status = [a.status for a in answers]
bounds = [a.bound for a in answers]
print(json.dumps({"faults": faults, "kept": keep_freed_memory(), "status": status, "bounds": bounds}))
"""

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def _run(switch: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in heap.USER_SETTINGS and k != heap.ENVIRONMENT_SWITCH}
    if switch is not None:
        env[heap.ENVIRONMENT_SWITCH] = switch
    out = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason="the setting applies to glibc only")
@pytest.mark.slow
def test_kept_heap_cuts_the_page_faults_of_a_search_and_changes_no_answer():
    kept, default = _run(None), _run("0")
    assert kept["kept"] is True and default["kept"] is False
    assert kept["status"] == default["status"] == ["optimal"] * 4
    assert kept["bounds"] == default["bounds"]
    assert kept["faults"] * 4 < default["faults"], (kept, default)


def test_switched_off_or_user_settings_leave_the_allocator_alone(monkeypatch):
    monkeypatch.setenv(heap.ENVIRONMENT_SWITCH, "0")
    assert heap._apply() is False
    monkeypatch.delenv(heap.ENVIRONMENT_SWITCH)
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1048576")
    assert heap._apply() is False


@pytest.mark.parametrize("value", ["off", "yes", "2", ""])
def test_a_switch_value_other_than_0_or_1_is_refused_by_name_and_value(monkeypatch, value):
    monkeypatch.setenv(heap.ENVIRONMENT_SWITCH, value)
    with pytest.raises(ValueError, match=rf"ORACLEPRIV_KEEP_HEAP must be 0 or 1; got {value.strip()!r}"):
        heap._apply()
