"""Helpers that write tiny real models and tokenizers into a test's tmp_path.

Shared by tests of several areas: import with `from core.fixtures import write_model` (tests/ is
on sys.path through tests/conftest.py). The safetensors writer here is independent of the reader
under test: it builds the header by hand.
"""

from __future__ import annotations

import json
import pickle
import struct
from collections.abc import Mapping
from pathlib import Path

import ml_dtypes
import numpy as np
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

# safetensors dtype name → numpy dtype used to build test data
NUMPY_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "F8_E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
}

# A corpus with the awkward parts of real text: emoji, CJK, accents, newlines, tabs.
CORPUS = [
    "Hello world, the cat sat on the mat.\n\tTabs and newlines\r\n",
    "猫が好きです。日本語のテキストと中文文本。",
    "emoji 🐱🐶 party 🎉 café naïve façade",
    "the the the cat cat dog dog kitten kitty cats dogs running runner",
    "def f(x):\n    return x * 2\n",
]


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


def write_arrays(path: str | Path, arrays: Mapping[str, np.ndarray]) -> Path:
    """Write numpy arrays (dtypes of NUMPY_DTYPES) as a safetensors file."""
    names = {dt: name for name, dt in NUMPY_DTYPES.items()}
    tensors = {
        name: (names[np.dtype(a.dtype)], list(a.shape), np.ascontiguousarray(a).tobytes())
        for name, a in arrays.items()
    }
    path = Path(path)
    path.write_bytes(safetensors_bytes(tensors))
    return path


def random_matrix(rows: int, dim: int, dtype: str = "F32", seed: int = 0) -> np.ndarray:
    """Random normal values (scale 0.5) rounded to the stored dtype."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, dim)) * 0.5).astype(NUMPY_DTYPES[dtype])


def write_model(
    folder: str | Path,
    rows: int = 64,
    dim: int = 8,
    dtype: str = "F32",
    tensor_name: str = "model.embed_tokens.weight",
    sharded: bool = False,
    tokenizer: str | Path | None = None,
    config: Mapping[str, object] | None = None,
    output_name: str | None = None,
    matrix: np.ndarray | None = None,
    extra: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Write a Hugging Face style model folder and return the embedding matrix as stored.

    sharded=True writes two shards plus model.safetensors.index.json with the embedding in the
    *second* shard. tokenizer: "bpe", "wordpiece" or a path to a tokenizer.json to copy.
    output_name adds an untied output head of the same shape. extra adds more tensors.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if matrix is None:
        matrix = random_matrix(rows, dim, dtype, seed)
    other: dict[str, np.ndarray] = {
        "model.norm.weight": np.ones(dim, dtype=np.float32),
        "model.layers.0.mlp.weight": random_matrix(dim, dim * 2, "F32", seed + 1),
    }
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
    if tokenizer == "bpe":
        make_bpe_tokenizer(folder / "tokenizer.json")
    elif tokenizer == "wordpiece":
        make_wordpiece_tokenizer(folder / "tokenizer.json")
    elif tokenizer is not None:
        (folder / "tokenizer.json").write_bytes(Path(tokenizer).read_bytes())
    return matrix


def make_bpe_tokenizer(
    path: str | Path, vocab_size: int = 400, corpus: list[str] | None = None
) -> Tokenizer:
    """A GPT-2 style byte-level BPE tokenizer trained with BpeTrainer; <s> … </s> on request."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<s>", "</s>"],
        show_progress=False,
    )
    tok.train_from_iterator((corpus or CORPUS) * 20, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],
    )
    tok.save(str(path))
    return tok


def make_wordpiece_tokenizer(
    path: str | Path, vocab_size: int = 300, padding: bool = False, corpus: list[str] | None = None
) -> Tokenizer:
    """A BERT style WordPiece tokenizer (## continuations, [CLS] … [SEP] added on request).

    padding=True saves it with padding to 64 and truncation to 8 tokens switched on, as some
    shipped tokenizer.json files are.
    """
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        show_progress=False,
    )
    tok.train_from_iterator((corpus or CORPUS) * 20, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    if padding:
        tok.enable_padding(length=64, pad_id=0, pad_token="[PAD]")
        tok.enable_truncation(max_length=8)
    tok.save(str(path))
    return tok


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


def brute_force(values: np.ndarray, qid: int, metric: str, k: int = 10) -> set[int]:
    """The true top-k of row `qid` in float64 ("cosine" or "dot"), plus every row tied with the
    k-th (real vocabularies hold duplicate rows; any of the tied ones is a right answer)."""
    v = values.astype(np.float64)
    s = v @ v[qid]
    if metric == "cosine":
        s = s / np.linalg.norm(v, axis=1)
    s[qid] = -np.inf
    kth = np.sort(s)[-k]
    return set(np.flatnonzero(s >= kth - 1e-9 * abs(kth)).tolist())


def mappings_of(path: str | Path) -> list[tuple[set[str], int]]:
    """(VmFlags, Rss in kB) of each memory mapping of `path` in this process (Linux smaps)."""
    found: list[tuple[set[str], int]] = []
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            inside = len(head) == 6 and head[5] == str(path)
            if inside:
                found.append((set(), 0))
        elif inside and line.startswith("Rss:"):
            found[-1] = (found[-1][0], int(line.split()[1]))
        elif inside and line.startswith("VmFlags:"):
            found[-1] = (set(line.split()[1:]), found[-1][1])
    return found
