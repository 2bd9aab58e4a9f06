"""UMAP's layout stage, written for exact k-NN input and compiled once into numba's disk cache.

umap-learn compiles its fuzzy-set and SGD kernels in every new process (about 6 s, several of
them without `cache=True`), which made a one-off `project` command slow. This module is the
same objective (McInnes et al.; umap-learn 0.5's `fuzzy_simplicial_set`,
`simplicial_set_embedding` and `optimize_layout_euclidean`, Euclidean output) for our case:
the neighbour graph is built with numpy from the k-NN lists, and the one hot loop, an SGD
epoch, is a small `cache=True` numba kernel that later processes load from the user cache in
milliseconds. It runs on every core, each point moved by one thread only (see
`umap_kernel.sgd_epochs`), so the layout is the same on any number of cores; and without the
GIL, a few epochs per call, so callers can report progress and cancel between calls while the
GUI thread keeps running.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import numpy as np

SMOOTH_K_TOLERANCE = 1e-5
MIN_K_DIST_SCALE = 1e-3


def numba_cache_dir() -> str:
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("embedding-explorer"), "numba")


def configure_numba_cache() -> str:
    """Keep numba's compiled code in the user cache so later processes start fast (the package
    folder may not be writable). Call before numba compiles anything."""
    path = os.environ.setdefault("NUMBA_CACHE_DIR", numba_cache_dir())
    os.makedirs(path, exist_ok=True)
    if "numba" in sys.modules:  # numba reads its environment at import and at each compile
        from numba.core import config

        config.reload_config()
    return path


def find_ab_params(spread: float = 1.0, min_dist: float = 0.1) -> tuple[float, float]:
    """a, b of the curve 1 / (1 + a d^(2b)) closest (least squares) to UMAP's target membership
    (1 up to min_dist, then exp(-(d - min_dist) / spread)): umap-learn's `find_ab_params`,
    solved by Levenberg–Marquardt here instead of importing scipy."""
    x = np.linspace(0, spread * 3, 300)[1:]  # x = 0 fits exactly for any a, b
    y = np.where(x < min_dist, 1.0, np.exp(-(x - min_dist) / spread))
    log_x = np.log(x)
    p, damping = np.array([1.0, 1.0]), 1e-3

    def residual(p: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + p[0] * x ** (2 * p[1])) - y

    cost = float(residual(p) @ residual(p))
    for _ in range(200):
        xb = x ** (2 * p[1])
        f = 1.0 / (1.0 + p[0] * xb)
        jac = np.stack([-xb * f * f, -2.0 * p[0] * xb * log_x * f * f], axis=1)
        r = f - y
        jtj, jtr = jac.T @ jac, jac.T @ r
        step = np.linalg.solve(jtj + damping * np.diag(np.diag(jtj)), -jtr)
        trial = p + step
        trial_cost = float(residual(trial) @ residual(trial)) if trial[0] > 0 else np.inf
        if trial_cost < cost:
            converged = cost - trial_cost < 1e-15 * max(cost, 1e-300)
            p, cost, damping = trial, trial_cost, damping / 3
            if converged or np.abs(step).max() < 1e-12:
                break
        else:
            damping *= 4
            if damping > 1e12:
                break
    return float(p[0]), float(p[1])


def smooth_knn_dist(dists: np.ndarray, n_iter: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Per-point sigma and rho (distance to the nearest non-identical neighbour) such that the
    memberships of each point's k neighbours sum to log2(k); local_connectivity 1, bandwidth 1.
    A vectorised form of umap-learn's binary search. dists: [n, k], sorted, itself first."""
    n, k = dists.shape
    dists = dists.astype(np.float64)
    target = np.log2(k)
    nonzero = dists > 0
    has = nonzero.any(axis=1)
    rho = np.where(has, np.take_along_axis(dists, nonzero.argmax(axis=1)[:, None], 1)[:, 0], 0)
    lo, hi, mid = np.zeros(n), np.full(n, np.inf), np.ones(n)
    active = np.ones(n, dtype=bool)
    shifted = np.maximum(dists[:, 1:] - rho[:, None], 0.0)
    for _ in range(n_iter):
        idx = np.flatnonzero(active)
        if not len(idx):
            break
        psum = np.exp(-shifted[idx] / mid[idx, None]).sum(axis=1)
        done = np.abs(psum - target) < SMOOTH_K_TOLERANCE
        above = psum > target
        hi[idx] = np.where(above & ~done, mid[idx], hi[idx])
        lo[idx] = np.where(~above & ~done, mid[idx], lo[idx])
        grow = ~above & ~done & np.isinf(hi[idx])
        new_mid = np.where(grow, mid[idx] * 2, (lo[idx] + hi[idx]) / 2)
        mid[idx] = np.where(done, mid[idx], new_mid)
        active[idx[done]] = False
    floor = MIN_K_DIST_SCALE * np.where(has, dists.mean(axis=1), dists.mean())
    return np.maximum(mid, floor), rho


