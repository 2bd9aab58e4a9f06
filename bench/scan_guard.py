"""What keeping scans safe from a truncated file costs: exact search with each read strategy.

    python bench/scan_guard.py                      # demo, smollm2 (GGUF Q8_0 and BF16), synthetic
    python bench/scan_guard.py --rows 100000        # a smaller synthetic BF16 matrix

For each matrix, in one process: the floor (a plain parallel read of the whole matrix), then
one exact query (`explorer.core.search.exact.scan`) with the map read unguarded (what a
truncation mid-scan turns into SIGBUS), under a read lease (the default where the user owns
the file) and through pread blocks (the fallback). Median and spread of a few rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from lib import data, synthetic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from neighbors import plain_read_ms

from explorer.core import filecheck
from explorer.core.model.open import open_model
from explorer.core.search import exact


def strategy(name: str) -> None:
    filecheck._SAFE_SCANS = name != "unguarded"
    filecheck._F_SETLEASE = 1024 if name == "lease" else -1  # -1: no lease, so pread


def times(model, rounds: int) -> dict[str, list[float]]:
    decode = None if model.matrix.dtype.name in ("bfloat16", "float32") else model.decode_block
    q = np.asarray(model.vectors([1]), np.float32)
    out: dict[str, list[float]] = {"unguarded": [], "lease": [], "pread": []}
    for name in out:  # warm-up: compile, page cache
        strategy(name)
        exact.scan(model.matrix, q, False, decode=decode)
    for _ in range(rounds):
        for name in out:  # interleaved, so that load changes hit every strategy alike
            strategy(name)
            t = time.perf_counter()
            exact.scan(model.matrix, q, False, decode=decode)
            out[name].append(1000 * (time.perf_counter() - t))
    strategy("lease")
    return out


def index_load(name: str, model, rounds: int, cache: Path) -> None:
    """What checking a cached fast index costs at load: the entry's checks (sizes, dtypes,
    shapes, SHA-256 of every array) and the recheck (one exact scan for the row norms and the
    exact top-10 of 8 rows, then 8 fast queries per metric)."""
    from explorer.core.search import fast as search_fast
    from explorer.core.search.neighbors import NeighborSearcher

    NeighborSearcher(model, cache_dir=cache).build_fast_index()
    entry, total = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        index, why = search_fast.load(model, cache)
        entry.append(1000 * (time.perf_counter() - t))
        assert index is not None, why
        t = time.perf_counter()
        searcher = NeighborSearcher(model, cache_dir=cache)
        assert searcher.load_cached_fast_index(), searcher.cache_note
        total.append(1000 * (time.perf_counter() - t))
    strategy("lease")
    q = np.asarray(model.vectors([1]), np.float32)
    decode = None if model.matrix.dtype.name in ("bfloat16", "float32") else model.decode_block
    scans = []
    for _ in range(rounds):
        t = time.perf_counter()
        exact.scan(model.matrix, q, False, decode=decode)
        scans.append(1000 * (time.perf_counter() - t))
    med = float(np.median(total))
    print(
        f"{name:<10} index load: entry checks {np.median(entry):6.1f} ms "
        f"[{min(entry):.1f}-{max(entry):.1f}], with the recheck {med:6.1f} ms "
        f"[{min(total):.1f}-{max(total):.1f}]; one exact query {np.median(scans):6.1f} ms "
        f"(load = {med / float(np.median(scans)):.1f} exact queries)",
        flush=True,
    )


def show(name: str, model, rounds: int) -> None:
    floor = plain_read_ms(model)
    found = times(model, rounds)
    base = float(np.median(found["unguarded"]))
    cells = []
    for key, ms in found.items():
        med = float(np.median(ms))
        cells.append(f"{key} {med:7.1f} ms [{min(ms):.1f}-{max(ms):.1f}] ×{med / base:.2f}")
    print(f"{name:<10} floor {floor:7.1f} ms | " + " | ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="demo,smollm2-gguf,smollm2,synthetic")
    ap.add_argument("--rows", type=int, default=248320)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--index", action="store_true", help="also time loading a checked index")
    args = ap.parse_args(argv)
    cache = Path(tempfile.mkdtemp(prefix="ee-bench-cache-"))
    print(f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} (shared machine)")
    from explorer.core.resources import demo_model_dir

    only = args.only.split(",")
    models = []
    if "demo" in only:
        models.append(("demo", lambda: demo_model_dir()))
    if "smollm2-gguf" in only:
        models.append(("smollm2 Q8", data.smollm2_gguf))
    if "smollm2" in only:
        models.append(("smollm2", data.smollm2))
    tmp = Path(tempfile.mkdtemp(prefix="ee-bench-"))
    if "synthetic" in only:
        path = tmp / "model.safetensors"
        models.append((f"synth {args.rows // 1000}k", lambda: path))
    try:
        for name, where in models:
            if name.startswith("synth"):
                synthetic.write_realistic(path, args.rows, args.dim)
            model = open_model(where(), tokenizer=False)
            show(name, model, args.rounds)
            if args.index:
                index_load(name, model, args.rounds, cache)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    print(f"end: load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
