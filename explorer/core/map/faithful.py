"""How faithful a map is to the embedding: neighbour preservation against exact cosine
neighbours in the original space, streamed over the model's rows in blocks."""

from __future__ import annotations

import numpy as np

from explorer.core.analysis.blocks import rows_per_block
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.map.projection import prepare
from explorer.core.model.embedding import EmbeddingModel


def exact_neighbors(
    model: EmbeddingModel, ids: np.ndarray, k: int, ctx: JobContext = NULL_CONTEXT
) -> np.ndarray:
    """The k rows of highest cosine to each row in `ids` (itself excluded), [len(ids), k],
    from one streamed pass over every row."""
    ids = np.asarray(ids, dtype=np.int64)
    q = prepare(model.vectors(ids))
    best = np.full((len(ids), k), -np.inf, dtype=np.float32)
    best_ids = np.full((len(ids), k), -1, dtype=np.int64)
    step = rows_per_block(model.dim)
    for start in range(0, model.rows, step):
        ctx.check("exact neighbours")
        stop = min(model.rows, start + step)
        sims = q @ prepare(model.decode_block(start, stop)).T
        own = (ids >= start) & (ids < stop)
        sims[np.flatnonzero(own), ids[own] - start] = -np.inf
        both = np.concatenate([best, sims], axis=1)
        both_ids = np.concatenate(
            [best_ids, np.broadcast_to(np.arange(start, stop), sims.shape)], axis=1
        )
        top = np.argpartition(-both, k - 1, axis=1)[:, :k]
        best = np.take_along_axis(both, top, axis=1)
        best_ids = np.take_along_axis(both_ids, top, axis=1)
        ctx.progress(stop / model.rows)
    order = np.argsort(-best, axis=1, kind="stable")
    return np.take_along_axis(best_ids, order, axis=1)


def map_neighbors(coords: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """The k map points nearest (Euclidean) to each point in `ids`, itself excluded."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k + 1).fit(coords)
    found = nn.kneighbors(coords[ids], return_distance=False)
    out = np.empty((len(ids), k), dtype=np.int64)
    for j, (row, own) in enumerate(zip(found, ids, strict=True)):
        others = row[row != own]
        out[j] = others[:k]
    return out


def preservation(exact: np.ndarray, on_map: np.ndarray) -> float:
    """Share of each row's exact neighbours among its nearest map points, averaged over rows."""
    k = exact.shape[1]
    hits = [len(np.intersect1d(a, b)) for a, b in zip(exact, on_map, strict=True)]
    return float(np.sum(hits)) / (len(exact) * k)
