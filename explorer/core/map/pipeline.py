"""A map of tokens, computed in two steps: choose the points and a PCA preview, then the layout.

`choose_and_preview` (well under a second) picks the tokens (around a selection, around a text,
a pasted list or a random sample), reads their rows and lays them out with PCA; for a PCA map
that is already the final map, so it also gets its clusters. `layout` then computes the UMAP
layout, aligned to the preview so that the picture settles rather than jumps, and its clusters.
`make_map` is both as one job (explorer/app/controllers/map.py): the preview goes out as the
job's partial result (``ctx.partial``), the final map is its result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.map import neighborhood, projection, tiles, whole
from explorer.core.model.decode import decode_rows
from explorer.core.model.embedding import EmbeddingModel

SOURCES = ("around", "text", "list", "sample")
MAX_CLUSTERS = 8
POINTS_PER_CLUSTER = 25  # fewer clusters for small maps

Previous = tuple[np.ndarray, np.ndarray]  # ids, coords of the map shown before


@dataclass(frozen=True)
class MapRequest:
    """An immutable snapshot of what to map, built on the GUI thread."""

    source: str  # one of SOURCES
    n: int
    params: projection.ProjectionParams
    query_ids: tuple[int, ...] = ()
    text: str = ""
    refs: str = ""
    plain: bool = True  # samples: no special or unused tokens

    @property
    def pca_only(self) -> bool:
        """The preview is the final map: no second (UMAP) step."""
        return self.params.method == "pca"


@dataclass
class MapData:
    nb: neighborhood.Neighborhood
    vectors: np.ndarray
    norms: np.ndarray
    coords: np.ndarray
    clusters: np.ndarray | None = None
    cluster_names: tuple[str, ...] = ()
    final: bool = False
    whole: bool = False  # every row of the model (its layout is cached, not stored in sessions)
    quadtree: tiles.Tiles | None = None  # the quadtree of `coords` (whole maps: drawing, labels)


def choose(
    model: EmbeddingModel, req: MapRequest, ctx: JobContext = NULL_CONTEXT
) -> neighborhood.Neighborhood:
    """The tokens of the map (scans of the vocabulary report into 2 %..52 %)."""
    scan = ctx.part(0.02, 0.5, "Scanning the vocabulary")

    if req.source == "around":
        shown = ", ".join(f"“{model.label(i)}”" for i in req.query_ids[:3])
        more = "…" if len(req.query_ids) > 3 else ""
        return neighborhood.around_ids(
            model,
            req.query_ids,
            req.n,
            scan,
            title=f"{req.n:,} tokens around {shown}{more}",
        )
    if req.source == "text":
        return neighborhood.around_text(model, req.text, req.n, scan)
    if req.source == "list":
        return neighborhood.from_list(model, req.refs)
    return neighborhood.sample(model, req.n, seed=req.params.seed, plain=req.plain)


def choose_and_preview(
    model: EmbeddingModel,
    req: MapRequest,
    previous: Previous | None,
    ctx: JobContext = NULL_CONTEXT,
) -> MapData:
    """Step 1: the points of the map and their PCA preview, aligned to the previous map (so
    that a re-mapped neighbourhood stays recognisable); clusters if it is final."""
    ctx.progress(0.02, "Choosing tokens")
    ctx.check()
    nb = choose(model, req, ctx)
    ctx.progress(0.55, "Reading rows")
    ctx.check()
    vectors = decode_rows(model.cold_rows(nb.ids))
    norms = np.linalg.norm(np.nan_to_num(vectors.astype(np.float64)), axis=1)
    ctx.progress(0.7, "PCA preview")
    ctx.check()
    coords = projection.pca_2d(projection.prepare(vectors), req.params.seed)
    if previous is not None:
        coords = projection.align(coords, nb.ids, previous[1], previous[0])
    data = MapData(nb, vectors, norms, coords)
    if req.pca_only:
        ctx.progress(0.9, "Clusters")
        ctx.check()
        data.clusters, data.cluster_names = clusters_of(coords, nb.labels, 0, vectors)
        data.final = True
    return data


def layout(
    data: MapData, params: projection.ProjectionParams, ctx: JobContext = NULL_CONTEXT
) -> MapData:
    """Step 2: the final layout (UMAP or PCA), aligned to the preview, plus clusters."""
    coords = projection.project(data.vectors, params, ctx)
    coords = projection.align(coords, data.nb.ids, data.coords, data.nb.ids)
    clusters, names = clusters_of(coords, data.nb.labels, params.seed, data.vectors)
    return MapData(data.nb, data.vectors, data.norms, coords, clusters, names, final=True)


def restore(
    model: EmbeddingModel,
    ids: np.ndarray,
    coords: np.ndarray,
    title: str,
    query_ids: tuple[int, ...],
    ctx: JobContext,
) -> MapData:
    """A saved map (a session's or a slide's layout) shown again without laying it out: its
    rows, norms, similarity to its query tokens (if any) and clusters."""
    ids = np.asarray([model.check_id(int(i)) for i in ids], dtype=np.int64)
    coords = np.asarray(coords, dtype=np.float32).reshape(len(ids), 2)
    vectors = model.vectors(ids)
    v = np.nan_to_num(vectors.astype(np.float64))
    norms = np.linalg.norm(v, axis=1)
    similarity = None
    queries = [model.check_id(int(q)) for q in query_ids]
    if queries:
        q = np.nan_to_num(model.vectors(queries).astype(np.float64))
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
        similarity = ((v / np.maximum(norms, 1e-30)[:, None]) @ q.T).max(axis=1)
        similarity = similarity.astype(np.float32)
    ctx.check()
    labels = [model.label(int(i)) for i in ids]
    nb = neighborhood.Neighborhood(ids, labels, similarity, tuple(queries), title)
    clusters, names = clusters_of(coords, labels, 0, vectors)
    return MapData(nb, vectors, norms, coords, clusters, names, final=True)


def make_map(
    model: EmbeddingModel,
    req: MapRequest,
    previous: Previous | None,
    ctx: JobContext = NULL_CONTEXT,
) -> MapData:
    """Both steps: the preview goes out as ``ctx.partial`` (unless it is final already), then
    the final map is returned. Progress runs 0..1 for each step."""
    data = choose_and_preview(model, req, previous, ctx)
    if data.final:
        return data
    ctx.partial(data)
    return layout(data, req.params, ctx)


def whole_vocabulary(
    model: EmbeddingModel,
    params: whole.WholeParams,
    plain: bool = True,
    ctx: JobContext = NULL_CONTEXT,
    only_cached: bool = False,
    runner: Callable[..., whole.WholeMap] = whole.whole_map,
) -> MapData | None:
    """Every row on one map (explorer.core.map.whole): the PCA picture as ``ctx.partial``, then
    the UMAP layout (at once from the cache when it was laid out before; with `only_cached`,
    None when it was not). `plain` leaves out rows beyond the tokenizer and special tokens.
    `runner` computes it: `whole.whole_map`, or a caller's with the same arguments (the app's
    runs it in a child process).
    Points come in a fixed random order, so that labels (placed in point order) spread over the
    map rather than follow the ids."""
    if only_cached and whole.load_cached(model, params) is None:
        return None
    keep = ~whole.hidden_rows(model) if plain else np.ones(model.rows, dtype=bool)
    ids = np.flatnonzero(keep)
    ids = ids[np.random.default_rng(params.seed).permutation(len(ids))]
    labels = [model.label(int(i)) for i in ids]
    title = f"The whole vocabulary: {len(ids):,} tokens"
    nb = neighborhood.Neighborhood(ids, labels, None, (), title)
    empty = np.zeros((len(ids), 0), dtype=np.float32)
    norms = np.empty(0)
    priority = tiles.token_priority(ids, labels)

    def data(result: whole.WholeMap) -> MapData:
        coords = result.coords[ids]
        quadtree = tiles.build(coords, priority)
        return MapData(nb, empty, norms, coords, final=result.final, whole=True, quadtree=quadtree)

    def picture(result: whole.WholeMap) -> None:
        nonlocal norms
        norms = row_norms(model, ids, ctx)
        ctx.partial(data(result))

    result = runner(model, params, ctx, on_picture=picture)
    if not len(norms):
        norms = row_norms(model, ids, ctx)
    final = data(result)
    ctx.progress(1.0, "Clusters")
    final.clusters, final.cluster_names = clusters_of(final.coords, labels, params.seed)
    return final


def row_norms(model: EmbeddingModel, ids: np.ndarray, ctx: JobContext) -> np.ndarray:
    """L2 norms of the rows `ids`, from one streamed pass over the matrix."""
    from explorer.core.analysis.blocks import iter_blocks

    norms = np.empty(model.rows)
    for start, block in iter_blocks(model.decode_block, model.rows, model.dim, NULL_CONTEXT):
        ctx.check("the whole-vocabulary map")
        b = np.nan_to_num(block.astype(np.float64, copy=False))
        norms[start : start + len(b)] = np.sqrt(np.einsum("ij,ij->i", b, b))
    return norms[ids]


def clusters_of(
    coords: np.ndarray, labels: list[str], seed: int, vectors: np.ndarray | None = None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """k-means of the layout (what the eye groups). Each cluster is named by its two most
    typical tokens, those closest to its centroid (in the embedding when `vectors` are
    given, else in the layout), skipping labels without a letter or digit, and its size."""
    n = len(coords)
    k = int(min(MAX_CLUSTERS, max(1, n // POINTS_PER_CLUSTER)))
    if k < 2:
        return np.zeros(n, dtype=np.int64), (labels[0] if labels else "all",)
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=k, n_init=3, random_state=seed).fit(coords)
    unit = None
    if vectors is not None:
        v = np.nan_to_num(np.asarray(vectors, dtype=np.float64))
        unit = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-30)
    names = []
    for c in range(k):
        members = np.flatnonzero(km.labels_ == c)
        if unit is not None:
            order = members[np.argsort(-(unit[members] @ unit[members].mean(axis=0)))]
        else:
            d = np.linalg.norm(coords[members] - km.cluster_centers_[c], axis=1)
            order = members[np.argsort(d)]
        readable = [labels[i] for i in order if any(ch.isalnum() for ch in labels[i])]
        typical = readable[:2] or [labels[order[0]]]
        names.append(f"{', '.join(typical)} ({len(members)})")
    return km.labels_.astype(np.int64), tuple(names)


def preload() -> None:
    """Import what a map needs: scikit-learn's k-means and the layout kernels' module (seconds
    on a fresh install; the window does it on its warm-up worker after its first frame)."""
    import sklearn.cluster  # noqa: F401

    from explorer.core.map import umap as layout  # noqa: F401


def warm_up(ctx: JobContext = NULL_CONTEXT) -> bool:
    """Compile umap-learn's numba code with a tiny fit, as projection.warm_up does, but as a
    cancellable job (the window runs it on a background lane at start)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 8)).astype(np.float32)
    params = projection.ProjectionParams(n_neighbors=5, n_epochs=5, seed=0)
    projection.project(x, params, ctx)
    projection.pca_2d(projection.prepare(rng.standard_normal((200, 64)).astype(np.float32)))
    ctx.progress(0.95, "Loading k-means")
    ctx.check()
    import sklearn.cluster  # noqa: F401 - the map's clusters; imports hold the GIL

    return True
