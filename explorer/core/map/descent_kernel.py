"""pynndescent's NN-descent steps for unit rows, in functions compiled once into numba's disk
cache (see `explorer.core.map.descent`; `explorer.core.map.umap.configure_numba_cache` sets the
folder before this module is imported). pynndescent compiles its construction kernels afresh in
every process, and its iteration loop cannot be cached (it prints): that cost tens of seconds
before the first iteration of every whole-vocabulary map.

`iteration` is one pass of pynndescent's `nn_descent_internal` (candidates by the owner of each
block of rows, then the local join with its dot-product kernel), on a workspace kept from one
iteration to the next as that loop keeps it.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from pynndescent.distances import alternative_dot
from pynndescent.kernels import KERNEL_ALT_DOT
from pynndescent.pynndescent_ import init_random, init_rp_tree, process_candidates
from pynndescent.utils import build_candidates_owner, deheap_sort

BLOCK = 16384  # rows per local-join block (pynndescent's)


@njit(cache=True)
def first_graph(graph, data, leaves, k, rng_state, n_threads):
    """The graph seeded from the forest's leaves, then random rows where it has too few."""
    init_rp_tree(data, alternative_dot, graph, leaves, n_threads)
    init_random(k, data, graph, alternative_dot, rng_state)


@njit(cache=True)
def workspace(n, k, max_candidates, n_threads):
    """The arrays an iteration works in (the sizes `nn_descent_internal` gives them)."""
    per_thread = (
        int((max_candidates**2 + max_candidates * (max_candidates - 1) / 2) * BLOCK / n_threads)
        + 1024
    )
    updates = np.empty((n_threads, per_thread, 3), dtype=np.float32)
    counts = np.zeros(n_threads, dtype=np.int32)
    if n_threads > 1:
        sorted_updates = np.empty((n_threads, 2 * per_thread, 3), dtype=np.float32)
    else:
        sorted_updates = np.empty((1, 1, 3), dtype=np.float32)
    offsets = np.zeros((n_threads, n_threads + 1), dtype=np.int64)
    new_ids = np.full((n, max_candidates), -1, dtype=np.int32)
    new_priority = np.full((n, max_candidates), np.inf, dtype=np.float32)
    old_ids = np.full((n, max_candidates), -1, dtype=np.int32)
    old_priority = np.full((n, max_candidates), np.inf, dtype=np.float32)
    active = np.ones(n, dtype=np.uint8)
    reverse_dst = np.empty(n * k, dtype=np.int32)
    reverse_src = np.empty(n * k, dtype=np.int32)
    bounds = np.zeros((n_threads, n_threads + 1), dtype=np.int64)
    return (
        updates, counts, sorted_updates, offsets, new_ids, new_priority, old_ids,
        old_priority, active, reverse_dst, reverse_src, bounds,
    )  # fmt: skip


@njit(cache=True)
def iteration(graph, data, rng_state, max_candidates, n_threads, work):
    """One NN-descent iteration; returns how many neighbours it changed."""
    (
        updates, counts, sorted_updates, offsets, new_ids, new_priority, old_ids,
        old_priority, active, reverse_dst, reverse_src, bounds,
    ) = work  # fmt: skip
    new, old = build_candidates_owner(
        graph, max_candidates, rng_state, n_threads, new_ids, new_priority, old_ids,
        old_priority, active, reverse_dst, reverse_src, bounds,
    )  # fmt: skip
    return process_candidates(
        data, alternative_dot, graph, new, old, data.shape[0] // BLOCK, BLOCK, n_threads,
        updates, counts, sorted_updates, offsets, KERNEL_ALT_DOT,
    )  # fmt: skip


@njit(cache=True)
def sorted_graph(indices, dists):
    return deheap_sort(indices, dists)
