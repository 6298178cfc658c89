"""Rows and instances of ``oraclepriv bench mip`` built by hand, for tests of its summaries."""

from __future__ import annotations

import numpy as np

from oraclepriv.bench.mip import BenchInstance


def row(
    instance,
    backend,
    *,
    certified=True,
    objective=1.0,
    bound=None,
    seconds=1.0,
    status="optimal",
    limit=60.0,
    restriction=None,
):
    return {
        "instance": instance,
        "class": "halfspace",
        "n": 3,
        "d": 2,
        "backend": backend,
        "time_limit": limit,
        "status": status,
        "certified": certified and restriction is None,
        "meets_bound": certified,
        "restriction": restriction,
        "objective": objective,
        "bound": objective if bound is None else bound,
        "gap": 0.0,
        "seconds": seconds,
        "nodes": 0,
        "error": "",
    }


def inst(name, best=None, proved=False):
    return BenchInstance(
        name, "halfspace", np.zeros((3, 2)), np.zeros(3, dtype=np.int8), np.ones(3), best, proved, "enumerate"
    )
