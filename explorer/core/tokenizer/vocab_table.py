"""The vocabulary as flat arrays, and a tokenizer that needs no `tokenizers` in this process.

A ``VocabTable`` is every id's piece and exact bytes, each as one bytes blob plus an offsets
array, and one flag byte per id. It is made once where the real tokenizer lives (a child
process, see explorer/app/tokenizer_service.py) and crosses to the window's process as a few
buffers: nothing there unpickles or builds 248k strings at once; labels are decoded per id when
asked for. ``VocabTokenizer`` answers what the app asks a tokenizer (labels, bytes, find, encode)
from the table plus an ``encode_ids`` function that does the real encoding elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, overload

import numpy as np

from explorer.core.tokenizer.short_holds import FirstWins, int_list
from explorer.core.tokenizer.text import (
    CHAR_TO_BYTE,
    Token,
    check_text,
    not_single_token,
    readable,
    unmark,
)

PRESENT, SPECIAL, ADDED, CONTINUES = 1, 2, 4, 8  # flag bits; CONTINUES: a WordPiece '##ing'

# (text, add special tokens) -> ids int64 [n], character offsets int64 [n, 2], special bool [n]
EncodeIds = Callable[[str, bool], tuple[np.ndarray, np.ndarray, np.ndarray]]
EncodeBatchIds = Callable[[list[str]], list[np.ndarray]]
# rows -> (kind codes uint8 [rows], starts a word bool [rows], continues a word bool [rows])
KindsOf = Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]]
OrderOf = Callable[[int], np.ndarray]  # rows -> ids sorted by their labels' search keys


class _Info(
    Protocol
):  # the parts of explorer.core.tokenizer.tokens.TokenizerInfo a table is made from
    source: str
    vocab_size: int
    byte_level: bool
    metaspace: bool
    subword_prefix: str
    special_ids: set[int]
    added_ids: set[int]

    @property
    def pieces(self) -> list[str | None]: ...

    def piece_bytes(self, token_id: int, piece: str) -> bytes: ...

    def continues_word(self, piece: str) -> bool: ...


def _flat(items: list[bytes]) -> tuple[bytes, np.ndarray]:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in items], out=offsets[1:])
    return b"".join(items), offsets


@dataclass
class VocabTable:
    """Every id's piece, exact bytes and flags, as flat buffers."""

    pieces: bytes  # UTF-8 of every piece, back to back
    piece_offsets: np.ndarray  # int64 [n + 1]
    data: bytes  # the exact bytes of every token, back to back
    data_offsets: np.ndarray  # int64 [n + 1]
    flags: np.ndarray  # uint8 [n]
    meta: dict[str, Any] = field(default_factory=dict)  # source, vocab_size, byte_level, prefix

    def __len__(self) -> int:
        return len(self.flags)

    @classmethod
    def from_info(cls, info: _Info) -> VocabTable:
        """Made where the real tokenizer is (the child process, or the CLI)."""
        pieces, data, flags = [], [], np.zeros(len(info.pieces), dtype=np.uint8)
        for i, piece in enumerate(info.pieces):
            if piece is None:
                pieces.append(b"")
                data.append(b"")
                continue
            pieces.append(piece.encode("utf-8", errors="surrogatepass"))
            data.append(info.piece_bytes(i, piece))
            added = i in info.added_ids
            continues = not added and not info.byte_level and info.continues_word(piece)
            flags[i] = (
                PRESENT
                | (SPECIAL if i in info.special_ids else 0)
                | (ADDED if added else 0)
                | (CONTINUES if continues else 0)
            )
        piece_blob, piece_offsets = _flat(pieces)
        data_blob, data_offsets = _flat(data)
        meta = {
            "source": info.source,
            "vocab_size": info.vocab_size,
            "byte_level": info.byte_level,
            "metaspace": info.metaspace,
            "subword_prefix": info.subword_prefix,
        }
        return cls(piece_blob, piece_offsets, data_blob, data_offsets, flags, meta)

    def buffers(self) -> list[bytes | np.ndarray]:
        """What crosses between processes (with ``meta``), in the order ``from_buffers`` takes."""
        return [self.pieces, self.piece_offsets, self.data, self.data_offsets, self.flags]

    @classmethod
    def from_buffers(cls, meta: dict[str, Any], buffers: Sequence[bytes]) -> VocabTable:
        pieces, piece_offsets, data, data_offsets, flags = buffers
        return cls(
            bytes(pieces),
            np.frombuffer(piece_offsets, dtype=np.int64),
            bytes(data),
            np.frombuffer(data_offsets, dtype=np.int64),
            np.frombuffer(flags, dtype=np.uint8),
            dict(meta),
        )

    @cached_property
    def _piece_at(self) -> list[int]:  # Python ints: numpy scalar indexing is slow per id
        return int_list(self.piece_offsets)

    @cached_property
    def _data_at(self) -> list[int]:
        return int_list(self.data_offsets)

    def piece_utf8(self, i: int) -> bytes:
        at = self._piece_at
        return self.pieces[at[i] : at[i + 1]]

    def piece(self, i: int) -> str:
        return self.piece_utf8(i).decode("utf-8", errors="surrogatepass")

    def all_pieces(self, run: int = 32768) -> list[str | None]:
        """Every id's piece (None where absent), decoded a run of ids at a time in C: the run's
        bytes with a NUL between pieces, decoded once and split. A Python call per id kept the
        GIL busy in a worker for ~300 ms at 248k ids, and the window's Qt calls queued for it."""
        n = len(self)
        blob = np.frombuffer(self.pieces, dtype=np.uint8)
        at = self.piece_offsets
        out: list[str | None] = []
        for lo in range(0, n, run):
            hi = min(lo + run, n)
            part = blob[at[lo] : at[hi]]
            if 0 not in part:  # a piece holding NUL cannot be split on it: one at a time
                joined = np.insert(part, at[lo + 1 : hi] - at[lo], 0).tobytes()
                try:
                    out.extend(joined.decode("utf-8", errors="surrogatepass").split("\x00"))
                    continue
                except UnicodeDecodeError:
                    pass
            out.extend(self.piece(i) for i in range(lo, hi))
        for i in int_list(np.flatnonzero((self.flags & PRESENT) == 0)):
            out[i] = None
        return out

    def token_bytes(self, i: int) -> bytes:
        at = self._data_at
        return self.data[at[i] : at[i + 1]]


