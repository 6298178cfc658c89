"""``oraclepriv learn --budget FILE``: one JSON privacy ledger charged across runs.

The file is a :class:`~oraclepriv.accountant.PrivacyAccountant` saved as JSON: its budget, its slack and
the spends of the runs so far. A run

1. takes an exclusive lock on ``FILE.lock`` (beside the ledger; left in place) for the whole command, so
   concurrent runs on one ledger are serialised and none is lost;
2. reads the ledger, or, when FILE does not exist, starts one with ``--budget-epsilon`` (and optionally
   ``--budget-delta``, ``--budget-slack``); without ``--budget-epsilon`` an absent FILE is refused. The
   budget of an existing ledger is fixed: options that differ from it are refused;
3. refuses, before any data file is read, a run whose ``--epsilon``/``--delta`` alone would take the total
   past the budget;
4. makes the ledger the active accountant of the fit, which charges its release's (epsilon, total delta)
   right before publishing (refused past the budget: nothing is printed, the file is unchanged);
5. writes the ledger back (a temporary file renamed over it) **before** the release is printed.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import typer

from oraclepriv.accountant import BudgetExceededError, PrivacyAccountant
from oraclepriv.cli.common import fail

__all__ = ["BudgetRun", "open_budget"]


@dataclass
class BudgetRun:
    """The ledger a ``learn`` run charges, and where it is saved."""

    path: Path
    accountant: PrivacyAccountant
    spends_before: int

    def commit(self) -> None:
        """Save the ledger with this run's charge, then say what was spent on stderr."""
        try:
            self.accountant.save(self.path)
        except OSError as exc:
            fail(
                f"--budget {str(self.path)!r}: cannot write the ledger ({exc.strerror or exc}); the release is not printed"
            )
        new = self.accountant.spends[self.spends_before :]
        spent = ", ".join(f"({s.epsilon:g}, {s.delta:.3g}) for {s.label}" for s in new) or "nothing"
        budget = self.accountant.budget
        eps = "inf" if math.isinf(budget.epsilon) else f"{budget.epsilon:g}"
        typer.echo(
            f"privacy ledger {str(self.path)!r}: this run spent {spent}; total "
            f"{self.accountant.total().describe()}; budget (epsilon={eps}, delta={budget.delta:.3g})",
            err=True,
        )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` + ".lock" while the block runs (POSIX ``flock``)."""
    import fcntl

    lock = path.with_name(path.name + ".lock")
    try:
        handle = open(lock, "a")  # noqa: SIM115 -- closed below, after the block
    except OSError as exc:
        fail(f"--budget {str(path)!r}: cannot create its lock file {str(lock)!r} ({exc.strerror or exc})")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # releases the lock


def open_budget(
    ctx: typer.Context,
    path: Path | None,
    budget_epsilon: float | None,
    budget_delta: float | None,
    budget_slack: float | None,
    epsilon: float,
    delta: float | None,
) -> BudgetRun | None:
    """The ledger of ``--budget`` (None without it), locked and active until the command ends (``ctx``'s
    resources); refuses, by the flags' names, bad options and a run that alone would exceed the budget."""
    given = {"--budget-epsilon": budget_epsilon, "--budget-delta": budget_delta, "--budget-slack": budget_slack}
    if path is None:
        for flag, value in given.items():
            if value is not None:
                fail(f"{flag} {value:g} sets the budget of a ledger: give the ledger file with --budget FILE")
        return None
    if budget_epsilon is not None and not budget_epsilon > 0:
        fail(f"--budget-epsilon must be a number > 0 (inf: no limit); got {budget_epsilon!r}")
    for flag, value in (("--budget-delta", budget_delta), ("--budget-slack", budget_slack)):
        if value is not None and not 0 <= value < 1:
            fail(f"{flag} must be a number in [0, 1); got {value!r}")
    if path.is_dir():
        fail(f"--budget {str(path)!r} is a directory; a JSON ledger file is expected")
    ctx.with_resource(_locked(path))
    if path.exists():
        try:
            accountant = PrivacyAccountant.load(path)
        except (OSError, ValueError) as exc:
            fail(f"--budget: {exc}")
        stored = {
            "--budget-epsilon": accountant.budget.epsilon,
            "--budget-delta": accountant.budget.delta,
            "--budget-slack": accountant.slack,
        }
        for flag, value in given.items():
            if value is not None and value != stored[flag]:
                fail(
                    f"{flag} {value:g} differs from the ledger {str(path)!r}, created with {flag} {stored[flag]:g}: "
                    "a ledger's budget is fixed when it is created (omit the option, or start another ledger)"
                )
    else:
        if budget_epsilon is None:
            fail(
                f"--budget {str(path)!r} does not exist: give --budget-epsilon (and --budget-delta, --budget-slack) "
                "to create it"
            )
        accountant = PrivacyAccountant(budget_epsilon, budget_delta or 0.0, slack=budget_slack or 0.0)
    try:
        accountant.check(epsilon, delta or 0.0, "this run")
    except BudgetExceededError as exc:
        fail(f"--budget {str(path)!r}: {exc}")
    ctx.with_resource(accountant)
    return BudgetRun(path, accountant, len(accountant))
