"""Vocabulary statistics in one streaming pass: row norms, per-dimension mean and std, rogue
dimensions, suspicious tokens and token kinds.

The pass reads each row once. BF16 matrices go through a fused numba kernel on the memory map's
bits (`kernels.py`); every other format is streamed with ``model.decode_block``. Per-dimension
mean and variance are merged per block with Chan's formula in float64, so they stay exact to
rounding on a quarter-million rows. The pass's arrays are cached per file (``cached.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.analysis import cached, undertrained
from explorer.core.analysis.blocks import chan_merge, iter_blocks
from explorer.core.analysis.dimensions import outlier_dimensions
from explorer.core.analysis.kinds import TokenKinds, token_kinds
from explorer.core.cache import default_cache_dir
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.model.dtypes import BF16 as _BF16

HISTOGRAM_BINS = 50
CACHE_KIND = "stats"
CACHE_VERSION = 1
KERNEL_BLOCK_BYTES = 128 << 20  # stored bytes per kernel call: a cancel is seen within ~0.1 s


@dataclass
class PassResult:
    """What the streaming pass measures; everything else is derived from it."""

    sq: np.ndarray  # float64 [rows]: sum of squares of each row (inf/NaN for non-finite rows)
    refdot: np.ndarray  # float64 [rows]: dot of each row with `ref`
    ref: np.ndarray  # float64 [dim]: mean of the known-unused rows (zeros if none)
    count: int  # finite rows in the per-dimension figures
    mean: np.ndarray  # float64 [dim]
    m2: np.ndarray  # float64 [dim]: sum of squared deviations from the mean


def histogram(values: np.ndarray, bins: int = HISTOGRAM_BINS) -> dict:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"edges": [], "counts": []}
    counts, edges = np.histogram(v, bins=bins)
    return {"edges": edges.tolist(), "counts": counts.tolist()}


def summary(values: np.ndarray, bins: int = HISTOGRAM_BINS) -> dict:
    """min, max, mean, median and histogram of the finite values (None when there are none)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {
            "min": None,
            "max": None,
            "mean": None,
            "median": None,
            **{"histogram": histogram(v)},
        }
    return {
        "min": float(v.min()),
        "max": float(v.max()),
        "mean": float(v.mean()),
        "median": float(np.median(v)),
        "histogram": histogram(v, bins),
    }


@dataclass
class StatsResult:
    rows: int
    dim: int
    norms: np.ndarray  # float64 [rows]; NaN for rows holding NaN/inf
    dim_mean: np.ndarray  # float64 [dim]
    dim_std: np.ndarray  # float64 [dim] (population std, ddof=0)
    outliers: list[int]  # rogue dimensions, most extreme first
    dim_z: np.ndarray  # robust z of each dimension's log-std
    suspicious: list[undertrained.Suspicious]
    kinds: TokenKinds
    unused_cosine: np.ndarray | None  # float64 [rows]: cosine to the mean known-unused row
    known_unused: np.ndarray  # int64 ids of known-unused rows
    cached: bool = False

    def norm_summary(self) -> dict:
        return summary(self.norms)

    def as_dict(self) -> dict:
        """The JSON of `embedding-explorer stats --json`."""
        return {
            "rows": self.rows,
            "dim": self.dim,
            "norms": self.norm_summary(),
            "dimensions": {
                "mean": self.dim_mean.tolist(),
                "std": self.dim_std.tolist(),
                "outliers": list(self.outliers),
            },
            "suspicious": [s.as_dict() for s in self.suspicious],
            "kinds": self.kinds.counts(),
        }


