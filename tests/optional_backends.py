"""The backends of the optional extra ``[gurobi]`` in tests: their cases carry a skip *mark*, decided once here,
and no test body skips itself, so a backend the project depends on (scip-bc) can never be skipped by accident.
CI installs the extra (`.ci/run`), so these cases run there; a machine with only the test extra skips them and
runs everything else."""

from __future__ import annotations

import pytest

from oraclepriv.backends import backend_class

#: gurobipy imports and its licence solves a tiny model (the same check for both Gurobi backends)
GUROBI_INSTALLED = backend_class("gurobi-bc").is_installed()

needs_gurobi = pytest.mark.skipif(
    not GUROBI_INSTALLED, reason="gurobipy (optional extra [gurobi]) or its licence is not available here"
)

#: the cover-cut branch-and-cut backends as test parameters: scip-bc always, gurobi-bc marked
BRANCH_AND_CUT = ["scip-bc", pytest.param("gurobi-bc", marks=needs_gurobi)]

#: backends whose bounds cover a restricted class only (a margin, a box): naive-highs always, gurobi marked
RESTRICTED = ["naive-highs", pytest.param("gurobi", marks=needs_gurobi)]
