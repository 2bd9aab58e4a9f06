"""Token text without the tokenizer: readable labels, exact bytes of byte-level pieces, `Token`.

Imports neither Qt nor `tokenizers`, so the window's process can use it (the Rust tokenizer
lives in a child process there; see explorer/app/tokenizer_service.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from explorer.core.errors import TokenError, shown
from explorer.core.limits import check_text, parse_hash_id  # noqa: F401 - check_text re-exported


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte → printable character table used by byte-level BPE."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs), strict=True))


BYTE_TO_CHAR = _bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}
# byte-level piece → latin-1 string whose code points are the bytes (then .encode("latin-1"))
# (latin-1 characters outside the alphabet map to U+FFFF so that .encode fails for them)
BYTE_LEVEL_TABLE = str.maketrans(
    {**{chr(b): "\uffff" for b in range(256)}, **{c: chr(b) for c, b in CHAR_TO_BYTE.items()}}
)
BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")

# Visible marks for whitespace so that " cat" and "cat" look different.
MARKS = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
_READABLE_TABLE = str.maketrans(
    {
        **{chr(c): chr(0x2400 + c) for c in range(0x20)},  # other control characters: ␀ ␁ …
        "\x7f": "␡",
        **MARKS,
        # undecodable bytes (surrogate-escaped): parts of a multi-byte character
        **{chr(0xDC00 + b): f"<0x{b:02X}>" for b in range(0x80, 0x100)},
    }
)


def readable(data: bytes) -> str:
    """Bytes → display text: whitespace as visible marks, bytes of split characters as <0xNN>."""
    text = data.decode("utf-8", errors="surrogateescape")
    if text.isascii() and text.isprintable():  # the common case, much faster than translate
        return text.replace(" ", "␣")
    return text.translate(_READABLE_TABLE)


def unmark(text: str) -> str:
    """Typed text with the visible whitespace marks turned back into whitespace."""
    for ch, mark in MARKS.items():
        text = text.replace(mark, ch)
    return text


def not_single_token(
    text: str, unmarked: str, ids: list[int], pieces: list[str], special_ids, label
) -> TokenError:
    """The error for a Find text that is not one token (`label(id)` names the pieces)."""
    if len(ids) == 1 and ids[0] in special_ids and pieces[0] != unmarked:
        # e.g. BERT's [UNK]: the text is not in the vocabulary, not the [UNK] token
        return TokenError(f"{shown(text)} is not in the vocabulary (it encodes to {pieces[0]})")
    if not ids:
        return TokenError(f"{shown(text)} is not in the vocabulary (it encodes to no tokens)")
    listed = ", ".join(label(i) for i in ids[:8])
    return TokenError(
        f"{shown(text)} is not a single token: it encodes to {len(ids)} tokens ({listed}); "
        "use an id or a phrase query instead"
    )


@dataclass(frozen=True, slots=True)  # slots: a long text makes thousands
class Token:
    """One token of an encoded text."""

    id: int
    piece: str
    text: str  # readable form
    bytes: bytes
    start: int  # character offsets into the input text
    end: int
    special: bool = False

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "piece": self.piece,
            "text": self.text,
            "bytes": self.bytes.hex(),
            "start": self.start,
            "end": self.end,
        }


class Finder(Protocol):
    def find(self, text: str) -> int: ...


def parse_token_ref(ref: str, tokenizer: Finder | None) -> int:
    """'#123' → 123; otherwise a token text resolved by the tokenizer."""
    if (token_id := parse_hash_id(ref)) is not None:
        return token_id
    if tokenizer is None:
        raise TokenError(
            f"cannot look up {shown(ref)}: this model has no tokenizer.json; use an id (#123)"
        )
    return tokenizer.find(ref)
