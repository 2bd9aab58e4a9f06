"""Candidate neighbours of each sampled row at one precision, from the sign codes alone.

Two stages, as in the fast index: the Hamming distance of the first 1024 bits of every row's
code (an estimate of the angle) keeps the best `wide` rows; the query's own rotated coordinates
against those rows' full codes (an estimate about twice as precise) keep the best `narrow`.
Stage one reads every row for every query, so it runs on tiles of rows that stay in the CPU's
cache while a group of queries passes over them, and keeps each query's best rows in a buffer
that is cut back to `wide` whenever it fills (rows below the cut are not stored at all).
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.quant.sketch import Rotation, Sketch
from explorer.core.search import codes as search_codes

HEAD_WORDS = 16  # 1024 bits: what stage one compares
TILE = 2048  # rows per tile: 2048 heads are 256 KB, within a core's L2
GROUP = 64  # queries per launch (a cancel is noticed between launches)
SEED_ROWS = 8192  # rows sampled for each query's first cut
SEED_MARGIN = 1.3  # the first cut lets about this many times `wide` rows through


@njit(cache=True, nogil=True)
def _select(scores, ids, count, keep, out_scores, out_ids):  # pragma: no cover - compiled
    """The `keep` best of the first `count` entries into out_*; returns how many and the
    lowest score kept (ties at it taken in order of position)."""
    kth = np.partition(scores[:count].copy(), count - keep)[count - keep]
    n = 0
    for t in range(count):
        if scores[t] > kth:
            out_scores[n] = scores[t]
            out_ids[n] = ids[t]
            n += 1
    for t in range(count):
        if n >= keep:
            break
        if scores[t] == kth:
            out_scores[n] = scores[t]
            out_ids[n] = ids[t]
            n += 1
    return n, kth


@njit(cache=True, nogil=True)
def _cut(scores, ids, count, keep):  # pragma: no cover - compiled
    """Keep the `keep` best of the first `count` entries, in place at the front."""
    return _select(scores[:count].copy(), ids[:count].copy(), count, keep, scores, ids)


@njit(cache=True, nogil=True)
def _scan_rows(
    head, a, wn, scale, penalty, qhead, q, fa, fw, me, table, r0, r1, dist, scores, ids, count,
    floor, keep,
):  # pragma: no cover - compiled  # fmt: skip
    """Rows [r0, r1) against query q: the distances first (a loop without branches, which
    vectorises), then the estimates, of which only those above `floor` are stored. Returns
    the new count and floor."""
    hw = qhead.shape[1]
    for r in range(r0, r1):
        h = np.int32(0)
        for k in range(hw):
            h += np.int32(search_codes._popcount(qhead[q, k] ^ head[r, k]))
        dist[r - r0] = h
    for r in range(r0, r1):
        e = (fa * a[r] + fw * wn[r] * table[dist[r - r0]]) * scale[r] + penalty[r]
        if e > floor and r != me:
            scores[count] = e
            ids[count] = r
            count += 1
            if count == len(scores):
                count, floor = _cut(scores, ids, count, keep)
    return count, floor


@njit(cache=True, nogil=True)
def _first_floor(head, a, wn, scale, penalty, qhead, q, fa, fw, me, table, keep):
    """A cut a little below the estimate of the query's `keep`-th best row, read off every
    stride-th row, so that a scan stores few more than `keep` rows (-inf: no cut)."""
    n = head.shape[0]
    stride = max(1, n // SEED_ROWS)
    seen = np.empty(SEED_ROWS + 1, np.float32)
    count = 0
    for r in range(0, n, stride):
        h = np.int32(0)
        for k in range(qhead.shape[1]):
            h += np.int32(search_codes._popcount(qhead[q, k] ^ head[r, k]))
        e = (fa * a[r] + fw * wn[r] * table[h]) * scale[r] + penalty[r]
        if np.isfinite(e) and r != me and count < len(seen):
            seen[count] = e
            count += 1
    rank = int(SEED_MARGIN * keep * count / n)
    if rank >= count or rank < 8:
        return -np.inf
    return np.partition(seen[:count], count - 1 - rank)[count - 1 - rank]


@njit(parallel=True, cache=True, nogil=True)
def _stage_one(
    head, a, wn, scale, penalty, qhead, aq, wq, qid, table, keep, parts, out, counts
):  # pragma: no cover - compiled
    """out[q, :counts[q]]: the `keep` rows of best Hamming estimate for each query (no order)."""
    nq = qhead.shape[0]
    n = head.shape[0]
    cap = 2 * keep
    for p in prange(parts):
        q0 = p * nq // parts
        m = (p + 1) * nq // parts - q0
        scores = np.empty((m, cap), np.float32)
        ids = np.empty((m, cap), np.int64)
        cnt = np.zeros(m, np.int64)
        floor = np.empty(m, np.float32)
        dist = np.empty(TILE, np.int32)
        for j in range(m):
            q = q0 + j
            floor[j] = _first_floor(
                head, a, wn, scale, penalty, qhead, q, aq[q], wq[q], qid[q], table, keep
            )
        for r0 in range(0, n, TILE):
            r1 = min(n, r0 + TILE)
            for j in range(m):
                q = q0 + j
                cnt[j], floor[j] = _scan_rows(
                    head,
                    a,
                    wn,
                    scale,
                    penalty,
                    qhead,
                    q,
                    aq[q],
                    wq[q],
                    qid[q],
                    table,
                    r0,
                    r1,
                    dist,
                    scores[j],
                    ids[j],
                    cnt[j],
                    floor[j],
                    keep,
                )
        for j in range(m):
            q = q0 + j
            if cnt[j] < keep and floor[j] > -np.inf:  # the first cut was too high: again
                cnt[j], lo = 0, -np.inf
                for r0 in range(0, n, TILE):
                    cnt[j], lo = _scan_rows(
                        head,
                        a,
                        wn,
                        scale,
                        penalty,
                        qhead,
                        q,
                        aq[q],
                        wq[q],
                        qid[q],
                        table,
                        r0,
                        min(n, r0 + TILE),
                        dist,
                        scores[j],
                        ids[j],
                        cnt[j],
                        lo,
                        keep,
                    )
            c = cnt[j]
            if c > keep:
                c, _ = _cut(scores[j], ids[j], c, keep)
            out[q, :c] = ids[j, :c]
            counts[q] = c


@njit(parallel=True, cache=True, nogil=True)
def _stage_two(
    codes, a, wn, scale, penalty, wide, wide_n, planes, lin, aq, wq, keep, out, counts
):  # pragma: no cover - compiled
    """out[q, :counts[q]]: the `keep` best of each query's stage-one rows by the asymmetric
    estimate over the full codes, sorted by row id."""
    for q in prange(wide.shape[0]):
        c = wide_n[q]
        ids = wide[q, :c].copy()
        est = np.empty(c, np.float32)
        search_codes._scan_ids_q(
            codes, ids, planes[q], lin[q], a, wn, scale, penalty, aq[q], wq[q], est
        )
        if c > keep:
            best = np.empty(keep, np.int64)
            c, _ = _select(est, ids, c, keep, np.empty(keep, np.float32), best)
            ids = best[:c]
        ids = np.sort(ids)
        out[q, :c] = ids
        counts[q] = c


def shortlist(
    sketch: Sketch,
    rot: Rotation,
    queries: np.ndarray,
    qids: np.ndarray,
    penalty: np.ndarray,
    wide: int,
    narrow: int,
    ctx: JobContext = NULL_CONTEXT,
    scale: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Candidates [n, narrow] (row ids, sorted; -1 past counts[q]) of each query (float32 rows
    [n, dim] at this precision; qids their own rows, never their own candidates). `penalty`:
    0 for rows that may be neighbours, -inf for the others; `scale`: each row's factor on its
    estimated cosine (its norm, for neighbours by dot product; none for cosine)."""
    rows, words = sketch.codes.shape
    hw = min(HEAD_WORDS, words)
    head = sketch.head(hw)
    table = search_codes.angle_table(64 * hw)
    scale = np.ones(rows, np.float32) if scale is None else np.asarray(scale, np.float32)
    nq = len(qids)
    wide, narrow = max(1, min(wide, rows)), max(1, min(narrow, wide, rows))
    out = np.full((nq, narrow), -1, np.int64)
    counts = np.zeros(nq, np.int64)
    a, wn = sketch.a, sketch.wn
    for g0 in range(0, nq, GROUP):
        ctx.check("neighbour drift")
        g = slice(g0, min(nq, g0 + GROUP))
        qc = [rot.query_code(v) for v in queries[g]]
        aq = np.array([c.aq for c in qc], np.float32)
        wq = np.array([c.wq for c in qc], np.float32)
        qhead = np.ascontiguousarray(np.stack([c.code[:hw] for c in qc]))
        planes = np.ascontiguousarray(np.stack([c.planes for c in qc]))
        lin = np.ascontiguousarray(np.stack([c.lin for c in qc]))
        first = np.full((len(qc), wide), -1, np.int64)
        first_n = np.zeros(len(qc), np.int64)
        qid = np.ascontiguousarray(qids[g], dtype=np.int64)
        parts = max(1, min(len(qc), 2 * get_num_threads()))
        with KERNEL_LOCK:
            _stage_one(
                head, a, wn, scale, penalty, qhead, aq, wq, qid, table, wide, parts, first, first_n
            )
            _stage_two(
                sketch.codes, a, wn, scale, penalty, first, first_n, planes, lin, aq, wq,
                narrow, out[g], counts[g],
            )  # fmt: skip
        ctx.progress(g.stop / nq)
    return out, counts
