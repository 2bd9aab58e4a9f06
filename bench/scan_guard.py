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
    args = ap.parse_args(argv)
    print(f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} (shared machine)")
    from explorer.core.resources import demo_model_dir

    only = args.only.split(",")
    if "demo" in only:
        show("demo", open_model(demo_model_dir(), tokenizer=False), args.rounds)
    if "smollm2-gguf" in only:
        show("smollm2 Q8", open_model(data.smollm2_gguf(), tokenizer=False), args.rounds)
    if "smollm2" in only:
        show("smollm2", open_model(data.smollm2(), tokenizer=False), args.rounds)
    if "synthetic" in only:
        tmp = Path(tempfile.mkdtemp(prefix="ee-bench-"))
        try:
            path = tmp / "model.safetensors"
            synthetic.write_realistic(path, args.rows, args.dim)
            show(f"synth {args.rows // 1000}k", open_model(path, tokenizer=False), args.rounds)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"end: load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
