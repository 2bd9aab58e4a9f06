"""A model's tokenizer, found beside its weights: tokenizer.json, vocabulary files or a
tokenizer.model in the folder, or a GGUF file's `tokenizer.ggml.*` metadata.

`load_tokenizer` loads only the tokenizer (for processes that already have, or never need, the
matrix): it reads headers at most, never the matrix, and makes no head check.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.model.files import expand, gguf_in, locate, resolve, word_vectors_in

if TYPE_CHECKING:  # `tokenizers` loads only where a tokenizer is built, never in the window
    from explorer.core.tokenizer.tokens import TokenizerInfo


def coverage_warnings(info: TokenizerInfo, rows: int) -> list[str]:
    """A tokenizer that names under half of the rows is likely not this model's."""
    if info.vocab_size * 2 >= rows:
        return []
    return [
        f"the tokenizer names only {info.vocab_size:,} of {rows:,} rows; the rest show as "
        "unused. Is it this model's tokenizer?"
    ]


def folder_tokenizer(folder: Path, rows: int) -> tuple[TokenizerInfo | None, list[str]]:
    """tokenizer.json, else one built from the folder's other tokenizer files."""
    from explorer.core.tokenizer.tokens import TokenizerInfo, _spec_of

    tok_path = folder / "tokenizer.json"
    if tok_path.is_file():
        info = TokenizerInfo.from_file(tok_path, rows=rows)
        return info, coverage_warnings(info, rows)
    from explorer.core.tokenizer.folder import from_folder

    built = from_folder(folder)
    if built is None:
        return None, []
    info = TokenizerInfo(built.tokenizer, _spec_of(built.tokenizer), rows=rows, source=built.source)
    return info, built.warnings + coverage_warnings(info, rows)


def gguf_tokenizer(meta: dict, rows: int, file: Path) -> tuple[TokenizerInfo | None, list[str]]:
    """The tokenizer a GGUF file's metadata describes: checked now, built on first use."""
    from explorer.core.tokenizer.gguf_tokenizer import GGUFTokenizerInfo
    from explorer.core.tokenizer.gguf_vocab import pre_tokenizer_warnings, read_vocab

    vocab = read_vocab(meta)
    if vocab is None:
        return None, []
    info = GGUFTokenizerInfo(vocab, file, rows=rows)
    return info, pre_tokenizer_warnings(vocab) + coverage_warnings(info, rows)


def load_tokenizer(
    path: str | Path, tensor: str | None = None, rows: int | None = None
) -> tuple[TokenizerInfo | None, list[str]]:
    """The tokenizer (None: the model has none) of the model at `path`, and its warnings, as
    `open_model` would attach them.

    `rows` (the embedding's row count) bounds the vocabulary tables; without it the embedding's
    shape is read from the headers (`tensor` picks the embedding as in `open_model`).
    """
    found = expand(path)
    if word_vectors_in(found):
        from explorer.core.model.formats.wordvec import open_word_vectors
        from explorer.core.model.open_wordvec import words_tokenizer

        return words_tokenizer(open_word_vectors(found))
    gguf_file = gguf_in(found)
    if gguf_file is not None:
        from explorer.core.model.formats import gguf
        from explorer.core.model.tensors import gguf_embedding as embedding_of

        files, tensors = gguf.open_parts(gguf_file)
        if rows is None:
            rows = embedding_of(gguf_file, tensors, tensor).shape[0]
        return gguf_tokenizer(files[0].metadata, rows, gguf_file)
    if rows is not None:
        return folder_tokenizer(resolve(found).folder, rows)
    located = locate(found, tensor)
    located.close()
    return folder_tokenizer(located.src.folder, located.info.shape[0])


# files that make a tokenizer together with the rest of their folder
FOLDER_TOKENIZER_FILES = ("vocab.json", "merges.txt", "vocab.txt", "tokenizer.model", "tekken.json")


def tokenizer_at(path: str | Path, rows: int) -> tuple[TokenizerInfo, list[str]]:
    """A tokenizer from elsewhere, for a matrix of `rows` rows: a tokenizer.json file, a folder
    holding tokenizer files (or one of them: vocab.txt, tokenizer.model …), or a GGUF file's
    metadata."""
    from explorer.core.errors import ModelFormatError
    from explorer.core.tokenizer.tokens import TokenizerInfo

    found = Path(path).expanduser()
    if not found.exists():
        raise ModelFormatError(f"{found}: no such tokenizer file or folder")
    gguf_file = gguf_in(found)
    if gguf_file is not None:
        from explorer.core.model.formats import gguf

        files, _ = gguf.open_parts(gguf_file)
        info, warnings = gguf_tokenizer(files[0].metadata, rows, gguf_file)
    elif found.is_file() and found.name.lower() in FOLDER_TOKENIZER_FILES:  # read with its folder
        info, warnings = folder_tokenizer(found.parent, rows)
    elif found.is_file() and found.suffix.lower() == ".json":
        info = TokenizerInfo.from_file(found, rows=rows)
        warnings = coverage_warnings(info, rows)
    elif found.is_dir():
        info, warnings = folder_tokenizer(found, rows)
    else:
        raise ModelFormatError(
            f"{found}: not a tokenizer (give a tokenizer.json, a folder holding tokenizer files, "
            "or a .gguf file)"
        )
    if info is None:
        raise ModelFormatError(f"{found}: holds no tokenizer")
    return info, warnings
