"""``oraclepriv warm``: compile the compiled kernels (``enumerate``'s sweeps, ``sweep``'s weight pass,
``direction-bb``'s crossing-pair matching) into numba's on-disk cache ahead of time.

oraclepriv warm [--quiet]

A call with a time limit never waits on a compilation (docs/deadlines.md), so until the kernels are in numba's
cache such calls run the numpy code (same answers, slower). This command compiles enumerate's two kernels (the 2-D
pivot sweep and the 3-D axis sweep; seconds each, once per installation, numba version and CPU), then the stump
oracle's weight pass (``sweep``: seconds too) and ``direction-bb``'s crossing-pair matching, or loads them when the
cache already holds them, and prints one line per kernel. Run it after installing or upgrading; CI runs it before the tests. Ctrl-C stops it with exit code
130: a kernel whose compilation it stopped is simply not in the cache (numba writes each cache entry whole), and
the next run compiles it. Exit code 2 when numba is not installed.
"""

import time

from oraclepriv.cli.common import Quiet, echo, fail, progress_bar


def warm(quiet: Quiet = False) -> None:
    """Compile enumerate's compiled sweeps, sweep's weight pass and direction-bb's crossing-pair kernel into numba's
    cache, so that calls with a time limit use them."""
    from oraclepriv.solvers.combinatorial.compiled_kernels import compiled_kernels

    with progress_bar(quiet) as bar:
        for phase, label, make_ready in compiled_kernels():
            progress = bar.phase(phase)
            progress(0, 1)
            start = time.perf_counter()
            try:
                state = make_ready()
            except ImportError as error:
                fail(str(error))
            progress(1, 1)
            echo(f"{label}: {state} in {time.perf_counter() - start:.1f} s")
