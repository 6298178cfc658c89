"""Reading ERM problems from CSV and writing JSON that strict parsers accept.

CSV format: a header row; feature columns; the label column ``y`` with values in {0, 1}; an
optional ``weight`` column (real, any sign). Column order does not matter. Every column has a name of
its own, every row as many fields as the header, every cell a finite number (:func:`read_csv_problem`
refuses the rest).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

__all__ = ["LabelledData", "WeightedData", "jsonable", "read_csv_problem", "write_csv_problem", "to_json"]

LABEL_COLUMN = "y"
WEIGHT_COLUMN = "weight"


@dataclass(frozen=True)
class WeightedData:
    """A data file's columns: the features ``X``, the labels ``y`` (None when the file has no label column, which
    only ``read_csv_problem(..., require_labels=False)`` accepts) and the optional weights and mask."""

    X: np.ndarray
    y: np.ndarray | None
    weights: np.ndarray | None
    feature_names: tuple[str, ...]
    mask: np.ndarray | None = None  # the boolean ``mask_column`` (e.g. PPM's privacy bits), if asked for

    def weights_or_ones(self) -> np.ndarray:
        """The weight column, or unit weights when the file has none."""
        return np.ones(self.X.shape[0]) if self.weights is None else self.weights


@dataclass(frozen=True)
class LabelledData(WeightedData):
    """A data file with its label column (what :func:`read_csv_problem` returns when labels are required)."""

    y: np.ndarray


@overload
def read_csv_problem(
    path: str | Path, *, require_labels: Literal[True] = True, mask_column: str | None = None
) -> LabelledData: ...


@overload
def read_csv_problem(path: str | Path, *, require_labels: bool, mask_column: str | None = None) -> WeightedData: ...


def read_csv_problem(path: str | Path, *, require_labels: bool = True, mask_column: str | None = None) -> WeightedData:
    """Load X, y (and weights if present) from a CSV file; errors name the file, column and row.

    ``mask_column``: a required 0/1 column returned as a boolean ``mask`` and not used as a feature.
    Refused, never repaired: a header with an unnamed column (a pandas index written without
    ``index=False``) or a repeated name, a row with more or fewer fields than the header, an empty cell,
    a weight column whose total |weight| overflows float64, and a file that cannot be read (an ``OSError`` becomes a ``ValueError`` naming the file). Rows are
    counted from 1 after the header (blank lines are skipped); "line" is the line in the file.
    """
    import warnings

    import pandas as pd

    path = Path(path)
    shown = f"data file {str(path)!r}"
    header: list[str] = []
    try:
        if not path.is_file():
            raise ValueError(f"{shown} does not exist")
        header = _read_header(path, shown)
        with warnings.catch_warnings():
            # a first row with more fields than the header: pandas drops the extra ones with a warning
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, header=0, names=header, index_col=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        counted = None  # a row with more fields than the header (not, e.g., an unclosed quote)
        if isinstance(exc, pd.errors.ParserWarning) or "fields in line" in str(exc):
            counted = _field_count_problem(path, shown, header)
        raise ValueError(counted or f"{shown} is not a valid CSV file: {str(exc).strip()}") from None
    except (pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{shown} is not a valid CSV file: {exc}") from None
    except OSError as exc:  # /proc files, devices, a file that vanished or cannot be read
        raise ValueError(f"{shown} cannot be read: {exc.strerror or exc}") from None
    if require_labels and LABEL_COLUMN not in frame.columns:
        raise ValueError(f"{shown} has no label column {LABEL_COLUMN!r}; columns: {list(frame.columns)}")
    if len(frame) == 0:
        raise ValueError(f"{shown} has a header but no rows")
    if mask_column is not None and mask_column not in frame.columns:
        raise ValueError(f"{shown} has no {mask_column!r} column; columns: {list(frame.columns)}")
    features = [c for c in frame.columns if c not in (LABEL_COLUMN, WEIGHT_COLUMN, mask_column)]
    if not features:
        raise ValueError(f"{shown} has no feature columns (only {list(frame.columns)})")
    first_bad: tuple[int, int, Any] | None = None  # (row, column index, value) of the first bad cell
    for j, column in enumerate(frame.columns):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna().to_numpy() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            if first_bad is None or (row, j) < first_bad[:2]:
                first_bad = (row, j, frame[column].iloc[row])
        frame[column] = values.astype(float)
    if first_bad is not None:
        raise ValueError(_bad_cell_problem(path, shown, header, *first_bad))
    X = frame[features].to_numpy(dtype=np.float64)
    y = frame[LABEL_COLUMN].to_numpy() if LABEL_COLUMN in frame.columns else None
    if y is not None:
        bad = ~np.isin(y, (0.0, 1.0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{shown}: label column 'y' row {row + 1} has value '{y[row]:g}'; labels must be 0 or 1")
        y = y.astype(np.int8)
    weights = frame[WEIGHT_COLUMN].to_numpy(dtype=np.float64) if WEIGHT_COLUMN in frame.columns else None
    if weights is not None:
        from oraclepriv.validation import weight_total_problem

        problem = weight_total_problem(weights, "weight", "the 'weight' column")
        if problem is not None:
            raise ValueError(f"{shown}: {problem}")
    mask = None
    if mask_column is not None:
        values = frame[mask_column].to_numpy()
        bad = ~np.isin(values, (0.0, 1.0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{shown}: column {mask_column!r} row {row + 1} has value '{values[row]:g}'; it must be 0 or 1"
            )
        mask = values == 1.0
    if y is None:
        return WeightedData(X, None, weights, tuple(features), mask)
    return LabelledData(X, y, weights, tuple(features), mask)


def _read_header(path: Path, shown: str) -> list[str]:
    """The header's column names as written (pandas would rename an empty one 'Unnamed: 0' and a repeated
    'x0' to 'x0.1'), stripped; an unnamed or repeated column is refused."""
    import pandas as pd

    raw = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False, index_col=False)
    names = [str(c).strip() for c in raw.iloc[0]] if len(raw) else []
    for j, name in enumerate(names):
        if not name or _UNNAMED.fullmatch(name):
            hint = ""
            if j == 0:
                hint = " (the first column looks like a pandas index: write the file with to_csv(..., index=False))"
            elif j == len(names) - 1:
                hint = " (a comma at the end of the header line?)"
            raise ValueError(
                f"{shown}: column {j + 1} of the header has no name ({name!r}){hint}; every column needs a name"
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{shown} has the column name {name!r} twice; column names must be unique: {names}")
        seen.add(name)
    return names


_UNNAMED = re.compile(r"Unnamed: \d+")


def _raw_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank line after the header, as the csv module reads them."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        for fields in reader:
            if len(fields) > 1 or (fields and fields[0].strip()):  # pandas skips blank lines too
                yield reader.line_num, fields


def _field_count_problem(path: Path, shown: str, header: list[str]) -> str | None:
    """The first line whose field count differs from the header's, said so (None: none found)."""
    if not header:
        return None
    try:
        for row, (line, fields) in enumerate(_raw_rows(path), start=1):
            if len(fields) != len(header):
                return (
                    f"{shown}: row {row} (line {line}) has {len(fields)} fields but the header has {len(header)} "
                    f"({','.join(header)})"
                )
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None


