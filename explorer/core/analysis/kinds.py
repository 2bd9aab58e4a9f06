"""Tokens by kind: what a token's bytes hold (letters of which script, digits, punctuation, …) and
whether it starts a word or continues one. Computed from the tokenizer alone, no matrix reads."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Content kinds, one per row; the order is the code stored per row.
KINDS = (
    "latin",
    "cyrillic",
    "greek",
    "arabic",
    "hebrew",
    "cjk",
    "hangul",
    "devanagari",
    "thai",
    "other_script",
    "mixed",
    "digits",
    "punctuation",
    "symbols",
    "whitespace",
    "bytes",
    "special",
    "unused",
)
CODE = {name: i for i, name in enumerate(KINDS)}
# Unicode character-name prefixes → script kind
_SCRIPTS = (
    ("LATIN", "latin"),
    ("CYRILLIC", "cyrillic"),
    ("GREEK", "greek"),
    ("ARABIC", "arabic"),
    ("HEBREW", "hebrew"),
    ("CJK", "cjk"),
    ("HIRAGANA", "cjk"),
    ("KATAKANA", "cjk"),
    ("HALFWIDTH KATAKANA", "cjk"),
    ("IDEOGRAPHIC", "cjk"),
    ("HANGUL", "hangul"),
    ("DEVANAGARI", "devanagari"),
    ("THAI", "thai"),
)
# Pieces that name a placeholder the model never saw in training: BERT's [unused12], Gemma's
# <unused12>, Llama 3's <|reserved_special_token_12|>.
UNUSED_PIECE = re.compile(
    r"^[<\[]\|?(unused|reserved_special_token|reserved)[_\-]?\d*\|?[>\]]$", re.I
)


@lru_cache(maxsize=65536)
def char_kind(ch: str) -> str:
    """The kind of one character: a script name, digits, punctuation, symbols or whitespace."""
    if ch.isspace():
        return "whitespace"
    cat = unicodedata.category(ch)
    if cat[0] == "N":
        return "digits"
    if cat[0] == "P":
        return "punctuation"
    if cat[0] in "SC" or cat == "Mn" and not ch.isalpha():
        return "symbols" if cat[0] == "S" else "punctuation"
    name = unicodedata.name(ch, "")
    for prefix, kind in _SCRIPTS:
        if name.startswith(prefix):
            return kind
    return "other_script"


def text_kind(data: bytes) -> str:
    """The kind of a token's bytes: one script, mixed scripts, digits, … or raw bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes"  # part of a multi-byte character, or a byte that is not text
    if not text:
        return "special"
    if text.isspace():
        return "whitespace"
    core = text.strip()
    if core.isascii():  # most of any vocabulary: no per-character look-ups needed
        if core.isalpha():
            return "latin"
        if core.isdigit():
            return "digits"
    kinds = {char_kind(c) for c in core}
    letters = kinds - {"digits", "punctuation", "symbols", "whitespace"}
    if len(letters) == 1:
        return letters.pop()
    if len(letters) > 1:
        return "mixed"
    for kind in ("digits", "punctuation", "symbols"):
        if kinds == {kind}:
            return kind
    return "punctuation" if "punctuation" in kinds else "symbols"


@dataclass
class TokenKinds:
    codes: np.ndarray  # uint8 [rows]: index into KINDS
    word_start: np.ndarray  # bool [rows]: starts a word (leading space / no ## / ▁)
    continuation: np.ndarray  # bool [rows]: continues a word (letters or digits, no leading space)

    def counts(self) -> dict[str, int]:
        """Count per content kind (non-zero only), then word_start and continuation counts."""
        per = np.bincount(self.codes, minlength=len(KINDS))
        out = {name: int(per[i]) for i, name in enumerate(KINDS) if per[i]}
        out["word_start"] = int(self.word_start.sum())
        out["continuation"] = int(self.continuation.sum())
        return out

    def names(self) -> list[str]:
        """The kind name of every row (for colouring a map by kind)."""
        return [KINDS[c] for c in self.codes.tolist()]


def _starts_word(tok, token_id: int, piece: str, data: bytes) -> bool:
    if not tok.byte_level and tok.subword_prefix:  # WordPiece: '##ing' continues a word
        prefix = tok.subword_prefix
        return not (piece.startswith(prefix) and len(piece) > len(prefix))
    return data[:1] in (b" ", b"\n", b"\t")


def token_kinds(model) -> TokenKinds:
    """Kind of every row; rows the tokenizer lacks are 'unused'.

    Without a tokenizer every row is 'other_script' (nothing is known about it)."""
    rows = model.rows
    codes = np.full(rows, CODE["unused"], dtype=np.uint8)
    word_start = np.zeros(rows, dtype=bool)
    continuation = np.zeros(rows, dtype=bool)
    tok = model.tokenizer
    if tok is None:
        return TokenKinds(np.full(rows, CODE["other_script"], np.uint8), word_start, continuation)
    elsewhere = getattr(tok, "kinds_elsewhere", None)
    if elsewhere is not None:
        return TokenKinds(*elsewhere(rows))
    special = tok.special_ids
    for i, piece in enumerate(tok.pieces[:rows]):
        if piece is None:
            continue
        if piece[:1] in "<[" and UNUSED_PIECE.match(piece):
            continue  # stays 'unused'
        if i in special:
            codes[i] = CODE["special"]
            continue
        data = tok.piece_bytes(i, piece)
        kind = text_kind(data)
        codes[i] = CODE[kind]
        if kind in ("bytes", "special", "whitespace"):
            continue
        if _starts_word(tok, i, piece, data):
            word_start[i] = True
        elif kind not in ("punctuation", "symbols"):
            continuation[i] = True
    return TokenKinds(codes, word_start, continuation)
