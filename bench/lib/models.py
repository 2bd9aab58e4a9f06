"""Model folders the benchmarks generate: random BF16 rows of any size, written in blocks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np

from explorer.core.model.formats.safetensors import RowBlocks, write_safetensors
from lib.data import TENSOR

BF16 = np.dtype(ml_dtypes.bfloat16)


def random_bf16_model(folder: Path, rows: int, dim: int, seed: int = 0, block_rows: int = 8192):
    """A folder with a `rows` × `dim` BF16 embedding of i.i.d. values (written block by block,
    never whole in memory), a WordLevel tokenizer of the words w1, w2, … and a config.json."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    rng = np.random.default_rng(seed)

    def blocks() -> Iterator[np.ndarray]:
        for start in range(0, rows, block_rows):
            n = min(block_rows, rows - start)
            yield (rng.standard_normal((n, dim), dtype=np.float32) * 0.02).astype(BF16)

    folder.mkdir(parents=True, exist_ok=True)
    write_safetensors(
        folder / "model.safetensors", {TENSOR: RowBlocks(BF16, (rows, dim), blocks())}
    )
    vocab = {"[UNK]": 0} | {f"w{i}": i for i in range(1, rows)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"vocab_size": rows}), encoding="utf-8")
    return folder
