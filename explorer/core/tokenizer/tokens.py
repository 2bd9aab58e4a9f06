"""Text ↔ ids with the real `tokenizers` library; readable pieces and exact bytes of every token."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import TokenError, shown
from explorer.core.filecheck import read_limited
from explorer.core.limits import MAX_TOKENIZER_BYTES, check_text

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

from explorer.core.tokenizer.text import (  # noqa: F401 - BYTE_TO_CHAR, parse_token_ref re-exported
    BYTE_FALLBACK,
    BYTE_LEVEL_TABLE,
    BYTE_TO_CHAR,
    CHAR_TO_BYTE,
    Token,
    not_single_token,
    parse_token_ref,
    readable,
    unmark,
)


def _check_text(text: str, what: str) -> None:
    """Refuse text the tokenizer cannot take: empty, too long, or not valid UTF-8."""
    check_text(text, what)


def _encode(tokenizer: Tokenizer, text: str, special: bool):
    """One encoding; the library's bare Exceptions (e.g. a WordPiece vocabulary without its
    unk_token) become a TokenError that says what is wrong with the tokenizer."""
    try:
        # encode_batch releases the GIL (encode does not), so a long text never stalls the GUI.
        return tokenizer.encode_batch([text], add_special_tokens=special)[0]
    except Exception as e:  # tokenizers raises plain Exception
        first = (str(e).splitlines() or [type(e).__name__])[0]
        if "Missing [UNK] token" in first:  # a word-level vocabulary without an unknown token
            raise TokenError(f"{shown(text)} holds a word that is not in the vocabulary") from None
        raise TokenError(f"the tokenizer cannot encode {shown(text)}: {first}") from None


def _walk_types(node: object) -> set[str]:
    """All component 'type' names in a tokenizer.json sub-tree (handles Sequence nesting)."""
    found: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("type"), str):
            found.add(node["type"])
        for v in node.values():
            found |= _walk_types(v)
    elif isinstance(node, list):
        for v in node:
            found |= _walk_types(v)
    return found


def _spec_of(tok: Tokenizer) -> dict:
    """The parts of tokenizer.json we inspect, read from the loaded tokenizer's components:
    re-parsing the whole file would hold the GIL for the size of the vocabulary once more."""
    spec: dict = {}
    for part in ("pre_tokenizer", "decoder"):
        component = getattr(tok, part)
        if component is not None:
            spec[part] = json.loads(component.__getstate__())
    model = tok.model
    spec["model"] = {
        "type": type(model).__name__,
        "continuing_subword_prefix": getattr(model, "continuing_subword_prefix", None),
        "byte_fallback": bool(getattr(model, "byte_fallback", False)),
    }
    spec["added_tokens"] = [
        {"id": i, "content": t.content, "special": t.special}
        for i, t in tok.get_added_tokens_decoder().items()
    ]
    return spec


def file_identity(path: str | Path) -> dict | None:
    """Path, size and modification time of the file a tokenizer was read from (None if gone):
    what caches of results that depend on the tokenizer are keyed by."""
    try:
        resolved = Path(path).resolve()
        st = resolved.stat()
    except OSError:
        return None
    return {"file": str(resolved), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


class TokenizerInfo:
    """A tokenizer with padding/truncation off and readable labels for every id."""

    identity: dict | None = None  # the file it was read from (file_identity), when there is one

    def __init__(
        self,
        tokenizer: Tokenizer | None,
        spec: dict,
        rows: int | None = None,
        source: str = "",
        vocab_size: int | None = None,
    ):
        """`tokenizer` None: a subclass builds it on first use and gives `vocab_size`."""
        self._tokenizer: Tokenizer | None = tokenizer
        self.source = source
        if tokenizer is not None:
            tokenizer.no_padding()
            tokenizer.no_truncation()
            vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
        assert vocab_size is not None
        model = spec.get("model") or {}
        self.model_type = model.get("type", "")
        types = _walk_types(spec.get("pre_tokenizer")) | _walk_types(spec.get("decoder"))
        self.byte_level = "ByteLevel" in types
        self.metaspace = "Metaspace" in types or bool(model.get("byte_fallback"))
        self.subword_prefix = model.get("continuing_subword_prefix") or (
            "##" if self.model_type == "WordPiece" else ""
        )
        self.special_ids = {
            t["id"]
            for t in spec.get("added_tokens") or []
            if isinstance(t, dict) and t.get("special")
        }
        self.added_ids = {t["id"] for t in spec.get("added_tokens") or [] if isinstance(t, dict)}
        self.vocab_size = vocab_size
        self.rows = rows

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:  # a subclass that builds it on first use
            self._tokenizer = self._build()
            self._tokenizer.no_padding()
            self._tokenizer.no_truncation()
        return self._tokenizer

    def _build(self) -> Tokenizer:
        raise NotImplementedError

    @property
    def built(self) -> bool:
        """Whether the `tokenizers` tokenizer exists (else its answers come from elsewhere)."""
        return self._tokenizer is not None

    @classmethod
    def from_file(cls, path: str | Path, rows: int | None = None) -> TokenizerInfo:
        """A tokenizer.json, built now (which checks it) or, when this file was built before,
        answered from the user cache until text is tokenized (json_cache)."""
        from explorer.core.tokenizer import json_cache

        path = Path(path)
        identity = file_identity(path)
        # read it ourselves: a regular file of bounded size, and any path (from_file needs UTF-8)
        data = read_limited(path, MAX_TOKENIZER_BYTES)
        info = json_cache.from_file(path, data, identity, rows)
        info.identity = identity
        return info

    # -- per-piece decoding -------------------------------------------------------------------
    def piece_bytes(self, token_id: int, piece: str) -> bytes:
        if token_id in self.added_ids:
            return piece.encode("utf-8")
        if self.byte_level:
            if piece.isascii():  # printable ASCII stands for itself in the byte-level alphabet
                return piece.encode("ascii")
            try:
                return piece.translate(BYTE_LEVEL_TABLE).encode("latin-1")
            except UnicodeEncodeError:  # not a byte-level piece after all
                return piece.encode("utf-8")
        if self.metaspace:
            m = BYTE_FALLBACK.match(piece)
            if m:
                return bytes([int(m.group(1), 16)])
            return piece.replace("▁", " ").encode("utf-8")
        if self.continues_word(piece):
            return piece[len(self.subword_prefix) :].encode("utf-8")
        return piece.encode("utf-8")

    def continues_word(self, piece: str) -> bool:
        """A WordPiece-style '##ing': bytes without the prefix, shown with it."""
        prefix = self.subword_prefix
        return bool(prefix) and piece.startswith(prefix) and len(piece) > len(prefix)

    def _text_of(self, token_id: int, piece: str, data: bytes) -> str:
        text = readable(data)
        if token_id not in self.added_ids and not self.byte_level and self.continues_word(piece):
            return self.subword_prefix + text
        return text

    def piece_text(self, token_id: int, piece: str) -> str:
        return self._text_of(token_id, piece, self.piece_bytes(token_id, piece))

    # -- whole vocabulary ---------------------------------------------------------------------
    @cached_property
    def pieces(self) -> list[str | None]:
        # One short id_to_token call per id lets other threads (the GUI) run in between;
        # get_vocab() would hold the GIL for the whole vocabulary at once.
        # Bounded by real sizes: the matrix rows, or the token count without a matrix. An id
        # beyond them (a tokenizer declaring id 300,000,000) has no row and gets no slot.
        size = self.rows if self.rows is not None else self.vocab_size
        to_token = self.tokenizer.id_to_token
        pieces: list[str | None] = [to_token(i) for i in range(size)]
        if self.rows is None and sum(p is not None for p in pieces) < self.vocab_size:
            # ids with holes and no matrix to bound them: twice the token count at most
            vocab = self.tokenizer.get_vocab(with_added_tokens=True)
            limit = 2 * self.vocab_size + 1024
            top = min(limit, max(vocab.values(), default=-1) + 1)
            pieces += [None] * (top - len(pieces))
            for piece, i in vocab.items():
                if i < top:
                    pieces[i] = piece
        return pieces

    @cached_property
    def _all_bytes(self) -> list[bytes | None]:
        """Exact bytes of every id's piece, decoded once for both labels and `find`."""
        return [None if p is None else self.piece_bytes(i, p) for i, p in enumerate(self.pieces)]

    @cached_property
    def labels(self) -> list[str]:
        """Readable label of every row id; rows the tokenizer never produces are marked unused."""
        return [
            f"<unused {i}>" if data is None else self._text_of(i, piece, data)  # type: ignore[arg-type]
            for i, (piece, data) in enumerate(zip(self.pieces, self._all_bytes, strict=True))
        ]

    @cached_property
    def _bytes_index(self) -> dict[bytes, int]:
        index: dict[bytes, int] = {}
        continuation: dict[bytes, int] = {}
        for i, (piece, data) in enumerate(zip(self.pieces, self._all_bytes, strict=True)):
            if data is None:
                continue
            continues = not self.byte_level and self.continues_word(piece)  # type: ignore[arg-type]
            (continuation if continues else index).setdefault(data, i)
        for k, v in continuation.items():
            index.setdefault(k, v)
        return index

    def prepare(self) -> TokenizerInfo:
        """Build the tables behind ``labels`` and ``find`` now (worker thread: they grow with the
        vocabulary), as VocabTokenizer.prepare does."""
        self.labels  # noqa: B018 - cached_property
        self._bytes_index  # noqa: B018
        return self

    def present_mask(self, rows: int) -> np.ndarray:
        """bool [rows]: True where the tokenizer has a token for the row (ids may have holes)."""
        import numpy as np  # `tokenize` and `info` never need numpy

        pieces = self.pieces[:rows]
        mask = np.zeros(rows, dtype=bool)
        mask[: len(pieces)] = np.fromiter(
            (p is not None for p in pieces), dtype=bool, count=len(pieces)
        )
        return mask

    def has_id(self, token_id: int) -> bool:
        return 0 <= token_id < len(self.pieces) and self.pieces[token_id] is not None

    def label(self, token_id: int) -> str:
        if 0 <= token_id < len(self.pieces):
            return self.labels[token_id]
        return f"<unused {token_id}>"

    def one_label(self, token_id: int) -> str:
        """`label(token_id)` without building every id's label (0.3 s for 30k tokens, which a
        one-row command should not pay)."""
        piece = None if "labels" in vars(self) else self._one_piece(token_id)
        if piece is None:  # ids beyond the vocabulary or holes in it: the general path
            return self.label(token_id)
        return self.piece_text(token_id, piece)

    def _one_piece(self, token_id: int) -> str | None:
        if "pieces" in vars(self):
            return self.piece(token_id)
        if 0 <= token_id < self.vocab_size:
            return self.tokenizer.id_to_token(token_id)
        return None

    def piece(self, token_id: int) -> str | None:
        return self.pieces[token_id] if 0 <= token_id < len(self.pieces) else None

    def token_bytes(self, token_id: int) -> bytes:
        piece = self.piece(token_id)
        return b"" if piece is None else self.piece_bytes(token_id, piece)

    # -- text ---------------------------------------------------------------------------------
    def encode_batch_ids(self, texts: list[str]) -> list[np.ndarray]:
        """Token ids of each text, without special tokens (a corpus, paragraph by paragraph)."""
        import numpy as np

        try:
            encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        except Exception as e:  # tokenizers raises plain Exception (e.g. WordPiece without [UNK])
            first = (str(e).splitlines() or [type(e).__name__])[0]
            raise TokenError(f"the tokenizer cannot encode this text: {first}") from None
        return [np.asarray(e.ids, dtype=np.int64) for e in encodings]

    def encode(self, text: str, special: bool = False) -> list[Token]:
        _check_text(text, "text")
        enc = _encode(self.tokenizer, text, special)
        out = []
        for token_id, piece, (start, end), is_special in zip(
            enc.ids, enc.tokens, enc.offsets, enc.special_tokens_mask, strict=True
        ):
            out.append(
                Token(
                    id=token_id,
                    piece=piece,
                    text=self.piece_text(token_id, piece),
                    bytes=self.piece_bytes(token_id, piece),
                    start=start,
                    end=end,
                    special=bool(is_special),
                )
            )
        return out

    def find(self, text: str) -> int:
        """The id of the single token that `text` names: a vocab piece, its bytes, or '#id'."""
        _check_text(text, "token text")
        unmarked = unmark(text)
        if self.byte_level:
            # a byte-level piece spells bytes as Latin-1 look-alikes: 'é' as a piece is byte 0xE9,
            # not the character é, so read what the user typed as text first
            by_bytes = self._bytes_index.get(unmarked.encode("utf-8"))
            if by_bytes is not None:
                return by_bytes
            if text.isascii() or any(ord(c) > 0xFF and c in CHAR_TO_BYTE for c in text):
                vocab_id = self.tokenizer.token_to_id(text)  # a piece such as 'Ġcat'
                if vocab_id is not None:
                    return vocab_id
        else:
            vocab_id = self.tokenizer.token_to_id(text)
            if vocab_id is not None:
                return vocab_id
            by_bytes = self._bytes_index.get(unmarked.encode("utf-8"))
            if by_bytes is not None:
                return by_bytes
        enc = _encode(self.tokenizer, unmarked, False)
        ids = enc.ids
        if len(ids) == 1 and not (ids[0] in self.special_ids and enc.tokens[0] != unmarked):
            return ids[0]
        raise not_single_token(text, unmarked, ids, enc.tokens, self.special_ids, self.label)
