"""A text corpus as a stream of token ids from the open model's tokenizer, restricted to the
tokens the corpus uses often enough to learn (word2vec's min_count)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.filecheck import read_limited
from explorer.core.limits import MAX_CORPUS_BYTES
from explorer.core.resources import resources_dir

if TYPE_CHECKING:  # the window's process never loads the Rust tokenizer just by importing this
    from explorer.core.tokenizer.tokens import TokenizerInfo
    from explorer.core.tokenizer.vocab_table import VocabTokenizer

MIN_COUNT = 5


def corpus_path() -> Path:
    """The bundled corpus: prose from the documentation CPython ships (see its README)."""
    return resources_dir() / "corpus" / "python-docs.txt"


@dataclass(frozen=True)
class TokenCorpus:
    token_ids: np.ndarray  # int64 [V]: the model's id of each vocabulary entry, most frequent first
    counts: np.ndarray  # int64 [V]
    labels: list[str]  # readable token labels [V]
    stream: np.ndarray  # int32 [n]: vocabulary indices of the corpus, in order
    paragraph: np.ndarray  # int32 [n]: which paragraph each stream position comes from

    @property
    def size(self) -> int:
        return len(self.token_ids)

    def index_of(self, token_id: int) -> int | None:
        hit = np.flatnonzero(self.token_ids == token_id)
        return int(hit[0]) if hit.size else None


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def encode_corpus(
    text: str,
    tokenizer: TokenizerInfo | VocabTokenizer,
    min_count: int = MIN_COUNT,
    rows: int | None = None,
) -> TokenCorpus:
    """Tokenize `text` paragraph by paragraph (no special tokens) and keep the tokens seen at
    least `min_count` times (and below `rows`, the embedding's row count, when given)."""
    paras = paragraphs(text)
    if not paras:
        raise ExplorerError("the corpus is empty")
    ids = tokenizer.encode_batch_ids(paras)
    para_of = np.concatenate([np.full(len(a), k, dtype=np.int32) for k, a in enumerate(ids)])
    flat = np.concatenate(ids)
    valid = np.ones(len(flat), dtype=bool)
    if tokenizer.special_ids:
        valid &= ~np.isin(flat, list(tokenizer.special_ids))
    if rows is not None:
        valid &= flat < rows
    uniq, counts = np.unique(flat[valid], return_counts=True)
    keep = counts >= min_count
    uniq, counts = uniq[keep], counts[keep]
    if len(uniq) < 2:
        raise ExplorerError(
            f"the corpus has {len(uniq)} token(s) seen at least {min_count} times; "
            "a table needs at least two"
        )
    order = np.lexsort((uniq, -counts))  # most frequent first, ties by id
    uniq, counts = uniq[order], counts[order]
    lookup = np.full(int(flat.max()) + 1, -1, dtype=np.int32)
    lookup[uniq] = np.arange(len(uniq), dtype=np.int32)
    index = np.where(valid, lookup[np.where(valid, flat, 0)], -1)
    kept = index >= 0
    return TokenCorpus(
        token_ids=uniq,
        counts=counts.astype(np.int64),
        labels=[tokenizer.label(int(i)) for i in uniq],
        stream=index[kept].astype(np.int32),
        paragraph=para_of[kept],
    )


def load_corpus(
    tokenizer: TokenizerInfo | VocabTokenizer,
    path: str | Path | None = None,
    min_count: int = MIN_COUNT,
    rows: int | None = None,
) -> TokenCorpus:
    """The corpus at `path` (default: the bundled one), encoded with `tokenizer`."""
    path = Path(path) if path is not None else corpus_path()
    if not os.path.lexists(path):
        raise ExplorerError(f"{path}: corpus file not found")
    try:
        text = read_limited(path, MAX_CORPUS_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise ExplorerError(f"{path.name}: the corpus must be UTF-8 text") from None
    return encode_corpus(text, tokenizer, min_count=min_count, rows=rows)
