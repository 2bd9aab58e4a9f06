"""Quantised GGUF rows decoded by compiled kernels, value for value as `gguf.quants.dequantize`.

One routine decodes one row of blocks into float32 (`decode_row`); the search kernels call it
row by row into a small buffer, so no view ever holds a decoded copy of the matrix, and
`decode_blocks` fills whole blocks of rows on every core. The arithmetic follows llama.cpp's
reference formulas in float32 in the same order as the `gguf` package (a multiply, then an
add, never fused), so decoded values are bit-identical to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import get_num_threads, njit, prange, types
from numba.extending import intrinsic

from explorer.core.kernel_lock import KERNEL_LOCK

# GGML type ids (gguf.constants.GGMLQuantizationType) this module decodes
Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = 2, 3, 6, 7, 8
Q4_K, Q5_K, Q6_K = 12, 13, 14
# type → (values per block, bytes per block)
BLOCKS = {
    Q4_0: (32, 18),
    Q4_1: (32, 20),
    Q5_0: (32, 22),
    Q5_1: (32, 24),
    Q8_0: (32, 34),
    Q4_K: (256, 144),
    Q5_K: (256, 176),
    Q6_K: (256, 210),
}
NAMES = {
    Q4_0: "Q4_0",
    Q4_1: "Q4_1",
    Q5_0: "Q5_0",
    Q5_1: "Q5_1",
    Q8_0: "Q8_0",
    Q4_K: "Q4_K",
    Q5_K: "Q5_K",
    Q6_K: "Q6_K",
}


def _bits_to_f32(typingctx, x):  # pragma: no cover - compiled
    sig = types.float32(types.uint32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float32))

    return sig, codegen


def _f32_to_bits(typingctx, x):  # pragma: no cover - compiled
    sig = types.uint32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.uint32))

    return sig, codegen


# Any: mypy reads numba's intrinsic as taking the typing context too
_as_f32: Any = intrinsic(_bits_to_f32)
_f32_bits: Any = intrinsic(_f32_to_bits)


@njit(cache=True, nogil=True, inline="always")
def _f16(lo, hi):  # pragma: no cover - compiled
    """An IEEE half (two little-endian bytes) as float32, exactly (subnormals, inf, NaN)."""
    h = np.uint32(lo) | (np.uint32(hi) << np.uint32(8))
    o = (h & np.uint32(0x7FFF)) << np.uint32(13)
    exp = o & np.uint32(0x0F800000)
    o += np.uint32(112 << 23)  # rebias the exponent (127 - 15)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    if exp == np.uint32(0x0F800000):  # inf / NaN: exponent all ones
        o += np.uint32(112 << 23)
    elif exp == 0:  # zero / subnormal: renormalise through a float subtraction (exact)
        o += np.uint32(1 << 23)
        return _as_f32(sign | _f32_bits(_as_f32(o) - _as_f32(np.uint32(113 << 23))))
    return _as_f32(sign | o)


@njit(cache=True, nogil=True)
def _k_scale_min(s, j):  # pragma: no cover - compiled
    """Q4_K/Q5_K: the 6-bit scale and min of sub-block j (0-7) from the 12 scale bytes s."""
    if j < 4:
        return s[j] & 0x3F, s[j + 4] & 0x3F
    return (s[j + 4] & 0x0F) | ((s[j - 4] >> 2) & 0x30), (s[j + 4] >> 4) | ((s[j] >> 2) & 0x30)


@njit(cache=True, nogil=True)
def decode_row(qtype, src, out):  # pragma: no cover - compiled
    """Decode one row of blocks `src` (uint8) into `out` (float32, the row's values)."""
    d_out = out.shape[0]
    if qtype == Q8_0:
        for b in range(d_out // 32):
            base = b * 34
            d = _f16(src[base], src[base + 1])
            for j in range(32):
                q = np.int32(src[base + 2 + j])
                out[b * 32 + j] = np.float32(q - 256 if q > 127 else q) * d
    elif qtype == Q4_0 or qtype == Q4_1:
        size = 18 if qtype == Q4_0 else 20
        for b in range(d_out // 32):
            base = b * size
            d = _f16(src[base], src[base + 1])
            qs = base + (2 if qtype == Q4_0 else 4)
            if qtype == Q4_0:
                for j in range(16):
                    out[b * 32 + j] = d * np.float32(np.int32(src[qs + j] & 0x0F) - 8)
                    out[b * 32 + 16 + j] = d * np.float32(np.int32(src[qs + j] >> 4) - 8)
            else:
                m = _f16(src[base + 2], src[base + 3])
                for j in range(16):
                    out[b * 32 + j] = d * np.float32(src[qs + j] & 0x0F) + m
                    out[b * 32 + 16 + j] = d * np.float32(src[qs + j] >> 4) + m
    elif qtype == Q5_0 or qtype == Q5_1:
        size = 22 if qtype == Q5_0 else 24
        for b in range(d_out // 32):
            base = b * size
            d = _f16(src[base], src[base + 1])
            h0 = base + (2 if qtype == Q5_0 else 4)
            qh = (
                np.uint32(src[h0])
                | (np.uint32(src[h0 + 1]) << 8)
                | (np.uint32(src[h0 + 2]) << 16)
                | (np.uint32(src[h0 + 3]) << 24)
            )
            qs = h0 + 4
            for j in range(32):
                nib = (src[qs + j] & 0x0F) if j < 16 else (src[qs + j - 16] >> 4)
                q = np.int32(nib) | np.int32(((qh >> np.uint32(j)) & np.uint32(1)) << 4)
                if qtype == Q5_0:
                    out[b * 32 + j] = d * np.float32(q - 16)
                else:
                    m = _f16(src[base + 2], src[base + 3])
                    out[b * 32 + j] = d * np.float32(q) + m
    elif qtype == Q4_K or qtype == Q5_K:
        size = 144 if qtype == Q4_K else 176
        for b in range(d_out // 256):
            base = b * size
            d = _f16(src[base], src[base + 1])
            dmin = _f16(src[base + 2], src[base + 3])
            scales = src[base + 4 : base + 16]
            qs = base + (16 if qtype == Q4_K else 48)
            for pair in range(4):  # 32 bytes of qs: low nibbles, then high nibbles
                sc_lo, mn_lo = _k_scale_min(scales, 2 * pair)
                sc_hi, mn_hi = _k_scale_min(scales, 2 * pair + 1)
                d_lo, m_lo = d * np.float32(sc_lo), dmin * np.float32(mn_lo)
                d_hi, m_hi = d * np.float32(sc_hi), dmin * np.float32(mn_hi)
                chunk = qs + pair * 32
                y = b * 256 + pair * 64
                if qtype == Q4_K:
                    for j in range(32):
                        byte = src[chunk + j]
                        out[y + j] = d_lo * np.float32(byte & 0x0F) - m_lo
                        out[y + 32 + j] = d_hi * np.float32(byte >> 4) - m_hi
                else:
                    for j in range(32):
                        byte = src[chunk + j]
                        high = src[base + 16 + j] >> (2 * pair)
                        q_lo = np.int32(byte & 0x0F) | (np.int32(high & 1) << 4)
                        q_hi = np.int32(byte >> 4) | (np.int32((high >> 1) & 1) << 4)
                        out[y + j] = d_lo * np.float32(q_lo) - m_lo
                        out[y + 32 + j] = d_hi * np.float32(q_hi) - m_hi
    elif qtype == Q6_K:
        for b in range(d_out // 256):
            base = b * 210
            d = _f16(src[base + 208], src[base + 209])
            for half in range(2):  # llama.cpp's loop: 128 values from 64 ql and 32 qh bytes
                low_at = base + half * 64
                high_at = base + 128 + half * 32
                sc = base + 192 + half * 8
                y = b * 256 + half * 128
                for part in range(2):
                    s0 = d * np.float32(_i8(src[sc + part]))
                    s2 = d * np.float32(_i8(src[sc + part + 2]))
                    s4 = d * np.float32(_i8(src[sc + part + 4]))
                    s6 = d * np.float32(_i8(src[sc + part + 6]))
                    for k in range(part * 16, part * 16 + 16):
                        lo, hi, h = src[low_at + k], src[low_at + k + 32], src[high_at + k]
                        q1 = np.int32((lo & 15) | ((h & 3) << 4)) - 32
                        q2 = np.int32((hi & 15) | (((h >> 2) & 3) << 4)) - 32
                        q3 = np.int32((lo >> 4) | (((h >> 4) & 3) << 4)) - 32
                        q4 = np.int32((hi >> 4) | ((h >> 6) << 4)) - 32
                        out[y + k] = s0 * np.float32(q1)
                        out[y + k + 32] = s2 * np.float32(q2)
                        out[y + k + 64] = s4 * np.float32(q3)
                        out[y + k + 96] = s6 * np.float32(q4)


@njit(cache=True, nogil=True, inline="always")
def _i8(byte):  # pragma: no cover - compiled
    x = np.int32(byte)
    return x - 256 if x > 127 else x


@njit(parallel=True, cache=True, nogil=True)
def _decode_rows(qtype, raw, out, parts):  # pragma: no cover - compiled
    n = raw.shape[0]
    for p in prange(parts):
        for i in range(p * n // parts, (p + 1) * n // parts):
            decode_row(qtype, raw[i], out[i])


def parts_for(n: int) -> int:
    # Many small parts: a thread slowed by another process does not hold up the whole block.
    return max(1, min(n, 32 * get_num_threads()))


def supported(qtype: int) -> bool:
    return qtype in BLOCKS


def decode_blocks(raw: np.ndarray, qtype: int) -> np.ndarray:
    """float32 [..., values] of raw rows uint8 [..., bytes per row] of type `qtype`."""
    block, size = BLOCKS[qtype]
    flat = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, raw.shape[-1])
    out = np.empty((flat.shape[0], raw.shape[-1] // size * block), dtype=np.float32)
    if flat.shape[0]:
        with KERNEL_LOCK:
            _decode_rows(qtype, flat, out, parts_for(flat.shape[0]))
    return out.reshape(*raw.shape[:-1], out.shape[-1])