class _Labels(Sequence[str]):
    """Readable label of every row id, decoded when asked for (a lazy list)."""

    def __init__(self, tok: VocabTokenizer, size: int):
        self._tok, self._size = tok, size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self._tok.label(j) for j in range(*i.indices(self._size))]
        if not -self._size <= i < self._size:
            raise IndexError(i)
        return self._tok.label(i % self._size)

    def __iter__(self) -> Iterator[str]:
        return (self._tok.label(j) for j in range(self._size))


class VocabTokenizer:
    """A tokenizer for the app: the vocabulary from a ``VocabTable``, encoding by ``encode_ids``.
    Call ``prepare()`` off the GUI thread before ``find`` (it builds the look-up tables)."""

    def __init__(
        self,
        table: VocabTable,
        encode_ids: EncodeIds,
        rows: int | None = None,
        encode_batch: EncodeBatchIds | None = None,
        kinds: KindsOf | None = None,
        vocab_order: OrderOf | None = None,
    ):
        self.table = table
        self.encode_ids = encode_ids
        self._encode_batch = encode_batch
        # token kinds made where the real tokenizer is (analysis.kinds.token_kinds asks): a
        # second of per-token Python there, not in the window's process
        self.kinds_elsewhere = kinds
        self.order_elsewhere = vocab_order  # the same for the Find box's sorted ids
        self.source: str = table.meta.get("source", "")
        self.vocab_size: int = int(table.meta.get("vocab_size", len(table)))
        self.byte_level = bool(table.meta.get("byte_level"))
        self.metaspace = bool(table.meta.get("metaspace"))
        self.subword_prefix: str = table.meta.get("subword_prefix") or ""
        self.rows = rows
        self.labels = _Labels(self, max(len(table), rows or 0))
        self.special_ids = set(np.flatnonzero(table.flags & SPECIAL).tolist())
        self.added_ids = set(np.flatnonzero(table.flags & ADDED).tolist())  # as TokenizerInfo's
        self._flags: list[int] = int_list(table.flags)  # per-id reads: list, not numpy scalars

    def has_id(self, token_id: int) -> bool:
        return 0 <= token_id < len(self._flags) and bool(self._flags[token_id] & PRESENT)

    def present_mask(self, rows: int) -> np.ndarray:
        """bool [rows]: True where the tokenizer has a token for the row."""
        mask = np.zeros(rows, dtype=bool)
        n = min(rows, len(self.table))
        mask[:n] = (self.table.flags[:n] & PRESENT) != 0
        return mask

    def piece(self, token_id: int) -> str | None:
        return self.table.piece(token_id) if self.has_id(token_id) else None

    @cached_property
    def pieces(self) -> list[str | None]:
        """Every id's piece (None where the tokenizer has none); grows with the vocabulary, so
        read it in a job, as the statistics pass does."""
        return self.table.all_pieces()

    def token_bytes(self, token_id: int) -> bytes:
        return self.table.token_bytes(token_id) if self.has_id(token_id) else b""

    def piece_bytes(self, token_id: int, piece: str) -> bytes:
        """The exact bytes of a token (as TokenizerInfo.piece_bytes; `piece` is its piece)."""
        return self.token_bytes(token_id)

    def label(self, token_id: int) -> str:
        if not self.has_id(token_id):
            return f"<unused {token_id}>"
        text = readable(self.table.token_bytes(token_id))
        if self._flags[token_id] & CONTINUES:
            return self.subword_prefix + text
        return text

    # -- find ---------------------------------------------------------------------------------
    def prepare(self) -> VocabTokenizer:
        """Build the tables behind ``find`` (worker thread: they grow with the vocabulary)."""
        self._piece_index  # noqa: B018 - cached_property
        self._bytes_index  # noqa: B018
        return self

    @cached_property
    def _piece_index(self) -> FirstWins:
        """UTF-8 of each piece → its id."""
        ids = int_list(np.flatnonzero(self.table.flags & PRESENT))
        index = FirstWins()
        index.add([self.table.piece_utf8(i) for i in ids], ids)
        return index

    @cached_property
    def _bytes_index(self) -> FirstWins:
        """Exact bytes → id; a WordPiece continuation ('##s') only where no word has them."""
        flags = self.table.flags
        index = FirstWins()
        for kind in (CONTINUES, 0):  # continuations first, so words overwrite them
            ids = int_list(np.flatnonzero((flags & PRESENT) & ((flags & CONTINUES) == kind)))
            index.add([self.table.token_bytes(i) for i in ids], ids, overwrite=True)
        return index

    def find(self, text: str) -> int:
        """The id of the single token that `text` names: a vocab piece or its bytes."""
        check_text(text, "token text")
        unmarked = unmark(text)
        by_bytes = self._bytes_index.get(unmarked.encode("utf-8"))
        by_piece = self._piece_index.get(text.encode("utf-8", errors="surrogatepass"))
        if self.byte_level:
            # a byte-level piece spells bytes as Latin-1 look-alikes: read typed text as text first
            if by_bytes is not None:
                return by_bytes
            if by_piece is not None and (
                text.isascii() or any(ord(c) > 0xFF and c in CHAR_TO_BYTE for c in text)
            ):
                return by_piece
        else:
            if by_piece is not None:
                return by_piece
            if by_bytes is not None:
                return by_bytes
        ids = self.encode_ids(unmarked, False)[0].tolist()
        pieces = [self.table.piece(i) for i in ids[:1]]
        if len(ids) == 1 and not (ids[0] in self.special_ids and pieces[0] != unmarked):
            return int(ids[0])
        raise not_single_token(text, unmarked, ids, pieces, self.special_ids, self.label)

    # -- text ---------------------------------------------------------------------------------
    def encode(self, text: str, special: bool = False) -> TokenList:
        check_text(text, "text")
        return TokenList(self, *self.encode_ids(text, special))

    def encode_batch_ids(self, texts: list[str]) -> list[np.ndarray]:
        """Token ids of each text, without special tokens (a corpus, paragraph by paragraph)."""
        if self._encode_batch is not None:
            return self._encode_batch(texts)
        return [self.encode_ids(t, False)[0] for t in texts]


