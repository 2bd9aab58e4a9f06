"""An aligned pair of maps for two models: the shared tokens around one token, laid out in each
model, the second layout Procrustes-aligned to the first so that the two pictures can be read
side by side (a token in the same place in both is placed alike by both models)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.compare.neighbors import VocabAlignment
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import AnalysisError
from explorer.core.map import projection
from explorer.core.map.neighborhood import cosine_to_all

DEFAULT_POINTS = 120
MAX_POINTS = 2000


@dataclass(frozen=True)
class AlignedMaps:
    a_ids: np.ndarray  # int64 [n]: A's ids; a_ids[0] is the token itself
    b_ids: np.ndarray  # int64 [n]: the same tokens' ids in B
    labels: list[str]  # A's labels
    coords_a: np.ndarray  # float32 [n, 2]: A's layout, centred, unit RMS radius
    coords_b: np.ndarray  # float32 [n, 2]: B's, rotated onto A's (Procrustes), same size
    sim_a: np.ndarray  # float32 [n]: cosine to the token in A
    sim_b: np.ndarray  # float32 [n]: cosine to the token in B
    disparity: float  # Procrustes residual: 0 = the same shape, 1 = nothing in common

    def __len__(self) -> int:
        return len(self.a_ids)


def _ranked(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n best finite scores, best first."""
    finite = np.flatnonzero(np.isfinite(scores))
    if len(finite) > n:
        finite = finite[np.argpartition(-scores[finite], n - 1)[:n]]
    return finite[np.argsort(-scores[finite], kind="stable")]


def shared_around(
    a,
    b,
    a_id: int,
    n: int,
    align: VocabAlignment,
    ctx: JobContext = NULL_CONTEXT,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The token and the n - 1 shared tokens nearest to it, taken in turn from A's ranking and
    from B's (so neither model's neighbourhood dominates): A's ids, cosine in A, cosine in B."""
    if not 2 <= n <= MAX_POINTS:
        raise AnalysisError(f"a comparison map needs between 2 and {MAX_POINTS:,} tokens, not {n}")
    a_id = a.check_id(a_id)
    b_id = align.to_b(a_id)
    if b_id is None:
        raise AnalysisError(f"token {a.label(a_id)} (#{a_id}) is not in the second model")

    sa = cosine_to_all(a, a.vectors([a_id]), ctx.part(0.0, 0.5))[0].astype(np.float64)
    sb = cosine_to_all(b, b.vectors([b_id]), ctx.part(0.5, 0.5))[0].astype(np.float64)
    shared = np.flatnonzero((align.a_to_b >= 0) & a.used_rows)
    in_b = align.a_to_b[shared]
    keep = b.used_rows[in_b]
    shared, in_b = shared[keep], in_b[keep]
    score_a = np.full(a.rows, -np.inf)
    score_b = np.full(a.rows, -np.inf)
    score_a[shared], score_b[shared] = sa[shared], sb[in_b]
    both = np.isfinite(score_a) & np.isfinite(score_b)
    score_a[~both] = score_b[~both] = -np.inf
    score_a[a_id] = score_b[a_id] = -np.inf
    from_a, from_b = _ranked(score_a, n - 1), _ranked(score_b, n - 1)
    order = [a_id]
    seen = {a_id}
    for x, y in zip(from_a.tolist(), from_b.tolist(), strict=False):
        for i in (x, y):
            if i not in seen and len(order) < n:
                seen.add(i)
                order.append(i)
    ids = np.asarray(order, dtype=np.int64)
    return ids, sa[ids].astype(np.float32), sb[align.a_to_b[ids]].astype(np.float32)


def _layout(
    vectors: np.ndarray, params: projection.ProjectionParams, ctx: JobContext
) -> np.ndarray:
    return np.asarray(projection.project(vectors, params, ctx), dtype=np.float32)


def disparity(coords: np.ndarray, reference: np.ndarray) -> float:
    """Sum of squared distances between aligned layouts over the reference's spread."""
    ref = np.asarray(reference, dtype=np.float64)
    spread = float(((ref - ref.mean(axis=0)) ** 2).sum())
    if spread == 0:
        return 0.0
    return float(((np.asarray(coords, dtype=np.float64) - ref) ** 2).sum() / spread)


def aligned_maps(
    a,
    b,
    a_id: int,
    align: VocabAlignment,
    n: int = DEFAULT_POINTS,
    params: projection.ProjectionParams | None = None,
    ctx: JobContext = NULL_CONTEXT,
) -> AlignedMaps:
    """Maps of the shared tokens around `a_id` in A and in B, B's aligned onto A's by
    orthogonal Procrustes (rotation/reflection, uniform scale, shift) over all points."""
    params = params or projection.ProjectionParams()

    ids, sim_a, sim_b = shared_around(a, b, a_id, n, align, ctx.part(0.0, 0.3))
    b_ids = align.a_to_b[ids]
    coords_a = _layout(a.vectors(ids), params, ctx.part(0.3, 0.35))
    coords_b = _layout(b.vectors(b_ids), params, ctx.part(0.65, 0.35))
    fitted = projection.align(coords_b, ids, coords_a, ids)
    ctx.progress(1.0)
    return AlignedMaps(
        ids,
        b_ids.astype(np.int64),
        [a.label(int(i)) for i in ids],
        standardized(coords_a),
        standardized(fitted),  # shown at A's size: the fit's scale shrinks a poor match
        sim_a,
        sim_b,
        disparity(fitted, coords_a),
    )


def standardized(coords: np.ndarray) -> np.ndarray:
    """Centred, with unit root-mean-square distance from the centre (rotation kept)."""
    c = np.asarray(coords, dtype=np.float64)
    c = c - c.mean(axis=0)
    rms = float(np.sqrt((c**2).sum(axis=1).mean())) if len(c) else 0.0
    return (c / rms if rms > 0 else c).astype(np.float32)
