"""2-D layouts of embedding rows: a PCA preview at once, then UMAP (cosine), as generator jobs.

`project(vectors, params)` is a generator: it yields `Progress` between stages (the first one
carries the PCA preview coordinates) and returns the final coordinates. A caller cancels by
passing `cancelled`, a callable checked between stages, between neighbour blocks and between
UMAP epochs; the job then raises `Cancelled`. Up to REFINE_MAX points, a last stage
(`refine_neighbours`) moves points that UMAP left among strangers beside their true neighbours.

umap-learn is imported lazily (10 s with a cold numba cache): `configure_numba_cache()` points
numba at the user cache directory first, and `warm_up()` compiles the layout code in the
background so that the first real map does not pay for it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from explorer.core.errors import Cancelled, ExplorerError
from explorer.core.limits import MAX_EPOCHS, MAX_SEED, check_int

METHODS = ("umap", "pca")
MAX_NEIGHBORS = 200
# Exact k-NN costs n² · d: 0.25 s for 2,000 × 4096, 6 s for 10,000 × 4096 on 2 cores.
EXACT_KNN_MAX = 12_000
# The neighbour refinement keeps a few n × n arrays (≈ 20 bytes a pair): up to 3,000 points.
REFINE_MAX = 3_000
REFINE_K = 10  # the neighbourhood size the refinement preserves (as trustworthiness measures)

CancelCheck = Callable[[], bool] | None


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


class Progress(NamedTuple):
    """A (text, fraction) pair, as job lanes expect, plus the stage and preview coordinates."""

    message: str
    fraction: float  # overall, 0..1
    stage: str  # "prepare", "preview", "neighbours", "layout", "refine", "done"
    coords: np.ndarray | None = None  # set on the preview step


def _check(cancelled: CancelCheck) -> None:
    if cancelled is not None and cancelled():
        raise Cancelled()


# -- numba / umap set-up ---------------------------------------------------------------------

_import_lock = threading.Lock()


def numba_cache_dir() -> str:
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("embedding-explorer"), "numba")


def configure_numba_cache() -> str:
    """Keep numba's compiled code in the user cache so later processes start fast."""
    path = os.environ.setdefault("NUMBA_CACHE_DIR", numba_cache_dir())
    os.makedirs(path, exist_ok=True)
    import sys

    if "numba" in sys.modules:  # numba reads its environment at import and at each compile
        from numba.core import config

        config.reload_config()
    return path


def import_umap():
    with _import_lock:
        configure_numba_cache()
        import umap  # 1–10 s; only when a UMAP layout is wanted

        _release_gil_in_epochs()
        return umap


def _release_gil_in_epochs() -> None:
    """Let umap-learn's per-epoch kernel run without the GIL (it only touches arrays), so the
    GUI thread is never blocked for a whole epoch (≈ 100 ms at 20,000 points). It is compiled
    in each process, so setting the option before the first fit is enough."""
    try:
        from umap import layouts

        layouts._nb_optimize_layout_euclidean_single_epoch.targetoptions["nogil"] = True
    except (ImportError, AttributeError):  # another umap-learn version: keep its defaults
        pass


def warm_up(seed: int = 0) -> float:
    """Compile umap-learn's numba code with a tiny fit; returns the seconds it took."""
    import time

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((60, 8)).astype(np.float32)
    for _ in project(x, ProjectionParams(n_neighbors=5, n_epochs=5, seed=seed)):
        pass
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


def _flip_signs(components: np.ndarray) -> np.ndarray:
    """Make each component's largest |loading| positive so layouts are deterministic."""
    idx = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(len(components)), idx])
    signs[signs == 0] = 1
    return components * signs[:, None]


_blas_controller = None


def _one_blas_thread():
    global _blas_controller
    try:
        if _blas_controller is None:
            from threadpoolctl import ThreadpoolController

            _blas_controller = ThreadpoolController()
        return _blas_controller.limit(limits=1, user_api="blas")
    except Exception:  # an optional speed-up, never a failure
        import contextlib

        return contextlib.nullcontext()


