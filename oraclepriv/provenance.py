"""Where a measurement was made: the machine line every generated report carries, and the load
averages that let a reader judge its timings."""

from __future__ import annotations

import os

__all__ = ["load_averages", "machine_description"]


def load_averages() -> list[float] | None:
    """The 1-, 5- and 15-minute load averages (None where the OS does not provide them)."""
    try:
        return list(os.getloadavg())
    except (AttributeError, OSError):
        return None


def machine_description() -> str:
    """One line: CPU count, Python, numpy and scipy versions, date."""
    import datetime
    import platform

    import numpy as np
    import scipy

    return (
        f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}; {datetime.date.today().isoformat()}"
    )
