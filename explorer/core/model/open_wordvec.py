"""Open word vectors (GloVe, word2vec, fastText text or binary, .npy with a word list): the
matrix, and a word-level tokenizer whose tokens are the words."""

from __future__ import annotations

from pathlib import Path

from explorer.core.model.dtypes import stored_name
from explorer.core.model.embedding import EmbeddingModel, assemble
from explorer.core.model.formats.wordvec import WordVectors, open_word_vectors

TENSOR = "vectors"


def open_wordvec(file: Path, shown: Path, tokenizer: bool = True) -> EmbeddingModel:
    vectors = open_word_vectors(file)
    rows, dim = vectors.matrix.shape
    return assemble(
        path=shown,
        fmt=vectors.fmt,
        files=vectors.files,
        tensor=(TENSOR, stored_name(vectors.matrix.dtype), (rows, dim)),
        matrix=vectors.matrix,
        output=(None, None),
        config={},
        tokenizer=words_tokenizer(vectors) if tokenizer else (None, []),
    )


def words_tokenizer(vectors: WordVectors):
    from explorer.core.tokenizer.word_level import word_level

    return word_level(vectors.words, source=f"the words of {vectors.files[-1].name}"), []
