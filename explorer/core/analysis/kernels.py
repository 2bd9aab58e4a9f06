"""The statistics pass as one fused numba kernel: on a BF16 memory map's bits, or on blocks of
rows decoded to float32 (F32, F16, quantised GGUF).

Per row: the sum of squares and the dot product with a reference vector, in float64. Per
dimension: count, mean and sum of squared deviations (M2), kept per part of the rows in float64.
Every `SUB` rows the kernel sums x − c and (x − c)² with c = the part's running mean (shifted
sums, in float32 so that eight values go per instruction), turns them into the sub-block's mean
and M2 and merges those into the part's float64 state with Chan's formula. Because c is close
to the mean and a sub-block is only 64 rows, the float32 sums lose about 1e-7 relative, and the
error does not grow with the number of rows. (float64 sums here cost ~30% more CPU time, which
puts the pass above 2× a plain read of the matrix.) Rows holding NaN/inf are left out of the
dimension figures: a rare slow path redoes their sub-block without them.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from explorer.core.analysis.blocks import chan_merge
from explorer.core.search.exact import _bf16_to_f32  # the shift-and-reinterpret intrinsic


def _widen(x):  # pragma: no cover - replaced by the overload in compiled code
    raise NotImplementedError


def _widen_impl(x):
    """A stored value as float32: BF16 bits (uint16) are widened, float32 passes through."""
    if x == types.uint16:
        return lambda x: _bf16_to_f32(x)
    return lambda x: np.float32(x)


overload(_widen, inline="always")(_widen_impl)


SUB = 64  # rows per sub-block
# Re-association lets the reductions vectorise; NaN/inf must keep their meaning (no nnan/ninf).
_FAST = {"reassoc", "contract", "nsz", "arcp"}


@njit(fastmath=_FAST, cache=True, nogil=True)
def _four_rows(r0, r1, r2, r3, c, ref, s1, s2, out_sq, out_dot, i):  # pragma: no cover
    # One loop: each value is widened once, for the row sums (float64) and the dimension sums
    # (float32, see the module doc); ~10% less CPU than a loop for each.
    a0 = a1 = a2 = a3 = 0.0
    b0 = b1 = b2 = b3 = 0.0
    for j in range(c.shape[0]):
        y0 = _widen(r0[j])
        y1 = _widen(r1[j])
        y2 = _widen(r2[j])
        y3 = _widen(r3[j])
        x0 = np.float64(y0)
        x1 = np.float64(y1)
        x2 = np.float64(y2)
        x3 = np.float64(y3)
        a0 += x0 * x0
        a1 += x1 * x1
        a2 += x2 * x2
        a3 += x3 * x3
        rj = ref[j]
        b0 += x0 * rj
        b1 += x1 * rj
        b2 += x2 * rj
        b3 += x3 * rj
        cj = c[j]
        d0 = y0 - cj
        d1 = y1 - cj
        d2 = y2 - cj
        d3 = y3 - cj
        s1[j] += (d0 + d1) + (d2 + d3)
        s2[j] += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3)
    out_sq[i], out_sq[i + 1], out_sq[i + 2], out_sq[i + 3] = a0, a1, a2, a3
    out_dot[i], out_dot[i + 1], out_dot[i + 2], out_dot[i + 3] = b0, b1, b2, b3


@njit(fastmath=_FAST, cache=True, nogil=True)
def _one_row(r0, c, ref, s1, s2, out_sq, out_dot, i, moments):  # pragma: no cover
    a0 = 0.0
    b0 = 0.0
    for j in range(c.shape[0]):
        x0 = np.float64(_widen(r0[j]))
        a0 += x0 * x0
        b0 += x0 * ref[j]
    out_sq[i] = a0
    out_dot[i] = b0
    if moments:
        for j in range(c.shape[0]):
            d0 = _widen(r0[j]) - c[j]
            s1[j] += d0
            s2[j] += d0 * d0


@njit(parallel=True, fastmath=_FAST, cache=True, nogil=True)
def stats_rows(bits, ref, sq, refdot, count, mean, m2):  # pragma: no cover - compiled
    """bits uint16 [n, d] (BF16 bits) or float32 [n, d] (decoded rows); ref float64 [d];
    outputs sq, refdot float64 [n]; per-part state count int64 [parts], mean/m2 float64
    [parts, d] (updated in place)."""
    n, d = bits.shape
    parts = count.shape[0]
    for p in prange(parts):
        lo = p * n // parts
        hi = (p + 1) * n // parts
        s1 = np.empty(d, dtype=np.float32)
        s2 = np.empty(d, dtype=np.float32)
        c = np.empty(d, dtype=np.float32)
        i = lo
        while i < hi:
            top = min(i + SUB, hi)
            if count[p] > 0:
                c[:] = mean[p]
            else:  # the part's first rows: shift by the first row
                for j in range(d):
                    c[j] = _widen(bits[i, j])
            s1[:] = 0.0
            s2[:] = 0.0
            r = i
            while r + 4 <= top:
                _four_rows(
                    bits[r], bits[r + 1], bits[r + 2], bits[r + 3], c, ref, s1, s2, sq, refdot, r
                )
                r += 4
            while r < top:
                _one_row(bits[r], c, ref, s1, s2, sq, refdot, r, True)
                r += 1
            nb = 0
            for r in range(i, top):
                if np.isfinite(sq[r]):
                    nb += 1
            if nb < top - i:  # rare: redo the moments without the rows holding NaN/inf
                s1[:] = 0.0
                s2[:] = 0.0
                for r in range(i, top):
                    if np.isfinite(sq[r]):
                        _one_row(bits[r], c, ref, s1, s2, sq, refdot, r, True)
            if nb > 0:
                na = count[p]
                total = na + nb
                frac = nb / total
                cross = na * frac
                for j in range(d):
                    t1 = np.float64(s1[j])
                    dm = t1 / nb
                    sub_mean = np.float64(c[j]) + dm
                    sub_m2 = max(np.float64(s2[j]) - t1 * dm, 0.0)
                    delta = sub_mean - mean[p, j]
                    mean[p, j] += delta * frac
                    m2[p, j] += sub_m2 + delta * delta * cross
                count[p] = total
            i = top


def merge_parts(
    count: np.ndarray, mean: np.ndarray, m2: np.ndarray
) -> tuple[int, np.ndarray, np.ndarray]:
    """Chan-merge the per-part states into one (count, mean, m2)."""
    n_all: int = 0
    mean_all = np.zeros(mean.shape[1], dtype=np.float64)
    m2_all = np.zeros(mean.shape[1], dtype=np.float64)
    for p in range(len(count)):
        if count[p]:
            n_all, mean_all, m2_all = chan_merge(  # type: ignore[assignment]
                n_all, mean_all, m2_all, int(count[p]), mean[p], m2[p]
            )
    return int(n_all), mean_all, m2_all
