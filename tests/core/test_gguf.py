"""GGUF files open like any model: rows decoded lazily and exactly as llama.cpp's `gguf` does."""

from __future__ import annotations

import gguf
import numpy as np
import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.model.formats.gguf import GGUFFile
from explorer.core.model.open import open_model
from explorer.core.rows.bits import quant_blocks
from explorer.core.rows.read import load_rows
from tests.support.models import K_TYPES, decoded, random_matrix, stored, write_gguf

TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", *K_TYPES]


def _embedding_model(tmp_path, type_name, rows=37, dim=256, output=None, name="m.gguf"):
    raw = stored(random_matrix(rows, dim, seed=1), type_name, seed=2)
    tensors = {
        "token_embd.weight": (raw, type_name),
        "output_norm.weight": (np.ones(dim, np.float32), "F32"),
    }
    if output is not None:
        tensors["output.weight"] = output
    path = write_gguf(tmp_path / name, tensors, metadata={"llama.vocab_size": rows})
    return path, raw


@pytest.mark.parametrize("type_name", TYPES)
def test_rows_equal_gguf_dequantize(tmp_path, type_name):
    path, raw = _embedding_model(tmp_path, type_name)
    expected = decoded(raw, type_name)
    model = open_model(path)
    assert (model.format, model.tensor, model.dtype) == ("gguf", "token_embd.weight", type_name)
    assert (model.rows, model.dim) == (37, 256)
    ids = [36, 0, 5, 5, 17]
    np.testing.assert_array_equal(model.vectors(ids), expected[ids])
    np.testing.assert_array_equal(model.decode_block(3, 11), expected[3:11])
    np.testing.assert_array_equal(model.decode_block(0, model.rows), expected)
    # the raw matrix is the read-only memory map of what the file stores
    assert not model.matrix.flags.writeable
    assert model.matrix.shape[0] == 37
    row = load_rows(model, [5])[0]
    np.testing.assert_array_equal(row.values, expected[5])
    assert row.dtype == type_name
    model.close()


