"""Fast approximate search: a PCA sketch of every unit row, then exact re-ranking.

Each row x is normalised (x̂ = x/|x|) and described by its first SKETCH_DIMS principal
coordinates c = P(x̂ − μ), stored as int8 with one scale per coordinate (64 MB for 248k rows).
For a query q, q̂·x̂ ≈ q̂·μ + (Pq̂)·c ranks every row from the sketch alone; the best CANDIDATES
rows are then scored exactly from the memory map, so scores are exact and recall is limited
only by the sketch's candidate list.  Dot products reuse the same estimate with the stored
row norms; Euclidean distance always uses the exact scan (the estimate ranks it poorly).
The sketch lives in the user cache folder, keyed to the file.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
from numba import njit

from explorer.core import cache
from explorer.core.errors import Cancelled
from explorer.core.search_exact import block_rows

INDEX_VERSION = 1
SKETCH_DIMS = 128
SAMPLE_ROWS = 8192
CANDIDATES = 1000
_BF16 = np.dtype(ml_dtypes.bfloat16)


# Serial on purpose: a ~3 ms kernel gains little from threads and loses a lot when another
# process holds a core (the parallel region waits for its slowest thread).
@njit(fastmath=True, cache=True, nogil=True)
def _sketch_scores(codes, weights, out):  # pragma: no cover - compiled
    n, r = codes.shape
    for i in range(n):
        acc = np.float32(0.0)
        for j in range(r):
            acc += np.float32(codes[i, j]) * weights[j]
        out[i] = acc


def decode_block(block: np.ndarray) -> np.ndarray:
    if block.dtype == _BF16:  # widening by a shift is exact and ~4x faster than astype
        return (block.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return block.astype(np.float32)


@dataclass
class SketchIndex:
    mean: np.ndarray        # float32 [dim]: mean unit row
    components: np.ndarray  # float32 [r, dim]: orthonormal principal directions
    scales: np.ndarray      # float32 [r]: int8 step per coordinate
    codes: np.ndarray       # int8 [rows, r], memory-mapped
    sq: np.ndarray          # float64 [rows]: squared row norms (non-finite: row holds NaN/inf)

    def estimate(self, q: np.ndarray) -> np.ndarray:
        """Estimated cosine of every row with q (float32 [rows])."""
        qn = np.linalg.norm(q)
        qhat = (q / qn).astype(np.float32) if qn > 0 else q.astype(np.float32)
        # einsum, not BLAS: a 128 × dim product is too small to be worth waking BLAS threads.
        weights = (np.einsum("ij,j->i", self.components, qhat) * self.scales).astype(np.float32)
        out = np.empty(self.codes.shape[0], dtype=np.float32)
        _sketch_scores(self.codes, weights, out)
        out += np.float32(qhat @ self.mean)
        return out


def _cache_key(model) -> dict:
    return cache.file_key(model, "neighbors-sketch", {
        "version": INDEX_VERSION, "dims": SKETCH_DIMS, "sample": SAMPLE_ROWS})


def load(model, root: Path) -> SketchIndex | None:
    """The cached sketch of this exact file, or None if absent, stale or unreadable."""
    key = _cache_key(model)
    folder = cache.key_dir(root, key)
    meta = cache.read_meta(folder)
    if meta is None or meta.get("key") != key:
        return None
    try:
        arrays = np.load(folder / "arrays.npz")
        codes = cache.open_array(folder / "codes.npy")
        index = SketchIndex(arrays["mean"], arrays["components"], arrays["scales"], codes,
                            arrays["sq"])
    except (OSError, ValueError, KeyError):
        return None
    if codes.shape[0] != model.rows or index.mean.shape != (model.dim,):
        return None
    return index


def _principal_directions(x: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
    """Top-r right singular vectors of x (randomized SVD with two power iterations)."""
    r = min(r, *x.shape)
    omega = rng.standard_normal((x.shape[1], r + 16)).astype(np.float32)
    y, _ = np.linalg.qr(x @ omega)
    for _ in range(2):
        z, _ = np.linalg.qr(x.T @ y)
        y, _ = np.linalg.qr(x @ z)
    _, _, vt = np.linalg.svd(y.T @ x, full_matrices=False)
    return np.ascontiguousarray(vt[:r], dtype=np.float32)


def build(model, root: Path, sq: np.ndarray, cancel: Callable[[], bool] | None = None
          ) -> Iterator[float | SketchIndex]:
    """Build and cache the sketch; yields progress in 0..1, the finished index last."""
    matrix = model.matrix
    rows, dim = matrix.shape
    key = _cache_key(model)
    final = cache.key_dir(root, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f"tmp-{os.getpid()}-{final.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()

    def check() -> None:
        if cancel is not None and cancel():
            raise Cancelled("index build cancelled")

    try:
        norms = np.sqrt(sq)
        valid = np.isfinite(sq) & (sq > 0)
        valid_ids = np.flatnonzero(valid)
        rng = np.random.default_rng(0)
        n_sample = min(SAMPLE_ROWS, len(valid_ids))
        sample_ids = np.sort(rng.choice(valid_ids, size=n_sample, replace=False))
        sample = decode_block(np.asarray(matrix[sample_ids]))
        sample /= norms[sample_ids, None].astype(np.float32)
        mean = sample.mean(axis=0) if len(sample) else np.zeros(dim, np.float32)
        sample -= mean
        check()
        yield 0.05
        components = (_principal_directions(sample, SKETCH_DIMS, rng) if len(sample)
                      else np.zeros((0, dim), np.float32))
        coords = sample @ components.T
        scales = (np.abs(coords).max(axis=0) * 1.25 / 127).astype(np.float32) if len(coords) else (
            np.ones(components.shape[0], np.float32))
        scales[scales == 0] = 1
        del sample, coords
        check()
        yield 0.15
        codes = np.lib.format.open_memmap(tmp / "codes.npy", mode="w+", dtype=np.int8,
                                          shape=(rows, components.shape[0]))
        step = max(256, block_rows(matrix) // 8)  # decoded copies stay ~100 MB
        inv = np.zeros(rows, np.float32)
        inv[valid] = (1.0 / norms[valid]).astype(np.float32)
        for start in range(0, rows, step):
            check()
            stop = min(rows, start + step)
            block = decode_block(np.asarray(matrix[start:stop]))
            block = np.nan_to_num(block * inv[start:stop, None], nan=0.0, posinf=0.0, neginf=0.0)
            block -= mean
            c = np.rint((block @ components.T) / scales)
            codes[start:stop] = np.clip(c, -127, 127).astype(np.int8)
            yield 0.15 + 0.85 * stop / rows
        codes.flush()
        del codes
        np.savez(tmp / "arrays.npz", mean=mean.astype(np.float32), components=components,
                 scales=scales, sq=sq)
        cache.publish(tmp, final, key)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    index = load(model, root)
    if index is None:
        raise OSError(f"cannot read back the neighbour index written to {final}")
    yield index
