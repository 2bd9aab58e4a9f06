"""Build a real `tokenizers` tokenizer from a GGUF file's metadata (`tokenizer.ggml.*`); the
files of a folder without tokenizer.json are read by `explorer.core.tokenizer.folder`.

Each builder returns the tokenizer and the words saying where it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
from tokenizers import pre_tokenizers as pre

from explorer.core.errors import ModelFormatError
from explorer.core.tokenizer.sentencepiece import sentencepiece_merges

# llama.cpp's pre-tokenizer regexes (llama-vocab.cpp), by `tokenizer.ggml.pre`.
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2 = _LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
_SPLITS = {"llama-bpe": _LLAMA3, "llama3": _LLAMA3, "qwen2": _QWEN2, "deepseek-r1-qwen": _QWEN2}
_GPT2_LIKE = {"default", "gpt2", "gpt-2", "smollm", "olmo", "starcoder", "refact"}
_DIGITS_FIRST = {"smollm"}  # every digit its own piece, then the GPT-2 split

CONTROL, USER_DEFINED, BYTE = 3, 4, 6  # tokenizer.ggml.token_type values


@dataclass
class Built:
    tokenizer: Tokenizer
    source: str  # e.g. "GGUF metadata (gpt2 BPE, pre-tokenizer smollm)"
    warnings: list[str] = field(default_factory=list)


def _byte_level_pre(name: str, warnings: list[str]) -> pre.PreTokenizer:
    if name in _SPLITS:
        return pre.Sequence(
            [
                pre.Split(Regex(_SPLITS[name]), behavior="isolated"),
                pre.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    byte_level = pre.ByteLevel(add_prefix_space=False, use_regex=True)
    if name in _DIGITS_FIRST:
        return pre.Sequence([pre.Digits(individual_digits=True), byte_level])
    if name not in _GPT2_LIKE:
        warnings.append(
            f"pre-tokenizer {name!r} is not known here; text is split like GPT-2, "
            "so some ids may differ from llama.cpp's"
        )
    return byte_level


def _unique_vocab(tokens: Sequence[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)  # a repeated piece keeps its first id, like llama.cpp
    return vocab


def _special(tok: Tokenizer, tokens: Sequence[str], types: Sequence[int] | None) -> None:
    if types is None:
        return
    added = [
        AddedToken(tokens[i], special=t == CONTROL, normalized=False)
        for i, t in enumerate(types)
        if t in (CONTROL, USER_DEFINED)
    ]
    tok.add_special_tokens([a for a in added if a.special])
    tok.add_tokens([a for a in added if not a.special])


def _bos(tok: Tokenizer, meta: dict, tokens: Sequence[str]) -> None:
    bos = meta.get("tokenizer.ggml.bos_token_id")
    if meta.get("tokenizer.ggml.add_bos_token") and isinstance(bos, int) and bos < len(tokens):
        b = tokens[bos]
        tok.post_processor = processors.TemplateProcessing(
            single=f"{b} $A", pair=f"{b} $A $B", special_tokens=[(b, bos)]
        )


def from_gguf(meta: dict) -> Built | None:
    """The tokenizer described by `tokenizer.ggml.*`, or None when the file has none."""
    kind = meta.get("tokenizer.ggml.model")
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(kind, str) or not isinstance(tokens, list) or not tokens:
        return None
    types = meta.get("tokenizer.ggml.token_type")
    types = [int(t) for t in types] if types is not None else None
    warnings: list[str] = []
    if kind == "gpt2":
        name = str(meta.get("tokenizer.ggml.pre") or "default")
        merges_raw = meta.get("tokenizer.ggml.merges") or []
        merges = [tuple(m.split(" ", 1)) for m in merges_raw if " " in m]
        bpe = models.BPE(
            _unique_vocab(tokens),
            merges,
            ignore_merges=name in ("llama-bpe", "llama3"),
        )
        tok = Tokenizer(bpe)
        tok.pre_tokenizer = _byte_level_pre(name, warnings)
        tok.decoder = decoders.ByteLevel()
        source = f"GGUF metadata (byte-level BPE, {len(merges):,} merges, pre-tokenizer {name})"
    elif kind == "llama":
        scores = meta.get("tokenizer.ggml.scores")
        tok = _sentencepiece_bpe(tokens, list(scores) if scores is not None else None, types, meta)
        source = "GGUF metadata (SentencePiece BPE with byte fallback)"
    else:
        raise ModelFormatError(
            f"GGUF tokenizer model {kind!r} is not supported (gpt2 and llama are); "
            "rows can still be browsed by id"
        )
    _special(tok, tokens, types)
    _bos(tok, meta, tokens)
    return Built(tok, source, warnings)


def _sentencepiece_bpe(
    tokens: Sequence[str], scores: Sequence[float] | None, types: Sequence[int] | None, meta: dict
) -> Tokenizer:
    vocab = _unique_vocab(tokens)
    if scores is None:
        scores = [-float(i) for i in range(len(tokens))]
    # byte pieces (<0x41>) never merge: they only stand in for bytes with no piece of their own
    mergeable = {p: i for p, i in vocab.items() if types is None or types[i] != BYTE}
    unk_id = meta.get("tokenizer.ggml.unknown_token_id")
    unk = tokens[unk_id] if isinstance(unk_id, int) and unk_id < len(tokens) else None
    bpe = models.BPE(
        vocab,
        sentencepiece_merges(mergeable, scores),
        unk_token=unk,
        fuse_unk=True,
        byte_fallback=True,
    )
    tok = Tokenizer(bpe)
    steps: list[normalizers.Normalizer] = [normalizers.Replace(" ", "▁")]
    if meta.get("tokenizer.ggml.add_space_prefix", True):
        steps.insert(0, normalizers.Prepend("▁"))
    tok.normalizer = normalizers.Sequence(steps)
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    return tok
