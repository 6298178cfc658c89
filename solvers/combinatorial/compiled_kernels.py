"""The package's compiled (numba) kernels in one list: what ``oraclepriv warm`` makes ready, and what a benchmark
makes ready before it times any call (a process's first call would otherwise carry a load from numba's cache).

Each entry's ``make_ready`` loads the kernel from numba's on-disk cache or compiles it, and says which
("in process", "loaded" or "compiled"); it raises ImportError when numba is missing or cannot cache the kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["CompiledKernel", "compiled_kernels"]


class CompiledKernel(NamedTuple):
    """One kernel: a phase name (for a progress bar), a label (for a result line) and how to make it ready."""

    phase: str
    label: str
    make_ready: Callable[[], str]


def compiled_kernels() -> list[CompiledKernel]:
    """``enumerate``'s sweeps (one per dimension), ``sweep``'s weight pass and ``direction-bb``'s crossing-pair
    kernel, in that order."""
    from oraclepriv.solvers.combinatorial import direction_compiled, enumerate_compiled, sweep_compiled

    kernels = [
        CompiledKernel(
            f"enumerate: the {d}-D kernel", f"enumerate {d}-D kernel", functools.partial(enumerate_compiled.warm, d)
        )
        for d in enumerate_compiled.DIMENSIONS
    ]
    kernels += [
        CompiledKernel("sweep: the weight-pass kernels", "sweep weight-pass kernels", sweep_compiled.warm),
        CompiledKernel(
            "direction-bb: the crossing-pair kernel", "direction-bb crossing-pair kernel", direction_compiled.warm
        ),
    ]
    return kernels
