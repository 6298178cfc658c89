"""The oracle-call ledger: every call inside ``with Ledger()`` is recorded, and only those."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from oraclepriv.solvers.base import Backend, BackendAnswer

from oraclepriv import Ledger, Stump, make_oracle
from oraclepriv.backends import registered_backend
from oraclepriv.ledger import LEDGER_FIELDS

X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]])
Y = np.array([0, 0, 1, 1])
STUMP = make_oracle("stump")
THRESHOLD = make_oracle("threshold")


class NothingProvedBackend(Backend):
    """Returns a constant stump and proves nothing: bound = -inf, gap = inf (for serialization tests)."""

    name = "fake-nothing-proved"
    classes = frozenset({"stump"})

    def solve(self, problem):
        return BackendAnswer(Stump(0, math.inf, 1), bound=-math.inf, status="time_limit", nodes=None)


@pytest.fixture
def nothing_proved():
    with registered_backend(NothingProvedBackend.name, NothingProvedBackend):
        yield make_oracle("stump", backend=NothingProvedBackend.name)


def test_every_call_recorded_with_all_fields():
    with Ledger() as ledger:
        r1 = STUMP.solve(X, Y)
        r2 = THRESHOLD.solve(X[:, 0], Y, np.array([1.0, -2.0, 0.5, 3.0]))
        r3 = STUMP.solve(X, Y, np.array([0.0, 0.0, 1.0, 1.0]))
    assert len(ledger) == 3 and len(list(ledger)) == 3
    for i, (record, res) in enumerate(zip(ledger.records, (r1, r2, r3))):
        assert set(record) == set(LEDGER_FIELDS)
        assert record["call"] == i
        assert record["hypothesis_class"] == res.hypothesis_class
        assert record["backend"] == "sweep"
        assert (record["n"], record["d"]) == (res.n, res.d)
        for key in ("status", "certified", "objective", "bound", "gap", "nodes", "seconds", "signed_weights"):
            assert record[key] == getattr(res, key)
    assert [r["hypothesis_class"] for r in ledger] == ["stump", "threshold", "stump"]
    assert ledger.count(hypothesis_class="stump") == 2
    assert ledger.count(hypothesis_class="stump", certified=True) == 2
    assert ledger.total_seconds() == pytest.approx(sum(r.seconds for r in (r1, r2, r3)))


def test_nested_ledgers_both_record():
    with Ledger() as outer:
        STUMP.solve(X, Y, caller="outer")
        with Ledger() as inner:
            STUMP.solve(X, Y, caller="inner")
            THRESHOLD.solve(X[:, :1], Y, caller="inner")
        STUMP.solve(X, Y, caller="outer")
    assert [r["caller"] for r in outer] == ["outer", "inner", "inner", "outer"]
    assert [r["caller"] for r in inner] == ["inner", "inner"]
    assert [r["call"] for r in outer] == [0, 1, 2, 3]
    assert [r["call"] for r in inner] == [0, 1]  # each ledger numbers its own calls
    assert outer.records[1] is not inner.records[0]  # separate copies


def test_calls_outside_are_not_recorded():
    STUMP.solve(X, Y)
    ledger = Ledger()
    STUMP.solve(X, Y)  # created but not open
    with ledger:
        STUMP.solve(X, Y)
    STUMP.solve(X, Y)
    assert len(ledger) == 1
    with Ledger() as later:
        pass
    assert len(later) == 0


def test_failed_calls_are_not_recorded():
    with Ledger() as ledger:
        with pytest.raises(ValueError):
            STUMP.solve(X, np.array([0, 1, 2, 1]))
    assert len(ledger) == 0


def test_ledger_cannot_be_reopened_while_open():
    ledger = Ledger()
    with ledger:
        with pytest.raises(RuntimeError, match="already open"):
            ledger.__enter__()
    with ledger:  # closed again: re-entering later is fine and appends
        STUMP.solve(X, Y)
    assert len(ledger) == 1


def test_caller_and_step_labels():
    with Ledger() as ledger:
        STUMP.solve(X, Y, caller="RRSPM", step="project")
        STUMP.solve(X, Y, caller="RRSPM", step="private-erm")
        STUMP.solve(X, Y, caller="PPM", step="private-erm")
        STUMP.solve(X, Y)
    assert [(r["caller"], r["step"]) for r in ledger] == [
        ("RRSPM", "project"),
        ("RRSPM", "private-erm"),
        ("PPM", "private-erm"),
        (None, None),
    ]
    assert ledger.count(step="private-erm") == 2
    assert ledger.count(caller="RRSPM", step="project") == 1


@pytest.mark.parametrize(
    "w, flag",
    [
        (None, False),
        ([1.0, 2.0, 0.0, 3.0], False),
        ([0.0, 0.0, 0.0, 0.0], False),
        ([1.0, -0.0, 2.0, 0.0], False),  # negative zero is not a negative weight
        ([1.0, 2.0, -1e-300, 3.0], True),
        ([-1.0, -2.0, -3.0, -4.0], True),
    ],
)
def test_signed_weights_flag(w, flag):
    with Ledger() as ledger:
        res = STUMP.solve(X, Y, w)
    assert res.signed_weights is flag
    assert ledger.records[0]["signed_weights"] is flag


def test_to_frame_columns():
    with Ledger() as ledger:
        STUMP.solve(X, Y, caller="a")
        THRESHOLD.solve(X[:, 0], Y, step="b")
    frame = ledger.to_frame()
    assert list(frame.columns) == list(LEDGER_FIELDS)
    assert len(frame) == 2
    assert frame["caller"].tolist()[0] == "a" and frame["step"].tolist()[1] == "b"
    assert list(Ledger().to_frame().columns) == list(LEDGER_FIELDS)  # empty ledger keeps the schema


def _reject_constant(token):
    raise AssertionError(f"bare {token} token in JSON output")


def test_to_jsonl_writes_strict_json(tmp_path, nothing_proved):
    with Ledger() as ledger:
        STUMP.solve(X, Y, caller="x", step="y")
        res = nothing_proved.solve(X, Y, np.array([1.0, -1.0, 1.0, 1.0]))
    assert res.bound == -math.inf and res.gap == math.inf and not res.certified
    path = tmp_path / "ledger.jsonl"
    ledger.to_jsonl(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    rows = [json.loads(line, parse_constant=_reject_constant) for line in lines]
    for row, record in zip(rows, ledger.records):
        assert set(row) == set(LEDGER_FIELDS)
        assert row["call"] == record["call"] and row["caller"] == record["caller"]
    assert rows[0]["caller"] == "x" and rows[0]["certified"] is True
    assert rows[1]["bound"] == "-inf" and rows[1]["gap"] == "inf"
    assert float(rows[1]["bound"]) == -math.inf  # the strings parse back to the floats
    assert rows[1]["status"] == "time_limit" and rows[1]["nodes"] is None and rows[1]["signed_weights"] is True
