"""Scores and rows read straight from quantised GGUF blocks equal `gguf.quants.dequantize`
followed by numpy, for every type the kernels read; bad scales give non-finite norms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize
from safetensors import safe_open

from explorer.core.errors import ModelFormatError
from explorer.core.model import ggml_blocks
from explorer.core.model.open import open_model
from explorer.core.search import exact
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
from tests.support.models import K_TYPES, stored, write_gguf

ROWS = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
TYPES = [ggml_blocks.NAMES[t] for t in ggml_blocks.BLOCKS]


def _real_rows(n: int, dim: int) -> np.ndarray:
    with safe_open(ROWS, framework="numpy") as f:
        bits = f.get_slice("token_embd.weight")[:n, :dim]
    return (np.asarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _model(tmp_path, type_name: str, rows: int = 301, raw: np.ndarray | None = None):
    dim = 512 if type_name in K_TYPES else 576  # K-quants: 256 values a block
    if raw is None:
        raw = stored(_real_rows(rows, dim), type_name, seed=rows)
    path = write_gguf(tmp_path / "m.gguf", {"token_embd.weight": (raw, type_name)})
    return open_model(path, tokenizer=False), raw


def _reference(raw: np.ndarray, type_name: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return dequantize(raw, T[type_name])


@pytest.mark.parametrize("type_name", TYPES)
def test_decoded_blocks_equal_gguf_bit_for_bit(tmp_path, type_name):
    model, raw = _model(tmp_path, type_name)
    ref = _reference(raw, type_name).view(np.uint32)
    compiled = ggml_blocks.decode_blocks(np.asarray(model.matrix), T[type_name])
    assert compiled.dtype == np.float32
    assert np.array_equal(compiled.view(np.uint32), ref)
    assert np.array_equal(model.decode_block(0, model.rows).view(np.uint32), ref)


@pytest.mark.parametrize("type_name", TYPES)
def test_scores_equal_dequantise_then_numpy(tmp_path, monkeypatch, type_name):
    model, raw = _model(tmp_path, type_name)
    ref = _reference(raw, type_name).astype(np.float64)
    queries = np.stack([ref[7], -ref[300] + 0.25]).astype(np.float32)
    # blocks of 64 rows: the scan's last block is a partial one (301 rows)
    monkeypatch.setattr(exact, "BLOCK_BYTES", 64 * raw.shape[1])
    dots, sq = exact.scan(model.matrix, queries, want_sq=True)
    want = queries.astype(np.float64) @ ref.T
    scale = np.abs(queries).astype(np.float64) @ np.abs(ref).T
    assert np.all(np.abs(dots - want) <= 1e-5 * scale + 1e-30)
    assert sq is not None
    assert np.allclose(sq, np.einsum("ij,ij->i", ref, ref), rtol=1e-12, atol=0)
    again, no_sq = exact.scan(model.matrix, queries, want_sq=False)  # the later passes' kernels
    assert no_sq is None
    assert np.all(np.abs(again - want) <= 1e-5 * scale + 1e-30)
    ids = np.array([300, 0, 7, 7, 150])
    assert np.allclose(exact.dots_for_ids(model.matrix, ids, queries), dots[:, ids], rtol=1e-6)


def test_exact_neighbours_equal_numpy(tmp_path):
    model, raw = _model(tmp_path, "Q8_0", rows=400)
    ref = _reference(raw, "Q8_0").astype(np.float64)
    unit = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    result = NeighborSearcher(model, cache_dir=tmp_path / "c").search(
        query_for_ids(model, [42]), k=10, exact=True
    )
    cos = unit @ unit[42]
    cos[42] = -np.inf
    assert list(result.ids) == list(np.argsort(-cos, kind="stable")[:10])  # ties by id


@pytest.mark.parametrize("type_name", ["Q8_0", "Q4_1", "Q5_0", "Q6_K", "Q4_K"])
def test_nan_and_inf_scales_make_norms_non_finite(tmp_path, type_name):
    dim = 512 if type_name in K_TYPES else 576
    raw = stored(_real_rows(300, dim), type_name).copy()
    at = {"Q6_K": 208}.get(type_name, 0)  # where the first block's f16 scale d sits
    raw[5, at : at + 2] = np.array([np.inf], np.float16).view(np.uint8)
    raw[9, at : at + 2] = np.array([np.nan], np.float16).view(np.uint8)
    model, _ = _model(tmp_path, type_name, raw=raw)
    ref = _reference(raw, type_name)
    q = np.ones((1, dim), np.float32)
    dots, sq = exact.scan(model.matrix, q, want_sq=True)
    assert sq is not None
    bad = ~np.isfinite(np.einsum("ij,ij->i", ref.astype(np.float64), ref.astype(np.float64)))
    assert bad[5] and bad[9]
    assert np.array_equal(~np.isfinite(sq), bad)
    assert np.all(np.isfinite(dots[0, ~bad]))


@pytest.mark.parametrize(("type_name", "row_bytes"), [("Q8_1", 80), ("Q8_K", 292), ("I32", 64)])
def test_rows_of_a_type_nothing_decodes_name_the_supported_types(tmp_path, type_name, row_bytes):
    raw = np.zeros((4, row_bytes), np.uint8)
    path = write_gguf(tmp_path / "m.gguf", {"token_embd.weight": (raw, type_name)})
    with pytest.raises(
        ModelFormatError, match=rf"stored as {type_name}.*supported: F32, F16, Q4_0"
    ):
        open_model(path, tokenizer=False)


def test_exact_or_index_is_chosen_by_scan_cost(tmp_path, monkeypatch):
    from explorer.core.search import neighbors

    model, _ = _model(tmp_path, "Q8_0", rows=300)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "c")
    assert searcher.exact_is_cheap  # 300 rows: estimated in microseconds
    monkeypatch.setattr(neighbors, "KERNEL_BYTES_PER_SECOND", 1.0)  # as if the disk were slow
    assert not searcher.exact_is_cheap
    query = query_for_ids(model, [3])
    searcher.search(query, exact=True)  # first pass: norms, not timed
    searcher.search(query, exact=True)
    assert 0 < searcher.exact_seconds < 1.0  # measured now, no longer the estimate
    assert searcher.exact_is_cheap


def test_large_blocks_decode_through_the_kernels_as_gguf_does(tmp_path):
    from explorer.core.model import decode

    raw = stored(_real_rows(2048, 576), "Q8_0")
    raw = np.concatenate([raw, raw, raw[:10]])  # past the size from which the kernels decode
    assert len(raw) >= decode._COMPILED_FROM_ROWS
    model, _ = _model(tmp_path, "Q8_0", raw=raw)
    ours = model.decode_block(0, model.rows)
    assert np.array_equal(ours.view(np.uint32), _reference(raw, "Q8_0").view(np.uint32))
