"""Skip-gram with negative sampling (word2vec), one numba SGD loop over shuffled pairs.

The loop releases the GIL (nogil), so a training job on a worker thread leaves the GUI thread
free. Pairs and negative samples are drawn with numpy from a seeded generator and the loop is
sequential, so a seed gives the same table every time.
"""

from __future__ import annotations

import numba
import numpy as np

from explorer.core.learning.corpus import TokenCorpus


@numba.njit(cache=True, nogil=True)
def sgd_pairs(
    w_in: np.ndarray,
    w_out: np.ndarray,
    centers: np.ndarray,
    contexts: np.ndarray,
    negatives: np.ndarray,
    lr_start: float,
    lr_stop: float,
) -> float:
    """One pass over (center, context) pairs with their negatives; returns the summed loss."""
    n, n_neg = negatives.shape
    dim = w_in.shape[1]
    grad = np.empty(dim, dtype=np.float32)
    total = 0.0
    for p in range(n):
        lr = lr_start + (lr_stop - lr_start) * p / max(n, 1)
        c = centers[p]
        grad[:] = 0.0
        for k in range(n_neg + 1):
            t = contexts[p] if k == 0 else negatives[p, k - 1]
            if k > 0 and t == contexts[p]:
                continue
            dot = 0.0
            for j in range(dim):
                dot += w_in[c, j] * w_out[t, j]
            dot = min(max(dot, -10.0), 10.0)
            sig = 1.0 / (1.0 + np.exp(-dot))
            if k == 0:
                g = (1.0 - sig) * lr
                total -= np.log(sig)
            else:
                g = -sig * lr
                total -= np.log(1.0 - sig)
            for j in range(dim):
                grad[j] += g * w_out[t, j]
                w_out[t, j] += g * w_in[c, j]
        for j in range(dim):
            w_in[c, j] += grad[j]
    return total


def keep_probability(counts: np.ndarray, threshold: float) -> np.ndarray:
    """word2vec's subsampling of frequent tokens: keep each occurrence with this probability."""
    freq = counts / counts.sum()
    t = threshold / np.maximum(freq, 1e-12)
    return np.minimum(1.0, np.sqrt(t) + t)


@numba.njit(cache=True, nogil=True)
def _pairs_kernel(
    stream: np.ndarray, para: np.ndarray, keep_p: np.ndarray, window: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Subsample, pick a window per center, list the pairs and shuffle them, without the GIL
    (numpy's masks, concatenations and permutation of a few million pairs held it for
    hundreds of milliseconds and froze the window)."""
    np.random.seed(seed)  # numba's generator: per thread, deterministic once seeded
    n = len(stream)
    kept = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if np.random.random() < keep_p[stream[i]]:
            kept[m] = i
            m += 1
    reach = np.empty(m, dtype=np.int64)
    total = 0
    for a in range(m):
        reach[a] = np.random.randint(1, window + 1)
    for a in range(m):  # pairs (a, a+o) in both directions, each gated by its center's reach
        for o in range(1, window + 1):
            if a + o >= m or para[kept[a]] != para[kept[a + o]]:
                break
            total += (reach[a] >= o) + (reach[a + o] >= o)
    centers = np.empty(total, dtype=np.int32)
    contexts = np.empty(total, dtype=np.int32)
    t = 0
    for a in range(m):
        for o in range(1, window + 1):
            if a + o >= m or para[kept[a]] != para[kept[a + o]]:
                break
            x, y = stream[kept[a]], stream[kept[a + o]]
            if reach[a] >= o:
                centers[t], contexts[t] = x, y
                t += 1
            if reach[a + o] >= o:
                centers[t], contexts[t] = y, x
                t += 1
    for i in range(total - 1, 0, -1):  # Fisher-Yates
        j = np.random.randint(0, i + 1)
        centers[i], centers[j] = centers[j], centers[i]
        contexts[i], contexts[j] = contexts[j], contexts[i]
    return centers, contexts


def epoch_pairs(
    corpus: TokenCorpus, window: int, subsample: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Shuffled (center, context) pairs of one epoch: frequent tokens subsampled, a random
    window of 1..`window` per center (nearer contexts count more), never across paragraphs."""
    keep_p = (
        keep_probability(corpus.counts, subsample)
        if subsample > 0
        else np.ones(corpus.size, dtype=np.float64)
    )
    seed = int(rng.integers(0, 2**31 - 1))
    return _pairs_kernel(corpus.stream, corpus.paragraph, keep_p, window, seed)


def negative_table(counts: np.ndarray, power: float = 0.75) -> np.ndarray:
    """Cumulative unigram^0.75 distribution to draw negatives from (np.searchsorted)."""
    p = counts.astype(np.float64) ** power
    cdf = np.cumsum(p / p.sum())
    cdf[-1] = 1.0
    return cdf


@numba.njit(cache=True, nogil=True)
def _search(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    return np.searchsorted(cdf, u).astype(np.int32)


def draw_negatives(cdf: np.ndarray, n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    return _search(cdf, rng.random((n, k)).ravel()).reshape(n, k)
