"""Approximate neighbour drift: shortlists from each precision's sign codes, scored exactly.

1. One pass over both matrices writes every row's sign code at each precision (sketch.py).
2. Each sampled row, at each precision, gets a shortlist of `narrow` candidates from the codes
   of that precision (shortlist.py): a row that quantisation moved is looked for where it lies.
3. The union of the two shortlists is scored exactly at both precisions (rerank.py), and each
   precision's top-DEPTH is taken from it, with exact cosines.
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


def approximate_drift(
    ref: Precision,
    other: Precision,
    ids: np.ndarray,
    candidates: np.ndarray,
    ctx: JobContext = NULL_CONTEXT,
    wide: int = WIDE,
    narrow: int = NARROW,
) -> Drift:
    """Top-DEPTH cosine neighbours of each row in `ids` among the `candidates` rows at both
    precisions, from shortlists of `narrow` rows (of `wide` by the coarse scan) per precision.
    With `wide` and `narrow` at least the number of rows it is the exact drift."""
    ids = np.asarray(ids, dtype=np.int64)
    depth = min(DEPTH, max(1, int(np.count_nonzero(candidates)) - 1))
    narrow = max(narrow, depth)
    rot = rotation(ref, candidates)
    sketches = sketch_pair(ref, other, rot, ctx.part(0.0, 0.45, "sign codes of every row"))
    penalty = np.where(candidates, 0, -np.inf).astype(np.float32)
    with KERNEL_LOCK:
        queries = [p.decode_ids(ids) for p in (ref, other)]
    lists = []
    for n, (q, s, name) in enumerate(zip(queries, sketches, ("reference", "other"), strict=True)):
        part = ctx.part(0.45 + 0.2 * n, 0.2, f"candidates at the {name} precision")
        lists.append(shortlist(s, rot, q, ids, penalty, wide, narrow, part))
    ref_top, other_top, ref_scores, pairs = rerank(
        ref,
        other,
        (unit_rows(queries[0]), unit_rows(queries[1])),
        (sketches[0].inverse_norms, sketches[1].inverse_norms),
        (lists[0], lists[1]),
        depth,
        ctx.part(0.85, 0.15, "exact scores of the candidates"),
    )
    scored = float(pairs.mean()) if len(pairs) else 0.0
    return Drift(ids, ref_top, other_top, ref_scores, min(K, depth), "approximate", scored)
