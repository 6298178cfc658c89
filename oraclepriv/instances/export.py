"""An instance's MIP model, for other solvers: ``oraclepriv instances export-mps``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.instances.manifest import load_instance

#: MIP formulations an instance can be exported as (see ``oraclepriv.solvers.mip.milp``)
FORMULATIONS = ("relaxed", "margin", "staircase")


EXPORT_BACKENDS = ("highs", "scip", "pyomo")


def formulations_of(hypothesis_class: str) -> tuple[str, ...]:
    """The formulations an instance of ``hypothesis_class`` can be exported as, the default first."""
    return ("relaxed", "margin") if hypothesis_class == "halfspace" else ("staircase",)


def instance_milp(name: str, formulation: str | None = None, gamma: float | None = None, directory: Path | None = None):
    """(MilpArrays with the instance's costs, objective offset, formulation details) of a library instance
    (:func:`problem_milp` on its data and class)."""
    entry, X, y, w = load_instance(name, directory)
    return problem_milp(X, y, w, entry["class"], formulation, gamma, label=f"the {entry['class']} instance {name!r}")


def problem_milp(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    hypothesis_class: str,
    formulation: str | None = None,
    gamma: float | None = None,
    label: str = "this problem",
):
    """(MilpArrays with the costs, objective offset, formulation details) of a weighted 0-1 ERM problem.

    The signed weights are reduced once (``oraclepriv.oracle.reduce_signed_weights``) exactly as
    the oracle protocol does, so ``min cost.x + offset`` is the model of the *signed* problem:

    * halfspaces, ``formulation="relaxed"`` (default): the margin-free relaxation the MIP backends
      certify with (:class:`oraclepriv.solvers.mip.milp.HalfspaceRelaxedMilp`); its optimum + offset is a lower
      bound on the instance's optimum and equals it on data in general position;
    * halfspaces, ``"margin"``: the big-M model with margin gamma (:class:`HalfspaceMarginMilp`),
      exact over halfspaces with margin >= gamma on [-1, 1]-scaled data;
    * thresholds/stumps (``"staircase"``, the only choice): the exact staircase model.

    ``label`` names the problem in the error for a formulation its class does not have.
    """
    from dataclasses import replace

    from oraclepriv.oracle import reduce_signed_weights
    from oraclepriv.solvers.mip.milp import DEFAULT_GAMMA, HalfspaceMarginMilp, HalfspaceRelaxedMilp, StumpMilp

    allowed = formulations_of(hypothesis_class)
    formulation = formulation or allowed[0]
    if formulation not in allowed:
        raise ValueError(f"formulation must be one of {list(allowed)} for {label}; got {formulation!r}")
    y_reduced, w_abs, sign_offset = reduce_signed_weights(y, w)
    form: HalfspaceRelaxedMilp | HalfspaceMarginMilp | StumpMilp
    if formulation == "relaxed":
        form = HalfspaceRelaxedMilp(X, y_reduced)
    elif formulation == "margin":
        form = HalfspaceMarginMilp(X, y_reduced, DEFAULT_GAMMA if gamma is None else gamma)
    else:
        form = StumpMilp(X, hypothesis_class)
    cost, form_offset = form.costs(y_reduced, w_abs)
    milp = replace(form.milp, cost=np.asarray(cost, dtype=np.float64))
    return milp, float(sign_offset + form_offset), form.details()


def export_mps(
    name: str,
    path: Path | str,
    backend: str = "highs",
    formulation: str | None = None,
    directory: Path | None = None,
    problem: tuple[np.ndarray, np.ndarray, np.ndarray, str] | None = None,
) -> dict[str, Any]:
    """Write an instance's MIP model (objective = the signed loss, offset included) as free MPS.

    ``backend`` chooses the writer: ``highs`` (highspy ``writeModel``), ``scip`` (OR-Tools
    ``ExportModelAsMpsFormat``) or ``pyomo`` (Pyomo's MPS writer). The instance is the library's
    ``name``, or, when ``problem`` = (X, y, w, hypothesis class) is given, that problem (a user's own
    file), ``name`` then only naming it. Returns a summary (path, columns, rows, integer columns,
    objective offset, formulation).
    """
    if backend not in EXPORT_BACKENDS:
        raise ValueError(f"backend must be one of {list(EXPORT_BACKENDS)} for MPS export; got {backend!r}")
    path = Path(path)
    if path.suffix.lower() != ".mps":
        raise ValueError(f"the output file must end in .mps; got {str(path)!r}")
    if problem is None:
        milp, offset, details = instance_milp(name, formulation, directory=directory)
    else:
        X, y, w, hypothesis_class = problem
        milp, offset, details = problem_milp(X, y, w, hypothesis_class, formulation, label=repr(name))
    path.parent.mkdir(parents=True, exist_ok=True)
    if backend == "highs":
        from oraclepriv.solvers.mip.highs import HighsModel, import_highspy

        highspy = import_highspy()
        highs = HighsModel(highspy, milp)
        highs.h.changeObjectiveOffset(offset)
        # kWarning only says that generic names (c0.., r0..) were generated
        if highs.h.writeModel(str(path)) not in (highspy.HighsStatus.kOk, highspy.HighsStatus.kWarning):
            raise RuntimeError(f"HiGHS could not write {str(path)!r}")
    elif backend == "scip":
        from oraclepriv.solvers.mip.scip import ScipModel, import_pywraplp

        scip = ScipModel(import_pywraplp(), milp)
        scip.objective.SetOffset(offset)
        path.write_text(scip.solver.ExportModelAsMpsFormat(False, False), encoding="utf-8")
    else:
        from oraclepriv.solvers.mip.pyomo import PyomoModel

        pyomo = PyomoModel(milp)
        pyomo.model.obj.expr = pyomo.model.obj.expr + offset
        pyomo.write(str(path))
    return {
        "instance": name,
        "path": str(path),
        "backend": backend,
        "formulation": details["formulation"],
        "num_cols": milp.num_cols,
        "num_rows": milp.num_rows,
        "num_integer": int(milp.integer.sum()),
        "objective_offset": offset,
    }
