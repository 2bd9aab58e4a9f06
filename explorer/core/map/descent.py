"""The k-NN graph of many rows by NN-descent, one iteration at a time.

pynndescent's `NNDescent` runs its random-projection forest and every NN-descent iteration in
one compiled call: minutes on a whole vocabulary with no progress and no way to stop it. Here
the same kernels (umap-learn's own method, pynndescent's forest, heap and local join with its
dot-product kernel for unit rows) are driven from Python: the forest, the initial graph, then
one iteration per call, with progress and a cancel check between them and pynndescent's
stopping rule (fewer than DELTA · k · n new neighbours in an iteration). The compiled steps
(`descent_kernel`) are kept in numba's disk cache, which pynndescent does not do for them.
"""

from __future__ import annotations

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext

DELTA = 0.001  # pynndescent's stopping threshold
MAX_DEPTH = 200  # pynndescent's max_rptree_depth


def iterations(n: int) -> int:
    """At most this many NN-descent iterations (pynndescent's default)."""
    return max(5, int(round(np.log2(max(n, 2)))))


def trees(n: int) -> int:
    """Random-projection trees that seed the graph (pynndescent's default)."""
    return max(3, min(12, int(round(2.0 * np.log10(max(n, 2))))))


def knn_descent(
    x: np.ndarray, k: int, seed: int = 0, ctx: JobContext = NULL_CONTEXT
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest rows of every unit-length row of `x` by cosine, itself first: indices [n, k]
    int64 (-1 where fewer were found) and cosine distances [n, k] float32. Progress 0..1;
    cancel checked between the forest, the initial graph and each iteration."""
    import numba

    from explorer.core.map.projection import import_pynndescent

    import_pynndescent()  # (sets numba's cache folder first)
    from pynndescent import utils
    from pynndescent.hybrid_forest import make_hybrid_leaf_array

    from explorer.core.map import descent_kernel as kernel

    what = "the neighbour graph"
    data = np.ascontiguousarray(x, dtype=np.float32)
    n = len(data)
    k = min(k, n)
    rng = np.random.RandomState(seed)
    rng_state = rng.randint(np.iinfo(np.int32).min, np.iinfo(np.int32).max, 3).astype(np.int64)
    total = iterations(n)

    ctx.progress(0.0, f"neighbour graph: random projection trees over {n:,} rows")
    leaves = make_hybrid_leaf_array(
        data,
        trees(n),
        max(60, min(256, 5 * k)),
        int(rng.randint(0, 2**62, dtype=np.int64)),
        angular=True,
        max_depth=MAX_DEPTH,
    )
    ctx.check(what)
    ctx.progress(0.1, "neighbour graph: first neighbours from the trees")
    threads = numba.get_num_threads()
    graph = utils.make_heap(n, k)
    kernel.first_graph(graph, data, leaves, k, rng_state, threads)
    del leaves
    candidates = min(60, k)
    work = kernel.workspace(n, k, candidates, threads)
    for it in range(total):
        ctx.check(what)
        ctx.progress(0.2 + 0.8 * it / total, f"neighbour graph: NN-descent iteration {it + 1}")
        if kernel.iteration(graph, data, rng_state, candidates, threads, work) <= DELTA * k * n:
            break
    del work
    ctx.check(what)
    found, alt = kernel.sorted_graph(graph[0], graph[1])
    # itself first, then its k - 1 nearest others (as pynndescent's `neighbor_graph`)
    indices = np.empty((n, k), dtype=np.int64)
    dists = np.zeros((n, k), dtype=np.float32)
    indices[:, 0] = np.arange(n)
    indices[:, 1:] = found[:, : k - 1]
    # pynndescent's distance on unit rows is -log2(cosine similarity)
    dists[:, 1:] = np.clip(1.0 - np.exp2(-alt[:, : k - 1].astype(np.float64)), 0.0, 2.0)
    ctx.progress(1.0, "neighbour graph")
    return indices, dists
