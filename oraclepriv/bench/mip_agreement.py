"""The exactness check of the MIP oracle benchmark (``oraclepriv bench mip``): do the backends' answers on
one instance agree?

On one instance, (1) any two certified objectives must be equal within a tolerance, and (2) no backend's
proved bound may exceed any hypothesis's re-scored objective (a bound above a found objective is a false
proof); for library instances the manifest's proved optimum is one more certified answer and its best
known objective one more hypothesis. A violation is a bug: the report prints it loudly and the CLI exits
with a non-zero code. A restricted-class backend (the naive baseline, ``certify="margin"``) proves
optimality over its class only; its answers are checked the same way, a wrong one is a warning
(documented behaviour) and does not count as solved (:func:`oraclepriv.bench.mip_summary.solved`).

This module reads rows and runs nothing. It does not import :mod:`oraclepriv.bench.mip` (what it reads
of an instance is :class:`CheckedInstance`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Protocol

__all__ = ["CheckedInstance", "agreement_problems"]


class CheckedInstance(Protocol):
    """What :func:`agreement_problems` reads of an instance (:class:`oraclepriv.bench.mip.BenchInstance`
    has it): its name, the agreement tolerance, and the library manifest's best known objective and
    whether (and by whom) it is proved optimal."""

    @property
    def name(self) -> str: ...

    @property
    def tolerance(self) -> float: ...

    @property
    def best_known(self) -> float | None: ...

    @property
    def proved(self) -> bool: ...

    @property
    def proved_by(self) -> str | None: ...


def agreement_problems(rows: list[dict[str, Any]], instances: Iterable[CheckedInstance]) -> tuple[list[str], list[str]]:
    """Cross-backend consistency (module docstring): (problems, warnings) for ``rows`` of ``instances``.

    ``problems`` are violations among backends whose certificate covers *all* hypotheses of the
    class (two certified objectives differ, or a proved bound exceeds some found objective): a
    bug, and the CLI exits non-zero. Rows with a ``restriction`` prove optimality over a
    restricted class only (the naive model: margin 1e-4, unit box); their answers are
    checked against the others too, but a mismatch is a *warning* (the
    restricted certificate is wrong about the true optimum, as documented) and the row is marked
    ``certificate_valid = False`` so it does not count as solved. Rows gain that key.
    """
    by_name = {inst.name: inst for inst in instances}
    problems: list[str] = []
    warnings: list[str] = []
    for r in rows:
        r["certificate_valid"] = bool(r["meets_bound"])
    for name in dict.fromkeys(r["instance"] for r in rows):
        inst = by_name[name]
        tol = inst.tolerance
        mine = [r for r in rows if r["instance"] == name and r["status"] not in ("error", "unsupported")]
        full = [r for r in mine if r.get("restriction") is None]
        restricted = [r for r in mine if r.get("restriction") is not None]
        certified = [(r["backend"], r["objective"]) for r in full if r["certified"]]
        objectives = [(r["backend"], r["objective"]) for r in mine if math.isfinite(r["objective"])]
        if inst.best_known is not None:
            objectives.append(("manifest best known", inst.best_known))
            if inst.proved:
                certified.append((f"manifest (proved by {inst.proved_by})", inst.best_known))
        for i, (a, va) in enumerate(certified):
            for b, vb in certified[i + 1 :]:
                if abs(va - vb) > tol:
                    problems.append(
                        f"{name}: certified objectives disagree: {a} = {va!r} vs {b} = {vb!r} (tolerance {tol:.3g})"
                    )
        for r in full:
            for b, value in objectives:
                if math.isfinite(r["bound"]) and r["bound"] > value + tol:
                    problems.append(
                        f"{name}: {r['backend']} proved a lower bound {r['bound']!r} above the objective {value!r} of a "
                        f"hypothesis found by {b} (tolerance {tol:.3g}): a false proof"
                    )
        best_found = min((v for _, v in objectives), default=math.inf)
        for r in restricted:
            if not r["meets_bound"]:
                continue
            wrong = [f"{b} = {v!r}" for b, v in certified if abs(r["objective"] - v) > tol]
            if r["objective"] > best_found + tol:
                wrong.append(f"a better hypothesis exists (objective {best_found!r})")
            if wrong:
                r["certificate_valid"] = False
                warnings.append(
                    f"{name}: {r['backend']} certified {r['objective']!r} over its restricted class, but the true optimum "
                    f"differs ({'; '.join(wrong)}); counted as not solved"
                )
    return problems, warnings
