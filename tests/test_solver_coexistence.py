"""highspy and OR-Tools must load and solve side by side in one process, in either import order.

The pins' reason: highspy 1.15.1 and ortools 9.15 raise an undefined-symbol ImportError in
whichever is imported second (ortools bundles HiGHS 1.12.0). highspy 1.14.0 + ortools 9.15.6755
work; these are the pins. Each order runs in a fresh interpreter, since a process that already
holds one of the libraries is exactly what the test must not reuse. The child prints one JSON
line and nothing else, so stray solver output on stdout (highspy 1.12 printed MIP debug lines)
also fails the test. PySCIPOpt 6.3.0 (backend ``scip-bc``) ships its own libscip beside the SCIP
inside OR-Tools: all three packages are checked together in all six import orders.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import json, sys
    order = sys.argv[1]
    if order == "highspy-first":
        import highspy
        from ortools.linear_solver import pywraplp
        from ortools.sat.python import cp_model
    else:
        from ortools.linear_solver import pywraplp
        from ortools.sat.python import cp_model
        import highspy
    import numpy as np

    # the same tiny MIP for every solver: max x + 2y + 3z  s.t.  x + y + z <= 2, x, y, z binary;
    # plus y + z <= 1, so the optimum is x = z = 1 with value 4.
    out = {}
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(3, np.zeros(3), np.ones(3))
    idx = np.arange(3, dtype=np.int32)
    h.changeColsIntegrality(3, idx, np.ones(3, dtype=np.uint8))
    h.changeColsCost(3, idx, np.array([-1.0, -2.0, -3.0]))
    h.addRows(2, np.array([-np.inf, -np.inf]), np.array([2.0, 1.0]), 5,
              np.array([0, 3], dtype=np.int32), np.array([0, 1, 2, 1, 2], dtype=np.int32), np.ones(5))
    h.run()
    out["highspy"] = [h.modelStatusToString(h.getModelStatus()), -h.getInfo().objective_function_value]
    out["highspy_version"] = h.version()

    s = pywraplp.Solver.CreateSolver("SCIP")
    x, y, z = (s.BoolVar(n) for n in "xyz")
    s.Add(x + y + z <= 2); s.Add(y + z <= 1); s.Maximize(x + 2 * y + 3 * z)
    out["scip"] = [s.Solve() == pywraplp.Solver.OPTIMAL, s.Objective().Value()]

    m = cp_model.CpModel()
    a, b, c = (m.NewBoolVar(n) for n in "abc")
    m.Add(a + b + c <= 2); m.Add(b + c <= 1); m.Maximize(a + 2 * b + 3 * c)
    cp = cp_model.CpSolver()
    out["cpsat"] = [cp.Solve(m) == cp_model.OPTIMAL, cp.ObjectiveValue()]
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("order", ["highspy-first", "ortools-first"])
def test_highspy_and_ortools_import_and_solve_in_one_process(order):
    proc = subprocess.run([sys.executable, "-c", CHILD, order], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"import order {order} failed:\n{proc.stderr[-3000:]}"
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"unexpected output on stdout (solver log leaking?):\n{proc.stdout}"
    out = json.loads(lines[0])
    assert out["highspy"] == ["Optimal", 4.0]
    assert out["scip"] == [True, 4.0]
    assert out["cpsat"] == [True, 4.0]
    major, minor = (int(part) for part in out["highspy_version"].split(".")[:2])
    assert (major, minor) < (1, 15), "highspy >= 1.15 cannot share a process with ortools 9.15"


# -- PySCIPOpt (backend ``scip-bc``) bundles its own libscip, as OR-Tools does: all three in one process

CHILD_WITH_PYSCIPOPT = textwrap.dedent(
    """
    import json, sys
    for name in sys.argv[1].split(","):
        if name == "highspy":
            import highspy
        elif name == "ortools":
            from ortools.linear_solver import pywraplp
            from ortools.sat.python import cp_model
        else:
            import pyscipopt
    import highspy, pyscipopt
    import numpy as np
    from ortools.linear_solver import pywraplp
    from ortools.sat.python import cp_model

    # max x + 2y + 3z  s.t.  x + y + z <= 2, y + z <= 1, binary: optimum 4 (x = z = 1)
    out = {}
    m = pyscipopt.Model()
    m.hideOutput()
    x, y, z = (m.addVar(vtype="B", name=n) for n in "xyz")
    m.addCons(x + y + z <= 2); m.addCons(y + z <= 1); m.setObjective(x + 2 * y + 3 * z, "maximize")
    m.optimize()
    out["pyscipopt"] = [m.getStatus(), m.getObjVal()]

    s = pywraplp.Solver.CreateSolver("SCIP")
    a, b, c = (s.BoolVar(n) for n in "abc")
    s.Add(a + b + c <= 2); s.Add(b + c <= 1); s.Maximize(a + 2 * b + 3 * c)
    out["scip"] = [s.Solve() == pywraplp.Solver.OPTIMAL, s.Objective().Value()]

    cm = cp_model.CpModel()
    a, b, c = (cm.NewBoolVar(n) for n in "abc")
    cm.Add(a + b + c <= 2); cm.Add(b + c <= 1); cm.Maximize(a + 2 * b + 3 * c)
    cp = cp_model.CpSolver()
    out["cpsat"] = [cp.Solve(cm) == cp_model.OPTIMAL, cp.ObjectiveValue()]

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(3, np.zeros(3), np.ones(3))
    idx = np.arange(3, dtype=np.int32)
    h.changeColsIntegrality(3, idx, np.ones(3, dtype=np.uint8))
    h.changeColsCost(3, idx, np.array([-1.0, -2.0, -3.0]))
    h.addRows(2, np.array([-np.inf, -np.inf]), np.array([2.0, 1.0]), 5,
              np.array([0, 3], dtype=np.int32), np.array([0, 1, 2, 1, 2], dtype=np.int32), np.ones(5))
    h.run()
    out["highspy"] = [h.modelStatusToString(h.getModelStatus()), -h.getInfo().objective_function_value]
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("order", [",".join(p) for p in itertools.permutations(["pyscipopt", "highspy", "ortools"])])
def test_pyscipopt_ortools_and_highspy_import_and_solve_in_one_process(order):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD_WITH_PYSCIPOPT, order], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"import order {order} failed:\n{proc.stderr[-3000:]}"
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"unexpected output on stdout (solver log leaking?):\n{proc.stdout}"
    out = json.loads(lines[0])
    assert out == {
        "pyscipopt": ["optimal", 4.0],
        "scip": [True, 4.0],
        "cpsat": [True, 4.0],
        "highspy": ["Optimal", 4.0],
    }


