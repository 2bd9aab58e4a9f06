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
            for s in range(8):
                sc, mn = _k_scale_min(scales, s)
                ds = d * np.float32(sc)
                dm = dmin * np.float32(mn)
                chunk = qs + (s // 2) * 32
                shift = 4 * (s % 2)
                for j in range(32):
                    q = np.int32((src[chunk + j] >> shift) & 0x0F)
                    if qtype == Q5_K:
                        q |= np.int32((src[base + 16 + j] >> s) & 1) << 4
                    out[b * 256 + s * 32 + j] = ds * np.float32(q) - dm
    elif qtype == Q6_K:
        for b in range(d_out // 256):
            base = b * 210
            d = _f16(src[base + 208], src[base + 209])
            for v in range(256):
                a = v // 128
                r = v % 128
                low = (src[base + a * 64 + r % 64] >> (4 * (r // 64))) & 0x0F
                high = (src[base + 128 + a * 32 + r % 32] >> (2 * (r // 32))) & 0x03
                q = np.int32(low | (high << 4)) - 32
                sc = np.int32(src[base + 192 + v // 16])
                scale = d * np.float32(sc - 256 if sc > 127 else sc)
                out[b * 256 + v] = scale * np.float32(q)


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
