"""The k-NN graph of many rows by NN-descent, one iteration at a time.

umap-learn's own method (pynndescent): a random-projection forest gives each row a first list
of neighbours, then each iteration compares the neighbours of every row's neighbours with each
other (the local join) and keeps the closer ones, until few change. The compiled steps are in
`explorer.core.map.descent_kernel` (cached on disk); here they are driven from Python, with
progress and a cancel check between the forest, the first lists and each iteration, and
pynndescent's stopping rule (at most DELTA · k · n neighbours changed in an iteration).
"""

from __future__ import annotations

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext

# Stop once an iteration changes at most this share of the neighbours (pynndescent: 0.001):
# on Gemma 3 the last three iterations it would add raise recall@14 by 0.0015 for 2 s
DELTA = 0.004
MAX_DEPTH = 200  # pynndescent's max_rptree_depth
BLOCK = 8192  # rows per local join: its found pairs are held in memory at once
SKETCH_DIMS = 64  # the forest's upper levels split rows by a random projection this wide
CACHED_BYTES = 8 << 20  # nodes whose rows take fewer bytes than this are split by full rows


def iterations(n: int) -> int:
    """At most this many NN-descent iterations (pynndescent's default)."""
    return max(5, int(round(np.log2(max(n, 2)))))


def trees(n: int) -> int:
    """Random-projection trees that seed the graph (pynndescent's default)."""
    return max(3, min(12, int(round(2.0 * np.log10(max(n, 2))))))


def _sketch(data: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """The rows' random projection to SKETCH_DIMS dimensions and the node size from which the
    forest splits by it (rows of larger nodes come from memory, not the caches, at every
    level: far fewer bytes there). Narrow rows are their own sketch."""
    n, dim = data.shape
    if dim <= 2 * SKETCH_DIMS:
        return data, n + 1
    basis = rng.standard_normal((dim, SKETCH_DIMS)).astype(np.float32)
    return np.ascontiguousarray(data @ basis), max(1024, CACHED_BYTES // (4 * dim))


def knn_descent(
    x: np.ndarray, k: int, seed: int = 0, ctx: JobContext = NULL_CONTEXT
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest rows of every unit-length row of `x` by cosine, itself first: indices [n, k]
    int64 (-1 where fewer were found) and cosine distances [n, k] float32. Progress 0..1;
    cancel checked between the forest, the initial graph and each iteration."""
    import numba

    from explorer.core.map.umap import configure_numba_cache

    configure_numba_cache()
    from explorer.core.map import descent_kernel as kernel

    what = "the neighbour graph"
    data = np.ascontiguousarray(x, dtype=np.float32)
    n = len(data)
    k = min(k, n)
    rng = np.random.default_rng(seed)
    total = iterations(n)
    threads = numba.get_num_threads()

    ctx.progress(0.0, f"neighbour graph: random projection trees over {n:,} rows")
    seeds = rng.integers(1, 2**62, trees(n), dtype=np.int64)
    sketch, full_below = _sketch(data, rng)
    order, bounds = kernel.forest(data, sketch, full_below, len(seeds), max(60, min(256, 5 * k)),
                                  MAX_DEPTH, seeds)  # fmt: skip
    del sketch
    ctx.check(what)
    ctx.progress(0.1, "neighbour graph: first neighbours from the trees")
    ids = np.full((n, k), -1, dtype=np.int32)
    keys = np.full((n, k), np.inf, dtype=np.float32)
    flags = np.zeros((n, k), dtype=np.uint8)
    for tree in range(len(seeds)):
        kernel.init_from_tree(data, order[tree], bounds[tree], ids, keys, flags)
    del order, bounds
    kernel.fill_random(data, ids, keys, flags, int(rng.integers(1, 2**62)))

    width = min(60, k)
    new_ids, old_ids = np.empty((n, width), np.int32), np.empty((n, width), np.int32)
    new_pri, old_pri = np.empty((n, width), np.float32), np.empty((n, width), np.float32)
    scratch = np.empty((n, width), np.uint8)
    block = min(BLOCK, n)
    capacity = -(-block // threads) * (width * (width - 1) // 2 + width * width)
    pairs = np.empty((threads, capacity, 2), np.int32)
    found = np.empty((threads, capacity), np.float32)
    counts = np.zeros(threads, np.int64)
    for it in range(total):
        ctx.check(what)
        ctx.progress(0.2 + 0.8 * it / total, f"neighbour graph: NN-descent iteration {it + 1}")
        kernel.candidates(ids, flags, new_ids, new_pri, old_ids, old_pri, scratch,
                          int(rng.integers(1, 2**62)), threads)  # fmt: skip
        changed = 0
        for start in range(0, n, block):
            end = min(n, start + block)
            kernel.join(data, keys, new_ids, old_ids, start, end, pairs, found, counts)
            changed += kernel.apply(pairs, found, counts, ids, keys, flags, threads)
        if changed <= DELTA * k * n:
            break
    ctx.check(what)
    # itself first, then its k - 1 nearest others (as pynndescent's `neighbor_graph`)
    nearest = np.argsort(keys, axis=1, kind="stable")[:, : k - 1]
    indices = np.empty((n, k), dtype=np.int64)
    dists = np.zeros((n, k), dtype=np.float32)
    indices[:, 0] = np.arange(n)
    indices[:, 1:] = np.take_along_axis(ids, nearest, axis=1)
    dists[:, 1:] = np.clip(np.take_along_axis(keys, nearest, axis=1), 0.0, 2.0)
    ctx.progress(1.0, "neighbour graph")
    return indices, dists
