"""Tiny real GGUF files written with llama.cpp's own `gguf.GGUFWriter` (import as
`from core.gguf_fixtures import write_gguf`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as T

# K-quant blocks cannot be produced by gguf's Python quantiser: raw bytes with sane scales
K_TYPES = ("Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K")


def stored(values: np.ndarray, type_name: str, seed: int = 0) -> np.ndarray:
    """The bytes (or floats) a GGUF file stores for `values` [rows, dim] in `type_name`."""
    qtype = T[type_name]
    if type_name == "F32":
        return values.astype(np.float32)
    if type_name == "F16":
        return values.astype(np.float16)
    if type_name in K_TYPES:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        rows, dim = values.shape
        rng = np.random.default_rng(seed)
        raw = rng.integers(0, 256, (rows, dim // block, size), dtype=np.uint8)
        # every f16 in a K block (d, dmin) sits in its last 2 or 4 bytes: make them finite
        scale_bytes = 2 if type_name in ("Q3_K", "Q6_K") else 4
        scales = (rng.random((rows, dim // block, scale_bytes // 2)) * 0.01).astype(np.float16)
        raw[..., size - scale_bytes :] = scales.view(np.uint8)
        if type_name in ("Q4_K", "Q5_K"):  # these keep d, dmin first, not last
            raw[..., :4] = scales.view(np.uint8)
        return raw.reshape(rows, -1)
    return gguf.quants.quantize(values.astype(np.float32), qtype)


def decoded(raw: np.ndarray, type_name: str) -> np.ndarray:
    """What llama.cpp's Python package decodes the stored rows to (the reference)."""
    if type_name in ("F32", "F16"):
        return raw.astype(np.float32)
    return gguf.quants.dequantize(raw, T[type_name])


def write_gguf(
    path: str | Path,
    tensors: Mapping[str, tuple[np.ndarray, str]],
    metadata: Mapping[str, object] | None = None,
    tokenizer: Mapping[str, object] | None = None,
    arch: str = "llama",
) -> Path:
    """tensors: name → (stored array from `stored`, type name). tokenizer: tokenizer.ggml.* keys
    without the prefix (model, pre, tokens, merges, token_type, scores, …)."""
    path = Path(path)
    w = gguf.GGUFWriter(str(path), arch)
    for key, value in (metadata or {}).items():
        _add(w, key, value)
    for key, value in (tokenizer or {}).items():
        _add(w, f"tokenizer.ggml.{key}", value)
    for name, (array, type_name) in tensors.items():
        if type_name in ("F32", "F16"):
            w.add_tensor(name, array)
        else:
            w.add_tensor(name, array, raw_shape=array.shape, raw_dtype=T[type_name])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _add(w: gguf.GGUFWriter, key: str, value: object) -> None:
    if isinstance(value, bool):
        w.add_bool(key, value)
    elif isinstance(value, int):
        w.add_uint32(key, value)
    elif isinstance(value, str):
        w.add_string(key, value)
    elif isinstance(value, np.ndarray):
        w.add_array(key, value.tolist())
    elif isinstance(value, Sequence):
        w.add_array(key, list(value))
    else:
        raise TypeError(f"{key}: {type(value)}")


def random_values(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((rows, dim)) * 0.5).astype(np.float32)
