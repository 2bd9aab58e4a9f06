"""Nearest-neighbour benchmark on a reference-shaped matrix (Qwen3.5-9B: 248320 × 4096 BF16).

Generates a structured BF16 matrix (clusters around centres in a low-rank subspace, plus isotropic
noise, plus a few zero "padding" rows at the end), writes it in chunks to a temporary .safetensors
file, then measures side by side in one process:

  naive  – the whole matrix converted to float32 in RAM, then one matrix–vector product per query
  exact  – explorer.core.neighbors exact search on the memory map
  fast   – the PCA sketch index (build time, cache size, per-query time, recall@10 against exact)

and deletes the file.  `python bench/neighbors.py --rows 20000 --dim 512` is a quick small run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TENSOR = "model.embed_tokens.weight"
PAUSE = 0.2  # seconds between timed calls (see the interleaved loops)


def rss_anon_mb() -> float:
    """Anonymous resident memory of this process (file-backed mapped pages do not count)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class PeakAnon:
    """Samples RssAnon every 2 ms in a thread: the peak, temporaries included."""

    def __init__(self) -> None:
        self.base = rss_anon_mb()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, rss_anon_mb())

    def __enter__(self) -> PeakAnon:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_anon_mb())

    @property
    def extra(self) -> float:
        return self.peak - self.base