def _bad_cell_problem(path: Path, shown: str, header: list[str], row: int, column: int, parsed: Any) -> str:
    """What is wrong at data row ``row`` (0-based), column ``column``: a row of the wrong length, an empty
    cell, or a value that is not a finite number (shown as written in the file; ``parsed``: as pandas read it)."""
    counted = _field_count_problem(path, shown, header)
    if counted is not None:
        return counted
    written = None
    try:
        for k, (_, fields) in enumerate(_raw_rows(path)):
            if k == row:
                written = fields[column].strip() if column < len(fields) else ""
                break
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    where = f"{shown}: column {header[column]!r} row {row + 1}"
    if written == "":
        return f"{where} is an empty cell; every cell needs a number"
    value = written if written is not None else str(parsed)
    return f"{where} has a non-numeric or non-finite value {value!r}"


def write_csv_problem(path: str | Path, X: np.ndarray, y: np.ndarray | None, weights: np.ndarray | None = None) -> None:
    """Write X (columns x0, x1, ...), y and optional weights in the CSV format above (repr-exact floats)."""
    X = np.asarray(X, dtype=np.float64)
    header = [f"x{j}" for j in range(X.shape[1])]
    columns = [X[:, j] for j in range(X.shape[1])]
    if y is not None:
        header.append(LABEL_COLUMN)
        columns.append(np.asarray(y))
    if weights is not None:
        header.append(WEIGHT_COLUMN)
        columns.append(np.asarray(weights, dtype=np.float64))
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(",".join(header) + "\n")
        for row in zip(*columns):
            fh.write(",".join(_format_number(v) for v in row) + "\n")


def _format_number(value: Any) -> str:
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    return repr(float(value))


def jsonable(value: Any) -> Any:
    """Recursively convert mappings, sequences, numpy arrays and scalars to JSON-friendly values;
    non-finite floats become the strings "inf"/"-inf", NaN becomes None."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    return value


def to_json(value: Any, **kwargs: Any) -> str:
    """Strict JSON (non-finite floats become the strings "inf"/"-inf", NaN becomes null)."""
    return json.dumps(jsonable(value), allow_nan=False, **kwargs)


def read_resume_file(path: str | Path) -> str | None:
    """The text of a file an interrupted run left to resume from (``cells.jsonl``, or its gzip snapshot
    ``cells.jsonl.gz``); None when there is none. Anything that is not a readable UTF-8 (gzip) text file is a
    ValueError naming it, rather than an error deep in the run or a resume that silently starts over."""
    import gzip

    path = Path(path)
    if not path.exists():
        return None
    fix = "delete it (its cells are computed again) or rerun with --no-resume"
    if not path.is_file():
        raise ValueError(f"{str(path)!r} is not a file: the run keeps its finished cells there; delete it")
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        return path.read_text(encoding="utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{str(path)!r} cannot be read as the run's cells ({type(exc).__name__}: {exc}); {fix}"
        ) from None