def _pass_kernel(model, ref: np.ndarray, ctx: JobContext) -> PassResult:
    """The fused kernel over the BF16 bits, or over blocks decoded to float32 (other dtypes)."""
    from numba import get_num_threads

    from explorer.core.analysis.kernels import merge_parts, stats_rows
    from explorer.core.search.exact import KERNEL_LOCK

    rows, dim = model.rows, model.dim
    bf16 = model.matrix.dtype == _BF16
    bits = model.matrix.view(np.uint16) if bf16 else None
    parts = 32 * get_num_threads()  # many parts: a thread slowed by another process holds less up
    count = np.zeros(parts, dtype=np.int64)
    mean = np.zeros((parts, dim), dtype=np.float64)
    m2 = np.zeros((parts, dim), dtype=np.float64)
    sq = np.empty(rows, dtype=np.float64)
    refdot = np.empty(rows, dtype=np.float64)
    per_row = 2 * dim if bf16 else 4 * dim  # bytes the kernel reads per row
    step = max(SUB_ROWS, (KERNEL_BLOCK_BYTES if bf16 else DECODED_BYTES) // per_row)
    for start in range(0, rows, step):
        ctx.check("statistics")
        stop = min(rows, start + step)
        block = (
            bits[start:stop]
            if bits is not None
            else np.ascontiguousarray(model.decode_block(start, stop), dtype=np.float32)
        )
        with KERNEL_LOCK:
            stats_rows(block, ref, sq[start:stop], refdot[start:stop], count, mean, m2)
        ctx.progress(stop / rows)
    n, mean_all, m2_all = merge_parts(count, mean, m2)
    return PassResult(sq, refdot, ref, n, mean_all, m2_all)


DECODED_BYTES = 16 << 20  # float32 rows decoded per kernel call (other dtypes than BF16)
SUB_ROWS = 16


def _pass_blocks(model, ref: np.ndarray, ctx: JobContext) -> PassResult:
    rows, dim = model.rows, model.dim
    sq = np.empty(rows, dtype=np.float64)
    refdot = np.empty(rows, dtype=np.float64)
    n: int = 0
    mean = np.zeros(dim, dtype=np.float64)
    m2 = np.zeros(dim, dtype=np.float64)
    for start, block in iter_blocks(model.decode_block, rows, dim, ctx, "statistics"):
        b = block.astype(np.float64)
        stop = start + len(b)
        with np.errstate(invalid="ignore", over="ignore"):
            sq[start:stop] = np.einsum("ij,ij->i", b, b)
            refdot[start:stop] = b @ ref
        finite = np.isfinite(sq[start:stop])
        ok = b if finite.all() else b[finite]
        if len(ok):
            dev = ok - (mean if n else ok[0])  # shifted sums, as in the kernel
            s1 = dev.sum(axis=0)
            bmean = (mean if n else ok[0]) + s1 / len(ok)
            bm2 = np.einsum("ij,ij->j", dev, dev) - s1 * (s1 / len(ok))
            n, mean, m2 = chan_merge(n, mean, m2, len(ok), bmean, bm2)  # type: ignore[assignment]
    return PassResult(sq, refdot, ref, int(n), mean, m2)


def streaming_pass(
    model, ctx: JobContext = NULL_CONTEXT, unused_ids: np.ndarray | None = None
) -> PassResult:
    """Read the matrix once: per-row squares and dots with the mean unused row, per-dim moments."""
    ids = undertrained.known_unused_ids(model) if unused_ids is None else unused_ids
    ref = undertrained.unused_mean(model, ids)
    if model.matrix.dtype == _BF16 and model.matrix.shape == (model.rows, model.dim):
        return _pass_kernel(model, ref, ctx)
    if model.matrix.dtype != np.float64 and model.rows:  # decodes to float32 exactly
        return _pass_kernel(model, ref, ctx)
    return _pass_blocks(model, ref, ctx)


def _cache_params(unused_ids: np.ndarray) -> dict:
    digest = hashlib.sha256(np.ascontiguousarray(unused_ids, dtype=np.int64).tobytes()).hexdigest()
    return {"version": CACHE_VERSION, "unused": digest[:16]}


def _load_pass(model, params: dict, cache_dir: Path) -> PassResult | None:
    arrays = cached.load(model, CACHE_KIND, params, cache_dir)
    need = {"sq", "refdot", "ref", "count", "mean", "m2"}
    if arrays is None or not need <= set(arrays):
        return None
    return PassResult(
        arrays["sq"],
        arrays["refdot"],
        arrays["ref"],
        int(arrays["count"]),
        arrays["mean"],
        arrays["m2"],
    )


def compute_stats(
    model,
    ctx: JobContext = NULL_CONTEXT,
    cache_dir: Path | None = None,
    use_cache: bool = True,
) -> StatsResult:
    """The statistics of the whole vocabulary; the streaming pass is cached per file."""
    unused_ids = undertrained.known_unused_ids(model)
    params = _cache_params(unused_ids)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    p = _load_pass(model, params, root) if use_cache else None
    from_cache = p is not None
    if p is None:
        p = streaming_pass(model, ctx, unused_ids)
        if use_cache:
            arrays = {"sq": p.sq, "refdot": p.refdot, "ref": p.ref, "mean": p.mean, "m2": p.m2}
            cached.save(model, CACHE_KIND, params, root, {**arrays, "count": np.array(p.count)})
    else:
        ctx.progress(1.0)
    return derive(model, p, unused_ids, cached=from_cache)


def derive(model, p: PassResult, unused_ids: np.ndarray, cached: bool = False) -> StatsResult:
    """Everything the statistics show, from the pass's arrays (cheap: no matrix reads)."""
    with np.errstate(invalid="ignore"):
        norms = np.where(np.isfinite(p.sq), np.sqrt(p.sq), np.nan)
        std = np.sqrt(p.m2 / p.count) if p.count else np.full(model.dim, np.nan)
    outliers, z = outlier_dimensions(std)
    candidates = np.ones(model.rows, dtype=bool)
    candidates[unused_ids] = False
    cosine = undertrained.unused_cosine(p.refdot, p.sq, p.ref)
    pieces = model.tokenizer.pieces if model.tokenizer is not None else None
    suspicious = undertrained.find_suspicious(p.sq, cosine, candidates, pieces)
    return StatsResult(
        rows=model.rows,
        dim=model.dim,
        norms=norms,
        dim_mean=p.mean if p.count else np.full(model.dim, np.nan),
        dim_std=std,
        outliers=outliers,
        dim_z=z,
        suspicious=suspicious,
        kinds=token_kinds(model),
        unused_cosine=cosine,
        known_unused=unused_ids,
        cached=cached,
    )
