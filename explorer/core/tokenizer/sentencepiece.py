"""A SentencePiece `tokenizer.model` (Llama 2, Gemma, T5) read without the sentencepiece package:
the file is a small protobuf (ModelProto); we read the few fields a tokenizer needs and build it
with `tokenizers`."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers as pre

from explorer.core.errors import ModelFormatError
from explorer.core.filecheck import read_limited
from explorer.core.limits import MAX_SENTENCEPIECE_BYTES
from explorer.core.tokenizer.sp_merges import merge_ids

UNIGRAM, BPE = 1, 2
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@dataclass
class SentencePieceModel:
    pieces: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    types: list[int] = field(default_factory=list)
    model_type: int = UNIGRAM
    byte_fallback: bool = False
    unk_id: int = 0
    charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of one protobuf message; value is int or bytes."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:  # protobuf has no field 0: zeros or another kind of file
            raise ValueError(f"field number 0 at byte {pos - 1}")
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(data, pos)
            value, pos = data[pos : pos + n], pos + n
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated field")
        yield number, wire, value


def read_model(path: Path) -> SentencePieceModel:
    try:
        return _parse(read_limited(path, MAX_SENTENCEPIECE_BYTES))
    except (ValueError, UnicodeDecodeError, struct.error) as e:
        raise ModelFormatError(f"{path.name}: not a SentencePiece model ({e})") from None


def _parse(data: bytes) -> SentencePieceModel:
    m = SentencePieceModel()
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:
            piece, score, kind = "", 0.0, NORMAL
            for n, w, v in _fields(value):
                if n == 1 and w == 2:
                    piece = v.decode("utf-8")
                elif n == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
                elif n == 3 and w == 0:
                    kind = v
            if not piece:  # SentencePiece itself refuses empty pieces
                raise ValueError(f"piece {len(m.pieces)} is empty")
            m.pieces.append(piece)
            m.scores.append(score)
            m.types.append(kind)
        elif number == 2 and wire == 2:  # TrainerSpec
            for n, w, v in _fields(value):
                if n == 3 and w == 0:
                    m.model_type = v
                elif n == 35 and w == 0:
                    m.byte_fallback = bool(v)
                elif n == 40 and w == 0:
                    m.unk_id = v
        elif number == 3 and wire == 2:  # NormalizerSpec
            for n, w, v in _fields(value):
                if n == 2 and w == 2:
                    m.charsmap = bytes(v)
                elif n == 3 and w == 0:
                    m.add_dummy_prefix = bool(v)
                elif n == 4 and w == 0:
                    m.remove_extra_whitespaces = bool(v)
    if not m.pieces:
        raise ValueError("no pieces")
    return m


def _normalizer(m: SentencePieceModel) -> normalizers.Normalizer:
    steps: list[normalizers.Normalizer] = []
    if m.charsmap:
        steps.append(normalizers.Precompiled(m.charsmap))
    if m.remove_extra_whitespaces:
        steps += [
            normalizers.Strip(left=True, right=True),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    if m.model_type == BPE:
        if m.add_dummy_prefix:
            steps.append(normalizers.Prepend("▁"))
        steps.append(normalizers.Replace(" ", "▁"))
    return normalizers.Sequence(steps)


def sentencepiece_merge_ids(
    vocab: dict[str, int], scores: Sequence[float] | np.ndarray
) -> np.ndarray:
    """Merges implied by a SentencePiece BPE vocabulary, as id pairs [n, 2]: a piece made of two
    pieces merges them, higher-scored pieces first, then by piece id and the halves' ids (as
    transformers' SentencePieceExtractor orders them)."""
    ids = np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))
    return merge_ids(list(vocab), ids, scores)


def sentencepiece_merges(vocab: dict[str, int], scores: Sequence[float]) -> list[tuple[str, str]]:
    """`sentencepiece_merge_ids` as pairs of pieces."""
    pieces = {i: p for p, i in vocab.items()}
    return [(pieces[a], pieces[b]) for a, b in sentencepiece_merge_ids(vocab, scores).tolist()]


def build(m: SentencePieceModel) -> tuple[Tokenizer, str]:
    """A `tokenizers` tokenizer equivalent to the SentencePiece model, and its description."""
    vocab: dict[str, int] = {}
    for i, p in enumerate(m.pieces):
        vocab.setdefault(p, i)
    if m.model_type == BPE:
        mergeable = {p: i for p, i in vocab.items() if m.types[i] != BYTE}
        merges = sentencepiece_merges(mergeable, m.scores)
        unk = m.pieces[m.unk_id] if m.unk_id < len(m.pieces) else None
        tok = Tokenizer(
            models.BPE(vocab, merges, unk_token=unk, fuse_unk=True, byte_fallback=m.byte_fallback)
        )
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        )
        kind = "BPE"
    elif m.model_type == UNIGRAM:
        pairs = list(zip(m.pieces, m.scores, strict=True))
        tok = Tokenizer(models.Unigram(pairs, unk_id=m.unk_id, byte_fallback=m.byte_fallback))
        scheme = "always" if m.add_dummy_prefix else "never"
        tok.pre_tokenizer = pre.Metaspace(replacement="▁", prepend_scheme=scheme)
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme=scheme)
        kind = "Unigram"
    else:
        raise ModelFormatError(f"SentencePiece model type {m.model_type} is not supported")
    tok.normalizer = _normalizer(m)
    special = [m.pieces[i] for i, t in enumerate(m.types) if t == CONTROL]
    user = [m.pieces[i] for i, t in enumerate(m.types) if t == USER_DEFINED]
    tok.add_special_tokens(special)
    tok.add_tokens(user)
    fallback = ", byte fallback" if m.byte_fallback else ""
    return tok, f"tokenizer.model (SentencePiece {kind}{fallback})"
