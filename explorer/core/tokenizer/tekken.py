"""Mistral's `tekken.json` (the tokenizer of current Mistral models, read as mistral-common
reads it): tiktoken-style ranks behind a block of special tokens.

Ids 0 … num_special−1 are the special tokens (listed in the file, or mistral-common's default
list for files up to v7, then `<SPECIAL_n>` fillers); regular token ids are rank + num_special,
for the first default_vocab_size − num_special ranks.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

from explorer.core.errors import ModelFormatError
from explorer.core.model.formats.jsonfile import load_json

MAX_TEKKEN_BYTES = 256 * 1024 * 1024

# mistral-common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS: the specials of files that list none
DEFAULT_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)  # fmt: skip


def _fail(path: Path, what: str) -> ModelFormatError:
    return ModelFormatError(f"{path.name}: not a usable tekken tokenizer ({what})")


def _int(config: dict, key: str, path: Path) -> int:
    value = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
        raise _fail(path, f"config.{key} is {value!r}, not a count")
    return value


def read_tekken(path: Path) -> tuple[dict[bytes, int], str, list[tuple[int, str]], int]:
    """(ranks, regex pattern, special tokens as (id, text), num_special) of a tekken.json."""
    if path.stat().st_size > MAX_TEKKEN_BYTES:
        raise _fail(path, f"larger than {MAX_TEKKEN_BYTES // 2**20} MB")
    data = load_json(path, "not valid JSON")
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        raise _fail(path, "no 'config' object")
    config, vocab = data["config"], data.get("vocab")
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise _fail(path, "config.pattern is missing")
    if not isinstance(vocab, list) or not vocab:
        raise _fail(path, "no 'vocab' list")
    n_special = _int(config, "default_num_special_tokens", path)
    size = _int(config, "default_vocab_size", path)
    inner = size - n_special
    if not 0 < inner <= len(vocab):
        raise _fail(path, f"vocabulary size {size} does not fit {len(vocab)} ranks")
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(vocab[:inner]):
        try:
            if entry["rank"] != i:
                raise _fail(path, f"vocab[{i}] has rank {entry['rank']!r}")
            ranks[base64.b64decode(entry["token_bytes"], validate=True)] = i
        except (KeyError, TypeError, ValueError, binascii.Error):
            raise _fail(path, f"vocab[{i}] is not a {{rank, token_bytes}} entry") from None
    if len(ranks) != inner:
        raise _fail(path, "a token's bytes appear twice")
    return ranks, pattern, _specials(data.get("special_tokens"), n_special, path), n_special


def _specials(listed: object, n_special: int, path: Path) -> list[tuple[int, str]]:
    if listed is None:
        texts = list(DEFAULT_SPECIALS)
    elif isinstance(listed, list):
        try:
            by_rank = sorted((int(t["rank"]), str(t["token_str"])) for t in listed)
        except (KeyError, TypeError, ValueError):
            raise _fail(path, "special_tokens entries need rank and token_str") from None
        if [r for r, _ in by_rank] != list(range(len(by_rank))):
            raise _fail(path, "special_tokens ranks are not 0, 1, 2, …")
        texts = [t for _, t in by_rank]
    else:
        raise _fail(path, "special_tokens is not a list")
    if len(texts) > n_special or len(set(texts)) != len(texts):
        raise _fail(path, f"{len(texts)} special tokens for {n_special} special ids")
    texts += [f"<SPECIAL_{i}>" for i in range(len(texts), n_special)]
    return list(enumerate(texts))
