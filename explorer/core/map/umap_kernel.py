"""The SGD epochs of UMAP's layout (Euclidean output) as a numba kernel that is compiled once
into the on-disk cache (see `explorer.core.map.umap`, which sets the cache folder before
importing this module)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import float32, njit, prange, types
from numba.extending import intrinsic

_CLIP = np.float32(4.0)
# The gradient's coefficients are read from tables indexed by the float32 bits of the squared
# distance: its exponent and first MANTISSA_BITS bits, i.e. bins 2**-7 wide relative to d2 (the
# value at each bin's geometric middle: within 0.7 % of the exact one). Computing them needs
# a power of d2 for every sample, which took half the layout's time.
MANTISSA_BITS = 7
SHIFT = 23 - MANTISSA_BITS
LOWEST = -40  # exponents of d2 the tables cover (clamped outside)
HIGHEST = 40
BASE = (127 + LOWEST) << MANTISSA_BITS
SIZE = (HIGHEST - LOWEST) << MANTISSA_BITS


def coefficient_tables(a: float, b: float, eps: float = 0.001) -> tuple[np.ndarray, np.ndarray]:
    """The attractive and repulsive gradient coefficients of UMAP's curve 1 / (1 + a d^2b) by
    bin of d2 (as umap-learn's `optimize_layout_euclidean` computes them per sample):
    -2ab d2^(b-1) / (1 + a d2^b) and 2b / ((eps + d2)(1 + a d2^b))."""
    index = np.arange(SIZE, dtype=np.int64) + BASE
    exponent = (index >> MANTISSA_BITS) - 127
    mantissa = 1.0 + ((index & ((1 << MANTISSA_BITS) - 1)) + 0.5) / (1 << MANTISSA_BITS)
    d2 = np.ldexp(mantissa, exponent.astype(np.int32))
    d2b = d2**b
    attract = -2.0 * a * b * (d2b / d2) / (a * d2b + 1.0)
    repel = 2.0 * b / ((eps + d2) * (a * d2b + 1.0))
    return attract.astype(np.float32), repel.astype(np.float32)


@intrinsic
def _bits(typingctx, x):
    """The bits of a float32 as an int32."""
    if x != types.float32:
        return None
    return types.int32(types.float32), lambda ctx, builder, sig, args: builder.bitcast(
        args[0], ir.IntType(32)
    )


@njit(cache=True, nogil=True, inline="always")
def _bin(d2):
    """The tables' bin of a squared distance d2 > 0."""
    i = (_bits(d2) >> SHIFT) - BASE  # type: ignore[call-arg]  # (typing context: numba's)
    return min(max(i, 0), SIZE - 1)


@njit(cache=True, nogil=True, fastmath=True)
def _clip(v):
    return _CLIP if v > _CLIP else (-_CLIP if v < -_CLIP else v)


@njit(cache=True, nogil=True)
def next_random(state):
    """xorshift64*: a fast generator for picking negative samples."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@njit(cache=True, nogil=True, fastmath=True, parallel=True, locals={"d2": float32})
def sgd_epochs(
    y,
    snap,
    head,
    tail,
    epochs_per_sample,
    epochs_per_negative,
    next_sample,
    next_negative,
    first,
    last,
    n_epochs,
    attract,
    repel,
    states,
    bounds,
):
    """Epochs first .. last - 1 of n_epochs: in each, every edge due pulls its head towards its
    tail, and pushes it away from a few random points (negative sampling), as in umap-learn.

    The edges are sorted by head and cut into chunks of heads (`bounds`), run in parallel, each
    with its own random state: a point moves only as a head (the graph is symmetric, so each
    pair is still pulled from both ends), and the other points are read from `snap`, a copy of
    the layout taken at the start of each epoch. So threads never write the same point, do not
    fight over each other's cache lines, and the layout does not depend on their timing. The
    random points of one edge are all measured from the same position of its head, so the
    processor can overlap their work. Several epochs per call, so the calling Python thread
    rarely wakes. `attract` and `repel`: see coefficient_tables."""
    n = y.shape[0]
    chunks = bounds.shape[0] - 1
    for e in range(first, last):
        epoch = float(e)
        rate = np.float32(1.0 - max(e - 1, 0) / n_epochs)  # umap-learn lowers it each epoch
        snap[:] = y
        for c in prange(chunks):
            state = states[c : c + 1]
            for i in range(bounds[c], bounds[c + 1]):
                if next_sample[i] > epoch:
                    continue
                j, k = head[i], tail[i]
                yj0, yj1 = y[j, 0], y[j, 1]
                dx, dy = yj0 - snap[k, 0], yj1 - snap[k, 1]
                d2 = dx * dx + dy * dy
                coeff = attract[_bin(d2)] if d2 > 0 else np.float32(0.0)
                sx, sy = _clip(coeff * dx), _clip(coeff * dy)
                next_sample[i] += epochs_per_sample[i]
                n_neg = int((epoch - next_negative[i]) / epochs_per_negative[i])
                for _ in range(n_neg):
                    k = int(next_random(state) % np.uint64(n))
                    if k == j:
                        continue
                    dx, dy = yj0 - snap[k, 0], yj1 - snap[k, 1]
                    d2 = dx * dx + dy * dy
                    if d2 <= 0:
                        continue
                    coeff = repel[_bin(d2)]
                    sx += _clip(coeff * dx)
                    sy += _clip(coeff * dy)
                y[j, 0] = yj0 + sx * rate
                y[j, 1] = yj1 + sy * rate
                next_negative[i] += n_neg * epochs_per_negative[i]
