"""The statistics pass over BF16 rows as one fused numba kernel on the memory map's bits.

Per row: the sum of squares and the dot product with a reference vector; per dimension: count,
mean and sum of squared deviations, kept per part of the rows and merged with Chan's formula
every `SUB` rows (a sub-block small enough to be read twice from the CPU cache). Everything
accumulates in float64; rows holding NaN/inf are left out of the dimension statistics.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from explorer.core.analysis.blocks import chan_merge
from explorer.core.search_exact import _bf16_to_f32  # the shift-and-reinterpret intrinsic

SUB = 16  # rows per sub-block: 16 × 4096 × 2 bytes = 128 KB, inside L2
# Re-association lets the reductions vectorise; NaN/inf must keep their meaning (no nnan/ninf).
_FAST = {"reassoc", "contract", "nsz", "arcp"}


@njit(parallel=True, fastmath=_FAST, cache=True, nogil=True)
def stats_bf16(bits, ref, sq, refdot, count, mean, m2):  # pragma: no cover - compiled
    """bits uint16 [n, d]; ref float64 [d]; outputs sq, refdot float64 [n];
    per-part state count int64 [parts], mean/m2 float64 [parts, d] (updated in place)."""
    n, d = bits.shape
    parts = count.shape[0]
    for p in prange(parts):
        lo = p * n // parts
        hi = (p + 1) * n // parts
        smean = np.empty(d, dtype=np.float64)
        sm2 = np.empty(d, dtype=np.float64)
        finite = np.empty(SUB, dtype=np.bool_)
        i = lo
        while i < hi:
            top = min(i + SUB, hi)
            smean[:] = 0.0
            nb = 0
            for r in range(i, top):
                row = bits[r]
                s = 0.0
                t = 0.0
                for j in range(d):
                    x = np.float64(_bf16_to_f32(row[j]))
                    s += x * x
                    t += x * ref[j]
                sq[r] = s
                refdot[r] = t
                ok = np.isfinite(s)
                finite[r - i] = ok
                if ok:
                    nb += 1
                    for j in range(d):
                        smean[j] += np.float64(_bf16_to_f32(row[j]))
            if nb > 0:
                inv = 1.0 / nb
                for j in range(d):
                    smean[j] *= inv
                sm2[:] = 0.0
                for r in range(i, top):
                    if finite[r - i]:
                        row = bits[r]
                        for j in range(d):
                            dx = np.float64(_bf16_to_f32(row[j])) - smean[j]
                            sm2[j] += dx * dx
                na = count[p]
                total = na + nb
                frac = nb / total
                cross = na * frac
                for j in range(d):
                    delta = smean[j] - mean[p, j]
                    mean[p, j] += delta * frac
                    m2[p, j] += sm2[j] + delta * delta * cross
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
