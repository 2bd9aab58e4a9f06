"""Exact scores straight from quantised GGUF blocks: no decoded copy of the matrix.

Q8_0, the type most GGUF embeddings use, and Q4_K have their own kernels: the stored integers
are multiplied with the query scaled by their block's scale (Q4_K subtracts each sub-block's
minimum times the query's sum over it once). Every other type, and Q4_K's first pass (which
also takes the squared norms), is decoded one row at a time (`ggml_blocks.decode_row`) into a
buffer the size of a row, and the dots and squared norm are taken from that buffer while it is
in the CPU's cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.model.ggml_blocks import Q4_K, Q8_0, _f16, _k_scale_min, decode_row, parts_for

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
            n2 = np.int32(0)
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
def _row_q4_k(src, queries, sums, dots, col, acc):  # pragma: no cover - compiled
    """Dots of one Q4_K row: Σ_s d_s·Σ_j q_j·x_j − m_s·Σ_j x_j over its 32-value sub-blocks
    (sums [nq, d/32] holds each sub-block's Σ x_j of every query)."""
    nq, d = queries.shape
    acc[:] = 0.0
    for q in range(nq):
        dots[q, col] = 0.0
    for b in range(d // 256):
        base = b * 144
        dd = _f16(src[base], src[base + 1])
        dmin = _f16(src[base + 2], src[base + 3])
        scales = src[base + 4 : base + 16]
        for pair in range(4):
            sc_lo, mn_lo = _k_scale_min(scales, 2 * pair)
            sc_hi, mn_hi = _k_scale_min(scales, 2 * pair + 1)
            d_lo, d_hi = dd * np.float32(sc_lo), dd * np.float32(sc_hi)
            m_lo, m_hi = dmin * np.float32(mn_lo), dmin * np.float32(mn_hi)
            chunk = base + 16 + pair * 32
            v = b * 256 + pair * 64
            sub = v // 32
            for q in range(nq):
                lanes = acc[q]
                for j in range(32):
                    byte = src[chunk + j]
                    lanes[j] += np.float32(byte & 0x0F) * (queries[q, v + j] * d_lo)
                    lanes[j] += np.float32(byte >> 4) * (queries[q, v + 32 + j] * d_hi)
                dots[q, col] -= m_lo * sums[q, sub] + m_hi * sums[q, sub + 1]
    for q in range(nq):
        s = np.float32(0.0)
        for j in range(32):
            s += acc[q, j]
        dots[q, col] += s
    return 0.0  # no squared norm: the first pass takes the decoding path


@njit(fastmath=_FAST, cache=True, nogil=True)
def _row_decoded(qtype, src, queries, dots, col, buf, want_sq):  # pragma: no cover - compiled
    decode_row(qtype, src, buf)
    nq, d = queries.shape
    for q in range(nq):
        qv = queries[q]
        s = np.float32(0.0)
        for j in range(d):
            s += buf[j] * qv[j]
        dots[q, col] = s
    sq = 0.0
    if want_sq:
        for j in range(d):
            x = np.float64(buf[j])
            sq += x * x
    return sq


@njit(parallel=True, cache=True, nogil=True)
def _score_rows(qtype, raw, rows, queries, sums, dots, sq, want_sq, parts):  # pragma: no cover
    """dots[:, i] (and sq[i] when `want_sq`) of raw row rows[i], for every i."""
    n = rows.shape[0]
    nq, d = queries.shape
    raw8 = raw.view(np.int8)
    for p in prange(parts):
        buf = np.empty(d, dtype=np.float32)
        acc = np.empty((nq, 32), dtype=np.float32)
        for i in range(p * n // parts, (p + 1) * n // parts):
            r = rows[i]
            if qtype == Q8_0:
                s = _row_q8_0(raw8[r], queries, dots, i, acc, want_sq)
            elif qtype == Q4_K and not want_sq:
                s = _row_q4_k(raw[r], queries, sums, dots, i, acc)
            else:
                s = _row_decoded(qtype, raw[r], queries, dots, i, buf, want_sq)
            if want_sq:
                sq[i] = s


def _sums(queries: np.ndarray) -> np.ndarray:
    """Σ of each query's values over every 32-value sub-block (the Q4_K minimum's term)."""
    nq, d = queries.shape
    return queries[:, : d // 32 * 32].reshape(nq, -1, 32).sum(2, dtype=np.float32)


def scan_block(
    qtype: int, raw: np.ndarray, queries: np.ndarray, dots: np.ndarray, sq: np.ndarray | None
) -> None:
    """dots[:, :] (float32 [nq, rows]) and, if given, sq[:] (float64 squared norms) of the raw
    rows uint8 [rows, bytes per row]; queries float32 [nq, values per row], C-contiguous."""
    sq_arg = sq if sq is not None else np.empty(0, dtype=np.float64)
    rows = np.arange(raw.shape[0], dtype=np.int64)
    with KERNEL_LOCK:
        _score_rows(
            qtype,
            raw,
            rows,
            queries,
            _sums(queries),
            dots,
            sq_arg,
            sq is not None,
            parts_for(len(rows)),
        )


def gather(qtype: int, matrix: np.ndarray, ids: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Dots [nq, len(ids)] of the selected raw rows with the queries."""
    dots = np.empty((queries.shape[0], len(ids)), dtype=np.float32)
    parts = max(1, min(len(ids) // 128, 64))
    no_sq = np.empty(0, dtype=np.float64)
    with KERNEL_LOCK:
        _score_rows(qtype, matrix, ids, queries, _sums(queries), dots, no_sq, False, parts)
    return dots
