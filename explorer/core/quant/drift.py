"""Neighbour drift: for a sample of tokens, their top-k among all token rows at both precisions
(by cosine, and by dot product when asked), how many they share and how far each reference
neighbour moved in rank.

Two ways to find the neighbours, chosen by cost: an exact scan of every row (float32 matrix
products, one pass over both matrices), or, when that would be slow, shortlists from each
precision's sign codes (quant/sketch.py, quant/shortlist.py) scored exactly at both precisions
(quant/rerank.py, drift_approx.py). The second ranks the same union of candidates at both
precisions and keeps the exact scores; a neighbour is missed only when both shortlists miss it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gguf.constants import GGMLQuantizationType as T

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.quant import kernels
from explorer.core.quant.precision import Precision
from explorer.core.quant.types import GGML_TYPES
from explorer.core.ranking import top_k_rows

K = 10
DEPTH = 50  # ranks followed at the other precision; a neighbour beyond them counts as DEPTH
BLOCK_VALUES = 1 << 23  # decoded values per block of candidate rows (32 MB of float32)
FIRST_BLOCK = 256
SAMPLE = 2000
# Above this many multiply-adds per precision and metric (queries × rows × values a row) the
# exact scan gives way to the approximate one.
EXACT_LIMIT = 1.2e11
WIDE = 8000  # candidates per query and precision kept by the Hamming scan of every row
NARROW = 800  # ... of those, kept by the finer estimate and scored exactly


@dataclass
class Drift:
    ids: np.ndarray  # int64 [n]: the sampled rows
    ref_top: np.ndarray  # int64 [n, DEPTH]: neighbours at the reference precision, best first
    other_top: np.ndarray  # int64 [n, DEPTH]
    ref_scores: np.ndarray  # float32 [n, DEPTH]: the reference scores of ref_top
    k: int = K
    metric: str = "cosine"  # or "dot"
    method: str = "exact"  # or "approximate": neighbours from sign-code shortlists
    scored: float = 0.0  # approximate: mean rows scored exactly per sampled row

    @property
    def overlap(self) -> np.ndarray:
        """int [n]: reference top-k neighbours also in the other precision's top-k."""
        a, b = self.ref_top[:, : self.k], self.other_top[:, : self.k]
        same = (a[:, :, None] == b[:, None, :]) & (a[:, :, None] >= 0)
        return same.any(axis=2).sum(axis=1)

    @property
    def gap(self) -> np.ndarray:
        """float [n]: reference cosine of the k-th neighbour minus that of the next one."""
        if self.ref_scores.shape[1] <= self.k:
            return np.full(len(self.ids), np.nan)
        return self.ref_scores[:, self.k - 1] - self.ref_scores[:, self.k]

    @property
    def displacement(self) -> np.ndarray:
        """float [n]: mean |rank change| of the reference top-k at the other precision (ranks
        from 0; a neighbour beyond DEPTH counts as rank DEPTH)."""
        a = self.ref_top[:, : self.k]
        same = (a[:, :, None] == self.other_top[:, None, :]) & (a[:, :, None] >= 0)
        rank = np.where(same.any(axis=2), same.argmax(axis=2), DEPTH)
        return np.abs(rank - np.arange(a.shape[1])).mean(axis=1)

    def most_changed(self, count: int = 20) -> np.ndarray:
        """The sampled rows whose neighbourhood changed most: fewest shared top-k neighbours,
        then largest rank displacement, then lowest id."""
        order = np.lexsort((self.ids, -self.displacement, self.overlap))
        return self.ids[order[:count]]


def sample_ids(measured: np.ndarray, size: int = SAMPLE, seed: int = 0) -> np.ndarray:
    """A sorted random sample of the measured rows (all of them when there are fewer)."""
    pool = np.flatnonzero(measured)
    if len(pool) <= size:
        return pool.astype(np.int64)
    return np.sort(np.random.default_rng(seed).choice(pool, size=size, replace=False))


