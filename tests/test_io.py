"""oraclepriv.io.read_csv_problem: a file with its label column reads as LabelledData (labels always present), one
without it as WeightedData with y None, which only require_labels=False accepts."""

from __future__ import annotations

import numpy as np
import pytest

from oraclepriv.io import LabelledData, WeightedData, read_csv_problem


def test_a_labelled_file_reads_as_labelled_data(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x0,y,weight\n0.5,1,2\n-1,0,-1\n", encoding="utf-8")
    data = read_csv_problem(path)
    assert isinstance(data, LabelledData)
    assert data.y.dtype == np.int8 and data.y.tolist() == [1, 0]
    assert data.weights_or_ones().tolist() == [2.0, -1.0] and data.feature_names == ("x0",)


def test_a_file_without_labels_has_y_none_only_when_labels_are_not_required(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("x0,x1\n0,1\n2,3\n", encoding="utf-8")
    points = read_csv_problem(path, require_labels=False)
    assert type(points) is WeightedData and points.y is None
    assert points.X.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(ValueError, match="no label column 'y'"):
        read_csv_problem(path)
