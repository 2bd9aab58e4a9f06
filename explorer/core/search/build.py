"""Build the fast index in one pass over the matrix, then measure and tune its recall.

The pass decodes each block once and, from it, writes the rows' sign codes, learns their
squared norms, and computes the exact dot products of every block row with a few hundred
random query rows (so the exact top-10 of those queries comes free with the build).  Then,
for each metric, the index ranks the same queries itself: the first `CALIBRATE` queries choose
the cheapest (c1, c2) whose recall@10 reaches the target, the other `MEASURE` queries (never
used for choosing) give the recall that is stored and shown.  If recall stays below the target
the candidate lists widen; if even the widest setting misses, that metric is marked unusable
with the reason, and the exact scan serves it.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from explorer.core import cache
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.filecheck import MappedScan, check_mapped
from explorer.core.model.decode import decode_rows, ggml_type
from explorer.core.model.dtypes import BF16 as _BF16
from explorer.core.search import codes as search_codes
from explorer.core.search.fast import HEAD_WORDS, SignIndex, folder_for, load, save_arrays
from explorer.core.search.fast import cache_key as _key
from explorer.core.search.truth import Truth
from explorer.core.search.tune import CALIBRATE, tune

MIN_BITS = 1024
MEASURE = 200
SAMPLE_ROWS = 8192
SAMPLE_CHUNK = 256  # rows read at a time for the mean direction (4 MB at dim 4096)
BLOCK_BYTES = 16 << 20


def decoder(
    model, source: MappedScan | None = None
) -> Callable[[int, int, np.ndarray], np.ndarray]:
    """Float32 rows [start, stop), written into `out` (float32 [>= stop - start, dim], reused
    for every block): a shift for BF16, a cast for the other float formats; quantised GGUF and
    F64 rows come from the model's own decoder (new arrays). Stored rows are read through
    `source` when given (a truncation mid-build is then an error, never SIGBUS)."""

    def stored(s: int, e: int) -> np.ndarray:
        if source is not None:
            return source.rows(s, e)
        check_mapped(model.matrix)  # a file shrunk under the scan: an error, not SIGBUS
        return model.matrix[s:e]

    if model.matrix.dtype == _BF16:

        def bf16_rows(s: int, e: int, out: np.ndarray) -> np.ndarray:
            bits = stored(s, e).view(np.uint16)
            np.left_shift(bits, np.uint32(16), out=out[: e - s].view(np.uint32))
            return out[: e - s]

        return bf16_rows
    if ggml_type(model.matrix) is None and model.matrix.dtype != np.float64:

        def cast_rows(s: int, e: int, out: np.ndarray) -> np.ndarray:  # F16, F32, F8: exact
            np.copyto(out[: e - s], stored(s, e), casting="unsafe")
            return out[: e - s]

        return cast_rows
    if source is not None and source.fd >= 0:  # a mapped quantised or F64 file
        return lambda s, e, out: np.asarray(decode_rows(source.rows(s, e)), dtype=np.float32)
    return lambda s, e, out: np.asarray(model.decode_block(s, e), dtype=np.float32)


def mean_direction(model, ids: np.ndarray, chunk: int = SAMPLE_CHUNK) -> np.ndarray:
    """Unit mean of the unit rows `ids` (float32 [dim]; zeros if none is usable), read a few
    hundred rows at a time: all 8192 sampled rows at once were ~400 MB of temporaries, given
    back to the kernel as the build began (and reported to a VM's host, which stalls it)."""
    total = np.zeros(model.dim, np.float64)
    for start in range(0, len(ids), chunk):
        rows = np.asarray(model.vectors(ids[start : start + chunk]), dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1)
        ok = np.isfinite(norms) & (norms > 0)
        total += (rows[ok] / norms[ok, None]).sum(0, dtype=np.float64)
    length = np.linalg.norm(total)
    return (total / length if length > 0 else total).astype(np.float32)


def block_rows(dim: int, queries: int) -> int:
    """Rows per block of the pass (256 at least): its float32 rows and their dots with the
    queries are 16 MB each at most, under glibc's largest mmap threshold, which the build's
    child sets (tuning.KEEP_FREED_MEMORY): the block buffers come from its heap and stay there."""
    return max(256, BLOCK_BYTES // (4 * max(1, dim, queries)))


def _pass(model, index_dir: Path, u, signs, qrows, qids, ctx: JobContext) -> tuple:
    """The pass over the matrix; progress 0..1 of `ctx` is 0..0.85 of the build."""
    rows = model.rows
    words = signs.shape[0] * signs.shape[1] // 64
    codes = np.lib.format.open_memmap(
        index_dir / "codes.npy", mode="w+", dtype=np.uint64, shape=(rows, words)
    )
    a = np.zeros(rows, np.float32)
    wn = np.zeros(rows, np.float32)
    sq = np.zeros(rows, np.float64)
    truth = Truth(qids)
    source = MappedScan(model.matrix)
    decode = decoder(model, source)
    step = source.step(min(block_rows(model.dim, len(qrows)), max(1, rows)))
    # One set of block buffers for the whole pass: a fresh 64 MB array per block had the
    # kernel hand out and take back ~8 GB of pages over a build, and on a VM that stalls
    # the other processes' threads, the window's among them (docs/responsiveness.md, "the rare
    # slow click").
    rows_buf = np.empty((step, model.dim), np.float32)
    codes_buf = np.empty((step, words), np.uint64)
    dots_buf = np.empty((step, len(qrows)), np.float32)
    try:
        for start in range(0, rows, step):
            ctx.check("index build")
            stop = min(rows, start + step)
            n = stop - start
            x = decode(start, stop, rows_buf)
            block = slice(start, stop)
            search_codes.encode_rows(x, u, signs, codes_buf[:n], a[block], wn[block], sq[block])
            codes[block] = codes_buf[:n]
            finite = np.isfinite(sq[block])
            if not finite.all():  # NaN/inf rows must not spoil the exact dots of the others
                x = np.where(finite[:, None], x, 0).astype(np.float32)
            truth.add(start, np.matmul(x, qrows.T, out=dots_buf[:n]), sq[block])
            ctx.progress(stop / rows)
    finally:
        source.close()
    codes.flush()
    hw = min(words, HEAD_WORDS)
    np.save(index_dir / "head.npy", np.ascontiguousarray(codes[:, :hw]))
    del codes
    return a, wn, sq, truth


def partial_folder(final: Path, pid: int) -> Path:
    """Where process `pid` writes the index before publishing it to `final`."""
    return final.parent / f"tmp-{pid}-{final.name}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # exists, but is not ours
        return True
    return True


def remove_partial_builds(final: Path) -> None:
    """Remove the half-written indexes, meant for `final`, of builds whose process is gone: a
    cancelled build child is killed and cannot clean up (each one left 60-150 MB in the cache)."""
    if os.name != "posix":  # os.kill(pid, 0) would end the process on Windows
        return
    for folder in final.parent.glob(f"tmp-*-{final.name}"):
        pid = folder.name.split("-")[1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def build(model, root: Path, ctx: JobContext = NULL_CONTEXT, bits: int = MIN_BITS) -> SignIndex:
    """Build, measure and cache the index (progress 0..1); returns it, read back."""
    t0 = time.perf_counter()
    key = _key(model)
    final = folder_for(model, root)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_partial_builds(final)
    tmp = partial_folder(final, os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()

    try:
        rng = np.random.default_rng(0)
        sample_ids = np.sort(rng.choice(model.rows, min(SAMPLE_ROWS, model.rows), False))
        u = mean_direction(model, sample_ids)
        qids = np.sort(rng.choice(model.rows, min(model.rows, 2 * (CALIBRATE + MEASURE)), False))
        qrows = np.asarray(model.vectors(qids), dtype=np.float32)
        qok = np.isfinite(qrows).all(1) & (np.abs(qrows).sum(1) > 0)
        qids, qrows = qids[qok], np.ascontiguousarray(qrows[qok])
        pick = rng.permutation(len(qids))[: CALIBRATE + MEASURE]
        qids, qrows = qids[pick], qrows[pick]
        signs = search_codes.rotation_signs(model.dim, bits, seed=1)
        ctx.check("index build")
        ctx.progress(0.02)
        a, wn, sq, truth = _pass(model, tmp, u, signs, qrows, qids, ctx.part(0.02, 0.85))
        index = SignIndex(
            u,
            signs,
            np.load(tmp / "codes.npy", mmap_mode="r"),
            np.load(tmp / "head.npy", mmap_mode="r"),
            a,
            wn,
            sq,
        )
        stats = tune(index, qids, qrows, truth, ctx)
        stats.build_seconds = round(time.perf_counter() - t0, 2)
        stats.bits = int(signs.size)
        index.stats = stats
        save_arrays(tmp, index)
        stats.size_bytes = sum(f.stat().st_size for f in tmp.iterdir())
        del index
        cache.publish(tmp, final, key, {"stats": stats.to_json()})
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    loaded, why = load(model, root)
    if loaded is None:
        raise OSError(f"cannot read back the neighbour index written to {final}: {why}")
    return loaded
