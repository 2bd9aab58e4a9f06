"""Exact scores (cosine or dot product) of each sampled row with its candidates, at both
precisions, and the best `depth` of them: the last step of approximate neighbour drift.

Each query's candidates are the union of the two precisions' shortlists, so both precisions
rank the same rows; each candidate row is decoded into a small buffer exactly as
`gguf.quants.dequantize` would (kernels.decode_row) and its dot product taken there.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.quant import kernels
from explorer.core.quant.precision import Precision

GROUP = 64  # queries per launch (a cancel is noticed between launches)
_DOT = {"reassoc", "nsz", "arcp", "contract"}


@njit(fastmath=_DOT, cache=True, nogil=True)
def _dot(x, y):  # pragma: no cover - compiled
    s = np.float32(0.0)
    for j in range(x.shape[0]):
        s += x[j] * y[j]
    return s


@njit(cache=True, nogil=True)
def _union(a, na, b, nb):  # pragma: no cover - compiled
    """The sorted union of two sorted id lists."""
    out = np.empty(na + nb, np.int64)
    i = j = n = 0
    while i < na or j < nb:
        if j >= nb or (i < na and a[i] < b[j]):
            out[n] = a[i]
            i += 1
        elif i >= na or b[j] < a[i]:
            out[n] = b[j]
            j += 1
        else:
            out[n] = a[i]
            i += 1
            j += 1
        n += 1
    return out[:n]


@njit(cache=True, nogil=True)
def _best(scores, ids, depth, top, top_scores):  # pragma: no cover - compiled
    """The `depth` best (score, then lower id first: `ids` are sorted) into top/top_scores."""
    order = np.argsort(-scores, kind="mergesort")
    m = min(depth, len(order))
    for t in range(m):
        top[t] = ids[order[t]]
        top_scores[t] = scores[order[t]]


@njit(parallel=True, cache=True, nogil=True)
def _rerank(
    ref_raw,
    ref_kind,
    other_raw,
    other_kind,
    f16,
    q_ref,
    q_other,
    inv_ref,
    inv_other,
    ref_list,
    ref_n,
    other_list,
    other_n,
    depth,
    ref_top,
    other_top,
    ref_scores,
    pairs,
):  # pragma: no cover - compiled
    nq, dim = q_ref.shape
    for q in prange(nq):
        ids = _union(ref_list[q], ref_n[q], other_list[q], other_n[q])
        n = len(ids)
        pairs[q] = n
        sr = np.empty(n, np.float32)
        so = np.empty(n, np.float32)
        buf = np.empty(dim, np.float32)
        for t in range(n):
            r = ids[t]
            kernels.decode_row(ref_raw[r], ref_kind, f16, buf)
            sr[t] = _dot(buf, q_ref[q]) * inv_ref[r]
            kernels.decode_row(other_raw[r], other_kind, f16, buf)
            so[t] = _dot(buf, q_other[q]) * inv_other[r]
        _best(sr, ids, depth, ref_top[q], ref_scores[q])
        _best(so, ids, depth, other_top[q], np.empty(depth, np.float32))


def rerank(
    ref: Precision,
    other: Precision,
    queries: tuple[np.ndarray, np.ndarray],
    factors: tuple[np.ndarray, np.ndarray],
    lists: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    depth: int,
    ctx: JobContext = NULL_CONTEXT,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ref_top, other_top [n, depth] row ids, best first, -1 where a query has fewer
    candidates; ref_scores [n, depth] float32; pairs [n]: candidates scored per query).

    queries: rows [n, dim] at each precision (unit rows for cosine); factors: what each row's
    dot product is multiplied by at each precision (1/|row| for cosine, Sketch.factors);
    lists: each precision's (candidates [n, m] sorted, counts [n])."""
    ref_raw, ref_kind = ref.raw_block(0, ref.rows)
    other_raw, other_kind = other.raw_block(0, other.rows)
    nq = len(queries[0])
    ref_top = np.full((nq, depth), -1, np.int64)
    other_top = np.full((nq, depth), -1, np.int64)
    ref_scores = np.full((nq, depth), -np.inf, np.float32)
    pairs = np.zeros(nq, np.int64)
    (ref_list, ref_n), (other_list, other_n) = lists
    inv_ref, inv_other = (np.asarray(v, np.float32) for v in factors)
    for g0 in range(0, nq, GROUP):
        ctx.check("neighbour drift")
        g = slice(g0, min(nq, g0 + GROUP))
        with KERNEL_LOCK:
            _rerank(
                ref_raw,
                ref_kind,
                other_raw,
                other_kind,
                kernels.F16_TABLE,
                np.ascontiguousarray(queries[0][g]),
                np.ascontiguousarray(queries[1][g]),
                inv_ref,
                inv_other,
                ref_list[g],
                ref_n[g],
                other_list[g],
                other_n[g],
                depth,
                ref_top[g],
                other_top[g],
                ref_scores[g],
                pairs[g],
            )
        ctx.progress(g.stop / nq)
    return ref_top, other_top, ref_scores, pairs
