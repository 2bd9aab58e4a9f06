"""Cold rows are read with os.pread (GIL released) from exactly the bytes the memmap holds."""

from __future__ import annotations

import numpy as np
import pytest
from core.fixtures import write_model

from explorer.core.cold_rows import read_rows
from explorer.core.errors import ModelChangedError, TokenError
from explorer.core.model import open_model
from explorer.core.vectors import decode_rows


@pytest.mark.parametrize("dtype", ["BF16", "F16", "F32"])
def test_rows_read_from_the_file_equal_the_rows_of_the_map(tmp_path, dtype):
    write_model(tmp_path / "m", rows=300, dim=24, dtype=dtype, sharded=dtype == "F16")
    model = open_model(tmp_path / "m")
    ids = [7, 7, 0, 299, 150]
    rows = read_rows(model.matrix, ids)
    assert rows is not None and rows.dtype == model.matrix.dtype and rows.flags.writeable
    assert rows.tobytes() == np.asarray(model.matrix[ids]).tobytes()
    assert model.cold_rows(ids).tobytes() == model.raw_rows(ids).tobytes()
    np.testing.assert_array_equal(decode_rows(model.cold_rows(ids)), model.vectors(ids))
    # a view of the map starts where the view does
    assert read_rows(model.matrix[10:], [0, 5]).tobytes() == model.matrix[[10, 15]].tobytes()
    assert read_rows(model.matrix[:, :5], [1]) is None  # rows not contiguous: not from the file
    assert read_rows(np.zeros((4, 4)), [1]) is None  # not a memory map
    with pytest.raises(TokenError):
        model.cold_rows([300])


def test_a_file_cut_since_it_was_mapped_is_a_changed_model(tmp_path):
    write_model(tmp_path / "m", rows=300, dim=24, dtype="F32")
    model = open_model(tmp_path / "m")
    path = tmp_path / "m" / "model.safetensors"
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 24 * 4 * 10)  # the last ten rows
    with pytest.raises(ModelChangedError, match="changed on disk"):
        model.cold_rows([3])


def test_a_file_replaced_by_another_of_another_size_is_a_changed_model(tmp_path):
    write_model(tmp_path / "m", rows=300, dim=24, dtype="F32")
    model = open_model(tmp_path / "m")
    write_model(tmp_path / "other", rows=400, dim=24, dtype="F32", seed=1)
    (tmp_path / "other" / "model.safetensors").replace(tmp_path / "m" / "model.safetensors")
    with pytest.raises(ModelChangedError, match="changed on disk"):
        read_rows(model.matrix, [3])


@pytest.mark.parametrize("kind", ["F16", "Q8_0", "Q4_K"])
def test_gguf_rows_read_from_the_file_equal_the_rows_of_the_map(tmp_path, kind):
    from core.gguf_fixtures import random_values, stored, write_gguf

    path = write_gguf(
        tmp_path / "m.gguf", {"token_embd.weight": (stored(random_values(64, 256), kind), kind)}
    )
    model = open_model(path)
    ids = [3, 0, 63, 3]
    rows = read_rows(model.matrix, ids)
    assert rows is not None and rows.tobytes() == np.asarray(model.matrix[ids]).tobytes()
    np.testing.assert_array_equal(decode_rows(model.cold_rows(ids)), model.vectors(ids))
