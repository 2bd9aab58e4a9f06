"""Build a real `tokenizers` tokenizer from a GGUF file's metadata (`tokenizer.ggml.*`); the
files of a folder without tokenizer.json are read by `explorer.core.tokenizer.folder`.

Each builder returns the tokenizer and the words saying where it came from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
from tokenizers import pre_tokenizers as pre

from explorer.core.errors import ModelFormatError
from explorer.core.tokenizer import sp_merges as sentencepiece_merges
from explorer.core.tokenizer.gguf_vocab import (
    BYTE,
    CONTROL,
    PRE_DIGITS_FIRST,
    PRE_SPLITS,
    USER_DEFINED,
    GGUFVocab,
    check_merges,
    finite_scores,
    gguf_source,
    pre_tokenizer_warnings,
)


@dataclass
class Built:
    """A tokenizer built from what a model ships, and where it came from."""

    tokenizer: Tokenizer
    source: str  # e.g. "GGUF metadata (gpt2 BPE, pre-tokenizer smollm)"
    warnings: list[str] = field(default_factory=list)


def _byte_level_pre(name: str) -> pre.PreTokenizer:
    if name in PRE_SPLITS:
        return pre.Sequence(
            [
                pre.Split(Regex(PRE_SPLITS[name]), behavior="isolated"),
                pre.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    byte_level = pre.ByteLevel(add_prefix_space=False, use_regex=True)
    if name in PRE_DIGITS_FIRST:
        return pre.Sequence([pre.Digits(individual_digits=True), byte_level])
    return byte_level


def _special(tok: Tokenizer, vocab: GGUFVocab) -> None:
    if vocab.types is None:
        return
    tokens = vocab.tokens
    added = [
        AddedToken(tokens[i], special=t == CONTROL, normalized=False)
        for i, t in enumerate(vocab.types.tolist())
        if t in (CONTROL, USER_DEFINED)
    ]
    tok.add_special_tokens([a for a in added if a.special])
    tok.add_tokens([a for a in added if not a.special])


def _bos(tok: Tokenizer, vocab: GGUFVocab) -> None:
    if vocab.bos is not None:
        b = vocab.tokens[vocab.bos]
        tok.post_processor = processors.TemplateProcessing(
            single=f"{b} $A", pair=f"{b} $A $B", special_tokens=[(b, vocab.bos)]
        )


MergeIds = Callable[[GGUFVocab, Callable[[], np.ndarray]], np.ndarray]


def _derive(vocab: GGUFVocab, merge_ids: MergeIds | None) -> list[tuple[str, str]]:
    """SentencePiece merges: derived from the pieces and scores (through `merge_ids`, a cache,
    when given). Byte pieces (<0x41>) never merge: they only stand in for bytes."""
    types = vocab.types

    def derive() -> np.ndarray:
        tokens = vocab.token_list
        keep = np.ones(len(tokens), dtype=bool) if types is None else types != BYTE
        if vocab.repeats:  # a repeated piece's later ids
            first = vocab.ids
            keep &= np.fromiter((first[p] == i for i, p in enumerate(tokens)), bool, len(tokens))
        at = np.flatnonzero(keep)
        pieces = list(map(tokens.__getitem__, at.tolist()))
        return sentencepiece_merges.merge_ids(pieces, at, finite_scores(vocab.scores, len(tokens)))

    pairs = merge_ids(vocab, derive) if merge_ids is not None else derive()
    return sentencepiece_merges.pair_strings(vocab.token_list, pairs)


def build_gguf(vocab: GGUFVocab, merge_ids: MergeIds | None = None) -> Built:
    """The `tokenizers` tokenizer the checked metadata describes."""
    try:
        if vocab.kind == "gpt2":
            merges = [m.partition(" ")[::2] for m in check_merges(vocab.merges, vocab.tokens)]
            tok = Tokenizer(
                models.BPE(vocab.ids, merges, ignore_merges=vocab.pre in ("llama-bpe", "llama3"))
            )
            tok.pre_tokenizer = _byte_level_pre(vocab.pre)
            tok.decoder = decoders.ByteLevel()
        else:
            tok = _sentencepiece_bpe(vocab, _derive(vocab, merge_ids))
        _special(tok, vocab)
        _bos(tok, vocab)
    except ModelFormatError:
        raise
    except Exception as e:  # the tokenizers library raises bare Exceptions
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelFormatError(
            f"GGUF tokenizer metadata: cannot build a tokenizer ({first})"
        ) from None
    return Built(tok, gguf_source(vocab), pre_tokenizer_warnings(vocab))


def _sentencepiece_bpe(vocab: GGUFVocab, merges: list[tuple[str, str]]) -> Tokenizer:
    unk = vocab.tokens[vocab.unk] if vocab.unk is not None else None
    bpe = models.BPE(vocab.ids, merges, unk_token=unk, fuse_unk=True, byte_fallback=True)
    tok = Tokenizer(bpe)
    steps: list[normalizers.Normalizer] = [normalizers.Replace(" ", "▁")]
    if vocab.add_space_prefix:
        steps.insert(0, normalizers.Prepend("▁"))
    tok.normalizer = normalizers.Sequence(steps)
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    return tok
