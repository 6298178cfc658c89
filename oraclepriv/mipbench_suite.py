"""Former home of the MIP benchmark's halfspace suite, kept while tests/test_mip_cuts.py and
tests/test_scip_bc_backend.py still import it here: the suite is :mod:`oraclepriv.bench.mip_suite`."""

from oraclepriv.bench.mip_suite import NOISE_RATE, halfspace_instance, halfspace_suite

__all__ = ["halfspace_suite", "halfspace_instance", "NOISE_RATE"]