@pytest.mark.parametrize("type_name", ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"])
def test_quant_blocks_rebuild_each_value(tmp_path, type_name):
    path, raw = _embedding_model(tmp_path, type_name)
    model = open_model(path)
    blocks = quant_blocks(model.raw_rows([7])[0])
    assert blocks is not None and blocks.type_name == type_name
    assert blocks.quants.shape == (256 // 32, 32)
    rebuilt = blocks.scale[:, None] * blocks.quants.astype(np.float32)
    if blocks.minimum is not None:
        rebuilt = rebuilt + blocks.minimum[:, None]
    np.testing.assert_array_equal(rebuilt.reshape(-1), model.vector(7))
    assert blocks.bits_per_value == 8 * blocks.block_bytes / 32
    assert np.abs(blocks.quants).max() < 2**blocks.quant_bits


def test_quant_blocks_of_float_rows_is_none(tmp_path):
    path, _ = _embedding_model(tmp_path, "F16")
    assert quant_blocks(open_model(path).raw_rows([0])[0]) is None


def test_tied_when_no_output_head(tmp_path):
    path, _ = _embedding_model(tmp_path, "Q8_0")
    model = open_model(path)
    assert model.tied is True and model.output_tensor is None and model.warnings == []
    assert "llama.cpp reuses token_embd" in model.info()["head"]


def test_separate_output_head(tmp_path):
    head = stored(random_matrix(37, 256, seed=9), "Q6_K", seed=3)
    path, _ = _embedding_model(tmp_path, "Q8_0", output=(head, "Q6_K"))
    model = open_model(path)
    assert model.output_tensor == "output.weight"
    assert model.tied is False and model.warnings == []


def test_identical_copy_of_the_embedding_is_reported(tmp_path):
    raw = stored(random_matrix(200, 64, seed=1), "Q8_0")
    path = write_gguf(
        tmp_path / "m.gguf",
        {"token_embd.weight": (raw, "Q8_0"), "output.weight": (raw.copy(), "Q8_0")},
    )
    model = open_model(path)
    assert model.tied is True and not model.head.complete  # only sampled rows so far
    assert model.check_head().complete and model.tied is True
    assert any("stored twice" in w for w in model.info()["warnings"])
    # a copy that differs in one row late in the matrix is found by the full comparison
    other = raw.copy()
    other[199 - 1, 5] ^= 1
    path2 = write_gguf(
        tmp_path / "n.gguf",
        {"token_embd.weight": (raw, "Q8_0"), "output.weight": (other, "Q8_0")},
    )
    model2 = open_model(path2)
    if model2.tied:  # the changed row was not among the sampled rows
        model2.check_head()
    assert model2.tied is False and model2.warnings == []


def test_split_files(tmp_path):
    raw = stored(random_matrix(40, 64), "Q8_0")
    first = tmp_path / "model-00001-of-00002.gguf"
    write_gguf(first, {"output_norm.weight": (np.ones(64, np.float32), "F32")})
    write_gguf(tmp_path / "model-00002-of-00002.gguf", {"token_embd.weight": (raw, "Q8_0")})
    model = open_model(first)
    assert model.format == "gguf-split" and len(model.files) == 2
    np.testing.assert_array_equal(model.vectors([39]), decoded(raw, "Q8_0")[[39]])
    (tmp_path / "model-00002-of-00002.gguf").unlink()
    with pytest.raises(ModelFormatError, match="part model-00002-of-00002.gguf is missing"):
        open_model(first)


def test_folder_with_a_gguf_file(tmp_path):
    path, raw = _embedding_model(tmp_path, "Q4_0", name="tiny-Q4_0.gguf")
    # a vision projector beside it (LM Studio keeps them together) is not the language model
    write_gguf(tmp_path / "mmproj-tiny.gguf", {"v.w": (np.ones((4, 4), np.float32), "F32")})
    model = open_model(tmp_path)
    assert model.files == [path]
    assert model.vectors([]).shape == (0, 256)
    np.testing.assert_array_equal(model.vectors([1]), decoded(raw, "Q4_0")[[1]])


@pytest.mark.parametrize("cut", [4, 30, 200, -10])
def test_truncated_file(tmp_path, cut):
    path, _ = _embedding_model(tmp_path, "Q8_0")
    data = path.read_bytes()
    path.write_bytes(data[:cut])
    with pytest.raises(ModelFormatError, match="m.gguf"):
        open_model(path)


def test_not_gguf_and_unknown_tensor(tmp_path):
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"GGML" + bytes(100))
    with pytest.raises(ModelFormatError, match="no GGUF magic"):
        open_model(bad)
    path, _ = _embedding_model(tmp_path, "Q8_0")
    with pytest.raises(ModelFormatError, match="no tensor named 'nope'"):
        open_model(path, tensor="nope")


def test_header_matches_gguf_reader(tmp_path):
    path, _ = _embedding_model(tmp_path, "Q5_1")
    ours = GGUFFile.open(path)
    reader = gguf.GGUFReader(path)
    for t in reader.tensors:
        mine = ours.tensors[t.name]
        assert mine.begin == t.data_offset and mine.nbytes == t.n_bytes
        assert mine.shape == tuple(int(x) for x in reversed(t.shape))
    assert ours.metadata["llama.vocab_size"] == 37
    assert GGUFFile.open(path, arrays=False).tensors.keys() == ours.tensors.keys()


def test_exact_neighbors_on_a_quantised_matrix_equal_numpy(tmp_path):
    from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

    path, raw = _embedding_model(tmp_path, "Q4_1", rows=300, dim=64)
    full = decoded(raw, "Q4_1")
    model = open_model(path)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    result = searcher.search(query_for_ids(model, [11]), k=10, exact=True)
    unit = full / np.linalg.norm(full, axis=1, keepdims=True)
    cos = unit @ unit[11]
    cos[11] = -np.inf
    top = np.argsort(-cos, kind="stable")[:10]
    assert list(result.ids) == list(top)
    np.testing.assert_allclose(result.scores, cos[top], atol=1e-5)
