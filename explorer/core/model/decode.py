"""Stored values decoded exactly to float32, per dtype (quantised GGUF blocks included)."""

from __future__ import annotations

import numpy as np

from explorer.core.model.dtypes import bf16_to_float32, is_bf16


def ggml_type(raw: np.ndarray) -> int | None:
    """The GGML quantisation type of raw GGUF blocks (uint8 tagged by formats.gguf), else None."""
    meta = raw.dtype.metadata
    return None if not meta else meta.get("ggml_type")


def decode_rows(raw: np.ndarray) -> np.ndarray:
    """Exact conversion of stored values: every bf16/f16/f8 value is representable in float32;
    quantised GGUF blocks decode exactly as `gguf.quants.dequantize` does."""
    qtype = ggml_type(raw)
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