# -- numba (enumerate's compiled kernels) brings its own LLVM (llvmlite): it must load and compile beside the
# three solver libraries, imported before or after them

CHILD_WITH_NUMBA = CHILD_WITH_PYSCIPOPT.replace(
    "    else:\n        import pyscipopt\n",
    '    elif name == "numba":\n        import numba\n    else:\n        import pyscipopt\n',
).replace(
    "print(json.dumps(out))\n",
    "import numba\n\n"
    "@numba.njit(cache=False)\n"
    "def dot(a, b):\n"
    "    s = 0.0\n"
    "    for i in range(a.shape[0]):\n"
    "        s += a[i] * b[i]\n"
    "    return s\n\n"
    'out["numba"] = dot(np.arange(4.0), np.ones(4))\n'
    "print(json.dumps(out))\n",
)
assert "import numba" in CHILD_WITH_NUMBA and 'out["numba"]' in CHILD_WITH_NUMBA


@pytest.mark.parametrize(
    "order",
    ["numba,pyscipopt,highspy,ortools", pytest.param("pyscipopt,highspy,ortools,numba", marks=pytest.mark.slow)],
)
def test_numba_compiles_beside_the_solver_libraries(order):
    pytest.importorskip("numba")
    proc = subprocess.run([sys.executable, "-c", CHILD_WITH_NUMBA, order], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"import order {order} failed:\n{proc.stderr[-3000:]}"
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"unexpected output on stdout:\n{proc.stdout}"
    out = json.loads(lines[0])
    assert out["numba"] == 6.0 and out["pyscipopt"] == ["optimal", 4.0] and out["highspy"] == ["Optimal", 4.0]
    assert out["scip"] == [True, 4.0] and out["cpsat"] == [True, 4.0]
