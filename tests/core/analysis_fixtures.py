"""A small real model with planted oddities for the analysis tests (tied or untied, any dtype).

Rows: a trained byte-level BPE vocabulary plus PAD padding rows the tokenizer never produces.
Planted: an all-zero row, a tiny row, a huge row, two rows near the padding rows' shared
direction, and one dimension whose scale is 20× the others.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from core.fixtures import NUMPY_DTYPES, make_bpe_tokenizer, write_model
from tokenizers import Tokenizer

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


def make_model(
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
