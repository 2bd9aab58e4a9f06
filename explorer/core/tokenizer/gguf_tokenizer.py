"""A GGUF file's tokenizer that answers from its metadata and builds the real one on first use.

Labels, the vocabulary table, `info` and unused rows need only the pieces and their types; the
`tokenizers` tokenizer (a SentencePiece vocabulary's merges must be derived) is built when text
is first tokenized, with the derived merges kept in the user cache.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.tokenizer.gguf_vocab import GGUFVocab, gguf_source
from explorer.core.tokenizer.tokens import TokenizerInfo, file_identity

if TYPE_CHECKING:  # `tokenizers` loads when the tokenizer is built, not to open the model
    from tokenizers import Tokenizer


class GGUFTokenizerInfo(TokenizerInfo):
    def __init__(self, vocab: GGUFVocab, file: Path, rows: int | None = None, cache=None):
        self._tokenizer: Tokenizer | None = None
        self.vocab = vocab
        self.file = file
        self.cache_root = cache
        self.source = gguf_source(vocab)
        self.model_type = "BPE"
        self.byte_level = vocab.kind == "gpt2"
        self.metaspace = vocab.kind == "llama"  # byte fallback: <0x41> pieces
        self.subword_prefix = ""
        self.special_ids = vocab.special_ids
        self.added_ids = vocab.added_ids
        self.vocab_size = len(vocab.ids) if vocab.repeats else len(vocab.tokens)
        self.rows = rows
        self.identity = file_identity(file)

    def _build(self) -> Tokenizer:
        from explorer.core.tokenizer.merges_cache import merge_ids
        from explorer.core.tokenizer.sources import build_gguf

        return build_gguf(self.vocab, merge_ids(self.file, self.cache_root)).tokenizer

    def present_mask(self, rows: int) -> np.ndarray:
        if self.vocab.repeats:  # ids with no token
            return super().present_mask(rows)
        mask = np.zeros(rows, dtype=bool)
        mask[: len(self.vocab.tokens)] = True
        return mask

    @cached_property
    def pieces(self) -> list[str | None]:
        return self.vocab.pieces(self.rows if self.rows is not None else len(self.vocab.tokens))

    def _one_piece(self, token_id: int) -> str | None:
        tokens = self.vocab.tokens  # the metadata's pieces: no tokenizer to build for one label
        if self.vocab.repeats or not 0 <= token_id < len(tokens):
            return None
        return tokens[token_id]
