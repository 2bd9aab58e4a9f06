"""Two models side by side: vocabularies aligned by decoded token bytes, exact cosine neighbours
of a token in each model, their overlap, and the overlap's distribution over shared tokens."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import AnalysisError
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

BATCH = 32  # queries per pass over a matrix in the overlap distribution


def _bytes_index(model) -> tuple[dict[bytes, int], dict[bytes, int]]:
    """Decoded bytes → id, and the WordPiece continuations ('##x') that share bytes with a
    word-start token (those are paired only with continuations of the other model)."""
    tok = model.tokenizer
    if tok is None:
        raise AnalysisError(
            f"{model.path.name}: has no tokenizer.json, so its tokens cannot be aligned by bytes"
        )
    prefix = "" if tok.byte_level else tok.subword_prefix
    index: dict[bytes, int] = {}
    continuation: dict[bytes, int] = {}
    for i, piece in enumerate(tok.pieces[: model.rows]):
        if piece is None:
            continue
        data = tok.piece_bytes(i, piece)
        if not data:
            continue
        cont = bool(prefix) and i not in tok.added_ids and piece.startswith(prefix)
        (continuation if cont and len(piece) > len(prefix) else index).setdefault(data, i)
    shadowed = {}
    for data, i in continuation.items():
        if data in index:
            shadowed[data] = i
        else:
            index[data] = i
    return index, shadowed


@dataclass
class VocabAlignment:
    a_to_b: np.ndarray  # int64 [rows of A]: B's id of the same bytes, or -1
    b_to_a: np.ndarray  # int64 [rows of B]

    @property
    def shared(self) -> int:
        return int(np.count_nonzero(self.a_to_b >= 0))

    def to_b(self, a_id: int) -> int | None:
        j = int(self.a_to_b[a_id]) if 0 <= a_id < len(self.a_to_b) else -1
        return j if j >= 0 else None


def align_vocabularies(a, b) -> VocabAlignment:
    """Pair the tokens of two models whose decoded bytes are equal."""
    (ia, ca), (ib, cb) = _bytes_index(a), _bytes_index(b)
    a_to_b = np.full(a.rows, -1, dtype=np.int64)
    b_to_a = np.full(b.rows, -1, dtype=np.int64)
    for first, second in ((ia, ib), (ca, cb)):
        for data, i in first.items():
            j = second.get(data)
            if j is not None:
                a_to_b[i] = j
                b_to_a[j] = i
    return VocabAlignment(a_to_b, b_to_a)


@dataclass(frozen=True)
class NeighborRow:
    id: int
    piece: str | None
    text: str
    score: float
    other_id: int | None  # the same token's id in the other model
    shared: bool  # also among the other model's neighbours

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Comparison:
    a_id: int
    b_id: int
    a: list[NeighborRow]
    b: list[NeighborRow]
    overlap: int
    jaccard: float
    shared_vocab: int

    def as_dict(self) -> dict:
        return {
            "a": [r.as_dict() for r in self.a],
            "b": [r.as_dict() for r in self.b],
            "overlap": self.overlap,
            "jaccard": self.jaccard,
            "shared_vocab": self.shared_vocab,
        }


def _overlap(ids_a: np.ndarray, ids_b: np.ndarray, a_to_b: np.ndarray) -> tuple[int, float]:
    mapped = {int(j) for j in a_to_b[ids_a] if j >= 0}
    both = len(mapped & {int(j) for j in ids_b})
    union = len(ids_a) + len(ids_b) - both
    return both, (both / union if union else 0.0)


def _rows(model, ids, scores, to_other: np.ndarray, other_set: set[int]) -> list[NeighborRow]:
    tok = model.tokenizer
    out = []
    for i, s in zip(ids.tolist(), scores.tolist(), strict=True):
        other = int(to_other[i])
        out.append(
            NeighborRow(
                i,
                tok.piece(i) if tok is not None else None,
                model.label(i),
                float(s),
                other if other >= 0 else None,
                other >= 0 and other in other_set,
            )
        )
    return out


def _unaligned(align: VocabAlignment) -> tuple[frozenset[int], frozenset[int]]:
    """Rows of A and of B with no token of the same bytes in the other model (rows beyond the
    tokenizer among them): they can never be shared, so neither list shows them."""
    return (
        frozenset(np.flatnonzero(align.a_to_b < 0).tolist()),
        frozenset(np.flatnonzero(align.b_to_a < 0).tolist()),
    )


def compare_neighbors(
    a,
    b,
    a_id: int,
    k: int = 10,
    alignment: VocabAlignment | None = None,
    ctx: JobContext = NULL_CONTEXT,
) -> Comparison:
    """Exact cosine neighbours (query excluded) of A's token `a_id` in A and of its bytes in B."""
    a_id = a.check_id(a_id)
    align = alignment if alignment is not None else align_vocabularies(a, b)
    b_id = align.to_b(a_id)
    if b_id is None:
        raise AnalysisError(
            f"token {a.label(a_id)} (#{a_id}) of the first model has no token with the same "
            "bytes in the second model"
        )
    hide_a, hide_b = _unaligned(align)
    res_a = NeighborSearcher(a).search(
        query_for_ids(a, [a_id], hidden=hide_a), k, exact=True, ctx=ctx.part(0, 0.5)
    )
    res_b = NeighborSearcher(b).search(
        query_for_ids(b, [b_id], hidden=hide_b), k, exact=True, ctx=ctx.part(0.5, 0.5)
    )
    overlap, jaccard = _overlap(res_a.ids, res_b.ids, align.a_to_b)
    set_a, set_b = set(res_a.ids.tolist()), set(res_b.ids.tolist())
    return Comparison(
        a_id,
        b_id,
        _rows(a, res_a.ids, res_a.scores, align.a_to_b, set_b),
        _rows(b, res_b.ids, res_b.scores, align.b_to_a, set_a),
        overlap,
        jaccard,
        align.shared,
    )


