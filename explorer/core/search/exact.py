"""Exact scans of a memory-mapped matrix: dot products with a few query vectors and row norms.

The matrix is read in blocks straight from the memory map, so extra memory stays small (one
block of decoded rows at most, none for BF16/F32) and a cancel check runs between blocks.
BF16 — the common case for large models — goes through a fused numba kernel that widens each
value to float32 inside the multiply-add loop (a shift, no copy); converting blocks with numpy
costs 3–5× more than reading them.  F32 uses BLAS on the mapped block; other dtypes are
decoded per block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import get_num_threads, njit, prange, types
from numba.extending import intrinsic

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.filecheck import check_mapped
from explorer.core.model.decode import decode_rows, ggml_type
from explorer.core.model.dtypes import BF16 as _BF16

# Bytes of stored matrix per block: big enough to amortise a parallel launch, small enough that
# a cancel is noticed within a few milliseconds and decoded copies stay small.
BLOCK_BYTES = 128 << 20
# numba's fallback "workqueue" threading layer aborts on concurrent launches from two threads
# (GUI search lane + index build); one lock per process keeps every layer safe.
KERNEL_LOCK = threading.Lock()


def _widen_bf16(typingctx, x):  # pragma: no cover - compiled
    """Widen one bf16 (as uint16 bits) to float32: shift into the high half, reinterpret."""
    sig = types.float32(types.uint16)

    def codegen(context, builder, signature, args):
        wide = builder.zext(args[0], context.get_value_type(types.uint32))
        shifted = builder.shl(wide, wide.type(16))
        return builder.bitcast(shifted, context.get_value_type(types.float32))

    return sig, codegen


# Called as _bf16_to_f32(bits) inside kernels; Any because mypy reads numba's intrinsic as taking
# the typing context too.
_bf16_to_f32: Any = intrinsic(_widen_bf16)


@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _scan_bf16(block, queries, dots, sq, want_sq, parts):  # pragma: no cover - compiled
    n, d = block.shape
    nq = queries.shape[0]
    for p in prange(parts):
        lo = p * n // parts
        hi = (p + 1) * n // parts
        i = lo
        # Four rows at a time: four independent sums keep the FMA units busy and each query
        # value is loaded once per four rows (~1/3 less CPU than one row at a time).
        while i + 4 <= hi:
            r0, r1, r2, r3 = block[i], block[i + 1], block[i + 2], block[i + 3]
            for q in range(nq):
                qv = queries[q]
                a0 = np.float32(0.0)
                a1 = np.float32(0.0)
                a2 = np.float32(0.0)
                a3 = np.float32(0.0)
                for j in range(d):  # vectorises to zero-extend, shift, fused multiply-add
                    x = qv[j]
                    a0 += _bf16_to_f32(r0[j]) * x
                    a1 += _bf16_to_f32(r1[j]) * x
                    a2 += _bf16_to_f32(r2[j]) * x
                    a3 += _bf16_to_f32(r3[j]) * x
                dots[q, i] = a0
                dots[q, i + 1] = a1
                dots[q, i + 2] = a2
                dots[q, i + 3] = a3
            i += 4
        while i < hi:
            r0 = block[i]
            for q in range(nq):
                qv = queries[q]
                a0 = np.float32(0.0)
                for j in range(d):
                    a0 += _bf16_to_f32(r0[j]) * qv[j]
                dots[q, i] = a0
            i += 1
        if want_sq:  # first search only: the row norms are kept afterwards
            for i in range(lo, hi):
                src = block[i]
                s = 0.0
                for j in range(d):
                    x = np.float64(_bf16_to_f32(src[j]))
                    s += x * x
                sq[i] = s


@njit(fastmath=True, cache=True, nogil=True)
def _gather_bf16(matrix, ids, queries, dots):  # pragma: no cover - compiled
    """Dots of selected rows (re-ranking candidates) without copying them out of the map.

    Serial: a few thousand rows take a millisecond or two.
    """
    nq = queries.shape[0]
    d = matrix.shape[1]
    for i in range(ids.shape[0]):
        src = matrix[ids[i]]
        for q in range(nq):
            acc = np.float32(0.0)
            qv = queries[q]
            for j in range(d):
                acc += _bf16_to_f32(src[j]) * qv[j]
            dots[q, i] = acc


@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _gather_bf16_par(matrix, ids, queries, dots, parts):  # pragma: no cover - compiled
    """_gather_bf16 split over threads: the fast path re-ranks up to a few thousand rows."""
    n = ids.shape[0]
    for p in prange(parts):
        lo, hi = p * n // parts, (p + 1) * n // parts
        _gather_bf16(matrix, ids[lo:hi], queries, dots[:, lo:hi])


def _parts(n: int) -> int:
    # Many small parts: a thread slowed by another process does not hold up the whole block.
    return max(1, min(n, 32 * get_num_threads()))


def block_rows(matrix: np.ndarray) -> int:
    row = matrix.shape[1] * matrix.dtype.itemsize
    if ggml_type(matrix) is not None:  # quantised GGUF blocks: decoded rows are ~4-8x larger
        row *= 8
    return max(256, BLOCK_BYTES // max(1, row))


def _decode(block: np.ndarray) -> np.ndarray:
    if block.dtype == np.float32 or block.dtype == np.float64:
        return block
    return decode_rows(block)


def _dense_block(block, q32, dots, sq, start: int, stop: int) -> None:
    if block.dtype == np.float64:
        dots[:] = (block @ q32.T.astype(np.float64)).T
        if sq is not None:
            sq[start:stop] = np.einsum("ij,ij->i", block, block)
    else:
        dots[:] = (block @ q32.T).T
        if sq is not None:
            b64 = block.astype(np.float64)
            sq[start:stop] = np.einsum("ij,ij->i", b64, b64)


def scan(
    matrix: np.ndarray,
    queries: np.ndarray,
    want_sq: bool,
    ctx: JobContext = NULL_CONTEXT,
    decode: Callable[[int, int], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """One pass over `matrix`: dots [nq, rows] (float32) and, if asked, squared row norms (float64).

    A row holding NaN/inf gets a non-finite squared norm; callers use that to skip it.
    `decode(start, stop)` gives float rows for stored formats the kernels do not read
    (e.g. `EmbeddingModel.decode_block` for quantised matrices); BF16 never needs it.
    """
    rows = matrix.shape[0]
    nq = queries.shape[0]
    q32 = np.ascontiguousarray(queries, dtype=np.float32)
    dots = np.empty((nq, rows), dtype=np.float32)
    sq = np.empty(rows, dtype=np.float64) if want_sq else None
    sq_arg = sq if sq is not None else np.empty(0, dtype=np.float64)
    step = block_rows(matrix)
    is_bf16 = matrix.dtype == _BF16
    bits = matrix.view(np.uint16) if is_bf16 else None
    for start in range(0, rows, step):
        ctx.check("search")
        check_mapped(matrix)  # a file that shrank under the scan would kill us with SIGBUS
        stop = min(rows, start + step)
        if bits is not None:
            with KERNEL_LOCK:
                _scan_bf16(
                    bits[start:stop],
                    q32,
                    dots[:, start:stop],
                    sq_arg[start:stop] if want_sq else sq_arg,
                    want_sq,
                    _parts(stop - start),
                )
        else:
            block = (
                decode(start, stop)
                if decode is not None
                else _decode(np.asarray(matrix[start:stop]))
            )
            # dots that overflow float32 (values near 3e38) are redone by widen_dots
            with np.errstate(over="ignore", invalid="ignore"):
                _dense_block(block, q32, dots[:, start:stop], sq, start, stop)
        ctx.progress(stop / rows)
    return dots, sq


def dots_for_ids(matrix: np.ndarray, ids: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Exact dots [nq, len(ids)] of a few rows with the queries (float32)."""
    q32 = np.ascontiguousarray(queries, dtype=np.float32)
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    check_mapped(matrix)
    if matrix.dtype == _BF16 and len(ids) >= 64:
        dots = np.empty((q32.shape[0], len(ids)), dtype=np.float32)
        parts = min(len(ids) // 128, 8 * get_num_threads())
        if parts > 1:
            with KERNEL_LOCK:
                _gather_bf16_par(matrix.view(np.uint16), ids, q32, dots, parts)
        else:
            _gather_bf16(matrix.view(np.uint16), ids, q32, dots)
        return dots
    rows = _decode(np.asarray(matrix[np.sort(ids)]))
    order = np.argsort(np.argsort(ids, kind="stable"), kind="stable")
    rows = rows[order]
    if rows.dtype == np.float64:
        return (rows @ q32.T.astype(np.float64)).T.astype(np.float32)
    return (rows @ q32.T).T


def warm_up() -> None:
    """Load the BF16 kernels from numba's cache and start its CPU target and thread pool: about
    0.5-1 s, much of it holding the GIL, on the thread that first runs any kernel."""
    tiny = np.zeros((256, 8), dtype=_BF16)
    tiny.setflags(write=False)  # as a memory-mapped model is: numba compiles per writability
    ones = np.ones((1, 8), dtype=np.float32)
    scan(tiny, ones, want_sq=True)
    dots_for_ids(tiny, np.arange(256), ones)


def widen_dots(
    matrix: np.ndarray, dots: np.ndarray, valid: np.ndarray, ids: np.ndarray, query: np.ndarray
) -> np.ndarray:
    """float64 copy of float32 `dots` of rows `ids`; dots that overflowed float32 for rows that
    are finite (`valid`, e.g. values near 3e38) are recomputed in float64, which cannot overflow
    for float32-range values. Ordinary matrices have none, so this costs one isfinite pass."""
    d = dots.astype(np.float64)
    redo = np.flatnonzero(~np.isfinite(d) & valid)
    q64 = np.asarray(query, dtype=np.float64)
    for start in range(0, len(redo), 4096):
        part = redo[start : start + 4096]
        check_mapped(matrix)
        d[part] = _decode(np.asarray(matrix[ids[part]])).astype(np.float64) @ q64
    return d


def fit_float32(values: np.ndarray) -> np.ndarray:
    """float32 when every finite value fits in it, else float64 (huge dot products)."""
    with np.errstate(over="ignore"):
        narrow = values.astype(np.float32)
    return narrow if np.array_equal(np.isfinite(narrow), np.isfinite(values)) else values
