"""Open a model, read-only: a folder, a .safetensors, .safetensors.index.json or .gguf file,
or word vectors (.txt/.vec text, word2vec .bin, .npy with a word list).

Each format has one opener; `open_model` picks it from what the path holds, and every opener
ends in `embedding.assemble`. No format imports this module back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.filecheck import check_regular
from explorer.core.model.embedding import EmbeddingModel, assemble
from explorer.core.model.files import expand, gguf_in, locate, word_vectors_in
from explorer.core.model.formats.safetensors import FLOAT_DTYPES
from explorer.core.model.tensors import OUTPUT_NAMES

if TYPE_CHECKING:
    from explorer.core.tokenizer.tokens import TokenizerInfo


def open_model(
    path: str | Path, tensor: str | None = None, tokenizer: bool = True
) -> EmbeddingModel:
    """Open a model folder, a .safetensors, .safetensors.index.json or .gguf file, read-only."""
    path = expand(path)
    if word_vectors_in(path):
        from explorer.core.model.open_wordvec import open_wordvec

        return open_wordvec(path, path, tokenizer=tokenizer)
    gguf_file = gguf_in(path)
    if gguf_file is not None:
        check_regular(gguf_file)  # a FIFO named *.gguf would block the open
        from explorer.core.model.open_gguf import open_gguf  # imports gguf only for GGUF files

        return open_gguf(gguf_file, path, tensor=tensor, tokenizer=tokenizer)
    found = locate(path, tensor)
    try:
        output = next((n for n in OUTPUT_NAMES if n in found.where and n != found.name), None)
        head_matrix = None
        if output is not None and found.handles[found.where[output]].tensors[output].dtype in (
            FLOAT_DTYPES
        ):
            head_matrix = found.array(output)
        rows, dim = found.info.shape
        tok: tuple[TokenizerInfo | None, list[str]] = (None, [])
        if tokenizer:
            from explorer.core.model.tokenizer import folder_tokenizer

            tok = folder_tokenizer(found.src.folder, rows)
        return assemble(
            path=path,
            fmt=found.src.fmt,
            files=list(found.src.files),
            tensor=(found.name, found.info.dtype, (rows, dim)),
            matrix=found.array(found.name),
            output=(output, head_matrix),
            config=found.config,
            tokenizer=tok,
            handles=list(found.handles.values()),
        )
    except BaseException:
        found.close()
        raise
