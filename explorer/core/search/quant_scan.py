"""Exact scores straight from quantised GGUF blocks: no decoded copy of the matrix.

Q8_0, the type most GGUF embeddings use, has its own kernel: each block's 32 int8 values are
multiplied with the query and the sum scaled once by the block's f16 scale. Every other type is
decoded one row at a time (`ggml_blocks.decode_row`) into a buffer the size of a row, and the
dots and squared norm are taken from that buffer while it is in the CPU's cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.model.ggml_blocks import Q8_0, _f16, decode_row, parts_for

# Reassociation lets the sums vectorise; no assumption about NaN/inf, which a row may hold
# (callers skip rows whose squared norm is not finite).
_FAST = {"reassoc", "contract", "nsz", "arcp"}


@njit(fastmath=_FAST, cache=True, nogil=True)
def _row_q8_0(src, queries, dots, col, acc, want_sq):  # pragma: no cover - compiled
    """Dots of one Q8_0 row (int8 view of its bytes) with every query into dots[:, col];
    returns its squared norm when `want_sq`.

    acc [nq, 32] holds one partial sum per lane across all blocks (the query scaled by the
    block's scale), so the only horizontal sum is one per row and query.
    """
    nq, d = queries.shape
    acc[:] = 0.0
    sq = 0.0
    for b in range(d // 32):
        base = b * 34
        scale = _f16(np.uint8(src[base]), np.uint8(src[base + 1]))
        if want_sq:
            n2 = 0
            for j in range(32):
                x = np.int32(src[base + 2 + j])
                n2 += x * x
            sq += np.float64(n2) * np.float64(scale) * np.float64(scale)
        for q in range(nq):
            lanes = acc[q]
            for j in range(32):
                lanes[j] += np.float32(src[base + 2 + j]) * (queries[q, b * 32 + j] * scale)
    for q in range(nq):
        s = np.float32(0.0)
        for j in range(32):
            s += acc[q, j]
        dots[q, col] = s
    return sq


@njit(fastmath=_FAST, cache=True, nogil=True)
def _row_decoded(qtype, src, queries, dots, col, buf):  # pragma: no cover - compiled
    decode_row(qtype, src, buf)
    nq, d = queries.shape
    for q in range(nq):
        qv = queries[q]
        s = np.float32(0.0)
        for j in range(d):
            s += buf[j] * qv[j]
        dots[q, col] = s
    sq = 0.0
    for j in range(d):
        x = np.float64(buf[j])
        sq += x * x
    return sq


@njit(parallel=True, cache=True, nogil=True)
def _scan(qtype, raw, queries, dots, sq, want_sq, parts):  # pragma: no cover - compiled
    n = raw.shape[0]
    nq, d = queries.shape
    raw8 = raw.view(np.int8)
    for p in prange(parts):
        buf = np.empty(d, dtype=np.float32)
        acc = np.empty((nq, 32), dtype=np.float32)
        for i in range(p * n // parts, (p + 1) * n // parts):
            if qtype == Q8_0:
                s = _row_q8_0(raw8[i], queries, dots, i, acc, want_sq)
            else:
                s = _row_decoded(qtype, raw[i], queries, dots, i, buf)
            if want_sq:
                sq[i] = s


@njit(parallel=True, cache=True, nogil=True)
def _gather(qtype, matrix, ids, queries, dots, parts):  # pragma: no cover - compiled
    n = ids.shape[0]
    nq, d = queries.shape
    matrix8 = matrix.view(np.int8)
    for p in prange(parts):
        buf = np.empty(d, dtype=np.float32)
        acc = np.empty((nq, 32), dtype=np.float32)
        for i in range(p * n // parts, (p + 1) * n // parts):
            if qtype == Q8_0:
                _row_q8_0(matrix8[ids[i]], queries, dots, i, acc, False)
            else:
                _row_decoded(qtype, matrix[ids[i]], queries, dots, i, buf)


def scan_block(
    qtype: int, raw: np.ndarray, queries: np.ndarray, dots: np.ndarray, sq: np.ndarray | None
) -> None:
    """dots[:, :] (float32 [nq, rows]) and, if given, sq[:] (float64 squared norms) of the raw
    rows uint8 [rows, bytes per row]; queries float32 [nq, values per row], C-contiguous."""
    sq_arg = sq if sq is not None else np.empty(0, dtype=np.float64)
    with KERNEL_LOCK:
        _scan(qtype, raw, queries, dots, sq_arg, sq is not None, parts_for(raw.shape[0]))


def gather(qtype: int, matrix: np.ndarray, ids: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Dots [nq, len(ids)] of the selected raw rows with the queries."""
    dots = np.empty((queries.shape[0], len(ids)), dtype=np.float32)
    parts = max(1, min(len(ids) // 128, 64))
    with KERNEL_LOCK:
        _gather(qtype, matrix, ids, queries, dots, parts)
    return dots
