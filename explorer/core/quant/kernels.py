"""The per-row damage pass as one numba kernel: each row of both matrices is decoded into a
small buffer (exactly as `gguf.quants.dequantize` does; quantised blocks by the model's own
decoder, core/model/ggml_blocks.py) and compared there, so the pass reads each file once and
never holds a decoded block.

Decoding is compiled without contraction (no fused multiply-add): `d * q + m` rounds twice, as
numpy does, so the values equal numpy's bit for bit.
"""

from __future__ import annotations

import numpy as np
from gguf.constants import GGMLQuantizationType as T
from numba import get_num_threads, njit, prange

from explorer.core.model import ggml_blocks
from explorer.core.search.exact import _bf16_to_f32

# Stored formats the kernel reads as they are, by GGML type id: floats here, quantised blocks
# with the model's own block decoder; others are decoded to float32 first (kind F32).
F32, F16, BF16 = int(T.F32), int(T.F16), int(T.BF16)
KINDS = {T(kind): kind for kind in (F32, F16, BF16, *ggml_blocks.BLOCKS)}
# Every float16 bit pattern as float32: a table lookup is exact and cheaper than bit surgery.
F16_TABLE = (
    np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
)
# What the statistics loop may reorder: sums (reassoc) and signs of zero; never contract.
MATH = {"reassoc", "nsz", "arcp"}
# Columns of the per-row output.
REF_SQ, OTHER_SQ, DOT, ERR_SQ, MAX_ABS = range(5)
COLUMNS = 5


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
    else:
        ggml_blocks.decode_row(kind, row, out)


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
