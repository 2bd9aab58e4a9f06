"""Which tokens go on a map: around a token, around a text's tokens, a list, or a random sample.

Each function returns a `Neighborhood` (ids, readable labels, cosine similarity to the query
when there is one, and the query ids to highlight). Scans of the whole vocabulary read the
memory-mapped matrix in blocks and check their `ctx` for a cancel between them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.core.analysis.kinds import UNUSED_PIECE
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import TokenError
from explorer.core.limits import parse_id
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.ranking import top_k
from explorer.core.tokenizer.text import parse_token_ref

DEFAULT_N = 500
MAX_AROUND = 20_000
MAX_SAMPLE = 50_000


@dataclass(frozen=True)
class Neighborhood:
    ids: np.ndarray  # int64 [n], unique
    labels: list[str]
    similarity: np.ndarray | None  # float32 [n]: cosine to the nearest query token
    query_ids: tuple[int, ...] = ()
    title: str = ""
    skipped: int = 0  # rows left out because they are zero, non-finite or unused
    extra: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)


def cosine_to_all(
    model: EmbeddingModel,
    queries: np.ndarray,
    ctx: JobContext = NULL_CONTEXT,
) -> np.ndarray:
    """Cosine similarity [nq, rows] of query vectors with every row; bad rows get -inf."""
    from explorer.core.search.exact import scan  # compiles numba kernels

    q = np.asarray(queries, dtype=np.float32).reshape(-1, model.dim)
    qn = np.linalg.norm(q, axis=1)
    qn[qn == 0] = 1.0
    dots, sq = scan(  # decode: formats the kernels do not read (a random twin's rows)
        model.matrix,
        q / qn[:, None],
        want_sq=True,
        ctx=ctx,
        decode=model.decode_block,
    )
    assert sq is not None
    norms = np.sqrt(sq).astype(np.float32)
    bad = ~np.isfinite(norms) | (norms == 0)
    norms[bad] = 1.0
    sims = dots / norms[None, :]
    sims[:, bad] = -np.inf
    sims[~np.isfinite(sims)] = -np.inf
    return sims


def _top(scores: np.ndarray, n: int, must: Sequence[int] = ()) -> np.ndarray:
    """Ids of the n best scores (best first), with `must` ids first."""
    must = list(dict.fromkeys(int(i) for i in must))
    n = min(n, int(np.isfinite(scores).sum()) + len(must))
    s = scores.copy()
    s[must] = -np.inf
    rest_n = max(0, n - len(must))
    if rest_n == 0:
        return np.asarray(must[:n], dtype=np.int64)
    return np.concatenate([np.asarray(must, dtype=np.int64), top_k(s, rest_n)])


def _check_n(n: int, limit: int, what: str) -> int:
    if not 1 <= n <= limit:
        raise TokenError(f"{what}: n must be between 1 and {limit:,}, not {n:,}")
    return int(n)


def _labels(model: EmbeddingModel, ids: np.ndarray) -> list[str]:
    return [model.label(int(i)) for i in ids]


def around(
    model: EmbeddingModel,
    token_id: int,
    n: int = DEFAULT_N,
    ctx: JobContext = NULL_CONTEXT,
) -> Neighborhood:
    """The token and its n - 1 nearest tokens by cosine."""
    return around_ids(
        model,
        [token_id],
        n,
        ctx,
        title=f"{n:,} tokens around “{model.label(model.check_id(token_id))}”",
    )


def around_ids(
    model: EmbeddingModel,
    query_ids: Sequence[int],
    n: int = DEFAULT_N,
    ctx: JobContext = NULL_CONTEXT,
    title: str = "",
) -> Neighborhood:
    """The query tokens plus the tokens nearest to any of them (one pass over the matrix)."""
    _check_n(n, MAX_AROUND, "neighbourhood")
    queries = list(dict.fromkeys(model.check_id(int(i)) for i in query_ids))
    if not queries:
        raise TokenError("no tokens to map around")
    sims = cosine_to_all(model, model.vectors(queries), ctx)
    best = sims.max(axis=0)
    mask = model.used_rows
    skipped = int((~np.isfinite(best) & mask).sum())
    best[~mask] = -np.inf
    ids = _top(best, n, queries)
    sim = best[ids]
    sim[~np.isfinite(sim)] = np.nan
    return Neighborhood(
        ids,
        _labels(model, ids),
        sim.astype(np.float32),
        tuple(queries),
        title or f"{len(ids):,} tokens around {len(queries)} tokens",
        skipped,
    )


def around_text(
    model: EmbeddingModel,
    text: str,
    n: int = DEFAULT_N,
    ctx: JobContext = NULL_CONTEXT,
) -> Neighborhood:
    """The tokens of a text plus their nearest neighbours (n points in all)."""
    if model.tokenizer is None:
        raise TokenError("this model has no tokenizer.json: map a list of ids instead")
    tokens = [t for t in model.tokenizer.encode(text) if not t.special]
    if not tokens:
        raise TokenError(f"{text!r} has no tokens to map")
    shown = text if len(text) <= 40 else text[:39] + "…"
    return around_ids(
        model,
        [t.id for t in tokens],
        n,
        ctx,
        title=f"{n:,} tokens around “{shown}”",
    )


def parse_refs(model: EmbeddingModel, refs: str | Sequence[str]) -> list[int]:
    """'1, 2, cat, #5' or one token per line → ids; plain numbers are ids."""
    items = re.split(r"[,\n]", refs) if isinstance(refs, str) else list(refs)
    ids: list[int] = []
    for raw in items:
        item = raw.strip() if isinstance(raw, str) else str(raw)
        if not item:
            continue
        token_id = parse_id(item)
        if token_id is None:
            token_id = parse_token_ref(item, model.tokenizer)
        ids.append(model.check_id(token_id))
    ids = list(dict.fromkeys(ids))
    if not ids:
        raise TokenError("the list holds no tokens")
    if len(ids) > MAX_SAMPLE:
        raise TokenError(f"the list holds {len(ids):,} tokens; the limit is {MAX_SAMPLE:,}")
    return ids


def from_list(model: EmbeddingModel, refs: str | Sequence[str]) -> Neighborhood:
    ids = np.asarray(parse_refs(model, refs), dtype=np.int64)
    return Neighborhood(ids, _labels(model, ids), None, (), f"{len(ids):,} listed tokens")


def sample(model: EmbeddingModel, n: int, seed: int = 0, plain: bool = False) -> Neighborhood:
    """n distinct tokens drawn at random from the rows the tokenizer uses; `plain` leaves out
    special tokens and placeholders such as [unused12] (they form a far-off cluster)."""
    _check_n(n, MAX_SAMPLE, "random sample")
    usable = np.flatnonzero(model.used_rows)
    rng = np.random.default_rng(seed)
    if plain:
        special = model.tokenizer.special_ids if model.tokenizer is not None else set()
        drawn = rng.permutation(usable)  # the first n that are plain tokens
        keep = [int(i) for i in drawn[: 2 * n + 200] if _plain(model, int(i), special)]
        if len(keep) < n:
            keep = [int(i) for i in drawn if _plain(model, int(i), special)]
        ids = np.sort(np.asarray(keep[:n], dtype=np.int64))
    else:
        n = min(n, len(usable))
        ids = np.sort(rng.choice(usable, size=n, replace=False)).astype(np.int64)
    what = " (no special or unused tokens)" if plain else ""
    return Neighborhood(
        ids, _labels(model, ids), None, (), f"random sample of {len(ids):,} tokens{what}"
    )


def _plain(model: EmbeddingModel, token_id: int, special: set[int]) -> bool:
    return token_id not in special and not UNUSED_PIECE.match(model.label(token_id))