class TokenList(Sequence[Token]):
    """The tokens of a text as arrays; a ``Token`` is made when one is read, so a 40k-token
    paste costs three arrays rather than 40k objects (and no garbage-collector passes)."""

    def __init__(self, tok: VocabTokenizer, ids: np.ndarray, offsets: np.ndarray, special):
        self.tok = tok
        self.ids = ids  # int64 [n]
        self.offsets = offsets  # int64 [n, 2]: character offsets into the text
        self.special = np.asarray(special, dtype=bool)
        self._ids: list[int] = ids.tolist()  # per-token reads: Python ints are faster
        self._made: list[Token] = []  # the first tokens, made ahead by ``prefetch``
        self.distinct: np.ndarray | None = None  # see text_token_ids

    def __len__(self) -> int:
        return len(self._ids)

    def prefetch(self, n: int) -> TokenList:
        """Make the first `n` tokens now (a worker thread), so that showing them costs nothing
        on the GUI thread."""
        self._made = [self._token(k) for k in range(min(n, len(self)))]
        return self

    def _token(self, k: int) -> Token:
        if k < len(self._made):
            return self._made[k]
        token_id, table = self._ids[k], self.tok.table
        start, end = self.offsets[k].tolist()
        return Token(
            id=token_id,
            piece=table.piece(token_id),
            text=self.tok.label(token_id),
            bytes=table.token_bytes(token_id),
            start=start,
            end=end,
            special=bool(self.special[k]),
        )

    @overload
    def __getitem__(self, k: int) -> Token: ...
    @overload
    def __getitem__(self, k: slice) -> list[Token]: ...
    def __getitem__(self, k: int | slice) -> Token | list[Token]:
        if isinstance(k, slice):
            return [self._token(j) for j in range(*k.indices(len(self)))]
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        return self._token(k % len(self))

    def __iter__(self) -> Iterator[Token]:
        return (self._token(j) for j in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking: like a list, unhashable


def text_token_ids(tokens: Sequence[Token]) -> np.ndarray:
    """The distinct ids of a text's non-special tokens, sorted (int64; kept by a TokenList)."""
    if isinstance(tokens, TokenList):
        if tokens.distinct is None:
            tokens.distinct = np.unique(tokens.ids[~tokens.special])
        return tokens.distinct
    return np.unique(np.fromiter((t.id for t in tokens if not t.special), dtype=np.int64))


def text_ids_among(tokens: Sequence[Token], ids: np.ndarray) -> np.ndarray:
    """Those of the text's token ids (distinct, non-special) that are among `ids`."""
    mine = text_token_ids(tokens)
    return mine[np.isin(mine, ids)]
