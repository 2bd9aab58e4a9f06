"""tiktoken-style BPE ranks (Qwen's `.tiktoken`, Mistral's `tekken.json`) as a `tokenizers`
byte-level BPE, with the same ids.

The vocabulary is the ranks (id = rank + `offset`), and the merges replay tiktoken's in rank
order: tiktoken joins any adjacent pair whose join is a token, lowest rank first, so every way to
split a token into two tokens is a merge at that token's rank. The regex pattern is the
pre-tokenizer, and a whole piece found in the vocabulary is taken as is (``ignore_merges``), as
tiktoken does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from explorer.core.tokenizer.text import BYTE_TO_CHAR


def _piece(data: bytes) -> str:
    return "".join(BYTE_TO_CHAR[b] for b in data)


def spec_from_ranks(
    ranks: Mapping[bytes, int],
    pattern: str,
    specials: Sequence[tuple[int, str]] = (),
    offset: int = 0,
    normalizer: str | None = None,
) -> dict:
    """A tokenizer.json document for `ranks`; `specials` are (id, text) special tokens, matched
    as whole tokens in text; regular tokens get id rank + `offset`."""
    vocab = {_piece(tok): rank + offset for tok, rank in ranks.items()}
    for i, text in specials:
        vocab.setdefault(text, i)  # the model's vocabulary names every id the added tokens use
    merges = []
    for tok in sorted(ranks, key=ranks.__getitem__):
        for i in range(1, len(tok)):
            if tok[:i] in ranks and tok[i:] in ranks:
                merges.append([_piece(tok[:i]), _piece(tok[i:])])
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": False,
        "use_regex": False,
    }
    return {
        "version": "1.0",
        "added_tokens": [
            {
                "id": i,
                "content": text,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for i, text in specials
        ],
        "normalizer": {"type": normalizer} if normalizer else None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": pattern},
                    "behavior": "Isolated",
                    "invert": False,
                },
                byte_level,
            ],
        },
        "post_processor": byte_level,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merges,
        },
    }
