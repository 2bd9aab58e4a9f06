"""Which (c1, c2) settings find each tuning query's true neighbours, for a batch of queries.

For one query and one metric, stage one orders the finite rows by their head estimate (ties:
lower id first, as search's stage one cuts) and keeps the first c1; stage two keeps the c2 of
those with the best asymmetric estimate. A true neighbour at stage-one rank p is found by
(c1, c2) when p < c1 and fewer than c2 of the first c1 rows have a higher stage-two estimate.
So one Hamming pass over the heads for the whole batch (`codes.hamming_many`), a selection of
the widest c1 per query, and stage two on those rows only, give every setting's hits at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.search import codes as search_codes
from explorer.core.search.codes import estimate_h, estimate_q

SAMPLE_STEP = 16  # every 16th key gives a first cut a little below the widest c1
BINS = 4096  # of the histogram that ranks the candidates
STAGE_TWO_TILE_BYTES = 256 << 10  # codes of a tile of rows: stays in L2 while queries read it


@njit(cache=True, nogil=True)
def _keys_above(h, table, a, wn, scale, penalty, aq, wq, qid, full, cut, keys):
    # pragma: no cover - compiled
    """Keys of the rows other than `qid` whose finite estimate is at least `cut`, in id order,
    into keys; returns how many. A key orders rows by estimate descending, then id ascending
    (all distinct)."""
    box = np.empty(1, np.float32)
    bits = box.view(np.uint32)
    top, low32 = np.uint64(0x80000000), np.uint64(0xFFFFFFFF)
    m = 0
    for i in range(a.shape[0]):
        e = penalty[i] if full else estimate_h(h[i], i, table, a, wn, scale, penalty, aq, wq)
        box[0] = e + np.float32(0.0)  # -0 → +0: equal estimates tie, broken by id
        b = np.uint64(bits[0])
        b = (~b & low32) if b & top else (b | top)
        keys[m] = (b << np.uint64(32)) | (low32 - np.uint64(i))  # kept if m moves on
        m += (e >= cut) & (i != qid) & np.isfinite(e)  # no branch: ~1 row in 8 passes
    return m


@njit(cache=True, nogil=True)
def _sample_cut(h, table, a, wn, scale, penalty, aq, wq, qid, full, widest):
    # pragma: no cover - compiled
    """An estimate a little below the widest c1's, read off every SAMPLE_STEP-th row (-inf
    when the widest c1 keeps a quarter of the rows or more: no cut saves much)."""
    n = a.shape[0]
    if widest >= n // 4:
        return -np.inf
    sample = np.empty((n + SAMPLE_STEP - 1) // SAMPLE_STEP, np.float32)
    ns = 0
    for i in range(0, n, SAMPLE_STEP):
        e = penalty[i] if full else estimate_h(h[i], i, table, a, wn, scale, penalty, aq, wq)
        if i != qid and np.isfinite(e):
            sample[ns] = e
            ns += 1
    above = int(1.25 * widest / SAMPLE_STEP) + 1
    if ns <= above:
        return -np.inf
    return np.partition(sample[:ns], ns - 1 - above)[ns - 1 - above]


@njit(cache=True, nogil=True)
def _ranked(keys, ranks):  # pragma: no cover - compiled
    """The ranks[i]-th largest of the distinct keys, for every i (1 ≤ ranks[i] ≤ len(keys)):
    a histogram over the keys' range finds the bin that holds each, then only those bins'
    keys are sorted (a partition of every key for nine ranks cost several times more)."""
    lo, hi = keys[0], keys[0]
    for k in keys:
        lo, hi = min(lo, k), max(hi, k)
    shift = np.uint64(0)  # bin = (key - lo) >> shift < BINS
    while (hi - lo) >> shift >= np.uint64(BINS):
        shift += np.uint64(1)
    counts = np.zeros(BINS, np.int64)
    for k in keys:
        counts[(k - lo) >> shift] += 1
    # each rank's bin, and how many keys lie in the bins above it
    at = np.empty(len(ranks), np.int64)
    above = np.empty(len(ranks), np.int64)
    for i in range(len(ranks)):
        b, seen = BINS - 1, 0
        while seen + counts[b] < ranks[i]:
            seen += counts[b]
            b -= 1
        at[i], above[i] = b, seen
    slot = np.full(BINS, -1, np.int64)  # the bins needed, each with room for its keys
    starts = np.zeros(len(ranks) + 1, np.int64)
    used = 0
    for b in np.unique(at):
        slot[b] = used
        starts[used + 1] = starts[used] + counts[b]
        used += 1
    held = np.empty(starts[used], np.uint64)
    fill = starts[:used].copy()
    for k in keys:
        j = slot[(k - lo) >> shift]
        if j >= 0:
            held[fill[j]] = k
            fill[j] += 1
    out = np.empty(len(ranks), np.uint64)
    for j in range(used):
        held[starts[j] : starts[j + 1]] = np.sort(held[starts[j] : starts[j + 1]])
    for i in range(len(ranks)):
        j = slot[at[i]]
        out[i] = held[starts[j + 1] - (ranks[i] - above[i])]
    return out


@njit(cache=True, nogil=True)
def _select(h, table, a, wn, scale, penalty, aq, wq, qid, c1s, full, sel, bucket):
    # pragma: no cover - compiled
    """Stage one of one query: the ids (in id order) of the first `take` = min(widest c1,
    finite rows) rows into sel[:take], and for each the first i with it among the first
    c1s[i] into bucket; returns take."""
    args = (h, table, a, wn, scale, penalty, aq, wq, qid, full)
    keys = np.empty(a.shape[0] + 1, np.uint64)  # one spare: every row's key is written
    cut = _sample_cut(*args, c1s[-1])
    m = _keys_above(*args, cut, keys)
    if m < c1s[-1] and cut > -np.inf:  # the sample's cut was too high: every finite row
        m = _keys_above(*args, -np.inf, keys)
    take = min(c1s[-1], m)
    if take == 0:
        return 0
    cand = keys[:m]
    n1 = len(c1s)
    ranks = np.empty(n1, np.int64)
    for i in range(n1):
        ranks[i] = min(c1s[i], take)
    thr = _ranked(cand, ranks)  # the key of each c1's last row (decreasing)
    s = 0
    for key in cand:
        if key >= thr[n1 - 1]:
            sel[s] = np.int64(np.uint64(0xFFFFFFFF) - (key & np.uint64(0xFFFFFFFF)))
            b = 0
            while key < thr[b]:
                b += 1
            bucket[s] = b
            s += 1
    return take


@njit(parallel=True, cache=True, nogil=True)
def _stage_one(h, table, a, wn, scales, penalty, aq, wq, qids, c1s, full, sel, bucket, taken):
    n_metrics, nb = scales.shape[0], qids.shape[0]
    for task in prange(n_metrics * nb):  # pragma: no cover - compiled
        m, q = task // nb, task % nb
        taken[task] = _select(
            h[q],
            table,
            a,
            wn,
            scales[m],
            penalty,
            aq[q],
            wq[q],
            qids[q],
            c1s,
            full,
            sel[task],
            bucket[task],
        )


@njit(parallel=True, cache=True, nogil=True)
def _stage_two(codes, a, wn, scales, penalty, aq, wq, planes, lin, sel, taken, tile, est2):
    """est2[task, s]: the stage-two estimate of row sel[task, s], a tile of rows at a time
    (the tile's codes stay in cache while every query reads its rows from it)."""
    n = codes.shape[0]
    nb = aq.shape[0]
    for t in prange((n + tile - 1) // tile):  # pragma: no cover - compiled
        lo, hi = t * tile, min(n, (t + 1) * tile)
        for task in range(sel.shape[0]):
            m, q = task // nb, task % nb
            ids = sel[task, : taken[task]]
            for s in range(np.searchsorted(ids, lo), np.searchsorted(ids, hi)):
                est2[task, s] = estimate_q(
                    codes, ids[s], planes[q], lin[q], a, wn, scales[m], penalty, aq[q], wq[q]
                )


@njit(cache=True, nogil=True, inline="always")
def _holds(ids, i):  # pragma: no cover - compiled
    for j in ids:
        if j == i:
            return True
    return False


@njit(cache=True, nogil=True)
def _count(est2, bucket, sel, true, c2s, hits):  # pragma: no cover - compiled
    n1 = hits.shape[0]
    counts = np.empty(n1, np.int64)
    for f in range(sel.shape[0]):
        if not _holds(true, sel[f]):
            continue
        counts[:] = 0
        for j in range(sel.shape[0]):
            if est2[j] > est2[f]:
                counts[bucket[j]] += 1
        better = 0
        for i in range(n1):
            better += counts[i]
            if i >= bucket[f]:
                for j in range(len(c2s)):
                    hits[i, j] += better < c2s[j]
    cap = min(10, len(true))
    for i in range(n1):
        for j in range(len(c2s)):
            hits[i, j] = min(hits[i, j], cap)


@njit(parallel=True, cache=True, nogil=True)
def _stage_counts(est2, bucket, sel, taken, true, n_true, c2s, hits):
    nb = true.shape[1]
    for task in prange(sel.shape[0]):  # pragma: no cover - compiled
        m, q = task // nb, task % nb
        k = taken[task]
        _count(
            est2[task, :k],
            bucket[task, :k],
            sel[task, :k],
            true[m, q, : n_true[m, q]],
            c2s,
            hits[m, q],
        )


def batch_hits(index, qcs, scales, penalty, qids, true_sets, c1s, c2s) -> np.ndarray:
    """int64 [metrics, queries, len(c1s), len(c2s)]: the true neighbours (true_sets[m][q],
    capped at 10) each setting finds, for query vectors' codes `qcs` of rows `qids`;
    scales float32 [metrics, rows] (1 for cosine, norms for dot)."""
    n_metrics, nb = len(scales), len(qcs)
    hw = index.head.shape[1]
    full = c1s[-1] >= index.rows  # stage one keeps every row: no head scan
    if full:
        h = np.zeros((nb, 1), np.uint16)
    else:
        h = search_codes.hamming_many(index.head, np.stack([qc.code[:hw] for qc in qcs]))
    width = max([1] + [len(s) for sets in true_sets for s in sets])
    true = np.full((n_metrics, nb, width), -1, np.int64)
    n_true = np.zeros((n_metrics, nb), np.int64)
    for m, sets in enumerate(true_sets):
        for q, s in enumerate(sets):
            true[m, q, : len(s)] = s
            n_true[m, q] = len(s)
    hits = np.zeros((n_metrics, nb, len(c1s), len(c2s)), np.int64)
    widest = min(int(c1s[-1]), index.rows)
    sel = np.empty((n_metrics * nb, widest), np.int64)
    bucket = np.empty((n_metrics * nb, widest), np.int64)
    est2 = np.empty((n_metrics * nb, widest), np.float32)
    taken = np.zeros(n_metrics * nb, np.int64)
    scales = np.ascontiguousarray(scales, np.float32)
    aq = np.array([qc.aq for qc in qcs], np.float32)
    wq = np.array([qc.wq for qc in qcs], np.float32)
    c1s = np.asarray(c1s, np.int64)
    tile = max(64, STAGE_TWO_TILE_BYTES // (8 * index.codes.shape[1]))
    table = search_codes.angle_table(64 * hw)
    with KERNEL_LOCK:
        _stage_one(
            h,
            table,
            index.a,
            index.wn,
            scales,
            penalty,
            aq,
            wq,
            np.asarray(qids, np.int64),
            c1s,
            full,
            sel,
            bucket,
            taken,
        )
        _stage_two(
            index.codes,
            index.a,
            index.wn,
            scales,
            penalty,
            aq,
            wq,
            np.stack([qc.planes for qc in qcs]),
            np.stack([qc.lin for qc in qcs]),
            sel,
            taken,
            tile,
            est2,
        )
        _stage_counts(est2, bucket, sel, taken, true, n_true, np.asarray(c2s, np.int64), hits)
    return hits
