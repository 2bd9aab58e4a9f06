"""Passes over every row of a model in decoded blocks: PCA axes from a sample, then the rows'
coordinates on those axes, without ever holding the whole matrix as float32.

Rows are prepared as for every map (unit length, non-finite values zeroed: cosine geometry).
"""

from __future__ import annotations

import numpy as np

from explorer.core.analysis.blocks import rows_per_block
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.map.pca import principal_components
from explorer.core.map.projection import prepare
from explorer.core.model.embedding import EmbeddingModel

AXES_SAMPLE = 20_000  # rows the PCA axes are fitted on (sorted ids, read once)


def sample_rows(model: EmbeddingModel, n: int, seed: int) -> np.ndarray:
    """Up to `n` prepared rows at random ids (sorted, so the read goes forward through the file)."""
    if model.rows <= n:
        ids = np.arange(model.rows)
    else:
        ids = np.sort(np.random.default_rng(seed).choice(model.rows, n, replace=False))
    return prepare(model.vectors(ids))


def axes(model: EmbeddingModel, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean [d] and top-k principal axes [k, d] of the prepared rows, fitted on a sample."""
    x = sample_rows(model, AXES_SAMPLE, seed)
    return x.mean(axis=0, dtype=np.float64).astype(np.float32), principal_components(x, k, seed)


def project_rows(
    model: EmbeddingModel,
    basis: np.ndarray | None,
    shift: np.ndarray | None = None,
    normalise: bool = False,
    ctx: JobContext = NULL_CONTEXT,
) -> np.ndarray:
    """Every prepared row times `basis.T` ([rows, k] float32), minus `shift` @ basis.T; with
    `basis` None the prepared rows themselves. `normalise` scales each result row to unit length
    (cosine among the results). Progress 0..1 over the rows; cancel checked between blocks."""
    rows = model.rows
    width = model.dim if basis is None else len(basis)
    out = np.empty((rows, width), dtype=np.float32)
    offset = None
    if basis is not None:
        basis_t = np.ascontiguousarray(basis.T, dtype=np.float32)
        offset = (shift @ basis_t) if shift is not None else None
    step = rows_per_block(model.dim)
    for start in range(0, rows, step):
        ctx.check("the whole-vocabulary map")
        stop = min(rows, start + step)
        x = prepare(model.decode_block(start, stop))
        y = x if basis is None else x @ basis_t
        if offset is not None:
            y -= offset
        if normalise and basis is not None:
            n = np.linalg.norm(y, axis=1, keepdims=True)
            y /= np.where(n > 0, n, 1.0)
        out[start:stop] = y
        ctx.progress(stop / rows, f"reading rows: {stop:,} of {rows:,}")
    return out