def write_matrix(
    path: Path, rows: int, dim: int, seed: int = 0, chunk_rows: int = 8192, zero_rows: int = 0
) -> None:
    """Write a clustered BF16 matrix chunk by chunk (never more than one chunk in RAM)."""
    rng = np.random.default_rng(seed)
    rank = min(256, dim)
    n_clusters = max(2, rows // 60)
    # Cluster centres live in a rank-`rank` subspace with a decaying spectrum, like real embeddings.
    basis = rng.standard_normal((rank, dim)).astype(np.float32) / np.sqrt(dim)
    spectrum = (1.0 / np.sqrt(1.0 + np.arange(rank) / 8.0)).astype(np.float32)
    centres = (rng.standard_normal((n_clusters, rank)).astype(np.float32) * spectrum) @ basis
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    shared = rng.standard_normal(dim).astype(np.float32) * (0.5 / np.sqrt(dim))  # a common offset
    # Uneven cluster sizes (popular and rare topics).
    weights = rng.lognormal(0.0, 0.7, n_clusters)
    weights /= weights.sum()
    header = {TENSOR: {"dtype": "BF16", "shape": [rows, dim], "data_offsets": [0, rows * dim * 2]}}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for start in range(0, rows, chunk_rows):
            n = min(chunk_rows, rows - start)
            which = rng.choice(n_clusters, size=n, p=weights)
            block = centres[which] + shared
            noise = rng.standard_normal((n, dim), dtype=np.float32)
            block += noise * np.float32(0.8 / np.sqrt(dim))
            scale = rng.uniform(0.6, 1.4, size=(n, 1)).astype(np.float32)
            block *= scale * np.float32(0.05 * np.sqrt(dim) / 8)
            first_zero = rows - zero_rows
            if start + n > first_zero:
                block[max(0, first_zero - start) :] = 0
            f.write(block.astype(ml_dtypes.bfloat16).tobytes())


class Clock:
    """Wall and CPU (this process, all threads) time per call; medians in ms."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __call__(self, fn, *args):
        t, c = time.perf_counter(), time.process_time()
        out = fn(*args)
        self.wall.append(1000 * (time.perf_counter() - t))
        self.cpu.append(1000 * (time.process_time() - c))
        return out

    @property
    def ms(self) -> float:
        return float(np.median(self.wall))

    def __str__(self) -> str:
        return f"{self.ms:.1f} ms/query (CPU {float(np.median(self.cpu)):.1f} ms)"


def load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=248320)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--queries", type=int, default=200, help="random queries for recall@10")
    ap.add_argument("--timed", type=int, default=20, help="queries timed for the per-query figures")
    ap.add_argument("--file", type=Path, help="reuse/keep this matrix file, not a temporary one")
    ap.add_argument("--no-naive", action="store_true", help="skip the float32-in-RAM baseline")
    args = ap.parse_args(argv)

    from explorer.core.model import open_model
    from explorer.core.neighbors import NeighborSearcher, query_for_ids

    tmp = Path(tempfile.mkdtemp(prefix="ee-bench-"))
    path = args.file or tmp / "model.safetensors"
    cache = tmp / "cache"
    try:
        if not path.exists():
            t = time.perf_counter()
            write_matrix(path, args.rows, args.dim, zero_rows=max(1, args.rows // 1000))
            print(
                f"wrote {path.stat().st_size / 1e9:.2f} GB matrix in "
                f"{time.perf_counter() - t:.1f} s"
            )
        model = open_model(path, tokenizer=False)
        print(
            f"matrix: {model.rows} x {model.dim} {model.dtype}, {model.file_size / 1e9:.2f} GB, "
            f"{os.cpu_count()} cores, numpy {np.__version__}"
        )
        t = time.perf_counter()
        # Warm the page cache (one touch per 4 KB page).
        np.asarray(model.matrix).view(np.uint16)[:: max(1, 4096 // model.dim)].sum()
        print(f"page-cache warm-up read: {time.perf_counter() - t:.2f} s")

        rng = np.random.default_rng(1)
        usable = model.rows - max(1, args.rows // 1000)
        qids = rng.choice(usable, size=args.queries, replace=False)
        queries = [query_for_ids(model, [int(i)]) for i in qids]
        timed_q = queries[: args.timed]

        searcher = NeighborSearcher(model, cache_dir=cache)
        print(f"machine at start: {load()} (other processes share the 2 cores)")
        gc.collect()
        alone = Clock()
        with PeakAnon() as mem:
            t = time.perf_counter()
            first = searcher.search(timed_q[0], k=10, exact=True)
            first_ms = 1000 * (time.perf_counter() - t)
            for q in timed_q:
                time.sleep(PAUSE)
                alone(searcher.search, q, 10, "cosine", False, True)
            searcher.search_many(timed_q[8:10], k=10, exact=True)  # compile the batch kernel
            t = time.perf_counter()
            batch = searcher.search_many(timed_q[:8], k=10, exact=True)
            batch_ms = (time.perf_counter() - t) * 1000
        assert len(batch) == 8
        print(
            f"exact: first query (JIT load + row-norm pass) {first_ms:.0f} ms; "
            f"{first.skipped} zero/non-finite rows skipped"
        )

        print("\n-- exact (memory-mapped BF16, fused numba kernel) vs naive --")
        naive_clock, exact_clock = Clock(), Clock()
        if not args.no_naive:
            gc.collect()
            before = rss_anon_mb()
            t = time.perf_counter()
            full = np.asarray(model.matrix).astype(np.float32)
            norms = np.linalg.norm(full, axis=1)
            naive_setup = time.perf_counter() - t
            naive_anon = rss_anon_mb() - before

            def naive(q):
                s = full @ q.vector
                with np.errstate(invalid="ignore", divide="ignore"):
                    s /= norms * np.linalg.norm(q.vector)
                s[~np.isfinite(s)] = -np.inf
                s[list(q.exclude)] = -np.inf
                top = np.argpartition(-s, 10)[:10]
                return top[np.argsort(-s[top])]

            # Interleaved query by query, so that load from other processes hits both alike;
            # a pause before each call lets the other method's idle worker threads (OpenBLAS
            # spins for ~0.1 s after a call) go to sleep first.
            same = []
            for q in timed_q:
                time.sleep(PAUSE)
                a = naive_clock(naive, q)
                time.sleep(PAUSE)
                b = exact_clock(searcher.search, q, 10, "cosine", False, True).ids
                same.append(np.array_equal(a, b))
            del full, norms
            gc.collect()
            print(
                f"naive (whole matrix as float32 in RAM, one mat-vec): "
                f"setup {naive_setup:.1f} s, +{naive_anon:.0f} MB anonymous"
            )
            print(f"  naive: {naive_clock}")
            print(f"  exact: {exact_clock}  (interleaved with naive)")
            print(
                f"  exact/naive time: {exact_clock.ms / naive_clock.ms:.2f}; same top-10 on "
                f"{100 * np.mean(same):.0f}% of {len(timed_q)} queries"
            )
        print(f"exact alone: {alone}; peak +{mem.extra:.0f} MB anonymous (JIT included)")
        print(
            f"exact batch of 8 queries in one pass: {batch_ms:.0f} ms ({batch_ms / 8:.1f} ms/query)"
        )

        print("\n-- fast (PCA sketch + exact re-rank from the memory map) --")
        anon0 = rss_anon_mb()
        t = time.perf_counter()
        last = 0.0
        for p in searcher.build_fast_index():
            if p - last >= 0.25:
                print(f"  build {100 * p:.0f}% at {time.perf_counter() - t:.1f} s")
                last = p
        build_s = time.perf_counter() - t
        build_anon = rss_anon_mb() - anon0
        size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
        print(
            f"index build: {build_s:.1f} s, cache on disk {size / 1e6:.0f} MB, "
            f"+{build_anon:.0f} MB anonymous after build"
        )
        reload = NeighborSearcher(model, cache_dir=cache)
        t = time.perf_counter()
        for _ in reload.build_fast_index():
            pass
        print(
            f"index load from cache (next launch): {1000 * (time.perf_counter() - t):.0f} ms, "
            f"ready={reload.fast_ready}"
        )
        searcher.search(timed_q[0], k=10, exact=False)
        recalls = []
        exact2, fast = Clock(), Clock()
        for q in queries:  # interleaved: exact then fast for each query
            time.sleep(PAUSE)
            e = exact2(searcher.search, q, 10, "cosine", False, True).ids
            time.sleep(PAUSE)
            f = fast(searcher.search, q, 10, "cosine", False, False).ids
            recalls.append(len(set(e.tolist()) & set(f.tolist())) / len(e))
        recall = float(np.mean(recalls))
        print(f"  fast:  {fast}")
        print(f"  exact: {exact2}  (interleaved, {len(queries)} queries)")
        print(
            f"  fast is {exact2.ms / fast.ms:.1f}x faster; recall@10 {recall:.4f} over "
            f"{len(queries)} random queries (worst query {min(recalls):.1f})"
        )
        print(f"\nmachine at end: {load()}")
        print("-- summary --")
        ok_exact = (args.no_naive or exact_clock.ms <= naive_clock.ms) and mem.extra < 300
        ok_fast = exact2.ms / fast.ms >= 10 and recall >= 0.99
        print(f"exact <= naive per query and < 300 MB extra: {'PASS' if ok_exact else 'FAIL'}")
        print(f"fast >= 10x exact and recall@10 >= 0.99: {'PASS' if ok_fast else 'FAIL'}")
        model.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the generated matrix and the index cache
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
