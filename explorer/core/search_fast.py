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
from explorer.core.filecheck import check_mapped
from explorer.core.search_exact import block_rows
from explorer.core.vectors import decode_rows, ggml_type

INDEX_VERSION = 1
SKETCH_DIMS = 128
SAMPLE_ROWS = 8192
CANDIDATES = 1000
HEAD_DIMS = 32  # stage one reads only these leading (highest-variance) coordinates
STAGE1 = 16384  # rows kept by stage one
_BF16 = np.dtype(ml_dtypes.bfloat16)


# Serial on purpose: these kernels take a millisecond or two; a parallel region gains little
# and loses a lot when another process holds a core (it waits for its slowest thread).
@njit(fastmath=True, cache=True, nogil=True)
def _sketch_scores(codes, weights, out):  # pragma: no cover - compiled
    n, r = codes.shape
    i = 0
    while i + 4 <= n:  # four rows at a time: independent sums, no long dependency chain
        a0 = np.float32(0.0)
        a1 = np.float32(0.0)
        a2 = np.float32(0.0)
        a3 = np.float32(0.0)
        for j in range(r):
            w = weights[j]
            a0 += np.float32(codes[i, j]) * w
            a1 += np.float32(codes[i + 1, j]) * w
            a2 += np.float32(codes[i + 2, j]) * w
            a3 += np.float32(codes[i + 3, j]) * w
        out[i] = a0
        out[i + 1] = a1
        out[i + 2] = a2
        out[i + 3] = a3
        i += 4
    while i < n:
        a0 = np.float32(0.0)
        for j in range(r):
            a0 += np.float32(codes[i, j]) * weights[j]
        out[i] = a0
        i += 1


@njit(fastmath=True, cache=True, nogil=True)
def _sketch_scores_ids(codes, ids, weights, out):  # pragma: no cover - compiled
    r = codes.shape[1]
    for k in range(ids.shape[0]):
        i = ids[k]
        acc = np.float32(0.0)
        for j in range(r):
            acc += np.float32(codes[i, j]) * weights[j]
        out[k] = acc


def _top_unordered(key: np.ndarray, c: int) -> np.ndarray:
    """Positions of the c largest finite keys, in no particular order."""
    c = min(c, len(key))
    if c <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-key, c - 1)[:c] if c < len(key) else np.arange(len(key))
    return top[np.isfinite(key[top])].astype(np.int64)