def fuzzy_graph(
    knn_indices: np.ndarray, knn_dists: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UMAP's fuzzy simplicial set as sorted COO edges (head, tail, weight), fuzzy union of
    each point's membership with its transpose: w_ij = p_ij + p_ji - p_ij p_ji."""
    n, k = knn_indices.shape
    sigma, rho = smooth_knn_dist(knn_dists)
    d = knn_dists.astype(np.float64)
    p = np.exp(-np.maximum(d - rho[:, None], 0.0) / sigma[:, None])
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = knn_indices.reshape(-1).astype(np.int64)
    p = p.reshape(-1)
    keep = (cols >= 0) & (cols != rows)  # itself: membership 0
    rows, cols, p = rows[keep], cols[keep], p[keep]
    # every membership and its transpose; an edge found from both ends appears twice
    keys = np.concatenate([rows * n + cols, cols * n + rows])
    p = np.concatenate([p, p])
    order = np.argsort(keys, kind="stable")
    keys, p = keys[order], p[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(first)
    # k-NN lists hold no repeats, so an edge appears once or twice: p, or p + q - p q
    twice = np.diff(starts, append=len(p)) == 2
    w = np.add.reduceat(p, starts) - np.multiply.reduceat(p, starts) * twice
    edges = keys[starts]
    nz = w > 0
    return (edges[nz] // n).astype(np.int32), (edges[nz] % n).astype(np.int32), w[nz]


EPOCHS_PER_CALL = 10  # epochs per kernel call, progress report and cancellation check
CHUNKS = 16  # runs of edges (by head) laid out in parallel


def default_epochs(n: int) -> int:
    return 500 if n <= 10_000 else 200


def _kernel():
    configure_numba_cache()
    from explorer.core.map import umap_kernel as layout_kernel  # numba: only when a layout runs

    return layout_kernel


def optimize(
    init: np.ndarray,
    graph: tuple[np.ndarray, np.ndarray, np.ndarray],
    min_dist: float,
    n_epochs: int | None = None,
    negative_sample_rate: float = 5.0,
    seed: int = 0,
    epoch: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """UMAP's SGD from `init` [n, 2] over the graph's edges; `epoch(done, total)` is called
    after every EPOCHS_PER_CALL epochs (it may raise to cancel). Returns the layout [n, 2]
    float32."""
    kernel = _kernel()
    n = len(init)
    n_epochs = default_epochs(n) if n_epochs is None else n_epochs
    head, tail, w = graph
    # edges too weak to be sampled even once are dropped, as umap-learn does
    keep = w >= w.max() / (n_epochs if n_epochs > 10 else default_epochs(n))
    head, tail, w = head[keep], tail[keep], w[keep]
    if (np.diff(head) < 0).any():  # the kernel's chunks are runs of heads
        order = np.argsort(head, kind="stable")
        head, tail, w = head[order], tail[order], w[order]
    # float32: these are streamed every epoch; epochs <= MAX_EPOCHS count exactly enough in it
    epochs_per_sample = (w.max() / w).astype(np.float32)
    epochs_per_negative = epochs_per_sample / negative_sample_rate
    next_sample = epochs_per_sample.copy()
    next_negative = epochs_per_negative.copy()
    attract, repel = kernel.coefficient_tables(*find_ab_params(1.0, min_dist))
    lo, hi = init.min(axis=0), init.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    y = np.ascontiguousarray(10.0 * (init - lo) / span, dtype=np.float32)
    # CHUNKS whatever the thread count: the same layout on any number of cores
    state = np.random.default_rng(seed).integers(1, 2**63, CHUNKS).astype(np.uint64)
    bounds = np.searchsorted(head, np.linspace(0, n, CHUNKS + 1)).astype(np.int64)
    snap = np.empty_like(y)
    for first in range(0, n_epochs, EPOCHS_PER_CALL):
        last = min(first + EPOCHS_PER_CALL, n_epochs)
        kernel.sgd_epochs(
            y, snap, head, tail, epochs_per_sample, epochs_per_negative, next_sample,
            next_negative, first, last, n_epochs, attract, repel, state, bounds,
        )  # fmt: skip
        if epoch is not None:
            epoch(last, n_epochs)
    return y
