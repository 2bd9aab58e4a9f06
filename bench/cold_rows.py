"""Cold rows: copying them out of the memory map (page faults under the GIL) vs reading them with
os.pread (explorer/core/model/cold_rows.py, the GIL released while the disk answers); and
the neighbour search's re-rank (a compiled gather of scattered rows) through the model's map vs
through the same bytes mapped again with MADV_RANDOM (`cold_rows.random_access_map`, which
the model's `scattered_matrix` uses from 256 MB on; here for any size).

For each model, evicts the file from the page cache, reads random rows on a worker thread one
way, and meanwhile a second thread ticks every 1 ms, as the GUI thread's timer does: its longest
gap is how long the window would have waited for the GIL. Repeated; prints medians and maxima,
and for the re-rank the bytes this process read from the disk (/proc/self/io read_bytes).

    python bench/cold_rows.py [MODEL ...] [--rows 256] [--rerank 566] [--repeats 5]
    (default models: the bundled demo and SmolLM2 as BF16, bench/lib/data.py; the reference
    matrix is the one `python bench/gui_latency.py --keep DIR` leaves in DIR/model)
"""

from __future__ import annotations

import argparse
import gc
import statistics
import threading
import time
from pathlib import Path

import numpy as np
from lib.data import smollm2
from lib.page_cache import drop_page_cache

from explorer.core.model.cold_rows import random_access_map
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from explorer.core.search import exact as search_exact


def longest_tick_gap(work) -> tuple[float, float]:
    """(wall ms of work() on a thread, longest gap ms of a 1 ms ticker meanwhile)."""
    done = threading.Event()
    gap = [0.0]

    def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gap[0] = max(gap[0], now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    time.sleep(0.02)
    t = time.perf_counter()
    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    wall = time.perf_counter() - t
    done.set()
    ticker.join()
    return wall * 1e3, gap[0] * 1e3


def disk_bytes_read() -> int:
    """Bytes this process has had read from the disk so far (Linux), page-cache fills included."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("read_bytes:"):
            return int(line.split()[1])
    return 0


def rerank(folder: Path, mapped: Path, n: int, repeats: int) -> None:
    """The re-rank's gather of `n` scattered cold rows through each of the two maps, each with
    the model opened afresh (the page cache cannot evict pages that a live map holds)."""
    rng = np.random.default_rng(1)
    for name in ("model's map", "MADV_RANDOM"):
        model = open_model(folder, tokenizer=False)
        query = rng.standard_normal((1, model.dim)).astype(np.float32)
        matrix = model.matrix if name == "model's map" else random_access_map(model.matrix, 0)
        walls, gaps, read = [], [], []
        for _ in range(repeats):
            ids = rng.choice(model.rows, min(n, model.rows), replace=False)
            drop_page_cache(mapped)
            before = disk_bytes_read()
            wall, gap = longest_tick_gap(
                lambda ids=ids, m=matrix, q=query: search_exact.dots_for_ids(m, ids, q)
            )
            read.append((disk_bytes_read() - before) / 2**20)
            walls.append(wall)
            gaps.append(gap)
        print(
            f"  re-rank {len(ids)} rows, {name:11}  {statistics.median(walls):7.1f} ms (max "
            f"{max(walls):7.1f}), {statistics.median(read):7.1f} MB read from the disk (max "
            f"{max(read):7.1f}), other thread's longest wait {statistics.median(gaps):5.1f} ms"
        )
        del matrix
        model.close()
        gc.collect()  # the map goes with its last array


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--rerank", type=int, default=566, help="rows of one re-rank (cosine's)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    for folder in args.models or [demo_model_dir(), smollm2().parent]:
        model = open_model(folder, tokenizer=False)
        mapped = Path(model.matrix.filename)  # type: ignore[attr-defined] - a np.memmap
        print(
            f"{folder.name}: {model.rows} x {model.dim} {model.dtype}, "
            f"{model.matrix.strides[0]:,} bytes a row, {args.rows} random rows"
        )
        rng = np.random.default_rng(0)
        for name, read in (("memory map", model.raw_rows), ("os.pread", model.cold_rows)):
            walls, gaps = [], []
            for _ in range(args.repeats):
                ids = np.sort(rng.choice(model.rows, min(args.rows, model.rows), replace=False))
                drop_page_cache(mapped)
                wall, gap = longest_tick_gap(lambda ids=ids, read=read: read(ids))
                walls.append(wall)
                gaps.append(gap)
            print(
                f"  {name:10}  read {statistics.median(walls):7.1f} ms (max {max(walls):7.1f}),"
                f"  other thread's longest wait {statistics.median(gaps):6.1f} ms "
                f"(max {max(gaps):6.1f})"
            )
        model.close()
        gc.collect()
        rerank(folder, mapped, args.rerank, args.repeats)


if __name__ == "__main__":
    main()
