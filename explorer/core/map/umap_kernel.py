"""The SGD epoch of UMAP's layout (Euclidean output, move_other=True) as a numba kernel that is
compiled once into the on-disk cache (see `explorer.core.map.umap`, which sets the cache folder
before importing this module)."""

from __future__ import annotations

import numpy as np
from numba import float32, njit

# float32 arithmetic throughout (powf instead of pow), as umap-learn's kernel does
_TWO, _CLIP, _EPS = np.float32(2.0), np.float32(4.0), np.float32(0.001)


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


@njit(cache=True, nogil=True, fastmath=True, locals={"d2": float32, "coeff": float32})
def sgd_epochs(
    y,
    head,
    tail,
    epochs_per_sample,
    epochs_per_negative,
    next_sample,
    next_negative,
    first,
    last,
    n_epochs,
    a,
    b,
    state,
):
    """Epochs first .. last - 1 of n_epochs: in each, every edge due pulls its two ends together,
    and its head is pushed away from a few random points (negative sampling), as in umap-learn.
    Several epochs per call: a call per epoch kept the worker's Python busy between the kernel
    calls, and the window waited for the GIL after each of its own Qt calls."""
    n = y.shape[0]
    af, bf = np.float32(a), np.float32(b)
    for e in range(first, last):
        epoch = float(e)
        rate = np.float32(1.0 - max(e - 1, 0) / n_epochs)  # umap-learn lowers it each epoch
        for i in range(head.shape[0]):
            if next_sample[i] > epoch:
                continue
            j, k = head[i], tail[i]
            dx, dy = y[j, 0] - y[k, 0], y[j, 1] - y[k, 1]
            d2 = dx * dx + dy * dy
            coeff = 0
            if d2 > 0:
                d2b = d2**bf  # one pow: d2 ** (b - 1) is d2b / d2
                coeff = -_TWO * af * bf * (d2b / d2) / (af * d2b + 1)
            gx, gy = _clip(coeff * dx) * rate, _clip(coeff * dy) * rate
            y[j, 0] += gx
            y[j, 1] += gy
            y[k, 0] -= gx
            y[k, 1] -= gy
            next_sample[i] += epochs_per_sample[i]
            n_neg = int((epoch - next_negative[i]) / epochs_per_negative[i])
            for _ in range(n_neg):
                k = int(next_random(state) % np.uint64(n))
                if k == j:
                    continue
                dx, dy = y[j, 0] - y[k, 0], y[j, 1] - y[k, 1]
                d2 = dx * dx + dy * dy
                if d2 <= 0:
                    continue
                coeff = _TWO * bf / ((_EPS + d2) * (af * d2**bf + 1))
                y[j, 0] += _clip(coeff * dx) * rate
                y[j, 1] += _clip(coeff * dy) * rate
            next_negative[i] += n_neg * epochs_per_negative[i]
