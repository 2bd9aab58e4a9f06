"""Cold rows: copying them out of the memory map (page faults under the GIL) vs reading them with
os.pread (explorer/core/cold_rows.py, the GIL released while the disk answers).

For each model, evicts the file from the page cache, reads random rows on a worker thread one
way, and meanwhile a second thread ticks every 1 ms, as the GUI thread's timer does: its longest
gap is how long the window would have waited for the GIL. Repeated; prints medians and maxima.

    python bench/cold_rows.py [MODEL ...] [--rows 256] [--repeats 5]
    (default models: the bundled demo, SmolLM2 from ~/.cache/explorer-bench if converted there
    by bench/neighbor_data.py, and any folder given)
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path

import numpy as np
from page_cache import drop_page_cache

from explorer.core.model import open_model

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = [ROOT / "resources" / "demo", Path.home() / ".cache/explorer-bench/smollm2-bf16"]


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    for folder in args.models or [p for p in DEFAULTS if p.exists()]:
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


if __name__ == "__main__":
    main()
