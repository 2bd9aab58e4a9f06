"""A tokenizer.json seen before, answered from the user cache until text is tokenized.

Building the `tokenizers` tokenizer from a tokenizer.json (and importing the library) costs more
than the rest of a one-row command. The first open builds it, which also checks the file, and
keeps what labels, `info` and the tokenizer check need in the user cache: the parts of the spec
`TokenizerInfo` reads, the vocabulary size, and a `VocabTable` (every row's piece, exact bytes
and flags). An entry is keyed by the file (path, size, mtime and a SHA-256 of its bytes) and the
row count, written atomically, and checked when read (checksums, shapes, offsets, field types);
anything off and the file is built again and the entry rewritten. A later open builds the
tokenizer from the same bytes only when text is tokenized.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.core import cache
from explorer.core.errors import ModelFormatError
from explorer.core.tokenizer.tokens import TokenizerInfo

if TYPE_CHECKING:  # the table's module loads when the table is read or made
    from tokenizers import Tokenizer

    from explorer.core.tokenizer.vocab_table import VocabTable

KIND = "tokenizer-json"
VERSION = 1
_ARRAYS = {
    "pieces": cache.ArraySpec("|u1", (None,)),
    "piece_offsets": cache.ArraySpec("<i8", (None,)),
    "data": cache.ArraySpec("|u1", (None,)),
    "data_offsets": cache.ArraySpec("<i8", (None,)),
    "flags": cache.ArraySpec("|u1", (None,)),
}


def key_of(identity: dict, data: bytes, rows: int) -> dict:
    return {
        "kind": KIND,
        "version": VERSION,
        **identity,
        "sha256": hashlib.sha256(data).hexdigest(),
        "rows": rows,
    }


def cannot_load(path: Path, e: Exception) -> ModelFormatError:
    first = str(e).splitlines()[0] if str(e) else type(e).__name__
    first = first if len(first) <= 160 else first[:159] + "…"
    return ModelFormatError(f"{path.name}: cannot load tokenizer ({first})")


def build(path: Path, data: bytes) -> Tokenizer:
    """The `tokenizers` tokenizer of a tokenizer.json's bytes; ModelFormatError if it fails."""
    try:
        from tokenizers import Tokenizer  # loaded where a tokenizer is built

        return Tokenizer.from_str(data.decode("utf-8"))
    except Exception as e:  # the tokenizers library raises bare Exceptions
        raise cannot_load(path, e) from None


def _is_spec(spec: object) -> bool:
    """The shape `tokens._spec_of` gives, field by field."""
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        return False
    model = spec["model"]
    prefix = model.get("continuing_subword_prefix")
    added = spec.get("added_tokens")
    return (
        isinstance(model.get("type"), str)
        and (prefix is None or isinstance(prefix, str))
        and isinstance(model.get("byte_fallback"), bool)
        and all(isinstance(spec.get(p, {}), dict) for p in ("pre_tokenizer", "decoder"))
        and isinstance(added, list)
        and all(
            isinstance(t, dict)
            and isinstance(t.get("id"), int)
            and not isinstance(t.get("id"), bool)
            and isinstance(t.get("content"), str)
            and isinstance(t.get("special"), bool)
            for t in added
        )
    )


def _table_ok(arrays: dict[str, np.ndarray], rows: int) -> bool:
    if len(arrays["flags"]) != rows:
        return False
    for blob, offsets in (("pieces", "piece_offsets"), ("data", "data_offsets")):
        at = arrays[offsets]
        if len(at) != rows + 1 or at[0] != 0 or at[-1] != len(arrays[blob]):
            return False
        if rows and (np.diff(at) < 0).any():
            return False
    return True


class CachedTokenizerInfo(TokenizerInfo):
    """A tokenizer.json whose cached entry passed its checks: labels, pieces and bytes from the
    cached table, the tokenizer built from the file's bytes on first use."""

    def __init__(self, path: Path, data: bytes, spec: dict, vocab_size: int, rows: int, key):
        super().__init__(None, spec, rows=rows, source=str(path), vocab_size=vocab_size)
        self._path, self._data, self._key = path, data, key

    def _build(self) -> Tokenizer:
        tok = build(self._path, self._data)
        self._data = b""  # the tokenizer holds what it needs
        return tok

    @cached_property
    def table(self) -> VocabTable | None:
        """The cached table (None if its arrays fail their checks: then the tokenizer answers)."""
        from explorer.core.tokenizer.vocab_table import VocabTable

        found, _ = cache.load(cache_root(), self._key, _ARRAYS)
        if found is None or not _table_ok(found.arrays, self.rows or 0):
            return None
        a = found.arrays
        meta = found.extra.get("table")
        if not isinstance(meta, dict):
            return None
        table = VocabTable(
            a["pieces"].tobytes(), a["piece_offsets"], a["data"].tobytes(), a["data_offsets"],
            a["flags"], meta,
        )  # fmt: skip
        return table

    @cached_property
    def pieces(self) -> list[str | None]:
        if self.table is not None:
            try:
                return self.table.all_pieces()
            except UnicodeDecodeError:  # an entry written by something else: not ours to trust
                pass
        return super().pieces

    @cached_property
    def _all_bytes(self) -> list[bytes | None]:
        from explorer.core.tokenizer.vocab_table import PRESENT

        table = self.table
        if table is None:
            return super()._all_bytes
        present = table.flags & PRESENT
        return [table.token_bytes(i) if present[i] else None for i in range(len(table))]

    def _one_piece(self, token_id: int) -> str | None:
        from explorer.core.tokenizer.vocab_table import PRESENT

        table = self.table
        if table is None:
            return super()._one_piece(token_id)
        if 0 <= token_id < len(table) and table.flags[token_id] & PRESENT:
            try:
                return table.piece(token_id)
            except UnicodeDecodeError:
                return super()._one_piece(token_id)
        return None


def cache_root() -> Path:
    return cache.default_cache_dir()


def from_file(path: Path, data: bytes, identity: dict | None, rows: int | None) -> TokenizerInfo:
    """The TokenizerInfo of a tokenizer.json's bytes: from the cache when it holds a sound entry
    for them, else built (and the entry written)."""
    key = key_of(identity, data, rows) if identity is not None and rows is not None else None
    if key is not None:
        found, _ = cache.load(cache_root(), key, {})
        extra = found.extra if found is not None else {}
        spec, size = extra.get("spec"), extra.get("vocab_size")
        if _is_spec(spec) and isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            assert rows is not None
            return CachedTokenizerInfo(path, data, spec, size, rows, key)  # type: ignore[arg-type]
    tok = build(path, data)
    from explorer.core.tokenizer.tokens import _spec_of

    try:
        spec = _spec_of(tok)
    except Exception as e:  # components the library cannot serialise
        raise cannot_load(path, e) from None
    info = TokenizerInfo(tok, spec, rows=rows, source=str(path))
    if key is not None:
        from explorer.core.tokenizer.vocab_table import VocabTable

        table = VocabTable.from_info(info)
        cache.save(
            cache_root(),
            key,
            dict(zip(_ARRAYS, map(_array, table.buffers()), strict=True)),
            extra={"spec": spec, "vocab_size": info.vocab_size, "table": table.meta},
        )
    return info


def _array(buffer: bytes | np.ndarray) -> np.ndarray:
    return np.frombuffer(buffer, dtype=np.uint8) if isinstance(buffer, bytes) else buffer