def _orthonormal(y: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the columns of a tall, thin y through its small Gram matrix
    (np.linalg.qr of a 4096 × 10 block took 20–60 ms here; this takes well under 1 ms)."""
    w, v = np.linalg.eigh((y.T @ y).astype(np.float64))
    keep = w > max(float(w.max()), 0.0) * 1e-10
    if not keep.any():
        return np.zeros((y.shape[0], 1), dtype=np.float32)
    return (y @ (v[:, keep] / np.sqrt(w[keep])).astype(np.float32)).astype(np.float32)


def principal_components(x: np.ndarray, k: int, seed: int = 0, iters: int = 3) -> np.ndarray:
    """Top-k principal axes [k, d] of the rows of x (centred implicitly, never copied).

    Small inputs: exact SVD. Otherwise a randomized range finder with power iterations in
    float32: a handful of [n, d] × [d, k + 8] products, several times cheaper than
    scikit-learn's `randomized_svd` here (which copies, converts and calls LAPACK QR/SVD)."""
    n, d = x.shape
    mean = x.mean(axis=0, dtype=np.float64).astype(np.float32)
    k_eff = min(k, n, d)
    if min(n, d) <= 4 * k + 10:
        centred = x.astype(np.float64) - mean
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        comps = vt[:k_eff]
    else:

        def times(v: np.ndarray) -> np.ndarray:  # (x - mean) @ v
            return x @ v - (mean @ v)[None, :]

        def t_times(u: np.ndarray) -> np.ndarray:  # (x - mean).T @ u
            return x.T @ u - np.outer(mean, u.sum(axis=0))

        omega = np.random.default_rng(seed).standard_normal((d, min(k + 8, n, d)))
        # thin products are memory-bound: one BLAS thread is as fast, and far faster when
        # the cores are busy (the GUI, other lanes, other programs)
        with _one_blas_thread():
            q = _orthonormal(times(omega.astype(np.float32)))
            for _ in range(iters):
                q = _orthonormal(times(_orthonormal(t_times(q))))
            b = t_times(q).T
        _, _, vt = np.linalg.svd(b.astype(np.float64), full_matrices=False)
        comps = vt[:k_eff]
    comps = _flip_signs(np.asarray(comps, dtype=np.float32))
    if k_eff < k:
        comps = np.vstack([comps, np.zeros((k - k_eff, d), dtype=np.float32)])
    return comps


def pca_2d(x: np.ndarray, seed: int = 0) -> np.ndarray:
    """PCA(2) of prepared rows → [n, 2] float32. Works for any n ≥ 0."""
    if len(x) == 0:
        return np.zeros((0, 2), dtype=np.float32)
    comps = principal_components(x, 2, seed)
    mean = x.mean(axis=0, dtype=np.float64).astype(np.float32)
    return (x @ comps.T - mean @ comps.T).astype(np.float32)


def _top_k(sims: np.ndarray, k: int) -> np.ndarray:
    part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def knn_cosine(
    x: np.ndarray,
    k: int,
    cancelled: CancelCheck = None,
    progress: Callable[[float], None] | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest neighbours of every prepared row (itself first), by cosine distance.

    Exact up to EXACT_KNN_MAX points: blocks of matrix products (BLAS, no GIL held, so the GUI
    stays responsive; cancellation checked between blocks). Above that the n² cost grows past
    what NN-descent (umap-learn's own method) needs, so that is used instead."""
    n = len(x)
    k = min(k, n)
    if n > EXACT_KNN_MAX:
        return _knn_descent(x, k, seed)
    indices = np.empty((n, k), dtype=np.int64)
    dists = np.empty((n, k), dtype=np.float32)
    block = max(64, min(2048, 2**24 // max(n, 1)))
    for start in range(0, n, block):
        _check(cancelled)
        stop = min(n, start + block)
        rows = np.arange(start, stop)
        sims = x[start:stop] @ x.T
        sims[rows - start, rows] = np.inf  # itself first, even among duplicates
        top = _top_k(sims, k)
        indices[start:stop] = top
        dists[start:stop] = np.clip(1.0 - np.take_along_axis(sims, top, axis=1), 0.0, 2.0)
        if progress is not None:
            progress(stop / n)
    dists[:, 0] = 0.0
    return indices, dists


def _knn_descent(x: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    import_umap()  # sets the numba cache before pynndescent compiles
    from pynndescent import NNDescent

    index = NNDescent(
        x,
        metric="cosine",
        n_neighbors=k,
        random_state=seed,
        low_memory=True,
        compressed=True,
        verbose=False,
    )
    indices, dists = index.neighbor_graph
    return indices.astype(np.int64), dists.astype(np.float32)


class _EpochWriter:
    """A file for umap-learn's tqdm bar: reports epochs and raises Cancelled between them."""

    def __init__(self, cancelled: CancelCheck, report: Callable[[int, int], None]):
        self.cancelled, self.report = cancelled, report
        self.raised = False

    def write(self, text: str) -> None:
        if self.cancelled is not None and self.cancelled():
            self.raised = True
            raise Cancelled()
        done, _, total = text.strip().partition("/")
        if done.isdigit() and total.isdigit():
            self.report(int(done), int(total))

    def flush(self) -> None:
        pass


def _release_leaked_tqdm_lock() -> None:
    """tqdm's refresh() takes its global write lock without try/finally, so the Cancelled raised
    from our bar's write() leaves it held, and the next bar in any thread would wait forever.
    Release it, but only if this thread really holds it."""
    try:
        from tqdm.std import TqdmDefaultWriteLock, tqdm

        if TqdmDefaultWriteLock.th_lock._is_owned():
            tqdm.get_lock().release()
    except Exception:  # another tqdm version: nothing we can safely do
        pass


def _tiny_layout(x: np.ndarray, seed: int) -> np.ndarray:
    """Layouts for inputs too small for UMAP: PCA, or fixed positions for 1–2 points."""
    n = len(x)
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32)
    if n == 2:
        return np.array([[-1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    return pca_2d(x, seed)


def _umap_init(preview: np.ndarray, seed: int) -> np.ndarray:
    """The PCA preview as UMAP's start, with tiny noise so no axis is constant (it is rescaled)."""
    rng = np.random.default_rng(seed)
    spread = float(np.abs(preview).max()) or 1.0
    return (preview + rng.normal(scale=1e-4 * spread, size=preview.shape)).astype(np.float32)


def umap_layout(
    x: np.ndarray,
    knn: tuple[np.ndarray, np.ndarray],
    init: np.ndarray,
    params: ProjectionParams,
    cancelled: CancelCheck = None,
    epoch: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    umap = import_umap()
    import warnings

    k = knn[0].shape[1]
    writer = _EpochWriter(cancelled, epoch or (lambda d, t: None))
    reducer = umap.UMAP(
        n_neighbors=k,
        min_dist=params.min_dist,
        metric="cosine",
        random_state=params.seed,
        n_epochs=params.n_epochs,
        init=init,
        precomputed_knn=(knn[0], knn[1], None),
        force_approximation_algorithm=True,
        # more repulsion sharpens small neighbourhoods at the cost of slower epochs, so only
        # where epochs are cheap (demo `cat`, 500 points, after refine_neighbours:
        # trustworthiness 0.909 with 5, 0.915 with 10, 0.916 with 20 at 1.3× the time)
        negative_sample_rate=10 if len(x) <= 5000 else 5,
        verbose=False,
        tqdm_kwds={
            "disable": False,
            "file": writer,
            "bar_format": "{n}/{total}\n",
            "mininterval": 0.05,
        },
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n_jobs overridden by random_state; disconnected vertices
        try:
            coords = reducer.fit_transform(x)
        except Cancelled:
            if writer.raised:
                _release_leaked_tqdm_lock()
            raise
    coords = np.asarray(coords, dtype=np.float32)
    if not np.isfinite(coords).all():
        raise ExplorerError("UMAP produced non-finite coordinates; try method pca")
    return coords


def project(
    vectors: np.ndarray,
    params: ProjectionParams | None = None,
    cancelled: CancelCheck = None,
    progress: Callable[[Progress], None] | None = None,
) -> Generator[Progress, None, np.ndarray]:
    """Generator job: yields Progress (the 'preview' step carries PCA coordinates), returns [n, 2].

    Stages that run inside one call (neighbour blocks, UMAP epochs) report through `progress`
    (called on the worker thread) and check `cancelled` as they go."""
    params = params or ProjectionParams()
    _check(cancelled)
    x = prepare(vectors)
    n = len(x)
    yield Progress(f"{n} points × {x.shape[1] if x.ndim == 2 else 0} dims", 0.02, "prepare")
    _check(cancelled)
    preview = _tiny_layout(x, params.seed) if n <= 2 else pca_2d(x, params.seed)
    yield Progress("PCA preview", 0.08, "preview", coords=preview)
    distinct = len(np.unique(x, axis=0)) if n else 0
    if params.method == "pca" or n < 8 or distinct < 4:
        # UMAP needs a few distinct points to build a neighbour graph
        yield Progress(
            "PCA layout" if params.method == "pca" else "too few points for UMAP: PCA", 1.0, "done"
        )
        return preview
    k = min(params.n_neighbors, n)  # as in umap-learn, each point is its own first neighbour

    def on_knn(done: float) -> None:
        if progress is not None:
            progress(Progress(f"nearest neighbours: {done:.0%}", 0.08 + 0.22 * done, "neighbours"))

    # The neighbourhood's shared direction dominates every cosine inside it; without it the
    # graph follows the differences between its tokens (demo `cat`, 500 points: trustworthiness
    # against the raw cosine 0.865 → 0.885).
    local = prepare(x - x.mean(axis=0, dtype=np.float64).astype(np.float32))
    knn = knn_cosine(local, k, cancelled, on_knn, params.seed)
    yield Progress(f"{k} nearest neighbours of {n} points", 0.3, "neighbours")
    _check(cancelled)

    def on_epoch(done: int, total: int) -> None:
        if progress is not None:
            progress(
                Progress(f"UMAP epoch {done}/{total}", 0.3 + 0.68 * done / max(total, 1), "layout")
            )

    coords = umap_layout(local, knn, _umap_init(preview, params.seed), params, cancelled, on_epoch)
    if params.refine and 3 * REFINE_K <= n <= REFINE_MAX:
        yield Progress("UMAP layout; placing points beside their neighbours", 0.98, "refine")
        coords = refine_neighbours(coords, x, rounds=2 if n <= 1000 else 1, cancelled=cancelled)
    yield Progress("UMAP layout", 1.0, "done")
    return coords


def refine_neighbours(
    coords: np.ndarray,
    x: np.ndarray,
    k: int = REFINE_K,
    rounds: int = 2,
    candidates: int = 3,
    cancelled: CancelCheck = None,
) -> np.ndarray:
    """Greedy local repair of a layout: a point whose map neighbours are not its neighbours in
    the space (prepared rows x, cosine) moves beside one of its `candidates` nearest true
    neighbours, if that lowers the trustworthiness penalty: the space rank beyond k of each map
    neighbour, counted for the point itself and for every map neighbourhood it enters or leaves.

    UMAP places weakly related tokens (cosine ≈ 0.2 to their 10th neighbour) at the edge of an
    unrelated cluster; these moves fix that (demo `cat`, 500 points: trustworthiness 0.88 →
    0.91). Worst points first, `rounds` passes; deterministic. O(n²) memory, so n ≤ REFINE_MAX."""
    n = len(x)
    if n <= k + 1:
        return np.asarray(coords, dtype=np.float32)
    rows = np.arange(n)
    sims = x @ x.T
    sims[rows, rows] = -np.inf
    order = np.argsort(-sims, axis=1, kind="stable")
    del sims
    cost = np.empty((n, n), dtype=np.float32)  # cost[i, j]: penalty of j among i's map neighbours
    cost[rows[:, None], order] = np.maximum(np.arange(1, n + 1, dtype=np.float32) - k, 0)[None]
    cost[rows, rows] = 0
    near = order[:, :candidates].copy()
    del order
    y = np.array(coords, dtype=np.float64)
    dist = np.sqrt(((y[:, None, :] - y[None]) ** 2).sum(-1))
    dist[rows, rows] = np.inf

    def map_neighbours(j: np.ndarray) -> np.ndarray:  # sorted k + 1 nearest in the map
        part = np.argpartition(dist[j], k, axis=-1)[..., : k + 1]
        return np.take_along_axis(
            part, np.argsort(np.take_along_axis(dist[j], part, -1), -1, kind="stable"), -1
        )

    nbrs = map_neighbours(rows)
    for _ in range(rounds):
        _check(cancelled)
        penalty = cost[rows[:, None], nbrs[:, :k]].sum(axis=1)
        moved = 0
        for step, i in enumerate(np.argsort(-penalty, kind="stable")):
            if penalty[i] == 0:
                break
            if step % 256 == 255:
                _check(cancelled)
            kth = dist[rows, nbrs[:, k - 1]]
            next_in = dist[rows, nbrs[:, k]]
            holds_i = (nbrs[:, :k] == i).any(axis=1)
            now = cost[i, nbrs[i, :k]].sum()
            best_gain, best = 0.0, None
            for c in near[i]:
                # a spot a quarter of c's nearest-map-neighbour distance from c, on i's side
                away = y[i] - y[c]
                length = float(np.hypot(*away))
                gap = 0.25 * dist[c, nbrs[c, 0]]
                spot = y[c] + (away / length * gap if length > 0 else np.array([gap, 0.0]))
                d_new = np.sqrt(((y - spot) ** 2).sum(axis=1))
                d_new[i] = np.inf
                gain = now - cost[i, np.argpartition(d_new, k - 1)[:k]].sum()
                enter = (d_new < kth) & ~holds_i  # i evicts their k-th neighbour
                gain -= (cost[enter, i] - cost[enter, nbrs[enter, k - 1]]).sum()
                leave = holds_i & (d_new > next_in)  # their (k+1)-th takes i's place
                gain -= (cost[leave, nbrs[leave, k]] - cost[leave, i]).sum()
                if gain > best_gain:
                    best_gain, best = gain, (spot, d_new)
            if best is None:
                continue
            y[i], dist[i] = best
            dist[:, i] = dist[i]
            touched = np.flatnonzero((dist[i] < next_in) | (nbrs == i).any(axis=1))
            nbrs[touched] = map_neighbours(touched)
            nbrs[i] = map_neighbours(np.array([i]))[0]
            moved += 1
        if moved == 0:
            break
    return y.astype(np.float32)


def run(
    job: Generator[Progress, None, np.ndarray],
    on_progress: Callable[[Progress], None] | None = None,
):
    """Drive a generator job to its end and return its result (for the CLI and tests)."""
    while True:
        try:
            step = next(job)
        except StopIteration as stop:
            return stop.value
        if on_progress is not None:
            on_progress(step)


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
