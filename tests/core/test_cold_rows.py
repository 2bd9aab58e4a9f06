"""Cold rows are read with os.pread (GIL released) from exactly the bytes the memmap holds;
scattered rows for the re-rank come through a second map that reads only the pages it touches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.core.errors import ModelChangedError, TokenError
from explorer.core.model import cold_rows
from explorer.core.model.cold_rows import random_access_map, read_rows
from explorer.core.model.decode import decode_rows
from explorer.core.model.open import open_model
from tests.support.memory import mappings_of
from tests.support.models import write_model


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
    from tests.support.models import random_matrix, stored, write_gguf

    path = write_gguf(
        tmp_path / "m.gguf", {"token_embd.weight": (stored(random_matrix(64, 256), kind), kind)}
    )
    model = open_model(path)
    ids = [3, 0, 63, 3]
    rows = read_rows(model.matrix, ids)
    assert rows is not None and rows.tobytes() == np.asarray(model.matrix[ids]).tobytes()
    np.testing.assert_array_equal(decode_rows(model.cold_rows(ids)), model.vectors(ids))


linux_smaps = pytest.mark.skipif(
    not Path("/proc/self/smaps").exists(), reason="reads the mappings' flags from /proc"
)


@linux_smaps
@pytest.mark.parametrize("dtype", ["BF16", "F32"])
def test_a_random_access_map_is_a_second_map_of_the_same_rows_without_read_ahead(tmp_path, dtype):
    write_model(tmp_path / "m", rows=300, dim=24, dtype=dtype)
    model = open_model(tmp_path / "m")
    path = (tmp_path / "m" / "model.safetensors").resolve()
    assert random_access_map(model.matrix) is model.matrix  # a small matrix keeps its own map
    scattered = random_access_map(model.matrix, min_bytes=0)
    assert scattered is not model.matrix
    assert scattered.shape == model.matrix.shape and scattered.dtype == model.matrix.dtype
    assert np.asarray(scattered).tobytes() == np.asarray(model.matrix).tobytes()
    assert not scattered.flags.writeable
    flags = [f for f, _ in mappings_of(path)]
    # MADV_RANDOM shows as "rr" on its own mapping; the model's map keeps its read-ahead
    assert len(flags) == 2 and sum("rr" in f for f in flags) == 1
    view = random_access_map(model.matrix[100:], min_bytes=0)  # a view starts where it does
    assert np.asarray(view[:3]).tobytes() == np.asarray(model.matrix[100:103]).tobytes()


def test_no_random_access_map_where_it_cannot_be_the_same_rows(tmp_path):
    write_model(tmp_path / "m", rows=300, dim=24, dtype="F32")
    model = open_model(tmp_path / "m")
    columns = model.matrix[:, :5]
    assert random_access_map(columns, min_bytes=0) is columns  # rows not contiguous
    plain = np.zeros((4, 4), np.float32)
    assert random_access_map(plain, min_bytes=0) is plain  # not a memory map
    path = tmp_path / "m" / "model.safetensors"
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 24 * 4 * 10)
    assert random_access_map(model.matrix, min_bytes=0) is model.matrix  # cut since mapped


@linux_smaps
def test_the_models_scattered_rows_come_from_the_random_access_map_of_a_large_matrix(
    tmp_path, monkeypatch
):
    write_model(tmp_path / "m", rows=300, dim=24, dtype="BF16")
    path = (tmp_path / "m" / "model.safetensors").resolve()
    small = open_model(tmp_path / "m")
    assert small.scattered_matrix is small.matrix
    monkeypatch.setattr(cold_rows, "RANDOM_ACCESS_BYTES", small.matrix.nbytes)  # as if large
    model = open_model(tmp_path / "m")
    assert model.scattered_matrix is not model.matrix
    assert model.scattered_matrix.tobytes() == model.matrix.tobytes()
    assert any("rr" in f for f, _ in mappings_of(path))
    model.close()  # the second map goes with the model
    assert "scattered_matrix" not in vars(model)
