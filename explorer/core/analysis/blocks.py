"""Streaming a matrix in blocks of decoded rows, with cancel checks and progress between blocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from explorer.core import ranking
from explorer.core.context import NULL_CONTEXT, JobContext

Decode = Callable[[int, int], np.ndarray]  # rows [start, stop) → float32/float64 [n, dim]

# Decoded bytes per block: small enough to stay in memory cheaply and to notice a cancel quickly.
DECODED_BLOCK_BYTES = 16 << 20


def rows_per_block(dim: int, bytes_per_value: int = 4) -> int:
    return max(16, DECODED_BLOCK_BYTES // max(1, dim * bytes_per_value))


def iter_blocks(
    decode: Decode,
    rows: int,
    dim: int,
    ctx: JobContext = NULL_CONTEXT,
    what: str = "analysis",
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield (start, decoded rows) over [0, rows); never more than one block in memory."""
    step = rows_per_block(dim)
    for start in range(0, rows, step):
        ctx.check(what)
        stop = min(rows, start + step)
        yield start, decode(start, stop)
        ctx.progress(stop / rows)


def chan_merge(
    n_a: np.ndarray | int,
    mean_a: np.ndarray,
    m2_a: np.ndarray,
    n_b: np.ndarray | int,
    mean_b: np.ndarray,
    m2_b: np.ndarray,
) -> tuple[np.ndarray | int, np.ndarray, np.ndarray]:
    """Chan et al.'s parallel merge of (count, mean, sum of squared deviations), in float64."""
    n = n_a + n_b
    if np.all(n == 0):
        return n, mean_a, m2_a
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(n > 0, np.divide(n_b, np.maximum(n, 1)), 0.0)
        delta = mean_b - mean_a
        mean = mean_a + delta * frac
        m2 = m2_a + m2_b + delta * delta * (n_a * frac)
    return n, mean, m2


def scan_dots(
    decode: Decode,
    rows: int,
    dim: int,
    queries: np.ndarray,
    ctx: JobContext = NULL_CONTEXT,
) -> tuple[np.ndarray, np.ndarray]:
    """One pass: dots [nq, rows] of each row with each query and squared row norms, float64."""
    q = np.asarray(queries, dtype=np.float64).reshape(-1, dim)
    dots = np.empty((q.shape[0], rows), dtype=np.float64)
    sq = np.empty(rows, dtype=np.float64)
    for start, block in iter_blocks(decode, rows, dim, ctx):
        b = block.astype(np.float64, copy=False)
        stop = start + len(b)
        with np.errstate(invalid="ignore", over="ignore"):
            dots[:, start:stop] = (b @ q.T).T
            sq[start:stop] = np.einsum("ij,ij->i", b, b)
    return dots, sq


def cosine_from(dots: np.ndarray, sq: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of every row with the query; NaN where a row or the query is zero or non-finite."""
    qn = float(np.linalg.norm(np.asarray(query, dtype=np.float64)))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        cos = dots / (np.sqrt(sq) * qn)
    return np.where(np.isfinite(cos) & (sq > 0) & (qn > 0), cos, np.nan)


def top_k(key: np.ndarray, k: int, exclude: int | None = None) -> np.ndarray:
    """ranking.top_k, with position `exclude` (if any) left out."""
    if exclude is not None and 0 <= exclude < len(key):
        key = np.where(np.arange(len(key)) == exclude, -np.inf, key)
    return ranking.top_k(key, k)
