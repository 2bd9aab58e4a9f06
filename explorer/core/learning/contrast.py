"""The contrast between a real matrix and its random twin, in numbers.

Every function reads through the `RowSource` interface (rows, dim, vectors, decode_block), so it
works on an EmbeddingModel and on a RandomTwin alike, block by block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.learning.measures import unit_rows

if TYPE_CHECKING:  # twin's kernels import numba (LLVM)
    from explorer.core.learning.twin import RowSource

BLOCK_ROWS = 8192

# Small groups of words that belong together; a token's neighbours should come from its group.
REFERENCE_GROUPS: dict[str, tuple[str, ...]] = {
    "animals": ("cat", "dog", "horse", "cow", "pig", "sheep", "mouse", "rabbit", "bird", "fish"),
    "colours": ("red", "green", "blue", "yellow", "black", "white", "brown", "pink", "purple"),
    "numbers": ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    "days": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "months": ("january", "february", "march", "april", "june", "july", "august", "october"),
    "family": ("mother", "father", "sister", "brother", "son", "daughter", "wife", "husband"),
}


def top_neighbors(
    source: RowSource,
    query_ids: Sequence[int],
    k: int = 10,
    restrict: np.ndarray | None = None,
    ctx: JobContext = NULL_CONTEXT,
) -> np.ndarray:
    """int64 [len(query_ids), k]: each query row's k nearest rows by cosine (itself left out),
    streamed block by block; `restrict` (bool [rows]) limits the candidates."""
    qids = np.asarray(query_ids, dtype=np.int64).reshape(-1)
    q = unit_rows(source.vectors(qids))
    best_s = np.full((len(q), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(q), 0), dtype=np.int64)
    for start in range(0, source.rows, BLOCK_ROWS):
        ctx.check()
        block = source.decode_block(start, start + BLOCK_ROWS)
        s = unit_rows(block) @ q.T  # [b, nq]
        s[~np.isfinite(s)] = -np.inf
        if restrict is not None:
            s[~restrict[start : start + len(block)]] = -np.inf
        ids = np.arange(start, start + len(block), dtype=np.int64)
        mine = (qids >= start) & (qids < start + len(block))
        s[qids[mine] - start, np.flatnonzero(mine)] = -np.inf  # each query itself
        best_s = np.concatenate([best_s, s.T], axis=1)
        best_i = np.concatenate([best_i, np.broadcast_to(ids, (len(q), len(ids)))], axis=1)
        if best_s.shape[1] > k:
            keep = np.argpartition(-best_s, k - 1, axis=1)[:, :k]
            best_s = np.take_along_axis(best_s, keep, axis=1)
            best_i = np.take_along_axis(best_i, keep, axis=1)
    order = np.argsort(-best_s, axis=1, kind="stable")
    return np.take_along_axis(best_i, order, axis=1)[:, :k]


def overlap(a: Sequence[int], b: Sequence[int]) -> float:
    """|a ∩ b| / |a|: the share of list a that list b also holds."""
    a = [int(x) for x in a]
    return len(set(a) & {int(x) for x in b}) / len(a) if a else 0.0


def reference_groups(tokenizer) -> dict[str, list[int]]:
    """REFERENCE_GROUPS as token ids: words that are one token in this tokenizer (a leading
    space first, for byte-level BPE), groups that keep at least three."""
    texts = [t for words in REFERENCE_GROUPS.values() for w in words for t in (" " + w, w)]
    encoded = dict(zip(texts, tokenizer.encode_batch_ids(texts), strict=True))
    out: dict[str, list[int]] = {}
    for name, words in REFERENCE_GROUPS.items():
        ids: list[int] = []
        for w in words:
            for text in (" " + w, w):
                enc = encoded[text]
                if len(enc) == 1:
                    ids.append(int(enc[0]))
                    break
        if len(set(ids)) >= 3:
            out[name] = sorted(set(ids))
    return out


def group_overlap(
    source: RowSource,
    groups: dict[str, list[int]],
    k: int = 10,
    ctx: JobContext = NULL_CONTEXT,
) -> float:
    """Mean over every word of every group: the share of the other group members found among its
    k nearest rows (k capped at the group size − 1). Chance level is about k / rows."""
    queries = [i for ids in groups.values() for i in ids]
    if not queries:
        raise ExplorerError("no reference words are single tokens in this vocabulary")
    found = top_neighbors(source, queries, k=k, ctx=ctx)
    scores = []
    row = 0
    for ids in groups.values():
        for i in ids:
            others = [j for j in ids if j != i]
            scores.append(overlap(others, found[row][: len(others)]) if others else 0.0)
            row += 1
    return float(np.mean(scores))


@dataclass(frozen=True)
class CosineSpread:
    mean: float
    std: float
    p05: float
    p95: float
    counts: np.ndarray  # histogram counts
    edges: np.ndarray  # histogram bin edges, -1..1


def cosine_spread(
    source: RowSource, pairs: int = 20_000, seed: int = 0, bins: int = 80
) -> CosineSpread:
    """Cosines of random pairs of distinct rows: a real matrix spreads them, noise spikes at 0."""
    if source.rows < 2:
        raise ExplorerError("cosine spread needs at least two rows")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, source.rows, size=pairs)
    b = (a + rng.integers(1, source.rows, size=pairs)) % source.rows
    uniq, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    rows = unit_rows(source.vectors(uniq))
    cos = np.einsum("ij,ij->i", rows[inv[:pairs]], rows[inv[pairs:]]).astype(np.float64)
    cos = cos[np.isfinite(cos)]
    counts, edges = np.histogram(cos, bins=bins, range=(-1.0, 1.0))
    return CosineSpread(
        float(cos.mean()),
        float(cos.std()),
        float(np.percentile(cos, 5)),
        float(np.percentile(cos, 95)),
        counts,
        edges,
    )


def map_trustworthiness(
    source: RowSource,
    ids: Sequence[int],
    coords: np.ndarray | None = None,
    n_neighbors: int = 10,
    seed: int = 0,
) -> float:
    """Trustworthiness (cosine) of a 2-D map of the rows `ids`; a PCA map unless `coords`."""
    from explorer.core.map import projection  # lazily: sklearn is imported there

    x = source.vectors(list(ids))
    xy = projection.pca_2d(projection.prepare(x), seed=seed) if coords is None else coords
    return projection.trustworthiness(x, xy, n_neighbors=n_neighbors)
