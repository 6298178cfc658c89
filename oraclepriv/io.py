"""Reading ERM problems from CSV and writing JSON that strict parsers accept.

CSV format: a header row; feature columns; the label column ``y`` with values in {0, 1}; an
optional ``weight`` column (real, any sign). Column order does not matter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["WeightedData", "jsonable", "read_csv_problem", "write_csv_problem", "to_json"]

LABEL_COLUMN = "y"
WEIGHT_COLUMN = "weight"


@dataclass(frozen=True)
class WeightedData:
    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray | None
    feature_names: tuple[str, ...]
    mask: np.ndarray | None = None  # the boolean ``mask_column`` (e.g. PPM's privacy bits), if asked for


def read_csv_problem(path: str | Path, *, require_labels: bool = True, mask_column: str | None = None) -> WeightedData:
    """Load X, y (and weights if present) from a CSV file; errors name the file, column and row.

    ``mask_column``: a required 0/1 column returned as a boolean ``mask`` and not used as a feature.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"data file {str(path)!r} does not exist")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"data file {str(path)!r} is not a valid CSV file: {exc}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(set(frame.columns)) != len(frame.columns):
        raise ValueError(f"data file {str(path)!r} has duplicate column names: {list(frame.columns)}")
    if require_labels and LABEL_COLUMN not in frame.columns:
        raise ValueError(
            f"data file {str(path)!r} has no label column {LABEL_COLUMN!r}; columns: {list(frame.columns)}"
        )
    if len(frame) == 0:
        raise ValueError(f"data file {str(path)!r} has a header but no rows")
    if mask_column is not None and mask_column not in frame.columns:
        raise ValueError(f"data file {str(path)!r} has no {mask_column!r} column; columns: {list(frame.columns)}")
    features = [c for c in frame.columns if c not in (LABEL_COLUMN, WEIGHT_COLUMN, mask_column)]
    if not features:
        raise ValueError(f"data file {str(path)!r} has no feature columns (only {list(frame.columns)})")
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(
                f"data file {str(path)!r}: column {column!r} row {row + 1} has a non-numeric or non-finite "
                f"value '{frame[column].iloc[row]}'"
            )
        frame[column] = values.astype(float)
    X = frame[features].to_numpy(dtype=np.float64)
    y = frame[LABEL_COLUMN].to_numpy() if LABEL_COLUMN in frame.columns else None
    if y is not None:
        bad = ~np.isin(y, (0.0, 1.0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"data file {str(path)!r}: label column 'y' row {row + 1} has value '{y[row]:g}'; labels must be 0 or 1"
            )
        y = y.astype(np.int8)
    weights = frame[WEIGHT_COLUMN].to_numpy(dtype=np.float64) if WEIGHT_COLUMN in frame.columns else None
    mask = None
    if mask_column is not None:
        values = frame[mask_column].to_numpy()
        bad = ~np.isin(values, (0.0, 1.0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"data file {str(path)!r}: column {mask_column!r} row {row + 1} has value '{values[row]:g}'; it must be 0 or 1"
            )
        mask = values == 1.0
    return WeightedData(X, y, weights, tuple(features), mask)


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
