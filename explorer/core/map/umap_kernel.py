"""The SGD epoch of UMAP's layout (Euclidean output, move_other=True) as a numba kernel that is
compiled once into the on-disk cache (see `explorer.core.map.umap`, which sets the cache folder
before importing this module)."""

from __future__ import annotations

import numpy as np
from numba import float32, njit, prange

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


@njit(
    cache=True, nogil=True, fastmath=True, parallel=True, locals={"d2": float32, "coeff": float32}
)
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
    a,
    b,
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
    random points of one edge are all measured from the same position of its head, which lets
    the processor overlap their work (each one's power and division took longer than the
    memory access). Several epochs per call, so the calling Python thread rarely wakes."""
    n = y.shape[0]
    af, bf = np.float32(a), np.float32(b)
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
                coeff = 0
                if d2 > 0:
                    d2b = d2**bf  # one pow: d2 ** (b - 1) is d2b / d2
                    coeff = -_TWO * af * bf * (d2b / d2) / (af * d2b + 1)
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
                    coeff = _TWO * bf / ((_EPS + d2) * (af * d2**bf + 1))
                    sx += _clip(coeff * dx)
                    sy += _clip(coeff * dy)
                y[j, 0] = yj0 + sx * rate
                y[j, 1] = yj1 + sy * rate
                next_negative[i] += n_neg * epochs_per_negative[i]