def decode_block(block: np.ndarray) -> np.ndarray:
    if ggml_type(block) is not None:  # quantised GGUF rows
        return decode_rows(block)
    if block.dtype == _BF16:  # widening by a shift is exact and ~4x faster than astype
        return (block.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return block.astype(np.float32)


@dataclass
class SketchIndex:
    mean: np.ndarray  # float32 [dim]: mean unit row
    components: np.ndarray  # float32 [r, dim]: orthonormal principal directions
    scales: np.ndarray  # float32 [r]: int8 step per coordinate
    codes: np.ndarray  # int8 [rows, r], memory-mapped
    head: np.ndarray  # int8 [rows, HEAD_DIMS]: the leading coordinates, contiguous
    sq: np.ndarray  # float64 [rows]: squared row norms (non-finite: row holds NaN/inf)

    def _weights(self, q: np.ndarray) -> tuple[np.ndarray, float]:
        qn = np.linalg.norm(q)
        qhat = (q / qn).astype(np.float32) if qn > 0 else q.astype(np.float32)
        # einsum, not BLAS: a 128 × dim product is too small to be worth waking BLAS threads.
        weights = (np.einsum("ij,j->i", self.components, qhat) * self.scales).astype(np.float32)
        return weights, float(qhat @ self.mean)

    def estimate(self, q: np.ndarray) -> np.ndarray:
        """Estimated cosine of every row with q from the full sketch (float32 [rows])."""
        weights, offset = self._weights(q)
        out = np.empty(self.codes.shape[0], dtype=np.float32)
        _sketch_scores(self.codes, weights, out)
        out += np.float32(offset)
        return out

    def candidates(
        self,
        q: np.ndarray,
        count: int,
        row_scale: np.ndarray | None,
        penalty: np.ndarray,
        exclude: np.ndarray,
    ) -> np.ndarray:
        """Row ids likely to hold the best cosine (row_scale=None) or dot (row_scale=norms).

        Two stages: the leading HEAD_DIMS coordinates of every row keep the best STAGE1 rows
        (a quarter of the bytes), then all coordinates of those pick `count`.
        """
        weights, offset = self._weights(q)
        rows = self.codes.shape[0]
        stage1 = max(STAGE1, 4 * count)
        if rows <= stage1 or self.head.shape[1] >= self.codes.shape[1]:
            ids = np.arange(rows, dtype=np.int64)
        else:
            est = np.empty(rows, dtype=np.float32)
            _sketch_scores(self.head, np.ascontiguousarray(weights[: self.head.shape[1]]), est)
            est += np.float32(offset)
            if row_scale is not None:
                est *= row_scale
            est += penalty
            est[exclude] = -np.inf
            ids = np.sort(_top_unordered(est, stage1))
        est2 = np.empty(len(ids), dtype=np.float32)
        _sketch_scores_ids(self.codes, ids, weights, est2)
        est2 += np.float32(offset)
        if row_scale is not None:
            est2 *= row_scale[ids]
        est2 += penalty[ids]
        est2[np.isin(ids, exclude)] = -np.inf
        return np.sort(ids[_top_unordered(est2, count)])


def _cache_key(model) -> dict:
    return cache.file_key(
        model,
        "neighbors-sketch",
        {"version": INDEX_VERSION, "dims": SKETCH_DIMS, "head": HEAD_DIMS, "sample": SAMPLE_ROWS},
    )


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
        head = cache.open_array(folder / "head.npy")
        index = SketchIndex(
            arrays["mean"], arrays["components"], arrays["scales"], codes, head, arrays["sq"]
        )
    except (OSError, ValueError, KeyError):
        return None
    if (
        codes.shape[0] != model.rows
        or head.shape[0] != model.rows
        or index.mean.shape != (model.dim,)
    ):
        return None
    return index


def _orth(y: np.ndarray) -> np.ndarray:
    """Orthonormal basis of y's columns via the small Gram matrix (LAPACK QR on a tall matrix
    is slow here and holds the GIL); float64 keeps it accurate."""
    y = y.astype(np.float64)
    w, v = np.linalg.eigh(y.T @ y)
    keep = w > w.max() * 1e-12 if w.size and w.max() > 0 else np.zeros(w.shape, bool)
    return y @ (v[:, keep] / np.sqrt(w[keep]))


def _principal_directions(x: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
    """Top-r right singular vectors of x (randomized SVD with two power iterations)."""
    r = min(r, *x.shape)
    omega = rng.standard_normal((x.shape[1], r + 16)).astype(np.float32)
    y = _orth(x @ omega)
    for _ in range(2):
        z = _orth(x.T @ y.astype(np.float32))
        y = _orth(x @ z.astype(np.float32))
    _, _, vt = np.linalg.svd(y.T.astype(np.float32) @ x, full_matrices=False)
    return np.ascontiguousarray(vt[:r], dtype=np.float32)


def build(
    model, root: Path, sq: np.ndarray, cancel: Callable[[], bool] | None = None
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
        check_mapped(matrix)
        sample = decode_block(np.asarray(matrix[sample_ids]))
        sample /= norms[sample_ids, None].astype(np.float32)
        mean = sample.mean(axis=0) if len(sample) else np.zeros(dim, np.float32)
        sample -= mean
        check()
        yield 0.05
        components = (
            _principal_directions(sample, SKETCH_DIMS, rng)
            if len(sample)
            else np.zeros((0, dim), np.float32)
        )
        coords = sample @ components.T
        scales = (
            (np.abs(coords).max(axis=0) * 1.25 / 127).astype(np.float32)
            if len(coords)
            else (np.ones(components.shape[0], np.float32))
        )
        scales[scales == 0] = 1
        del sample, coords
        check()
        yield 0.15
        codes = np.lib.format.open_memmap(
            tmp / "codes.npy", mode="w+", dtype=np.int8, shape=(rows, components.shape[0])
        )
        step = max(256, block_rows(matrix) // 8)  # decoded copies stay ~100 MB
        inv = np.zeros(rows, np.float32)
        inv[valid] = (1.0 / norms[valid]).astype(np.float32)
        for start in range(0, rows, step):
            check()
            stop = min(rows, start + step)
            check_mapped(matrix)  # the file may have shrunk since the last block
            block = decode_block(np.asarray(matrix[start:stop]))
            block = np.nan_to_num(block * inv[start:stop, None], nan=0.0, posinf=0.0, neginf=0.0)
            block -= mean
            c = np.rint((block @ components.T) / scales)
            codes[start:stop] = np.clip(c, -127, 127).astype(np.int8)
            yield 0.15 + 0.85 * stop / rows
        codes.flush()
        np.save(tmp / "head.npy", np.ascontiguousarray(codes[:, :HEAD_DIMS]))
        del codes
        np.savez(
            tmp / "arrays.npz",
            mean=mean.astype(np.float32),
            components=components,
            scales=scales,
            sq=sq,
        )
        cache.publish(tmp, final, key)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    index = load(model, root)
    if index is None:
        raise OSError(f"cannot read back the neighbour index written to {final}")
    yield index
