"""Reference answers the search tests compare against."""

from __future__ import annotations

import numpy as np


def brute_force(values: np.ndarray, qid: int, metric: str, k: int = 10) -> set[int]:
    """The true top-k of row `qid` in float64 ("cosine" or "dot"), plus every row tied with the
    k-th (real vocabularies hold duplicate rows; any of the tied ones is a right answer)."""
    v = values.astype(np.float64)
    s = v @ v[qid]
    if metric == "cosine":
        s = s / np.linalg.norm(v, axis=1)
    s[qid] = -np.inf
    kth = np.sort(s)[-k]
    return set(np.flatnonzero(s >= kth - 1e-9 * abs(kth)).tolist())
