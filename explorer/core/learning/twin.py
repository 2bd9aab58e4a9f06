"""A random twin of a model's embedding matrix: same shape, same per-dimension scale, no meaning.

Each value is a pure function of (seed, row, column): a SplitMix64 hash of its position gives
two uniforms, Box-Muller turns them into a standard normal (in a numba loop that releases the
GIL), and the per-dimension mean and standard deviation of the real matrix (estimated from a
seeded sample of its rows) set its scale. So any block of rows can be produced on its own, in
any order, and the matrix is never held whole.
"""

from __future__ import annotations

from typing import Protocol

import numba
import numpy as np

from explorer.core.errors import ExplorerError

SAMPLE_ROWS = 4096  # rows read from the real matrix to estimate the per-dimension scale
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class RowSource(Protocol):
    """What the neighbour and statistics helpers read: an EmbeddingModel or a RandomTwin."""

    rows: int
    dim: int

    def vectors(self, ids) -> np.ndarray: ...

    def decode_block(self, start: int, stop: int) -> np.ndarray: ...


@numba.njit(cache=True, nogil=True, inline="always")
def _splitmix(x: np.uint64) -> np.uint64:
    """SplitMix64's finaliser (uint64 multiplications wrap, as intended)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _fill_normal(key: np.uint64, ids: np.ndarray, dim: int, out: np.ndarray) -> None:
    """out[r, j] = a standard normal drawn from the hashes of position (ids[r], j) and key."""
    for r in range(len(ids)):
        base = np.uint64(ids[r]) * np.uint64(dim)
        for j in range(dim):
            pos = (base + np.uint64(j)) * np.uint64(2)
            u1 = (np.float64(_splitmix(pos ^ key) >> np.uint64(11)) + 1.0) * 2.0**-53
            u2 = (
                np.float64(_splitmix((pos + np.uint64(1)) ^ key) >> np.uint64(11)) + 1.0
            ) * 2.0**-53
            out[r, j] = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def standard_normal(seed: int, ids: np.ndarray, dim: int) -> np.ndarray:
    """float32 [len(ids), dim]: value (i, j) depends only on seed, ids[i] and j."""
    key = np.uint64(_splitmix(np.uint64(seed & 0xFFFFFFFFFFFFFFFF)))
    out = np.empty((len(ids), dim), dtype=np.float32)
    _fill_normal(key, np.ascontiguousarray(ids, dtype=np.int64), dim, out)
    return out


def dimension_scale(
    source: RowSource, seed: int = 0, sample: int = SAMPLE_ROWS
) -> tuple[np.ndarray, np.ndarray]:
    """Per-dimension mean and standard deviation (float64 [dim]) over a seeded row sample;
    rows that hold NaN or inf are left out."""
    n = min(sample, source.rows)
    ids = np.sort(np.random.default_rng(seed).choice(source.rows, size=n, replace=False))
    x = source.vectors(ids).astype(np.float64)
    x = x[np.isfinite(x).all(axis=1)]
    if len(x) == 0:
        raise ExplorerError("cannot build a random twin: no sampled row is finite")
    return x.mean(axis=0), x.std(axis=0)


class RandomTwin:
    """Rows [rows, dim] of seeded noise with the real matrix's per-dimension mean and scale."""

    def __init__(self, rows: int, mean: np.ndarray, std: np.ndarray, seed: int = 0):
        if rows < 1:
            raise ExplorerError("a random twin needs at least one row")
        self.rows = int(rows)
        self.mean = np.asarray(mean, dtype=np.float64).reshape(-1)
        self.std = np.asarray(std, dtype=np.float64).reshape(-1)
        if self.mean.shape != self.std.shape:
            raise ExplorerError("mean and std of a random twin must have the same length")
        self.dim = len(self.mean)
        self.seed = int(seed)
        self.dtype = "F32"

    @classmethod
    def of(cls, source: RowSource, seed: int = 0, sample: int = SAMPLE_ROWS) -> RandomTwin:
        """The twin of `source` (an EmbeddingModel or anything with the same read interface)."""
        mean, std = dimension_scale(source, seed=seed, sample=sample)
        return cls(source.rows, mean, std, seed=seed)

    def _scaled(self, ids: np.ndarray) -> np.ndarray:
        z = standard_normal(self.seed, ids, self.dim)
        z *= self.std.astype(np.float32)
        z += self.mean.astype(np.float32)
        return z

    def vectors(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        bad = ids[(ids < 0) | (ids >= self.rows)]
        if bad.size:
            raise ExplorerError(
                f"token id {int(bad[0])} is out of range: the twin has {self.rows} rows"
            )
        return self._scaled(ids)

    def vector(self, token_id: int) -> np.ndarray:
        return self.vectors([token_id])[0]

    def decode_block(self, start: int, stop: int) -> np.ndarray:
        start, stop = max(0, start), min(self.rows, stop)
        return self._scaled(np.arange(start, max(start, stop), dtype=np.int64))
