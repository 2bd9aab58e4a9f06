"""Statistics pass benchmark on a reference-shaped matrix (Qwen3.5-9B: 248320 × 4096 BF16).

Writes the structured BF16 matrix of bench/neighbors.py to a temporary .safetensors file, then
times, in one process with the file in page cache:

  plain read  – every block of the memory map copied into one reused buffer (memcpy speed), and
                a numba loop that sums every value's bits (reads each value, almost no work)
  stats pass  – explorer.core.analysis.stats.streaming_pass: norms, dots with the mean unused
                row, per-dimension mean/M2 (Chan merge), one fused kernel on the BF16 bits
  derive      – everything shown from the pass's arrays (percentiles, MAD, suspicious, kinds)

and prints stats/plain-read ratios and the load average (the machine is shared), then deletes
the file. `python bench/stats.py --rows 20000 --dim 512` is a quick small run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from neighbors import PeakAnon, write_matrix  # noqa: E402

from explorer.core.analysis import stats as stats_mod  # noqa: E402
from explorer.core.model import open_model  # noqa: E402


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Best wall time and its CPU time (all threads of this process) over `repeat` runs."""
    best, best_cpu, out = float("inf"), 0.0, None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        if wall < best:
            best, best_cpu = wall, cpu
    return best, best_cpu, out


def plain_copy(matrix: np.ndarray, block_rows: int) -> None:
    buf = np.empty((block_rows, matrix.shape[1]), dtype=matrix.dtype)
    for start in range(0, matrix.shape[0], block_rows):
        part = matrix[start : start + block_rows]
        np.copyto(buf[: len(part)], part)


def make_bits_sum():
    from numba import njit, prange

    @njit(parallel=True, cache=True, nogil=True)
    def bits_sum(bits):  # pragma: no cover - compiled
        n = bits.shape[0]
        parts = 64
        acc = np.zeros(parts, dtype=np.uint64)
        for p in prange(parts):
            s = np.uint64(0)
            for i in range(p * n // parts, (p + 1) * n // parts):
                row = bits[i]
                for j in range(row.shape[0]):
                    s += np.uint64(row[j])
            acc[p] = s
        return acc.sum()

    return bits_sum


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=248_320)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--generic", action="store_true", help="also time the decode_block path")
    ap.add_argument(
        "--keep", metavar="DIR", help="write the matrix into DIR and reuse it there on later runs"
    )
    args = ap.parse_args(argv)
    from numba import get_num_threads

    print(f"machine: {os.cpu_count()} cores, numba threads {get_num_threads()}; {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-stats-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"bench-{args.rows}x{args.dim}.safetensors"
        t = time.perf_counter()
        if not path.is_file():
            write_matrix(path, args.rows, args.dim, zero_rows=243)
        gb = path.stat().st_size / 1e9
        print(
            f"{args.rows} × {args.dim} BF16 ({gb:.2f} GB) ready in {time.perf_counter() - t:.1f} s"
        )
        model = open_model(path)
        bits = model.matrix.view(np.uint16)
        bits_sum = make_bits_sum()
        bits_sum(bits[:64])  # compile outside the timings
        stats_mod.streaming_pass(model_slice(model))  # compile the kernel outside the timings
        plain_copy(model.matrix, 8192)  # page cache warm
        copy_s, copy_cpu, _ = timed(lambda: plain_copy(model.matrix, 8192), args.repeat)
        print(
            f"plain read (memcpy per 64 MB block): {copy_s:.3f} s (CPU {copy_cpu:.3f} s), "
            f"{gb / copy_s:.1f} GB/s; {load()}"
        )
        sum_s, sum_cpu, _ = timed(lambda: bits_sum(bits), args.repeat)
        print(
            f"plain read (numba sum of every value's bits): {sum_s:.3f} s (CPU {sum_cpu:.3f} s), "
            f"{gb / sum_s:.1f} GB/s; {load()}"
        )
        with PeakAnon() as peak:
            pass_s, pass_cpu, result = timed(lambda: stats_mod.streaming_pass(model), args.repeat)
        print(
            f"stats pass (fused BF16 kernel): {pass_s:.3f} s (CPU {pass_cpu:.3f} s), "
            f"{gb / pass_s:.1f} GB/s, peak +{peak.extra:.0f} MB anonymous; {load()}"
        )
        plain = min(copy_s, sum_s)  # the faster way to touch every value is the bar
        print(
            f"stats / plain read: {pass_s / copy_s:.2f}× memcpy, {pass_s / sum_s:.2f}× bit sum "
            f"-> within 2× of a plain read: {'PASS' if pass_s <= 2 * plain else 'FAIL'}"
        )
        unused = np.zeros(0, dtype=np.int64)
        derive_s, _, derived = timed(lambda: stats_mod.derive(model, result, unused), 1)
        print(
            f"derive (norm summary, MAD, suspicious, kinds): {derive_s:.3f} s; "
            f"{len(derived.suspicious)} suspicious, outlier dims {derived.outliers[:8]}"
        )
        if args.generic:
            model.matrix = np.asarray(model.matrix)  # force the decode_block path
            gen_s, gen_cpu, _ = timed(
                lambda: stats_mod._pass_blocks(model, np.zeros(args.dim), None, None), 1
            )
            print(f"generic decode_block pass (numpy, any dtype): {gen_s:.3f} s", end=" ")
            print(f"(CPU {gen_cpu:.3f} s); {load()}")
        model.close()
    return 0


def model_slice(model):
    """A warm-up copy of the model limited to its first rows (compiles the kernel)."""
    import copy

    small = copy.copy(model)
    small.matrix = model.matrix[:256]
    small.rows = 256
    return small


if __name__ == "__main__":
    raise SystemExit(main())
