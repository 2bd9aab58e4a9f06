"""The exact top-K of the build's sample queries, kept up to date block by block of the pass.

Each block's dots with every query go through one compiled pass: a row enters a query's kept
list only when it beats the weakest kept one, so most values cost one comparison.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from explorer.core.kernel_lock import KERNEL_LOCK

K = 10
KEEP = 32  # per query: the top K plus room for rows tied with the K-th (duplicate rows)
METRICS = ("cosine", "dot")


@njit(cache=True, nogil=True, inline="always")
def _offer(key, row, ids, keys, weakest):  # pragma: no cover - compiled
    """Keep `row` in place of the weakest kept one if its key is higher (ties: the earlier
    row stays); `weakest` [1] holds the weakest's slot."""
    w = weakest[0]
    if key <= keys[w]:
        return
    keys[w] = key
    ids[w] = row
    for j in range(keys.shape[0]):
        if keys[j] < keys[w]:
            w = j
    weakest[0] = w


@njit(parallel=True, cache=True, nogil=True)
def _add(dots, inv, bad, start, qids, ids, keys, weakest, parts):  # pragma: no cover - compiled
    """dots float32 [rows, queries] of rows start.. : offer each row to every query, for
    cosine (dots·inv) and dot; a query's own row, bad rows and non-finite keys are left out."""
    n, nq = dots.shape
    for p in prange(parts):
        for i in range(n):
            if bad[i]:
                continue
            row = start + i
            for q in range(p * nq // parts, (p + 1) * nq // parts):
                if qids[q] == row:
                    continue
                d = dots[i, q]
                c = d * inv[i]
                if np.isfinite(c):
                    _offer(c, row, ids[0, q], keys[0, q], weakest[0, q])
                if np.isfinite(d):
                    _offer(d, row, ids[1, q], keys[1, q], weakest[1, q])


class Truth:
    """Running exact top-KEEP of each query, per metric, over the blocks seen so far."""

    def __init__(self, qids: np.ndarray):
        self.qids = np.ascontiguousarray(qids, dtype=np.int64)
        shape = (len(METRICS), len(qids), KEEP)
        self.ids = np.full(shape, -1, np.int64)
        self.keys = np.full(shape, -np.inf, np.float32)
        self.weakest = np.zeros((*shape[:2], 1), np.int64)

    def add(self, start: int, dots: np.ndarray, sq: np.ndarray) -> None:
        """dots float32 [rows, queries] of the rows start.. with every query, sq their float64
        squared norms (rows with non-finite or zero sq are left out)."""
        bad = ~(np.isfinite(sq) & (sq > 0))
        inv = np.divide(1.0, np.sqrt(sq), out=np.zeros(len(sq)), where=~bad).astype(np.float32)
        if len(self.qids) and len(sq):
            parts = max(1, min(len(self.qids) // 8, 4 * get_num_threads()))
            with KERNEL_LOCK:
                _add(dots, inv, bad, start, self.qids, self.ids, self.keys, self.weakest, parts)

    def sets(self, metric: str) -> list[np.ndarray]:
        """Each query's true top-K, plus every row tied with its K-th (any of them is right)."""
        m = METRICS.index(metric)
        out = []
        for ids, key in zip(self.ids[m], self.keys[m], strict=True):
            ok = np.isfinite(key)
            ids, key = ids[ok], key[ok]
            if len(key) > K:
                kth = np.partition(-key, K - 1)[K - 1]
                ids = ids[-key <= kth + 1e-6 * abs(kth)]
            out.append(ids)
        return out
