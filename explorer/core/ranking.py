"""Top-k selection, written once: positions of the largest finite keys (per row for 2-D)."""

from __future__ import annotations

import numpy as np


def top_unordered(key: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` largest finite keys, in no particular order (int64)."""
    n = len(key)
    count = min(count, n)
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if count >= n:
        return np.flatnonzero(np.isfinite(key)).astype(np.int64)
    top = np.argpartition(-key, count - 1)[:count]
    return top[np.isfinite(key[top])].astype(np.int64)


def top_k(key: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k largest finite keys, best first (ties: lower position first)."""
    finite = np.isfinite(key)
    k = min(k, int(finite.sum()))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    key = np.where(finite, key, -np.inf)
    top = top_unordered(key, k)
    kth = key[top].min()
    if np.count_nonzero(key == kth) > np.count_nonzero(key[top] == kth):
        # argpartition cut a run of ties at the k-th key anywhere: keep the lowest positions
        above = np.flatnonzero(key > kth)
        top = np.concatenate([above, np.flatnonzero(key == kth)[: k - len(above)]])
    return top[np.lexsort((top, -key[top]))].astype(np.int64)


def top_k_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Per row of a 2-D array: the columns of its k largest scores, best first (1 ≤ k ≤ columns;
    equal scores in no particular order)."""
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)