@dataclass
class OverlapDistribution:
    ids: np.ndarray  # A's ids of the sampled shared tokens
    overlaps: np.ndarray  # int [n]: neighbours in common (of k)
    jaccards: np.ndarray  # float [n]
    k: int

    def as_dict(self) -> dict:
        counts = np.bincount(self.overlaps, minlength=self.k + 1)
        return {
            "k": self.k,
            "sample": len(self.ids),
            "mean_overlap": float(self.overlaps.mean()) if len(self.ids) else None,
            "mean_jaccard": float(self.jaccards.mean()) if len(self.ids) else None,
            "histogram": {"overlap": list(range(self.k + 1)), "counts": counts.tolist()},
        }


def _usable(model, ids: np.ndarray) -> np.ndarray:
    rows = model.vectors(ids).astype(np.float64)
    return np.isfinite(rows).all(axis=1) & rows.any(axis=1)


def overlap_distribution(
    a,
    b,
    sample: int = 200,
    k: int = 10,
    seed: int = 0,
    alignment: VocabAlignment | None = None,
    ctx: JobContext = NULL_CONTEXT,
) -> OverlapDistribution:
    """Neighbour overlap for a random sample of shared tokens (exact cosine, queries batched)."""
    align = alignment if alignment is not None else align_vocabularies(a, b)
    shared = np.flatnonzero(align.a_to_b >= 0)
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(shared, size=min(sample, len(shared)), replace=False))
    ids = ids[_usable(a, ids) & _usable(b, align.a_to_b[ids])]  # cosine needs a non-zero row
    sa, sb = NeighborSearcher(a), NeighborSearcher(b)
    hide_a, hide_b = _unaligned(align)
    overlaps = np.zeros(len(ids), dtype=np.int64)
    jaccards = np.zeros(len(ids), dtype=np.float64)
    for start in range(0, len(ids), BATCH):
        ctx.check("comparison")
        part = ids[start : start + BATCH]
        done = ctx.part(start / max(1, len(ids)), 0.0)  # the searches: no progress of their own
        qa = [query_for_ids(a, [int(i)], hidden=hide_a) for i in part]
        qb = [query_for_ids(b, [int(align.a_to_b[i])], hidden=hide_b) for i in part]
        ra = sa.search_many(qa, k, exact=True, ctx=done)
        rb = sb.search_many(qb, k, exact=True, ctx=done)
        for n, (x, y) in enumerate(zip(ra, rb, strict=True)):
            overlaps[start + n], jaccards[start + n] = _overlap(x.ids, y.ids, align.a_to_b)
        ctx.progress(min(1.0, (start + len(part)) / max(1, len(ids))))
    return OverlapDistribution(ids, overlaps, jaccards, k)
