"""Rogue dimensions (a scale that dwarfs the rest) and one dimension across the vocabulary."""

from __future__ import annotations

import numpy as np

from explorer.core.analysis.blocks import iter_blocks
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import AnalysisError

# A dimension is an outlier when its log-std sits this many robust standard deviations above the
# median log-std *and* its std is at least this many times the median std.
OUTLIER_Z = 5.0
OUTLIER_RATIO = 2.0
MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution × this = its standard deviation


def robust_z(values: np.ndarray) -> np.ndarray:
    """(x − median) / (1.4826 · MAD) over the finite values; 0 everywhere if the MAD is 0."""
    v = np.asarray(values, dtype=np.float64)
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return np.zeros_like(v)
    med = float(np.median(finite))
    mad = float(np.median(np.abs(finite - med))) * MAD_TO_SIGMA
    if mad == 0:
        return np.zeros_like(v)
    return (v - med) / mad


def outlier_dimensions(std: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Indices of rogue dimensions (largest first) and the robust z of every log-std."""
    s = np.asarray(std, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = robust_z(np.where(s > 0, np.log(s), np.nan))
        ratio = s / np.median(s[np.isfinite(s)]) if np.isfinite(s).any() else np.zeros_like(s)
    flagged = np.flatnonzero((z >= OUTLIER_Z) & (ratio >= OUTLIER_RATIO))
    order = flagged[np.argsort(-z[flagged], kind="stable")]
    return [int(i) for i in order], np.nan_to_num(z, nan=0.0)


def dimension_column(model, index: int, ctx: JobContext = NULL_CONTEXT) -> np.ndarray:
    """Values of one dimension over every row (for the dimension view), float64 [rows]."""
    if not 0 <= index < model.dim:
        raise AnalysisError(f"dimension {index} is out of range: rows have {model.dim} values")
    out = np.empty(model.rows, dtype=np.float64)
    for start, block in iter_blocks(model.decode_block, model.rows, model.dim, ctx):
        out[start : start + len(block)] = block[:, index]
    return out
