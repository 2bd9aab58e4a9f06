"""The whole vocabulary on one map: every row laid out, in two stages.

1. The first picture: every row on the first two principal axes (fitted on a sample of rows,
   then one streamed pass over the matrix). It goes out as the job's partial result.
2. The layout: a k-NN graph of every row by cosine (NN-descent), then UMAP's layout
   (`explorer.core.map.umap`) started from the first picture. The graph is built on the
   prepared rows themselves when they fit in KNN_BYTES; wider matrices are first reduced to
   REDUCED_DIMS principal axes (the mean direction first, so that dot products still track
   the raw cosine), which keeps memory bounded at the cost of some recall.

The final layout is cached per model file and parameters (`explorer.core.cache` keys; the
array is written to a temporary file and renamed, and checked on read: shape, dtype, finite).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from explorer.core import cache
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.limits import MAX_EPOCHS, MAX_SEED, check_int
from explorer.core.map import stream
from explorer.core.map.projection import MAX_NEIGHBORS, umap_init
from explorer.core.model.embedding import EmbeddingModel

CACHE_KIND = "whole-map"
CACHE_VERSION = 2  # 2: own NN-descent, every-core layout, UMAP's epochs
KNN_BYTES = 768 << 20  # float32 rows for the k-NN graph held in memory at most
REDUCED_DIMS = 256
MIN_ROWS = 16


@dataclass(frozen=True)
class WholeParams:
    n_neighbors: int = 15
    min_dist: float = 0.05
    seed: int = 42
    n_epochs: int | None = None  # None: UMAP's default by row count (umap.default_epochs)

    def __post_init__(self) -> None:
        check_int(self.n_neighbors, 2, MAX_NEIGHBORS, "n_neighbors")
        if not 0.0 <= self.min_dist <= 1.0:
            raise ExplorerError(f"min_dist must be between 0 and 1, not {self.min_dist}")
        if self.n_epochs is not None:
            check_int(self.n_epochs, 1, MAX_EPOCHS, "n_epochs")
        check_int(self.seed, 0, MAX_SEED, "seed")

    def key(self) -> dict:
        return {**asdict(self), "version": CACHE_VERSION}


@dataclass
class WholeMap:
    """Coordinates [rows, 2] of every row (row id = index) and which rows views may hide."""

    coords: np.ndarray
    hidden: np.ndarray  # bool [rows]: beyond the tokenizer, a placeholder or a special token
    final: bool
    stage: str  # "pca" (the first picture) or "umap"
    cached: bool = False
    seconds: dict[str, float] = field(default_factory=dict)


def hidden_rows(model: EmbeddingModel) -> np.ndarray:
    """Rows the tokenizer has no token for, placeholders such as [unused12], and special
    tokens: what "no special/unused" leaves out, as the random sample does."""
    from explorer.core.analysis.undertrained import known_unused_ids

    hidden = ~np.asarray(model.used_rows, dtype=bool)
    hidden[known_unused_ids(model)] = True
    tok = model.tokenizer
    if tok is not None:
        special = np.fromiter((i for i in tok.special_ids if 0 <= i < model.rows), np.int64)
        hidden[special] = True
    return hidden


# -- the cache -------------------------------------------------------------------------------


def cache_file(model: EmbeddingModel, params: WholeParams, root: Path) -> Path:
    key = cache.file_key(model, CACHE_KIND, params.key())
    return cache.key_dir(root, key).with_suffix(".npy")


def load_cached(
    model: EmbeddingModel, params: WholeParams, cache_dir: Path | None = None
) -> np.ndarray | None:
    """The cached final layout of this exact tensor with these parameters, or None (also when
    the file is missing, unreadable, or not [rows, 2] finite float32)."""
    try:
        path = cache_file(model, params, Path(cache_dir or cache.default_cache_dir()))
        coords = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    ok = (
        coords.dtype == np.float32
        and coords.shape == (model.rows, 2)
        and bool(np.isfinite(coords).all())
    )
    return coords if ok else None


def save_cached(
    model: EmbeddingModel, params: WholeParams, coords: np.ndarray, cache_dir: Path | None = None
) -> bool:
    """Store the layout (temporary file, then an atomic rename); False if not writable."""
    try:
        path = cache_file(model, params, Path(cache_dir or cache.default_cache_dir()))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npy", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, np.asarray(coords, dtype=np.float32), allow_pickle=False)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return True
    except OSError:
        return False


# -- the stages ------------------------------------------------------------------------------


def first_picture(
    model: EmbeddingModel, params: WholeParams, ctx: JobContext = NULL_CONTEXT
) -> np.ndarray:
    """Every row on the first two principal axes of the prepared rows: [rows, 2] float32."""
    ctx.progress(0.0, "PCA axes")
    mean, comps = stream.axes(model, 2, params.seed)
    return stream.project_rows(model, comps, shift=mean, ctx=ctx.part(0.1, 0.9))


def knn_vectors(
    model: EmbeddingModel, params: WholeParams, ctx: JobContext = NULL_CONTEXT
) -> np.ndarray:
    """The rows the neighbour graph is built on: prepared rows, or REDUCED_DIMS of them."""
    if model.rows * model.dim * 4 <= KNN_BYTES or model.dim <= REDUCED_DIMS:
        return stream.project_rows(model, None, ctx=ctx)
    ctx.progress(0.0, f"PCA to {REDUCED_DIMS} dimensions")
    x = stream.sample_rows(model, stream.AXES_SAMPLE, params.seed)
    mean = x.mean(axis=0, dtype=np.float64)
    mean_dir = (mean / max(float(np.linalg.norm(mean)), 1e-30)).astype(np.float32)
    from explorer.core.map.pca import principal_components

    comps = principal_components(x, REDUCED_DIMS - 1, params.seed)
    del x
    basis = np.vstack([mean_dir[None, :], comps])
    return stream.project_rows(model, basis, normalise=True, ctx=ctx.part(0.1, 0.9))


def knn_graph(
    x: np.ndarray, k: int, seed: int, ctx: JobContext = NULL_CONTEXT
) -> tuple[np.ndarray, np.ndarray]:
    """k nearest rows of every row by cosine (itself first): exact up to EXACT_KNN_MAX rows,
    else by NN-descent (explorer.core.map.descent, umap-learn's own method), with progress and
    cancel between its iterations. A clustered exact search found more of the exact neighbours
    on SmolLM2 but gave a map that kept fewer of them: its graph falls apart into tight
    families of near-duplicates."""
    from explorer.core.map.projection import knn_cosine

    return knn_cosine(x, k, ctx, seed=seed)


def layout(
    knn: tuple[np.ndarray, np.ndarray],
    init: np.ndarray,
    params: WholeParams,
    ctx: JobContext = NULL_CONTEXT,
) -> np.ndarray:
    """UMAP's layout of the graph from `init` (the first picture), UMAP's epochs by row count
    unless the parameters say; cancellable between epochs."""
    from explorer.core.map import umap

    def on_epoch(done: int, total: int) -> None:
        ctx.check("the whole-vocabulary map")
        ctx.progress(done / max(total, 1), f"UMAP epoch {done}/{total}")

    graph = umap.fuzzy_graph(*knn)
    coords = umap.optimize(
        umap_init(init, params.seed),
        graph,
        min_dist=params.min_dist,
        n_epochs=params.n_epochs,
        seed=params.seed,
        epoch=on_epoch,
    )
    if not np.isfinite(coords).all():
        raise ExplorerError("UMAP produced non-finite coordinates")
    return coords


def whole_map(
    model: EmbeddingModel,
    params: WholeParams | None = None,
    ctx: JobContext = NULL_CONTEXT,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    on_picture: Callable[[WholeMap], None] | None = None,
) -> WholeMap:
    """Every row of `model` on one map. The first picture goes out as ``ctx.partial`` (a
    WholeMap with stage "pca"), or to `on_picture` if given; the final UMAP layout is returned
    (and cached)."""
    import time

    params = params or WholeParams()
    if model.rows < MIN_ROWS:
        raise ExplorerError(
            f"the whole-vocabulary map needs at least {MIN_ROWS} rows; this one has {model.rows}"
        )
    hidden = hidden_rows(model)
    if use_cache:
        coords = load_cached(model, params, cache_dir)
        if coords is not None:
            ctx.progress(1.0, "cached layout")
            return WholeMap(coords, hidden, final=True, stage="umap", cached=True)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    picture = first_picture(model, params, ctx.part(0.0, 0.05, "First picture (PCA)"))
    seconds["first_picture"] = time.perf_counter() - start
    first = WholeMap(picture, hidden, final=False, stage="pca", seconds=dict(seconds))
    (on_picture or ctx.partial)(first)

    x = knn_vectors(model, params, ctx.part(0.05, 0.05, "Reading rows for the neighbour graph"))
    t = time.perf_counter()
    k = min(params.n_neighbors, model.rows)
    knn = knn_graph(x, k, params.seed, ctx.part(0.1, 0.35))
    del x
    seconds["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    coords = layout(knn, picture, params, ctx.part(0.45, 0.55))
    seconds["layout"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - start
    save_cached(model, params, coords, cache_dir)
    return WholeMap(coords, hidden, final=True, stage="umap", seconds=seconds)
