"""The oracle-call ledger: every ERM oracle call, recorded.

The papers measure algorithms in oracle calls; the ledger is how oraclepriv reports them.

**The rows are non-private.** Objectives, bounds, gaps, nodes, seconds and whether a call was
certified (or fell back) are functions of the private data that no privacy proof covers; a private
learner's ledger is part of its non-private diagnostics (``learner.diagnostics_``, which warns with
:class:`~oraclepriv.release.PrivacyLeakWarning`), never of its release (docs/release-boundary.md).
``with Ledger() as ledger:`` collects every call made inside the block, by any oracle, in this
thread or task (ledgers nest: an inner call is recorded by every open ledger). Open ledgers live
in a ``contextvars`` variable, so threads started inside the block (e.g. a ThreadPoolExecutor)
do not see them unless run in a copied context (``contextvars.copy_context().run``); parallel
experiments should collect each fit's own ``ledger_`` instead.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from oraclepriv.io import to_json
from oraclepriv.solvers.base import Status

if TYPE_CHECKING:  # pandas is imported when a frame is asked for
    import pandas as pd

__all__ = ["CallRecord", "Ledger", "LedgerRecord", "record_call", "LEDGER_FIELDS"]


class CallRecord(TypedDict):
    """One oracle call as the oracle reports it (all of it non-private diagnostics).

    A dict with the keys ``caller`` and ``step`` (who made the call and which of its calls, e.g.
    "RRSPM" and "private-erm"), ``hypothesis_class``, ``backend``, ``n``, ``d``, ``signed_weights``
    (some weights were negative), ``status``, ``certified``, ``restriction`` (the class a bound is
    proved over, when it is not the whole class), ``objective``, ``bound``, ``gap``, ``nodes`` and
    ``seconds``, as in :class:`~oraclepriv.oracle.OracleResult`.
    """

    caller: str | None  # the learner or tool that made the call
    step: str | None  # which of the caller's calls (e.g. "private-erm")
    hypothesis_class: str
    backend: str
    n: int
    d: int
    signed_weights: bool  # some weights were negative (reduced by the sign flip)
    status: Status
    certified: bool
    restriction: str | None  # the class a bound is proved over, when it is not the whole class
    objective: float
    bound: float
    gap: float
    nodes: int | None
    seconds: float


class LedgerRecord(CallRecord):
    """A ledger row: the call's record and its position in the ledger (``call``, from 0)."""

    call: int


#: the ledger's columns, in order
LEDGER_FIELDS = ("call", *CallRecord.__annotations__)

_open_ledgers: contextvars.ContextVar[tuple[Ledger, ...]] = contextvars.ContextVar("oraclepriv_ledgers", default=())


class Ledger:
    """Collects the oracle calls made inside a ``with`` block.

    ``with Ledger() as ledger:`` records every call made inside the block, by any oracle, in this
    thread or task; ledgers nest. Its ``records`` are :class:`LedgerRecord` dicts (the keys of
    ``LEDGER_FIELDS``). The rows are non-private diagnostics (module docstring).

    Examples
    --------
    >>> from oraclepriv import make_oracle
    >>> with Ledger() as ledger:
    ...     _ = make_oracle("threshold").solve([[0.0], [1.0]], [0, 1], caller="example", step="first")
    >>> ledger.count(caller="example"), ledger.records[0]["certified"]
    (1, True)
    """

    def __init__(self) -> None:
        self.records: list[LedgerRecord] = []
        self._token: contextvars.Token | None = None

    def __enter__(self) -> Ledger:
        if self._token is not None:
            raise RuntimeError("Ledger: this ledger is already open; create a new Ledger() to nest")
        self._token = _open_ledgers.set(_open_ledgers.get() + (self,))
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._token is not None
        _open_ledgers.reset(self._token)
        self._token = None

    def append(self, record: CallRecord) -> None:
        self.records.append(LedgerRecord(**record, call=len(self.records)))

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[LedgerRecord]:
        return iter(self.records)

    def __repr__(self) -> str:
        return f"Ledger({len(self.records)} oracle calls)"

    def count(self, **match: Any) -> int:
        """The number of records whose fields equal all of the given values.

        Parameters
        ----------
        **match
            Field names and values, e.g. ``count(step="private-erm")``.

        Returns
        -------
        int
            The number of matching records.
        """
        return sum(all(r.get(k) == v for k, v in match.items()) for r in self.records)

    def total_seconds(self) -> float:
        """The seconds of every recorded call, summed.

        Returns
        -------
        float
            The total.
        """
        return float(sum(r["seconds"] for r in self.records))

    def to_frame(self) -> pd.DataFrame:
        """The records as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per call, the columns of ``LEDGER_FIELDS``.
        """
        import pandas as pd

        return pd.DataFrame.from_records(self.records, columns=list(LEDGER_FIELDS))

    def to_jsonl(self, path: str | Path) -> None:
        """Write one JSON object per call to a file.

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write.
        """
        with open(path, "w", encoding="utf-8") as fh:
            for record in self.records:
                fh.write(to_json(record) + "\n")


def record_call(record: CallRecord) -> None:
    """Append a call record to every open ledger (called by the oracle protocol only).

    Parameters
    ----------
    record : CallRecord
        The call.
    """
    for ledger in _open_ledgers.get():
        ledger.append(record)