def unit_rows(rows: np.ndarray, keep: np.ndarray | None = None, scaled: bool = True) -> np.ndarray:
    """Rows scaled to unit length (as they are with `scaled` False), zero where not kept or
    not finite."""
    rows = rows.astype(np.float32, copy=False)
    with np.errstate(all="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
        unit = (rows / norms[:, None]).astype(np.float32) if scaled else rows.copy()
    bad = ~(np.isfinite(norms) & (norms > 0))
    if keep is not None:
        bad |= ~keep
    unit[bad] = 0.0
    return unit


class _Best:
    """Running top-`depth` per query over blocks of candidates."""

    def __init__(self, queries: int, depth: int):
        self.scores = np.full((queries, depth), -np.inf, dtype=np.float32)
        self.ids = np.full((queries, depth), -1, dtype=np.int64)

    def add(self, scores: np.ndarray, offset: int) -> None:
        depth = self.scores.shape[1]
        floor = self.scores[:, -1]
        if np.isneginf(floor).any():  # not yet full: take each query's best of the block
            cols = top_k_rows(scores, min(depth, scores.shape[1]))
            q = np.repeat(np.arange(len(scores)), cols.shape[1])
            c = cols.ravel()
        else:
            q, c = np.nonzero(scores > floor[:, None])
            if not len(q):
                return
        s = scores[q, c]
        all_q = np.concatenate([np.repeat(np.arange(len(scores)), depth), q])
        all_s = np.concatenate([self.scores.ravel(), s])
        all_i = np.concatenate([self.ids.ravel(), c + offset])
        order = np.lexsort((all_i, -all_s, all_q))
        counts = np.bincount(all_q, minlength=len(scores))
        take = (np.cumsum(counts) - counts)[:, None] + np.arange(depth)
        self.scores = all_s[order][take]
        self.ids = all_i[order][take]


def reads_directly(p: Precision) -> bool:
    """Whether the kernels read `p`'s stored rows as they are (else whole blocks are decoded
    to float32 first, which looking rows up one by one cannot afford)."""
    return p.type_name in GGML_TYPES and T[p.type_name] in kernels.KINDS


def choose_method(ref: Precision, other: Precision, sample: int) -> str:
    """ "exact" where the exact scan is cheap (or the approximate one cannot read a format
    without decoding the whole matrix), else "approximate"."""
    if float(sample) * ref.rows * ref.dim <= EXACT_LIMIT:
        return "exact"
    if not (reads_directly(ref) and reads_directly(other)):
        return "exact"
    return "approximate"


def neighbour_drift(
    ref: Precision,
    other: Precision,
    ids: np.ndarray,
    candidates: np.ndarray,
    ctx: JobContext = NULL_CONTEXT,
    method: str = "auto",
) -> Drift:
    """Cosine top-DEPTH of each row in `ids` among the `candidates` rows (bool [rows]; the
    query itself excluded), at both precisions."""
    return neighbour_drifts(ref, other, ids, candidates, ("cosine",), ctx, method)["cosine"]


def neighbour_drifts(
    ref: Precision,
    other: Precision,
    ids: np.ndarray,
    candidates: np.ndarray,
    metrics: tuple[str, ...] = ("cosine", "dot"),
    ctx: JobContext = NULL_CONTEXT,
    method: str = "auto",
) -> dict[str, Drift]:
    """Neighbour drift by each metric ("cosine", "dot"); `method` "exact", "approximate" or
    "auto" (by cost: choose_method)."""
    if method == "auto":
        method = choose_method(ref, other, len(ids))
    if method == "approximate":
        from explorer.core.quant.drift_approx import approximate_drifts

        return approximate_drifts(ref, other, ids, candidates, metrics, ctx)
    return exact_drifts(ref, other, ids, candidates, metrics, ctx)


def exact_drifts(
    ref: Precision,
    other: Precision,
    ids: np.ndarray,
    candidates: np.ndarray,
    metrics: tuple[str, ...] = ("cosine", "dot"),
    ctx: JobContext = NULL_CONTEXT,
) -> dict[str, Drift]:
    """Exact drift by each metric, in one pass over both matrices (each block of rows decoded
    once; a metric more is one matrix product more per block)."""
    ids = np.asarray(ids, dtype=np.int64)
    depth = min(DEPTH, max(1, int(np.count_nonzero(candidates)) - 1))
    runs = [(m, p) for m in metrics for p in (ref, other)]  # (metric, precision)
    queries = [unit_rows(p.decode_ids(ids), scaled=m == "cosine") for m, p in runs]
    best = [_Best(len(ids), depth) for _ in runs]
    # a small first block fills the running lists; later blocks only pass what beats them
    starts = [0, min(ref.rows, FIRST_BLOCK)]
    step = max(256, BLOCK_VALUES // max(1, ref.dim))
    starts += list(range(starts[1] + step, ref.rows, step))
    for start, stop in zip(starts, [*starts[1:], ref.rows], strict=True):
        if stop <= start:
            continue
        ctx.check("neighbour drift")
        keep = candidates[start:stop]
        mine = np.flatnonzero((ids >= start) & (ids < stop))
        for p in (ref, other):
            block = p.decode_block(start, stop)
            for (m, owner), q, b in zip(runs, queries, best, strict=True):
                if owner is not p:
                    continue
                scores = q @ unit_rows(block, keep, scaled=m == "cosine").T
                if not keep.all():
                    scores[:, ~keep] = -np.inf
                scores[mine, ids[mine] - start] = -np.inf  # not its own neighbour
                b.add(scores, start)
        ctx.progress(stop / ref.rows)
    return {
        m: Drift(ids, best[2 * n].ids, best[2 * n + 1].ids, best[2 * n].scores, min(K, depth), m)
        for n, m in enumerate(metrics)
    }
