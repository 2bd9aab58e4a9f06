"""The k-NN graph of many rows by NN-descent, one iteration at a time.

pynndescent's `NNDescent` runs its random-projection forest and every NN-descent iteration in
one compiled call: minutes on a whole vocabulary with no progress and no way to stop it. Here
the same kernels (umap-learn's own method: pynndescent's forest, heap, candidate building and
local join with its dot-product kernel for unit rows) are driven from Python, as its
`nn_descent_internal` drives them: the forest, the initial graph, then one iteration per call on
a workspace kept between them, with progress and a cancel check in between and pynndescent's
stopping rule (at most DELTA · k · n neighbours changed in an iteration).
"""

from __future__ import annotations

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext

DELTA = 0.001  # pynndescent's stopping threshold
MAX_DEPTH = 200  # pynndescent's max_rptree_depth
BLOCK = 16384  # rows per local-join block (pynndescent's)


def iterations(n: int) -> int:
    """At most this many NN-descent iterations (pynndescent's default)."""
    return max(5, int(round(np.log2(max(n, 2)))))


def trees(n: int) -> int:
    """Random-projection trees that seed the graph (pynndescent's default)."""
    return max(3, min(12, int(round(2.0 * np.log10(max(n, 2))))))


def _workspace(n: int, k: int, candidates: int, threads: int) -> dict[str, np.ndarray]:
    """The arrays an iteration works in, sized as `nn_descent_internal` sizes them."""
    per_thread = int((candidates**2 + candidates * (candidates - 1) / 2) * BLOCK / threads) + 1024
    sorted_shape = (threads, 2 * per_thread, 3) if threads > 1 else (1, 1, 3)
    return {
        "updates": np.empty((threads, per_thread, 3), dtype=np.float32),
        "counts": np.zeros(threads, dtype=np.int32),
        "sorted": np.empty(sorted_shape, dtype=np.float32),
        "offsets": np.zeros((threads, threads + 1), dtype=np.int64),
        "new_ids": np.full((n, candidates), -1, dtype=np.int32),
        "new_priority": np.full((n, candidates), np.inf, dtype=np.float32),
        "old_ids": np.full((n, candidates), -1, dtype=np.int32),
        "old_priority": np.full((n, candidates), np.inf, dtype=np.float32),
        "active": np.ones(n, dtype=np.uint8),
        "reverse_dst": np.empty(n * k, dtype=np.int32),
        "reverse_src": np.empty(n * k, dtype=np.int32),
        "bounds": np.zeros((threads, threads + 1), dtype=np.int64),
    }


def knn_descent(
    x: np.ndarray, k: int, seed: int = 0, ctx: JobContext = NULL_CONTEXT
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest rows of every unit-length row of `x` by cosine, itself first: indices [n, k]
    int64 (-1 where fewer were found) and cosine distances [n, k] float32. Progress 0..1;
    cancel checked between the forest, the initial graph and each iteration."""
    import numba

    from explorer.core.map.projection import import_pynndescent

    import_pynndescent()  # (sets numba's cache folder first)
    from pynndescent.distances import alternative_dot
    from pynndescent.hybrid_forest import make_hybrid_leaf_array
    from pynndescent.kernels import KERNEL_ALT_DOT
    from pynndescent.pynndescent_ import init_random, init_rp_tree, process_candidates
    from pynndescent.utils import build_candidates_owner, deheap_sort, make_heap

    what = "the neighbour graph"
    data = np.ascontiguousarray(x, dtype=np.float32)
    n = len(data)
    k = min(k, n)
    rng = np.random.RandomState(seed)
    rng_state = rng.randint(np.iinfo(np.int32).min, np.iinfo(np.int32).max, 3).astype(np.int64)
    dist = alternative_dot  # -log2(cosine similarity) on unit rows
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
    graph = make_heap(n, k)
    init_rp_tree(data, dist, graph, leaves, n_threads=threads)
    del leaves
    init_random(k, data, graph, dist, rng_state)
    candidates = min(60, k)
    w = _workspace(n, k, candidates, threads)
    for it in range(total):
        ctx.check(what)
        ctx.progress(0.2 + 0.8 * it / total, f"neighbour graph: NN-descent iteration {it + 1}")
        new, old = build_candidates_owner(
            graph, candidates, rng_state, threads, w["new_ids"], w["new_priority"],
            w["old_ids"], w["old_priority"], w["active"], w["reverse_dst"], w["reverse_src"],
            w["bounds"],
        )  # fmt: skip
        changed = process_candidates(
            data, dist, graph, new, old, n // BLOCK, BLOCK, threads, w["updates"],
            w["counts"], w["sorted"], w["offsets"], KERNEL_ALT_DOT,
        )  # fmt: skip
        if changed <= DELTA * k * n:
            break
    del w
    ctx.check(what)
    found, alt = deheap_sort(graph[0], graph[1])
    # itself first, then its k - 1 nearest others (as pynndescent's `neighbor_graph`)
    indices = np.empty((n, k), dtype=np.int64)
    dists = np.zeros((n, k), dtype=np.float32)
    indices[:, 0] = np.arange(n)
    indices[:, 1:] = found[:, : k - 1]
    dists[:, 1:] = np.clip(1.0 - np.exp2(-alt[:, : k - 1].astype(np.float64)), 0.0, 2.0)
    ctx.progress(1.0, "neighbour graph")
    return indices, dists
