"""Where a map distorts: a token's exact neighbours in the original space, and which of them the
map keeps close.

The neighbours are the k rows of highest cosine to the token among the map's points (itself
left out), computed exactly: from the map's own rows when the map holds them (a neighbourhood
or a sample), else by an exact scan of the whole matrix (the whole vocabulary), or taken from
an exact cosine ranking already at hand (the Neighbours pane's). A neighbour is kept when it is
also among the token's k nearest points on the map. Each step is one pass over the map's points
in numpy: nothing here is quadratic in the points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.ranking import top_k
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

K = 10
BLOCK_ROWS = 8192  # map rows per block of the cosine pass (bounded memory at any width)
SCAN_SLACK = 64  # extra neighbours fetched from a whole-matrix scan for rows not on the map


@dataclass(frozen=True)
class Kept:
    """A token's exact neighbours on one map and whether the map keeps each close."""

    token: int
    row: int  # the token's index among the map's points
    rows: np.ndarray  # the neighbours' indices among the map's points, best first
    ids: np.ndarray  # their token ids
    kept: np.ndarray  # bool per neighbour: among the token's len(rows) nearest map points

    @property
    def n_kept(self) -> int:
        return int(self.kept.sum())

    @property
    def share(self) -> float:
        return self.n_kept / len(self.rows) if len(self.rows) else 0.0


def nearest_on_map(coords: np.ndarray, row: int, k: int) -> np.ndarray:
    """Indices of the k points nearest (Euclidean) to point `row` on the map, itself left out,
    nearest first (equal distances: lower index first)."""
    xy = np.asarray(coords, dtype=np.float64)
    d2 = np.sum((xy - xy[row]) ** 2, axis=1)
    d2[row] = np.inf
    d2[~np.isfinite(d2)] = np.inf
    return top_k(-d2, k)


def cosine_to(vectors: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Cosine of each row of `vectors` to `v` in float64 (zero or non-finite rows: -inf)."""
    v = np.nan_to_num(np.asarray(v, dtype=np.float64))
    vv = float(np.sqrt(v @ v))
    out = np.empty(len(vectors))
    for start in range(0, len(vectors), BLOCK_ROWS):
        block = np.asarray(vectors[start : start + BLOCK_ROWS], dtype=np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            sims = (block @ v) / (norms * vv)
        out[start : start + len(block)] = np.where(np.isfinite(sims), sims, -np.inf)
    return out


def exact_among_rows(vectors: np.ndarray, row: int, k: int) -> np.ndarray:
    """The map rows of the k highest cosines to map row `row` (itself left out), best first."""
    sims = cosine_to(vectors, vectors[row])
    sims[row] = -np.inf
    return top_k(sims, k)


def holds_rows(vectors: np.ndarray, n: int) -> bool:
    """`vectors` are the rows of a map of n points (a whole-vocabulary map holds none)."""
    return vectors.ndim == 2 and vectors.shape[0] == n and vectors.shape[1] > 0


def on_map(ranked: np.ndarray, ids: np.ndarray, token: int) -> np.ndarray:
    """The map rows (indices into `ids`) of the ids in `ranked` that are on the map, in the
    ranking's order, the token itself left out."""
    ranked = np.asarray(ranked, dtype=np.int64)
    ranked = ranked[(ranked != token) & (ranked >= 0)]
    if not len(ids) or not len(ranked):
        return np.zeros(0, dtype=np.int64)
    where = np.full(max(int(ids.max()), int(ranked.max())) + 1, -1, dtype=np.int64)
    where[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)  # an id shown twice: its first point
    rows = where[ranked]
    return rows[rows >= 0]


def exact_by_scan(
    searcher: NeighborSearcher, ids: np.ndarray, token: int, k: int, ctx: JobContext
) -> np.ndarray:
    """The map rows of the token's exact cosine top-k among the map's points, from exact scans
    of the whole matrix: first k + SCAN_SLACK over every row, then, if too few of those are on
    the map, as many as rows are left off the map (which cannot miss)."""
    model = searcher.model
    query = query_for_ids(model, [token])
    off_map = model.rows - len(ids)
    for fetch in (k + SCAN_SLACK, k + off_map + 1):
        result = searcher.search(query, k=min(model.rows, fetch), exact=True, ctx=ctx)
        rows = on_map(result.ids, ids, token)
        if len(rows) >= k:
            break
    return rows[:k]  # fewer than k only when fewer map points have a cosine at all


def kept_neighbours(
    ids: np.ndarray,
    coords: np.ndarray,
    token: int,
    k: int = K,
    vectors: np.ndarray | None = None,
    ranked: np.ndarray | None = None,
    searcher: NeighborSearcher | None = None,
    ctx: JobContext = NULL_CONTEXT,
) -> Kept | None:
    """The token's exact top-k cosine neighbours among the map's points (`ids`, at `coords`) and
    which the map keeps among the token's k nearest points; None if the token is not on the map.

    The neighbours come from `ranked` (token ids in exact cosine order over every row) when it
    holds k of the map's points, else from `vectors` (the map's rows, in map order), else from
    an exact scan by `searcher`."""
    ids = np.asarray(ids, dtype=np.int64)
    where = np.flatnonzero(ids == token)
    if not len(where):
        return None
    row = int(where[0])
    k = min(k, len(ids) - 1)
    rows = on_map(ranked, ids, token)[:k] if ranked is not None else None
    if rows is not None and len(rows) < k:
        rows = None
    ctx.check("neighbours on the map")
    if rows is None and vectors is not None and holds_rows(vectors, len(ids)):
        rows = exact_among_rows(vectors, row, k)
    if rows is None:
        if searcher is None:
            raise ValueError("no ranking, no rows and no searcher to find the neighbours")
        rows = exact_by_scan(searcher, ids, token, k, ctx)
    ctx.check("neighbours on the map")
    near = nearest_on_map(coords, row, len(rows))
    rows = np.asarray(rows, dtype=np.int64)
    return Kept(token, row, rows, ids[rows], np.isin(rows, near))
