"""Tiny real model files written into a test's tmp_path: safetensors of any dtype (with the
product's own writer), sharded, tied or untied; hand-built safetensors images for malformed
files; GGUF files (with llama.cpp's `gguf.GGUFWriter`); a model with planted oddities for the
analysis tests; and a pickle checkpoint that would run code if it were loaded."""

from __future__ import annotations

import json
import pickle
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

import gguf
import ml_dtypes
import numpy as np
from gguf import GGMLQuantizationType as T
from tokenizers import Tokenizer

from explorer.core.model.formats.safetensors import write_safetensors
from tests.support.tokenizers import (
    WORDS,
    bert_words,
    make_bpe_tokenizer,
    make_wordpiece_tokenizer,
)

TENSOR = "model.embed_tokens.weight"
# the safetensors dtypes test data is built in: every float one, and two integer ones
NUMPY_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(t)
    for name, t in (
        ("F64", "<f8"),
        ("F32", "<f4"),
        ("F16", "<f2"),
        ("BF16", ml_dtypes.bfloat16),
        ("F8_E4M3", ml_dtypes.float8_e4m3fn),
        ("F8_E5M2", ml_dtypes.float8_e5m2),
        ("I64", "<i8"),
        ("I32", "<i4"),
    )
}


def random_matrix(rows: int, dim: int, dtype: str = "F32", seed: int = 0) -> np.ndarray:
    """Random normal values (scale 0.5) rounded to the stored dtype."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, dim)) * 0.5).astype(NUMPY_DTYPES[dtype])


def write_arrays(path: str | Path, arrays: Mapping[str, np.ndarray]) -> Path:
    """Write numpy arrays (any safetensors dtype) as a safetensors file."""
    path = Path(path)
    write_safetensors(path, dict(arrays))
    return path


def write_model(
    folder: str | Path,
    rows: int = 64,
    dim: int = 8,
    dtype: str = "F32",
    tensor_name: str = TENSOR,
    sharded: bool = False,
    tokenizer: str | Path | Tokenizer | None = None,
    config: Mapping[str, object] | None = None,
    output_name: str | None = None,
    matrix: np.ndarray | None = None,
    extra: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
    layers: bool = True,
) -> np.ndarray:
    """Write a Hugging Face style model folder and return the embedding matrix as stored.

    sharded=True writes two shards plus model.safetensors.index.json with the embedding in the
    *second* shard. tokenizer: "bpe", "wordpiece", a Tokenizer, or a path to a tokenizer.json to
    copy. output_name adds an untied output head of the same shape. extra adds more tensors;
    layers=False leaves out the norm and MLP tensors a checkpoint holds beside the embedding.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if matrix is None:
        matrix = random_matrix(rows, dim, dtype, seed)
    other: dict[str, np.ndarray] = {}
    if layers:
        other["model.norm.weight"] = np.ones(dim, dtype=np.float32)
        other["model.layers.0.mlp.weight"] = random_matrix(dim, dim * 2, "F32", seed + 1)
    if output_name:
        other[output_name] = random_matrix(matrix.shape[0], matrix.shape[1], dtype, seed + 2)
    other.update(extra or {})
    if sharded:
        first = {k: v for k, v in other.items() if k != output_name}
        second = {tensor_name: matrix, **({output_name: other[output_name]} if output_name else {})}
        shards = {
            "model-00001-of-00002.safetensors": first,
            "model-00002-of-00002.safetensors": second,
        }
        weight_map = {}
        for shard, arrays in shards.items():
            write_arrays(folder / shard, arrays)
            weight_map.update({name: shard for name in arrays})
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map})
        )
    else:
        write_arrays(folder / "model.safetensors", {**other, tensor_name: matrix})
    if config is not None:
        (folder / "config.json").write_text(json.dumps(dict(config)))
    if isinstance(tokenizer, Tokenizer):
        tokenizer.save(str(folder / "tokenizer.json"))
    elif tokenizer == "bpe":
        make_bpe_tokenizer(folder / "tokenizer.json")
    elif tokenizer == "wordpiece":
        make_wordpiece_tokenizer(folder / "tokenizer.json")
    elif tokenizer is not None:
        (folder / "tokenizer.json").write_bytes(Path(tokenizer).read_bytes())
    return matrix


