"""Approximate k nearest neighbours of every row by cosine, by clustered (IVF-style) search.

The unit rows are grouped by k-means (fitted on a sample) into clusters of about CLUSTER_ROWS;
each row also joins the list of its second-nearest centroid, so that rows near a border are
found from both sides. The rows of one cluster are then compared exactly (matrix products) with
every row listed in the PROBES clusters whose centroids are nearest to theirs, and keep the best
k. The work is n × (rows probed) × d in BLAS, with no compilation (pynndescent compiles its
kernels in every new process).
"""

from __future__ import annotations

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.ranking import top_k_rows

CLUSTER_ROWS = 200
PROBES = 12
SAMPLE_PER_CLUSTER = 40
QUERY_BLOCK = 1024


def _centroids(x: np.ndarray, clusters: int, seed: int, rounds: int = 6) -> np.ndarray:
    """Spherical k-means on a sample: random rows to start, then a few assign-and-average
    rounds of matrix products (cheaper here than scikit-learn's k-means++ start)."""
    rng = np.random.default_rng(seed)
    take = min(len(x), clusters * SAMPLE_PER_CLUSTER)
    sample = x[np.sort(rng.choice(len(x), take, replace=False))]
    c = sample[rng.choice(take, clusters, replace=False)].copy()
    for _ in range(rounds):
        near = np.argmax(sample @ c.T, axis=1)
        order = np.argsort(near, kind="stable")
        starts = np.searchsorted(near[order], np.arange(clusters))
        padded = np.vstack([sample[order], np.zeros((1, sample.shape[1]), sample.dtype)])
        sums = np.add.reduceat(padded, starts, axis=0)
        sums[np.diff(np.append(starts, take)) == 0] = 0.0  # reduceat's empty groups
        empty = ~sums.any(axis=1)
        sums[empty] = sample[rng.choice(take, int(empty.sum()), replace=False)]
        c = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return c.astype(np.float32)


def _nearest_two(x: np.ndarray, centroids: np.ndarray, ctx: JobContext) -> np.ndarray:
    """[n, 2]: each row's nearest and second-nearest centroid."""
    out = np.empty((len(x), 2), dtype=np.int64)
    for start in range(0, len(x), 8192):
        ctx.check("the neighbour graph")
        sims = x[start : start + 8192] @ centroids.T
        out[start : start + 8192] = top_k_rows(sims, min(2, len(centroids)))[:, [0, -1]]
    return out


def cluster_knn(
    x: np.ndarray, k: int, seed: int = 0, ctx: JobContext = NULL_CONTEXT
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest rows of every unit row of `x` (itself first) and their cosine distances."""
    n = len(x)
    clusters = max(2, n // CLUSTER_ROWS)
    ctx.progress(0.0, f"neighbour graph: {clusters:,} clusters of {n:,} rows")
    centroids = _centroids(x, clusters, seed)
    ctx.progress(0.1, "neighbour graph: assigning rows to clusters")
    near = _nearest_two(x, centroids, ctx)
    primary = near[:, 0]
    listed = np.concatenate([near[:, 0], near[:, 1]])
    ids = np.concatenate([np.arange(n), np.arange(n)])
    order = np.argsort(listed, kind="stable")
    members = np.split(ids[order], np.searchsorted(listed[order], np.arange(1, clusters)))
    order = np.argsort(primary, kind="stable")
    queries = np.split(order, np.searchsorted(primary[order], np.arange(1, clusters)))
    probes = top_k_rows(centroids @ centroids.T, min(PROBES, clusters))

    indices = np.zeros((n, k), dtype=np.int64)
    dists = np.ones((n, k), dtype=np.float32)
    for c in range(clusters):
        ctx.check("the neighbour graph")
        q_ids = queries[c]
        if not len(q_ids):
            continue
        cand = np.unique(np.concatenate([members[p] for p in probes[c]]))
        if len(cand) < k:  # tiny inputs: compare with everything
            cand = np.arange(n)
        xc = x[cand]
        for start in range(0, len(q_ids), QUERY_BLOCK):
            q = q_ids[start : start + QUERY_BLOCK]
            sims = x[q] @ xc.T
            own = np.searchsorted(cand, q)
            hit = own < len(cand)
            hit[hit] = cand[own[hit]] == q[hit]
            sims[np.flatnonzero(hit), own[hit]] = np.inf  # itself first
            top = top_k_rows(sims, k)
            indices[q] = cand[top]
            dists[q] = np.clip(1.0 - np.take_along_axis(sims, top, axis=1), 0.0, 2.0)
        if c % 16 == 0:
            ctx.progress(0.15 + 0.85 * c / clusters, f"neighbour graph: cluster {c:,}/{clusters:,}")
    dists[:, 0] = 0.0
    return indices, dists
