"""A test helper for the stump sweep's block layout: force small blocks so that small columns take the blocked path."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from oraclepriv.solvers.combinatorial import sweep


@contextlib.contextmanager
def blocks_of(size: int) -> Iterator[None]:
    """Sorted columns built meanwhile use blocks of ``size`` points, however small the column."""
    saved = sweep.BLOCK, sweep.SCAN_MAX
    sweep.BLOCK, sweep.SCAN_MAX = size, 0
    try:
        yield
    finally:
        sweep.BLOCK, sweep.SCAN_MAX = saved
