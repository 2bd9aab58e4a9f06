"""2-D layouts of embedding rows: PCA, or UMAP (cosine) started from the PCA layout.

`project(vectors, params, ctx)` returns the final coordinates, reporting progress through `ctx`
and checking it for a cancel between stages, between neighbour blocks and between UMAP epochs
(`explorer.core.context`; it then raises `Cancelled`). Up to REFINE_MAX points, a last stage
(`refine_neighbours`) moves points that UMAP left among strangers beside their true neighbours.

The UMAP layout itself is `explorer.core.map.umap` (the same algorithm as umap-learn, fed with
our exact k-NN, its one numba kernel compiled once into the user cache): a fresh process draws
a 500-point map in about a second instead of paying umap-learn's 6 s of compilation.
`warm_up()` loads those kernels in the background so that the first map in the window does
not wait for them either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.limits import MAX_EPOCHS, MAX_SEED, check_int
from explorer.core.map.pca import pca_2d, principal_components
from explorer.core.map.refine import REFINE_K, REFINE_MAX, refine_neighbors
from explorer.core.map.umap import configure_numba_cache, numba_cache_dir
from explorer.core.ranking import top_k_rows

__all__ = [
    "configure_numba_cache",
    "numba_cache_dir",
    "pca_2d",
    "principal_components",
    "refine_neighbors",
]

METHODS = ("umap", "pca")
MAX_NEIGHBORS = 200
# Exact k-NN costs n² · d: 0.25 s for 2,000 × 4096, 6 s for 10,000 × 4096 on 2 cores.
EXACT_KNN_MAX = 12_000


@dataclass(frozen=True)
class ProjectionParams:
    method: str = "umap"
    n_neighbors: int = 15
    min_dist: float = 0.05
    seed: int = 42
    n_epochs: int | None = None  # None: umap-learn's default (500 below 10,000 points, else 200)
    refine: bool = True  # move points next to their true neighbours after UMAP (≤ REFINE_MAX)

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ExplorerError(
                f"unknown projection method {self.method!r}; use one of {', '.join(METHODS)}"
            )
        if not 2 <= self.n_neighbors <= MAX_NEIGHBORS:
            raise ExplorerError(
                f"n_neighbors must be between 2 and {MAX_NEIGHBORS}, not {self.n_neighbors}"
            )
        if not 0.0 <= self.min_dist <= 1.0:
            raise ExplorerError(f"min_dist must be between 0 and 1, not {self.min_dist}")
        if self.n_epochs is not None:
            check_int(self.n_epochs, 1, MAX_EPOCHS, "n_epochs")
        check_int(self.seed, 0, MAX_SEED, "seed")


# -- numba set-up ----------------------------------------------------------------------------


def warm_up(seed: int = 0) -> float:
    """Load (or compile, the first time) the layout kernels with a tiny fit; returns seconds."""
    import time

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((60, 8)).astype(np.float32)
    project(x, ProjectionParams(n_neighbors=5, n_epochs=5, seed=seed))
    pca_2d(prepare(rng.standard_normal((200, 64)).astype(np.float32)))  # the randomized path
    import sklearn.cluster  # noqa: F401 - the map pane's clusters; imports hold the GIL

    return time.perf_counter() - start


# -- stages ----------------------------------------------------------------------------------


def prepare(vectors: np.ndarray) -> np.ndarray:
    """Rows as float32, non-finite values zeroed, scaled to unit length (cosine geometry).

    All-zero rows stay zero: they are equally far from everything."""
    x = np.array(vectors, dtype=np.float32, copy=True)
    if x.ndim != 2:
        x = x.reshape(len(x), -1) if x.size else np.zeros((len(x), 0), dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    if not np.isfinite(norms).all():  # rare (or overflow): only then scan for bad values
        x[~np.isfinite(x)] = 0.0
        norms = np.sqrt(np.einsum("ij,ij->i", x.astype(np.float64), x.astype(np.float64)))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
    x *= scale[:, None]
    return x


def knn_cosine(
    x: np.ndarray,
    k: int,
    ctx: JobContext = NULL_CONTEXT,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest neighbours of every prepared row (itself first), by cosine distance.

    Exact up to EXACT_KNN_MAX points: blocks of matrix products (BLAS, no GIL held, so the GUI
    stays responsive; cancellation checked between blocks). Above that the n² cost grows past
    what NN-descent (umap-learn's own method, explorer.core.map.descent) needs, so that is used
    instead, with progress and cancel between its iterations."""
    n = len(x)
    k = min(k, n)
    if n > EXACT_KNN_MAX:
        from explorer.core.map.descent import knn_descent

        return knn_descent(x, k, seed, ctx)
    indices = np.empty((n, k), dtype=np.int64)
    dists = np.empty((n, k), dtype=np.float32)
    block = max(64, min(2048, 2**24 // max(n, 1)))
    for start in range(0, n, block):
        ctx.check()
        stop = min(n, start + block)
        rows = np.arange(start, stop)
        sims = x[start:stop] @ x.T
        sims[rows - start, rows] = np.inf  # itself first, even among duplicates
        top = top_k_rows(sims, k)
        indices[start:stop] = top
        dists[start:stop] = np.clip(1.0 - np.take_along_axis(sims, top, axis=1), 0.0, 2.0)
        ctx.progress(stop / n, f"nearest neighbours: {stop / n:.0%}")
    dists[:, 0] = 0.0
    return indices, dists


def _tiny_layout(x: np.ndarray, seed: int) -> np.ndarray:
    """Layouts for inputs too small for UMAP: PCA, or fixed positions for 1–2 points."""
    n = len(x)
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32)
    if n == 2:
        return np.array([[-1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    return pca_2d(x, seed)


def umap_init(preview: np.ndarray, seed: int) -> np.ndarray:
    """The PCA preview as UMAP's start, with tiny noise so no axis is constant (it is rescaled)."""
    rng = np.random.default_rng(seed)
    spread = float(np.abs(preview).max()) or 1.0
    return (preview + rng.normal(scale=1e-4 * spread, size=preview.shape)).astype(np.float32)


def umap_layout(
    x: np.ndarray,
    knn: tuple[np.ndarray, np.ndarray],
    init: np.ndarray,
    params: ProjectionParams,
    ctx: JobContext = NULL_CONTEXT,
    epoch: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """UMAP (explorer.core.map.umap) from the k-NN graph, starting at `init`; cancellable between
    epochs."""
    from explorer.core.map import umap as layout  # numba, once a layout is wanted

    def on_epoch(done: int, total: int) -> None:
        ctx.check()
        if epoch is not None and (done % 5 == 0 or done == total):
            epoch(done, total)

    graph = layout.fuzzy_graph(*knn)
    if len(graph[0]) == 0:
        return np.asarray(init, dtype=np.float32)
    coords = layout.optimize(
        init,
        graph,
        min_dist=params.min_dist,
        n_epochs=params.n_epochs,
        # more repulsion sharpens small neighbourhoods at the cost of slower epochs, so only
        # where epochs are cheap (demo `cat`, 500 points, after refine_neighbours:
        # trustworthiness 0.909 with 5, 0.915 with 10, 0.916 with 20 at 1.3× the time)
        negative_sample_rate=10 if len(x) <= 5000 else 5,
        seed=params.seed,
        epoch=on_epoch,
    )
    if not np.isfinite(coords).all():
        raise ExplorerError("UMAP produced non-finite coordinates; try method pca")
    return coords


def project(
    vectors: np.ndarray,
    params: ProjectionParams | None = None,
    ctx: JobContext = NULL_CONTEXT,
) -> np.ndarray:
    """The layout [n, 2] of `vectors`: PCA, or UMAP started from it."""
    params = params or ProjectionParams()
    ctx.check()
    x = prepare(vectors)
    n = len(x)
    ctx.progress(0.02, f"{n} points × {x.shape[1] if x.ndim == 2 else 0} dims")
    ctx.check()
    preview = _tiny_layout(x, params.seed) if n <= 2 else pca_2d(x, params.seed)
    ctx.progress(0.08, "PCA preview")
    if params.method == "pca" or n < 8 or not _has_distinct_rows(x, 4):
        # UMAP needs a few distinct points to build a neighbour graph
        ctx.progress(
            1.0, "PCA layout" if params.method == "pca" else "too few points for UMAP: PCA"
        )
        return preview
    k = min(params.n_neighbors, n)  # as in umap-learn, each point is its own first neighbour

    # The neighbourhood's shared direction dominates every cosine inside it; without it the
    # graph follows the differences between its tokens (demo `cat`, 500 points: trustworthiness
    # against the raw cosine 0.865 → 0.885).
    local = prepare(x - x.mean(axis=0, dtype=np.float64).astype(np.float32))
    knn = knn_cosine(local, k, ctx.part(0.08, 0.22), params.seed)
    ctx.progress(0.3, f"{k} nearest neighbours of {n} points")
    ctx.check()

    def on_epoch(done: int, total: int) -> None:
        ctx.progress(0.3 + 0.68 * done / max(total, 1), f"UMAP epoch {done}/{total}")

    coords = umap_layout(local, knn, umap_init(preview, params.seed), params, ctx, on_epoch)
    if params.refine and 3 * REFINE_K <= n <= REFINE_MAX:
        ctx.progress(0.98, "UMAP layout; placing points beside their neighbours")
        coords = refine_neighbors(coords, x, rounds=2 if n <= 1000 else 1, ctx=ctx)
    ctx.progress(1.0, "UMAP layout")
    return coords


def _has_distinct_rows(x: np.ndarray, m: int) -> bool:
    """Whether `x` has at least `m` different rows; stops as soon as it has seen them.
    (np.unique(x, axis=0) sorted every row: 50-90 ms holding the GIL for 500 × 4096, which the
    window waited out while a map was made.)"""
    seen: set[bytes] = set()
    for row in x:
        seen.add(row.tobytes())
        if len(seen) >= m:
            return True
    return False


def align(
    new_coords: np.ndarray,
    new_ids: Sequence[int] | np.ndarray,
    old_coords: np.ndarray,
    old_ids: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """Rotate/reflect, scale and shift a new layout onto an old one over their shared ids
    (orthogonal Procrustes), so that a re-projected map keeps its shape. Needs ≥ 3 shared ids."""
    new_coords = np.asarray(new_coords, dtype=np.float64)
    old_pos = {int(i): j for j, i in enumerate(old_ids)}
    pairs = [(j, old_pos[int(i)]) for j, i in enumerate(new_ids) if int(i) in old_pos]
    if len(pairs) < 3:
        return new_coords.astype(np.float32)
    a = new_coords[[p[0] for p in pairs]]
    b = np.asarray(old_coords, dtype=np.float64)[[p[1] for p in pairs]]
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    a0, b0 = a - mu_a, b - mu_b
    norm_a = np.linalg.norm(a0)
    if norm_a == 0 or np.linalg.norm(b0) == 0:
        return (new_coords - mu_a + mu_b).astype(np.float32)
    u, s, vt = np.linalg.svd(a0.T @ b0)
    rotation = u @ vt
    scale = s.sum() / norm_a**2
    return ((new_coords - mu_a) @ rotation * scale + mu_b).astype(np.float32)


def trustworthiness(vectors: np.ndarray, coords: np.ndarray, n_neighbors: int = 10) -> float:
    """scikit-learn's trustworthiness with the cosine metric in the original space."""
    from sklearn.manifold import trustworthiness as tw

    return float(tw(prepare(vectors), coords, n_neighbors=n_neighbors, metric="cosine"))
