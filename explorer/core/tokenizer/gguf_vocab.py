"""A GGUF file's `tokenizer.ggml.*` metadata, checked key by key before anything is built.

Everything `info`, labels and the vocabulary table need (pieces, special and added ids, the
vocabulary size) follows from these keys alone, so a `GGUFVocab` answers them without building
the `tokenizers` tokenizer; `sources.build_gguf` builds that only when text is tokenized.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from explorer.core.errors import ModelFormatError
from explorer.core.model.formats.gguf_strings import StringArray, distinct

# llama.cpp's pre-tokenizer regexes (llama-vocab.cpp), by `tokenizer.ggml.pre`.
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = _LLAMA3_SPLIT.replace(r"\p{N}{1,3}", r"\p{N}")
PRE_SPLITS = {
    "llama-bpe": _LLAMA3_SPLIT,
    "llama3": _LLAMA3_SPLIT,
    "qwen2": _QWEN2_SPLIT,
    "deepseek-r1-qwen": _QWEN2_SPLIT,
}
PRE_GPT2_LIKE = {"default", "gpt2", "gpt-2", "smollm", "olmo", "starcoder", "refact"}
PRE_DIGITS_FIRST = {"smollm"}  # every digit its own piece, then the GPT-2 split

CONTROL, USER_DEFINED, BYTE = 3, 4, 6  # tokenizer.ggml.token_type values
KINDS = ("gpt2", "llama")
_TEMPLATE_SYNTAX = ("$", ":", " ")  # TemplateProcessing reads these in a piece as syntax


def _bad(key: str, what: str) -> ModelFormatError:
    return ModelFormatError(f"GGUF metadata tokenizer.ggml.{key}: {what}")


def _numbers(meta: dict, key: str, count: int, kind: str) -> np.ndarray | None:
    value = meta.get(f"tokenizer.ggml.{key}")
    if value is None:
        return None
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kind:
        raise _bad(key, "is not an array of numbers")
    if value.shape != (count,):
        raise _bad(key, f"has {value.size:,} entries for {count:,} tokens")
    return value


def _token_id(meta: dict, key: str, count: int) -> int | None:
    value = meta.get(f"tokenizer.ggml.{key}")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(key, f"{value!r} is not a token id")
    if not 0 <= value < count:
        raise _bad(key, f"id {value} is outside the vocabulary (0–{count - 1:,})")
    return value


@dataclass(frozen=True)
class GGUFVocab:
    """A GGUF file's tokenizer keys, checked."""

    kind: str  # "gpt2" (byte-level BPE) or "llama" (SentencePiece BPE)
    tokens: Sequence[str]  # a list, or the header's StringArray (decoded when first read)
    types: np.ndarray | None  # int per token
    scores: np.ndarray | None  # float per token (llama)
    merges: object  # "left right" strings (gpt2); see check_merges
    pre: str
    bos: int | None  # prepended when add_bos_token is set
    unk: int | None
    add_space_prefix: bool

    @property
    def token_list(self) -> list[str]:
        """`tokens` as a list, for loops over many ids (a StringArray decodes all at once)."""
        return self.tokens if isinstance(self.tokens, list) else list(self.tokens)

    @cached_property
    def ids(self) -> dict[str, int]:
        """piece → id; a repeated piece keeps its first id, like llama.cpp."""
        n = len(self.tokens)
        if not self.repeats:  # the same dict, filled in one pass forwards
            return dict(zip(self.token_list, range(n), strict=True))
        return dict(zip(reversed(self.tokens), range(n - 1, -1, -1), strict=True))

    @cached_property
    def repeats(self) -> bool:
        """Whether a piece appears twice (its later ids have no token); a set is cheaper to
        build than `ids`, which only such a vocabulary needs for what `info` shows."""
        return not distinct(self.tokens)

    def _typed(self, wanted: tuple[int, ...]) -> set[int]:
        if self.types is None:
            return set()
        at = np.flatnonzero(np.isin(self.types, wanted)).tolist()
        if not self.repeats:
            return set(at)
        return {self.ids[self.tokens[i]] for i in at}

    @cached_property
    def special_ids(self) -> set[int]:
        return self._typed((CONTROL,))

    @cached_property
    def added_ids(self) -> set[int]:
        return self._typed((CONTROL, USER_DEFINED))

    def pieces(self, size: int) -> list[str | None]:
        """The piece of every id below `size` (None for a repeated piece's later ids)."""
        out: list[str | None] = list(self.tokens[:size])
        if self.repeats:
            ids = self.ids
            out = [t if ids[t] == i else None for i, t in enumerate(out)]  # type: ignore[index]
        return out + [None] * (size - len(out))


