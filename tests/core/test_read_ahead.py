"""Rows are read ahead with os.pread (GIL released) from exactly the bytes the memmap holds."""

from __future__ import annotations

import numpy as np
from core.fixtures import write_model

from explorer.core.model import open_model
from explorer.core.read_ahead import _mapped_file, read_ahead


def test_read_ahead_reads_the_bytes_of_the_rows_asked_for(tmp_path):
    write_model(tmp_path / "m", rows=300, dim=24, dtype="BF16")
    model = open_model(tmp_path / "m")
    filename, first = _mapped_file(model.matrix)
    raw = (tmp_path / "m" / "model.safetensors").read_bytes()
    assert filename.endswith("model.safetensors")
    row = model.matrix.strides[0]
    for i in (0, 7, 299):
        assert raw[first + i * row : first + (i + 1) * row] == model.matrix[i].tobytes()
    # duplicates counted once; out-of-range ids ignored (the read itself reports them)
    assert read_ahead(model.matrix, [7, 7, 0, 299, -1, 300]) == 3 * row
    assert read_ahead(model.matrix[1:], [0]) == row  # a view of the map
    assert read_ahead(np.zeros((4, 4)), [1]) == 0  # not a memory map: nothing to do
