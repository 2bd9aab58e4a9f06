"""The per-row damage pass as one numba kernel: each row of both matrices is decoded into a
small buffer (exactly as `gguf.quants.dequantize` does) and compared there, so the pass reads
each file once and never holds a decoded block.

Decoding is compiled without contraction (no fused multiply-add): `d * q + m` rounds twice, as
numpy does, so the values equal numpy's bit for bit.
"""

from __future__ import annotations

import numpy as np
from gguf.constants import GGMLQuantizationType as T
from numba import get_num_threads, njit, prange

from explorer.core.search.exact import _bf16_to_f32

# Stored formats the kernel decodes itself; others are decoded to float32 first (kind F32).
F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 = range(8)
KINDS = {
    T.F32: F32,
    T.F16: F16,
    T.BF16: BF16,
    T.Q8_0: Q8_0,
    T.Q4_0: Q4_0,
    T.Q4_1: Q4_1,
    T.Q5_0: Q5_0,
    T.Q5_1: Q5_1,
}
# Every float16 bit pattern as float32: a table lookup is exact and cheaper than bit surgery.
F16_TABLE = (
    np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
)
# What the statistics loop may reorder: sums (reassoc) and signs of zero; never contract.
MATH = {"reassoc", "nsz", "arcp"}
# Columns of the per-row output.
REF_SQ, OTHER_SQ, DOT, ERR_SQ, MAX_ABS = range(5)
COLUMNS = 5


@njit(fastmath=MATH, cache=True, nogil=True, inline="always")
def _half(row, at, f16):  # pragma: no cover - compiled
    return f16[np.int64(row[at]) | (np.int64(row[at + 1]) << 8)]


@njit(fastmath=MATH, cache=True, nogil=True)
def decode_row(row, kind, f16, out):  # pragma: no cover - compiled
    """Decode one stored row (bytes) into float32 `out`."""
    dim = out.shape[0]
    if kind == F32:
        out[:] = row.view(np.float32)[:dim]
    elif kind == F16:
        bits = row.view(np.uint16)
        for j in range(dim):
            out[j] = f16[bits[j]]
    elif kind == BF16:
        bits = row.view(np.uint16)
        for j in range(dim):
            out[j] = _bf16_to_f32(bits[j])
    elif kind == Q8_0:
        signed = row.view(np.int8)
        for b in range(dim // 32):
            o = b * 34
            d = _half(row, o, f16)
            for k in range(32):
                out[b * 32 + k] = np.float32(signed[o + 2 + k]) * d
    elif kind == Q4_0:
        for b in range(dim // 32):
            o = b * 18
            d = _half(row, o, f16)
            for k in range(16):
                x = row[o + 2 + k]
                out[b * 32 + k] = d * np.float32(np.int32(x & 15) - 8)
                out[b * 32 + 16 + k] = d * np.float32(np.int32(x >> 4) - 8)
    elif kind == Q4_1:
        for b in range(dim // 32):
            o = b * 20
            d = _half(row, o, f16)
            m = _half(row, o + 2, f16)
            for k in range(16):
                x = row[o + 4 + k]
                out[b * 32 + k] = d * np.float32(x & 15) + m
                out[b * 32 + 16 + k] = d * np.float32(x >> 4) + m
    elif kind == Q5_0 or kind == Q5_1:
        size = 22 if kind == Q5_0 else 24
        head = 2 if kind == Q5_0 else 4
        for b in range(dim // 32):
            o = b * size
            d = _half(row, o, f16)
            qh = np.int64(0)
            for k in range(4):
                qh |= np.int64(row[o + head + k]) << (8 * k)
            for k in range(16):
                x = np.int64(row[o + head + 4 + k])
                lo = (x & 15) | (((qh >> k) & 1) << 4)
                hi = (x >> 4) | (((qh >> (k + 16)) & 1) << 4)
                if kind == Q5_0:
                    out[b * 32 + k] = d * np.float32(lo - 16)
                    out[b * 32 + 16 + k] = d * np.float32(hi - 16)
                else:
                    m = _half(row, o + 2, f16)
                    out[b * 32 + k] = d * np.float32(lo) + m
                    out[b * 32 + 16 + k] = d * np.float32(hi) + m


@njit(fastmath=MATH, cache=True, nogil=True)
def _compare(r, q, diff):  # pragma: no cover - compiled
    """|r|², |q|², r·q, |q − r|² in float64 and the largest |q − r|, for two decoded rows.

    Written as loops LLVM vectorises: sums may be reordered (reassoc), and the largest
    difference is an integer maximum over the bits of |q − r| (for floats of one sign the bit
    patterns order as the values do, NaN above infinity), which needs no fast-math."""
    rr = 0.0
    qq = 0.0
    rq = 0.0
    ee = 0.0
    for j in range(r.shape[0]):
        a = np.float64(r[j])
        b = np.float64(q[j])
        e = b - a
        rr += a * a
        qq += b * b
        rq += a * b
        ee += e * e
        diff[j] = q[j] - r[j]
    bits = diff.view(np.int32)
    top = np.int32(0)
    for j in range(bits.shape[0]):
        top = max(top, bits[j] & np.int32(0x7FFFFFFF))
    worst = np.empty(1, dtype=np.int32)
    worst[0] = top
    return rr, qq, rq, ee, np.float64(worst.view(np.float32)[0])


@njit(parallel=True, fastmath=MATH, cache=True, nogil=True)
def row_stats(
    ref, ref_kind, other, other_kind, dim, f16, use, out, dim_err, dim_ref, parts
):  # pragma: no cover - compiled
    """Per row: |r|², |q|², r·q, |q − r|², max |q − r| into `out` [rows, COLUMNS]; per part, the
    squared error and squared reference value per dimension over the rows in `use`."""
    n = ref.shape[0]
    for p in prange(parts):
        lo = p * n // parts
        hi = (p + 1) * n // parts
        r = np.empty(dim, dtype=np.float32)
        q = np.empty(dim, dtype=np.float32)
        diff = np.empty(dim, dtype=np.float32)
        for i in range(lo, hi):
            decode_row(ref[i], ref_kind, f16, r)
            decode_row(other[i], other_kind, f16, q)
            rr, qq, rq, ee, worst = _compare(r, q, diff)
            out[i, REF_SQ] = rr
            out[i, OTHER_SQ] = qq
            out[i, DOT] = rq
            out[i, ERR_SQ] = ee
            out[i, MAX_ABS] = worst if np.isfinite(ee) else np.nan
            if use[i] and np.isfinite(rr) and np.isfinite(ee):
                for j in range(dim):
                    a = np.float64(r[j])
                    e = np.float64(q[j]) - a
                    dim_err[p, j] += e * e
                    dim_ref[p, j] += a * a


@njit(parallel=True, fastmath=MATH, cache=True, nogil=True)
def decode_rows(raw, kind, dim, f16, out, parts):  # pragma: no cover - compiled
    """Decode a block of stored rows into float32 `out` [rows, dim]."""
    n = raw.shape[0]
    for p in prange(parts):
        for i in range(p * n // parts, (p + 1) * n // parts):
            decode_row(raw[i], kind, f16, out[i])


def parts_for(rows: int) -> int:
    return max(1, min(rows, 8 * get_num_threads()))
