"""Input embedding E vs output head U: per-token cosine E[i]·U[i], neighbours of a token in both
spaces, and the direct path E[t]·Uᵀ (the logits of a model with no layers; E[t]·Eᵀ when tied).

The cosine pass streams E and U together in blocks and is cached per file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.analysis import cached
from explorer.core.analysis.blocks import (
    cosine_from,
    rows_per_block,
    scan_dots,
    top_k,
)
from explorer.core.analysis.stats import summary
from explorer.core.cache import default_cache_dir
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import AnalysisError
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

CACHE_KIND = "head_cosine"
EXTREMES = 10


@dataclass(frozen=True)
class TokenScore:
    id: int
    piece: str | None
    text: str
    score: float

    def as_dict(self) -> dict:
        return {"id": self.id, "piece": self.piece, "text": self.text, "score": self.score}


def token_score(model, token_id: int, score: float) -> TokenScore:
    piece = model.tokenizer.piece(token_id) if model.tokenizer is not None else None
    return TokenScore(int(token_id), piece, model.label(token_id), float(score))


@dataclass
class HeadCosine:
    tied: bool
    output_tensor: str | None
    cosine: np.ndarray | None  # float64 [rows]: cos(E[i], U[i]); NaN for zero/non-finite rows
    lowest: list[TokenScore]
    highest: list[TokenScore]
    cached: bool = False
    no_head: bool = False  # no output head in the files (an encoder, word vectors): as if tied
    words: str = ""  # what `info` and the model panel say about the head

    def statement(self, name: str) -> str:
        """One sentence on the head, the same in `compare-head` as in `info` and the Head tab."""
        if self.no_head:
            return f"{name}: {self.words} — shown as if tied (U = E)."
        if self.tied:
            return f"{name}: the output head is tied — it is the embedding matrix E."
        return f"{name}: separate output head {self.output_tensor}"

    def as_dict(self) -> dict:
        """{"tied" (null: no head in the files, as `info` says), "shown_as_tied", "head",
        "cosine": {mean, median, min, max, histogram} or null when tied, "extremes"}."""
        extremes = [dict(t.as_dict(), end="lowest") for t in self.lowest]
        extremes += [dict(t.as_dict(), end="highest") for t in self.highest]
        return {
            "tied": None if self.no_head else self.tied,
            "shown_as_tied": self.tied,
            "head": self.words,
            "cosine": None if self.cosine is None else summary(self.cosine),
            "extremes": extremes,
        }


def is_tied(model) -> bool:
    """True when the output head reuses E; an error when it should be separate but is missing."""
    if model.output_tensor is not None and model.tied is not True:
        return False
    if model.tied is False:
        raise AnalysisError(
            f"{model.path.name}: the config says the output head is not tied, but no head tensor "
            "(lm_head.weight, embed_out.weight, output.weight) is in the files"
        )
    return True


def _head_block(model, start: int, stop: int) -> np.ndarray:
    block = model.decode_output_block(start, stop)
    if block is None or block.shape[1:] != (model.dim,) or len(block) != stop - start:
        raise AnalysisError(
            f"{model.path.name}: output head {model.output_tensor!r} does not have "
            f"{model.rows} rows of {model.dim} values like the embedding"
        )
    return block


def cosine_pass(model, ctx: JobContext = NULL_CONTEXT) -> np.ndarray:
    """cos(E[i], U[i]) for every row, float64 (NaN where either row is zero or non-finite)."""
    out = np.empty(model.rows, dtype=np.float64)
    step = rows_per_block(model.dim)
    for start in range(0, model.rows, step):
        ctx.check("head comparison")
        stop = min(model.rows, start + step)
        e = model.decode_block(start, stop).astype(np.float64)
        u = _head_block(model, start, stop).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            num = np.einsum("ij,ij->i", e, u)
            den = np.sqrt(np.einsum("ij,ij->i", e, e) * np.einsum("ij,ij->i", u, u))
            cos = num / den
        out[start:stop] = np.where(np.isfinite(cos) & (den > 0), cos, np.nan)
        ctx.progress(stop / model.rows)
    return out


def head_cosine(
    model,
    ctx: JobContext = NULL_CONTEXT,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    extremes: int = EXTREMES,
) -> HeadCosine:
    """The per-token cosine between E and U over the vocabulary (nothing to compute when tied)."""
    if is_tied(model):
        ctx.progress(1.0)
        no_head = model.tied is None and model.output_tensor is None
        return HeadCosine(
            True, model.output_tensor, None, [], [], no_head=no_head, words=model.head.words
        )
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    params = {"version": 1, "output": model.output_tensor}
    arrays = cached.load(model, CACHE_KIND, params, root) if use_cache else None
    from_cache = arrays is not None and "cosine" in arrays
    if from_cache:
        cos = arrays["cosine"]  # type: ignore[index]
    else:
        cos = cosine_pass(model, ctx)
        if use_cache:
            cached.save(model, CACHE_KIND, params, root, {"cosine": cos})
    low = top_k(-cos, extremes)
    high = top_k(cos, extremes)
    return HeadCosine(
        False,
        model.output_tensor,
        cos,
        [token_score(model, i, cos[i]) for i in low],
        [token_score(model, i, cos[i]) for i in high],
        cached=from_cache,
        words=model.head.words,
    )


@dataclass
class TokenHeadView:
    token: TokenScore  # score: cos(E[t], U[t]) (1.0 when tied)
    tied: bool
    neighbors_input: list[TokenScore]  # cosine in E, the token excluded
    neighbors_output: list[TokenScore]  # cosine in U, the token excluded
    overlap: int  # ids in both neighbour lists
    direct_path: list[TokenScore]  # top-k of E[t]·Uᵀ (E[t]·Eᵀ when tied), score = logit

    def as_dict(self) -> dict:
        return {
            "token": self.token.as_dict(),
            "neighbors_input": [t.as_dict() for t in self.neighbors_input],
            "neighbors_output": [t.as_dict() for t in self.neighbors_output],
            "overlap": self.overlap,
            "direct_path": [t.as_dict() for t in self.direct_path],
        }


def token_view(model, token_id: int, k: int = 10, ctx: JobContext = NULL_CONTEXT) -> TokenHeadView:
    """Neighbours of one token in E and in U, their overlap, and its direct-path top-k."""
    t = model.check_id(token_id)
    if not 1 <= k <= 10_000:
        raise AnalysisError(f"k must be a whole number from 1 to 10000, not {k}")
    tied = is_tied(model)
    searcher = NeighborSearcher(model)
    q = query_for_ids(model, [t])
    first = ctx.part(0.0, 0.5)
    found = searcher.search(q, k=k, metric="cosine", exact=True, ctx=first)
    first.progress(1.0)
    inputs = [
        token_score(model, i, s)
        for i, s in zip(found.ids.tolist(), found.scores.tolist(), strict=True)
    ]
    e_t = model.vector(t).astype(np.float64)
    if tied:
        outputs = inputs
        direct = searcher.search(
            q, k=k, metric="dot", include_query=True, exact=True, ctx=ctx.part(0.5, 0.5)
        )
        direct_rows = [
            token_score(model, i, s)
            for i, s in zip(direct.ids.tolist(), direct.scores.tolist(), strict=True)
        ]
        self_cos = 1.0
    else:
        u_t = _head_block(model, t, t + 1)[0].astype(np.float64)
        dots, sq = scan_dots(
            lambda a, b: _head_block(model, a, b),
            model.rows,
            model.dim,
            np.stack([e_t, u_t]),
            ctx.part(0.5, 0.5),
        )
        direct_ids = top_k(dots[0], k)
        direct_rows = [token_score(model, i, dots[0, i]) for i in direct_ids]
        ucos = cosine_from(dots[1], sq, u_t)
        outputs = [token_score(model, i, ucos[i]) for i in top_k(ucos, k, exclude=t)]
        den = np.linalg.norm(e_t) * np.linalg.norm(u_t)
        self_cos = float(e_t @ u_t / den) if den > 0 else float("nan")
    overlap = len({r.id for r in inputs} & {r.id for r in outputs})
    return TokenHeadView(
        token_score(model, t, self_cos), tied, inputs, outputs, overlap, direct_rows
    )
