"""Stored values decoded exactly to float32, per dtype (quantised GGUF blocks included)."""

from __future__ import annotations

from functools import cache

import numpy as np

from explorer.core.model.dtypes import bf16_to_float32, is_bf16

Q8_0 = 8  # GGML type id; the type most GGUF embeddings are stored in
_Q8_0_BLOCK = 34  # bytes: a float16 scale, then 32 int8 values


@cache
def decodable(qtype: int) -> bool:
    """Whether rows of GGML type `qtype` can be decoded (by our kernels or `gguf.quants`)."""
    if qtype == Q8_0:  # decoded here (a few rows) or by the compiled kernels: no gguf to load
        return True
    import warnings

    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    try:
        kind = GGMLQuantizationType(qtype)
        if kind == GGMLQuantizationType.F64:  # mapped as float64 values, never dequantised
            return True
        block = np.zeros(GGML_QUANT_SIZES[kind][1], dtype=np.uint8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dequantize(block, kind)
    except (ValueError, KeyError, NotImplementedError):
        return False
    return True


def decodable_names() -> list[str]:
    from gguf.constants import GGMLQuantizationType

    return [t.name for t in GGMLQuantizationType if decodable(t)]


def ggml_type(raw: np.ndarray) -> int | None:
    """The GGML quantisation type of raw GGUF blocks (uint8 tagged by formats.gguf), else None."""
    meta = raw.dtype.metadata
    return None if not meta else meta.get("ggml_type")


# Fewer rows (lookups, samples such as the tokenizer check's) decode with numpy: no numba to load.
_COMPILED_FROM_ROWS = 4096


def decode_rows(raw: np.ndarray) -> np.ndarray:
    """Exact conversion of stored values: every bf16/f16/f8 value is representable in float32;
    quantised GGUF blocks decode exactly as `gguf.quants.dequantize` does."""
    qtype = ggml_type(raw)
    if qtype is not None and raw.ndim == 2 and raw.shape[0] >= _COMPILED_FROM_ROWS:
        from explorer.core.model import ggml_blocks  # numba: worth it for blocks of rows

        if ggml_blocks.supported(qtype):
            return ggml_blocks.decode_blocks(raw, qtype)
    if qtype == Q8_0 and raw.ndim >= 1 and raw.shape[-1] % _Q8_0_BLOCK == 0:
        return _q8_0_rows(raw)
    if qtype is not None:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
        from gguf.quants import dequantize

        if raw.size == 0:  # gguf cannot reshape an empty block array
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType(qtype)]
            return np.zeros((*raw.shape[:-1], raw.shape[-1] // size * block), np.float32)
        plain = np.ascontiguousarray(raw).view(np.uint8)
        return np.asarray(dequantize(plain, GGMLQuantizationType(qtype)), dtype=np.float32)
    if is_bf16(raw.dtype):
        return bf16_to_float32(raw)
    if raw.dtype == np.float64:
        return np.array(raw, dtype=np.float64)
    return raw.astype(np.float32)


def _q8_0_rows(raw: np.ndarray) -> np.ndarray:
    """Q8_0 blocks decoded as gguf.quants does (int8 value × float16 scale, in float32), without
    importing gguf (a one-row command would pay more for that import than for its work)."""
    lead = raw.shape[:-1]
    blocks = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, _Q8_0_BLOCK)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    values = blocks[:, 2:].copy().view(np.int8).astype(np.float32) * scale
    return values.reshape(*lead, raw.shape[-1] // _Q8_0_BLOCK * 32)
