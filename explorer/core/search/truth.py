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


@njit(cache=True, nogil=True)
def _offer(key, row, ids, keys):  # pragma: no cover - compiled
    """Put `row` in place of the weakest kept row (key above it; ties: the earlier row
    stays); returns the new weakest key."""
    w = 0
    for j in range(1, keys.shape[0]):
        if keys[j] < keys[w]:
            w = j
    keys[w] = key
    ids[w] = row
    low = keys[0]
    for j in range(1, keys.shape[0]):
        low = min(low, keys[j])
    return low


@njit(parallel=True, cache=True, nogil=True)
def _add(dots, inv, bad, start, qids, ids, keys, low, parts):  # pragma: no cover - compiled
    """dots float32 [rows, queries] of rows start.. : offer each row to every query, for
    cosine (dots·inv) and dot; a query's own row, bad rows and non-finite keys are left out.
    low [2, queries] holds each kept list's weakest key: most values fail that one test."""
    n, nq = dots.shape
    for p in prange(parts):
        q0, q1 = p * nq // parts, (p + 1) * nq // parts
        for i in range(n):
            if bad[i]:
                continue
            row, iv = start + i, inv[i]
            for q in range(q0, q1):
                d = dots[i, q]
                c = d * iv
                if c > low[0, q] and np.isfinite(c) and qids[q] != row:
                    low[0, q] = _offer(c, row, ids[0, q], keys[0, q])
                if d > low[1, q] and np.isfinite(d) and qids[q] != row:
                    low[1, q] = _offer(d, row, ids[1, q], keys[1, q])


class Truth:
    """Running exact top-KEEP of each query, per metric, over the blocks seen so far."""

    def __init__(self, qids: np.ndarray):
        self.qids = np.ascontiguousarray(qids, dtype=np.int64)
        shape = (len(METRICS), len(qids), KEEP)
        self.ids = np.full(shape, -1, np.int64)
        self.keys = np.full(shape, -np.inf, np.float32)
        self.low = np.full(shape[:2], -np.inf, np.float32)

    def add(self, start: int, dots: np.ndarray, sq: np.ndarray) -> None:
        """dots float32 [rows, queries] of the rows start.. with every query, sq their float64
        squared norms (rows with non-finite or zero sq are left out)."""
        bad = ~(np.isfinite(sq) & (sq > 0))
        inv = np.divide(1.0, np.sqrt(sq), out=np.zeros(len(sq)), where=~bad).astype(np.float32)
        if len(self.qids) and len(sq):
            parts = max(1, min(len(self.qids) // 8, 4 * get_num_threads()))
            with KERNEL_LOCK:
                _add(dots, inv, bad, start, self.qids, self.ids, self.keys, self.low, parts)

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
