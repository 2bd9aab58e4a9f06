"""Approximate neighbour drift: shortlists from each precision's sign codes, scored exactly.

1. One pass over both matrices writes every row's sign code at each precision (sketch.py).
2. Each sampled row, at each precision, gets a shortlist of `narrow` candidates from the codes
   of that precision (shortlist.py): a row that quantisation moved is looked for where it lies.
3. The union of the two shortlists is scored exactly at both precisions (rerank.py), and each
   precision's top-DEPTH is taken from it, with exact scores.
"""

from __future__ import annotations

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.quant.drift import DEPTH, NARROW, WIDE, Drift, K, unit_rows
from explorer.core.quant.precision import Precision
from explorer.core.quant.rerank import rerank
from explorer.core.quant.shortlist import shortlist
from explorer.core.quant.sketch import rotation, sketch_pair


def approximate_drifts(
    ref: Precision,
    other: Precision,
    ids: np.ndarray,
    candidates: np.ndarray,
    metrics: tuple[str, ...] = ("cosine",),
    ctx: JobContext = NULL_CONTEXT,
    wide: int = WIDE,
    narrow: int = NARROW,
) -> dict[str, Drift]:
    """Top-DEPTH neighbours of each row in `ids` among the `candidates` rows at both precisions
    by each metric ("cosine", "dot"), from shortlists of `narrow` rows (of `wide` by the coarse
    scan) per precision. With `wide` and `narrow` at least the number of rows every row is
    scored, and the drift is the exact one."""
    ids = np.asarray(ids, dtype=np.int64)
    depth = min(DEPTH, max(1, int(np.count_nonzero(candidates)) - 1))
    narrow = max(narrow, depth)
    rot = rotation(ref, candidates)
    sketches = sketch_pair(ref, other, rot, ctx.part(0.0, 0.4, "sign codes of every row"))
    penalty = np.where(candidates, 0, -np.inf).astype(np.float32)
    with KERNEL_LOCK:
        queries = [p.decode_ids(ids) for p in (ref, other)]
    out = {}
    width = 0.6 / max(1, len(metrics))
    for m_no, metric in enumerate(metrics):
        part = ctx.part(0.4 + m_no * width, width, f"neighbours by {metric}")
        lists = []
        for n, (q, s) in enumerate(zip(queries, sketches, strict=True)):
            scale = s.norms() if metric == "dot" else None
            step = part.part(0.35 * n, 0.35, "candidates")
            lists.append(shortlist(s, rot, q, ids, penalty, wide, narrow, step, scale))
        ref_top, other_top, ref_scores, pairs = rerank(
            ref,
            other,
            tuple(unit_rows(q, scaled=metric == "cosine") for q in queries),  # type: ignore[arg-type]
            (sketches[0].factors(metric), sketches[1].factors(metric)),
            (lists[0], lists[1]),
            depth,
            part.part(0.7, 0.3, "exact scores of the candidates"),
        )
        scored = float(pairs.mean()) if len(pairs) else 0.0
        out[metric] = Drift(
            ids, ref_top, other_top, ref_scores, min(K, depth), metric, "approximate", scored
        )
    return out