def word_model(
    folder: Path,
    rows: int = 16,
    dim: int = 8,
    seed: int = 0,
    dtype=ml_dtypes.bfloat16,
    words: Sequence[str] | None = None,
) -> tuple[Path, np.ndarray]:
    """The window tests' model: a standard normal embedding alone, a lowercasing WordLevel
    tokenizer ([UNK] [CLS] [SEP], then the words: the first rows - 3 of WORDS by default) and
    a config.json."""
    words = WORDS[: max(0, rows - 3)] if words is None else words
    matrix = np.random.default_rng(seed).standard_normal((rows, dim)).astype(dtype)
    write_model(
        folder,
        matrix=matrix,
        tokenizer=bert_words(words),
        config={"vocab_size": rows},
        layers=False,
    )
    return folder, matrix


# --- hand-built safetensors images (malformed files, and a reader checked without our writer)


def safetensors_bytes(
    tensors: Mapping[str, tuple[str, list[int], bytes]], metadata: Mapping[str, str] | None = None
) -> bytes:
    """A safetensors file image from (dtype name, shape, raw bytes) per tensor, in order."""
    header: dict[str, object] = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + len(data)],
        }
        offset += len(data)
    return raw_safetensors(header, b"".join(data for _, _, data in tensors.values()))


def raw_safetensors(header: object, data: bytes = b"", header_len: int | None = None) -> bytes:
    """A file image from any header object (malformed files); header_len overrides the prefix."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    n = len(raw) if header_len is None else header_len
    return struct.pack("<Q", n) + raw + data


# --- the analysis tests' model: a trained BPE vocabulary plus PAD padding rows the tokenizer
# never produces; planted: an all-zero row, a tiny row, a huge row, two rows near the padding
# rows' shared direction, and one dimension whose scale is 20× the others.

PAD = 24
DIM = 48
ZERO, TINY, HUGE, NEAR = 50, 60, 70, (80, 81)
OUTLIER_DIM = 7


def planted_matrix(rows: int, dim: int = DIM, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((rows, dim)) * 0.5
    m[:, OUTLIER_DIM] *= 20.0
    direction = rng.standard_normal(dim)
    direction[OUTLIER_DIM] = 0.0
    m[rows - PAD :] = direction + rng.standard_normal((PAD, dim)) * 0.05  # the padding rows
    for i in NEAR:
        m[i] = direction + rng.standard_normal(dim) * 0.05
    m[ZERO] = 0.0
    m[TINY] *= 1e-3
    m[HUGE] *= 50.0
    return m


def planted_model(
    folder: Path, dtype: str = "F32", tied: bool = True, seed: int = 3
) -> tuple[Path, np.ndarray, np.ndarray | None]:
    """Write the model; return (folder, E as stored, U as stored or None when tied)."""
    folder.mkdir(parents=True, exist_ok=True)
    tok_path = folder / "tok-src.json"
    make_bpe_tokenizer(tok_path)
    vocab = Tokenizer.from_file(str(tok_path)).get_vocab_size(with_added_tokens=True)
    rows = vocab + PAD
    matrix = planted_matrix(rows, seed=seed).astype(NUMPY_DTYPES[dtype])
    config = {"vocab_size": rows, "tie_word_embeddings": tied}
    head = None
    extra = None
    if not tied:
        rng = np.random.default_rng(seed + 10)
        # half the head follows E (cosine near 1), half is independent
        u = matrix.astype(np.float64) + rng.standard_normal(matrix.shape) * 0.01
        u[rows // 2 :] = rng.standard_normal((rows - rows // 2, DIM))
        head = u.astype(NUMPY_DTYPES[dtype])
        extra = {"lm_head.weight": head}
    write_model(folder, matrix=matrix, tokenizer=tok_path, config=config, extra=extra)
    return folder, matrix, head


# --- GGUF

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


# --- a pickle checkpoint


class _Trap:
    """Unpickling this creates a marker file: proof that a pickle was (wrongly) loaded."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def write_trap_pickle(path: str | Path, marker: str | Path) -> Path:
    """A pickle checkpoint whose unpickling would create `marker`."""
    path = Path(path)
    path.write_bytes(pickle.dumps({"weight": _Trap(str(marker))}))
    return path
