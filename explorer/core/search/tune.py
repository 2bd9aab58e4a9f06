"""Choose the fast index's candidate counts per metric by measured recall@10 (see search_build).

For each query the exact top-10 is known from the build pass.  One stage-one scan and one
stage-two scan of the widest candidate list give, for every true neighbour, the rank it
would have in each stage, so the recall of every (c1, c2) setting follows without searching
again: a neighbour is found when it survives stage one (rank < c1) and stage two (rank among
those c1 rows < c2); stage three scores exactly and cannot lose it.  The queries go through
in batches (search_tune_ranks): one pass over the code heads serves a whole batch."""

from __future__ import annotations

import numpy as np

from explorer.core.context import JobContext
from explorer.core.search import tune_ranks
from explorer.core.search.fast import TARGET_RECALL, IndexStats, SignIndex

# Steps of √2: the cheapest setting that reaches the target is at most ~1.4× too wide.
C2_STEPS = tuple(int(round(100 * 2 ** (i / 2))) for i in range(13))  # 100 … 6400
C1_FRACTIONS = tuple(2 ** (-7 + i / 2) for i in range(9))  # 1/128 … 1/8 of the rows
MIN_C1 = 2000
CALIBRATE = 100
CHOOSE_AT = 0.998  # on the calibration queries ...
WIDEN_UNTIL = 0.995  # ... and on the held-out ones: a margin, so that new queries clear 0.99
BATCH = 32  # queries per pass over the code heads


def grid(rows: int) -> tuple[list[int], list[int]]:
    c1s = sorted({min(rows, max(MIN_C1, int(f * rows))) for f in C1_FRACTIONS})
    c2s = sorted({min(c, c1s[-1]) for c in C2_STEPS})
    return c1s, c2s


def cost(index: SignIndex, c1: int, c2: int) -> float:
    """Rough cost per query: stage two reads c1 codes (five popcounts a word: ×2), stage
    three reads c2 stored rows."""
    dim = index.u.shape[0]
    return c1 * (16 * index.codes.shape[1] + 32) + c2 * (2 * dim + 256)


def tune(
    index: SignIndex, qids: np.ndarray, qrows: np.ndarray, truth, ctx: JobContext
) -> IndexStats:
    """Progress 0.87..1 of the build; returns IndexStats with the chosen settings and recall."""
    valid = np.isfinite(index.sq) & (index.sq > 0)
    penalty = np.where(valid, 0, -np.inf).astype(np.float32)
    norms = np.sqrt(np.where(valid, index.sq, 0)).astype(np.float32)
    c1s, c2s = grid(index.rows)
    metrics = ("cosine", "dot")
    scales = np.stack([np.ones(index.rows, np.float32), norms])
    sets = [truth.sets(metric) for metric in metrics]
    hits = np.zeros((len(metrics), len(qids), len(c1s), len(c2s)), np.int64)
    ctx.progress(0.87)
    for lo in range(0, len(qids), BATCH):
        ctx.check("index build")
        hi = min(len(qids), lo + BATCH)
        qcs = [index.query_code(qrows[i]) for i in range(lo, hi)]
        batch_sets = [s[lo:hi] for s in sets]
        hits[:, lo:hi] = tune_ranks.batch_hits(
            index, qcs, scales, penalty, qids[lo:hi], batch_sets, c1s, c2s
        )
        ctx.progress(0.87 + 0.13 * hi / len(qids))
    stats = IndexStats({}, max(0, len(qids) - CALIBRATE), {}, {})
    reasons = []
    for m_no, metric in enumerate(metrics):
        want = np.array([min(10, len(s)) for s in sets[m_no]], np.int64)
        cal, n_cal = hits[m_no, :CALIBRATE].sum(0), int(want[:CALIBRATE].sum())
        meas, n_meas = hits[m_no, CALIBRATE:].sum(0), int(want[CALIBRATE:].sum())
        r_cal = cal / max(1, n_cal)
        r_meas = meas / max(1, n_meas) if n_meas else r_cal
        options = sorted(
            (
                (cost(index, c1s[i], c2s[j]), i, j)
                for i in range(len(c1s))
                for j in range(len(c2s))
                if c2s[j] <= c1s[i]
            ),
        )
        chosen = next(((i, j) for _, i, j in options if r_cal[i, j] >= CHOOSE_AT), None)
        if chosen is None:
            chosen = (len(c1s) - 1, len(c2s) - 1)
        i, j = chosen
        while r_meas[i, j] < WIDEN_UNTIL and (i < len(c1s) - 1 or j < len(c2s) - 1):
            i, j = min(i + 1, len(c1s) - 1), min(j + 1, len(c2s) - 1)  # widen both lists
        stats.settings[metric] = [int(c1s[i]), int(c2s[j])]
        stats.recall_at_10[metric] = round(float(r_meas[i, j]), 4)
        stats.usable[metric] = bool(r_meas[i, j] >= TARGET_RECALL)
        if not stats.usable[metric]:
            reasons.append(
                f"{metric}: recall@10 {r_meas[i, j]:.3f} < {TARGET_RECALL} even with the widest "
                f"candidate lists ({c1s[i]}, {c2s[j]})"
            )
    stats.reason = "; ".join(reasons)
    return stats