def read_vocab(meta: dict) -> GGUFVocab | None:
    """The checked tokenizer keys, or None when the file describes no tokenizer."""
    kind = meta.get("tokenizer.ggml.model")
    tokens = meta.get("tokenizer.ggml.tokens")
    if tokens is None:  # no vocabulary (llama.cpp's "no_vocab"): rows are browsed by id
        return None
    if not isinstance(kind, str):
        raise _bad("model", f"{kind!r} is not a tokenizer name")
    if kind not in KINDS:
        raise ModelFormatError(
            f"GGUF tokenizer model {kind!r} is not supported (gpt2 and llama are); "
            "rows can still be browsed by id"
        )
    if not isinstance(tokens, list | StringArray) or not tokens:
        raise _bad("tokens", "is empty or not an array")
    if not isinstance(tokens[0], str):  # a GGUF array holds one type: strings, or not
        raise _bad("tokens", "is not an array of strings")
    n = len(tokens)
    types = _numbers(meta, "token_type", n, "iu")
    scores = _numbers(meta, "scores", n, "f") if kind == "llama" else None
    merges = meta.get("tokenizer.ggml.merges")  # checked when the tokenizer is built
    merges = [] if merges is None else merges
    bos = _token_id(meta, "bos_token_id", n)
    add_bos = bool(meta.get("tokenizer.ggml.add_bos_token"))
    if add_bos and bos is not None and any(c in tokens[bos] for c in _TEMPLATE_SYNTAX):
        raise _bad("bos_token_id", f"piece {tokens[bos]!r} cannot be prepended (has $, : or space)")
    return GGUFVocab(
        kind=kind,
        tokens=tokens,
        types=types,
        scores=scores,
        merges=merges,
        pre=str(meta.get("tokenizer.ggml.pre") or "default"),
        bos=bos if add_bos else None,
        unk=_token_id(meta, "unknown_token_id", n),
        add_space_prefix=bool(meta.get("tokenizer.ggml.add_space_prefix", True)),
    )


def check_merges(merges: object, tokens: Sequence[str]) -> list[str]:
    """Each merge names two pieces of the vocabulary whose join is a piece too."""
    if not isinstance(merges, list | StringArray) or not all(isinstance(m, str) for m in merges):
        raise _bad("merges", "is not an array of strings")
    known = set(tokens)
    for i, m in enumerate(merges):
        left, sep, right = m.partition(" ")
        if not sep or left not in known or right not in known:
            raise _bad("merges", f"merge {i} ({m!r}) does not name two tokens")
        if left + right not in known:
            raise _bad("merges", f"merge {i} ({m!r}) makes {left + right!r}, which is no token")
    return list(merges)


def gguf_source(vocab: GGUFVocab) -> str:
    """Where the tokenizer comes from, in the words `info` and the model panel show."""
    if vocab.kind == "gpt2":
        count = len(vocab.merges) if isinstance(vocab.merges, list | StringArray) else 0
        return f"GGUF metadata (byte-level BPE, {count:,} merges, pre-tokenizer {vocab.pre})"
    return "GGUF metadata (SentencePiece BPE with byte fallback)"


def pre_tokenizer_warnings(vocab: GGUFVocab) -> list[str]:
    name = vocab.pre
    if (
        vocab.kind != "gpt2"
        or name in PRE_SPLITS
        or name in PRE_DIGITS_FIRST
        or name in PRE_GPT2_LIKE
    ):
        return []
    return [
        f"pre-tokenizer {name!r} is not known here; text is split like GPT-2, "
        "so some ids may differ from llama.cpp's"
    ]


def finite_scores(scores: np.ndarray | None, count: int) -> np.ndarray:
    """float64 scores to rank merges by: missing scores rank by id, NaN ranks last."""
    if scores is None:
        return -np.arange(count, dtype=np.float64)
    ranks = scores.astype(np.float64)
    ranks[np.isnan(ranks)] = -math.inf
    return ranks
