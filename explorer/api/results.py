"""What the API's calls return: plain dataclasses holding numpy arrays.

Every result has `to_pandas()` (pandas is optional: it is imported only there), and the ones a
notebook shows most (tokens, neighbours) have `_repr_html_`. Token pieces are shown the way the
window shows them: whitespace as visible marks (␣ ↵), bytes of split characters as <0xNN>.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from explorer.api.tokens import Tokens, frame
from explorer.core.tokenizer.text import Token

if TYPE_CHECKING:
    import pandas as pd

SVG_MAX_POINTS = 5000  # a notebook draws maps up to this size inline

__all__ = ["Comparison", "Head", "Map", "Neighbor", "Neighbors", "Stats", "Token", "Tokens"]


@dataclass(frozen=True)
class Neighbor:
    """One row of a neighbours result."""

    rank: int  # 1 = best
    id: int
    piece: str | None  # the tokenizer's string (Ġcat, ##s); None without a tokenizer
    text: str  # readable: whitespace marked, as the window shows it
    score: float
    unused: bool = False  # a row the tokenizer never produces


@dataclass(frozen=True)
class Neighbors:
    """The top-k rows for a query, best first: cosine and dot higher is better, l2 lower."""

    query: str  # what was searched for, in words
    ids: np.ndarray  # int64 [k]
    scores: np.ndarray  # [k]: float32; float64 in the head view (logits)
    pieces: list[str | None]
    texts: list[str]
    metric: str
    exact: bool = True  # False: answered by the fast index
    how: str = "exact"  # which path answered, e.g. "fast index · recall@10 0.997, …"
    skipped: int = 0  # rows left out: all zeros or holding NaN/inf
    unused: list[bool] = field(default_factory=list)
    note: str = ""  # why the search took the exact path when the index was asked for

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> Neighbor: ...
    @overload
    def __getitem__(self, i: slice) -> list[Neighbor]: ...
    def __getitem__(self, i: int | slice) -> Neighbor | list[Neighbor]:
        if isinstance(i, slice):
            return [self._row(n) for n in range(len(self))[i]]
        return self._row(range(len(self))[i])

    def __iter__(self) -> Iterator[Neighbor]:
        return (self._row(n) for n in range(len(self)))

    def _row(self, n: int) -> Neighbor:
        unused = bool(self.unused[n]) if self.unused else False
        return Neighbor(
            n + 1, int(self.ids[n]), self.pieces[n], self.texts[n], float(self.scores[n]), unused
        )

    def to_pandas(self) -> pd.DataFrame:
        return frame(
            {
                "rank": np.arange(1, len(self) + 1),
                "id": self.ids,
                "piece": self.pieces,
                "text": self.texts,
                "score": self.scores,
            }
        )

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.text} {r.score:.3f}" for r in self[:5])
        more = f", … ({len(self)} in all)" if len(self) > 5 else ""
        return f"<Neighbors of {self.query} ({self.metric}, {self.how}): {shown}{more}>"

    def _repr_html_(self) -> str:
        from explorer.api import html

        score = {"cosine": "cosine", "dot": "dot", "l2": "distance"}.get(self.metric, "score")
        rows = ((r.rank, r.text + (" (unused)" if r.unused else ""), r.id, r.score) for r in self)
        caption = f"neighbours of {self.query} ({self.metric}, {self.how})"
        return html.table(("rank", "token", "id", score), rows, len(self), caption)


@dataclass(frozen=True)
class Map:
    """A 2-D map of some tokens: `xy[i]` is where token `ids[i]` lies."""

    ids: np.ndarray  # int64 [n]
    xy: np.ndarray  # float32 [n, 2]
    texts: list[str]
    similarity: np.ndarray | None  # float32 [n]: cosine to the nearest query token, if any
    query_ids: tuple[int, ...]
    title: str
    method: str  # "umap" or "pca"

    def __len__(self) -> int:
        return len(self.ids)

    def to_pandas(self) -> pd.DataFrame:
        cols: dict[str, Any] = {
            "id": self.ids,
            "text": self.texts,
            "x": self.xy[:, 0],
            "y": self.xy[:, 1],
        }
        if self.similarity is not None:
            cols["similarity"] = self.similarity
        return frame(cols)

    def svg(self, width: int = 960, height: int = 540, title: str | None = None) -> str:
        """The map as the figure `embedding-explorer project` draws (SVG text)."""
        from explorer.core.map.figure import neighborhood_svg
        from explorer.core.map.neighborhood import Neighborhood

        nb = Neighborhood(self.ids, self.texts, self.similarity, self.query_ids, self.title)
        return neighborhood_svg(nb, self.xy, title=title, width=width, height=height)

    def _repr_svg_(self) -> str | None:
        return self.svg() if len(self) <= SVG_MAX_POINTS else None  # Jupyter shows the repr

    def __repr__(self) -> str:
        return f"<Map: {self.title} ({self.method}, {len(self)} points)>"


@dataclass(frozen=True)
class Stats:
    """Vocabulary statistics from one pass over the matrix (cached per file)."""

    ids: np.ndarray  # int64 [rows]: 0 … rows-1, for to_pandas
    texts: list[str]
    norms: np.ndarray  # float64 [rows]: L2 norm of each row; NaN for rows holding NaN/inf
    dim_mean: np.ndarray  # float64 [dim]
    dim_std: np.ndarray  # float64 [dim]
    rogue_dims: list[int]  # dimensions with an outsized scale, most extreme first
    suspicious: list[dict]  # {"id", "piece", "reason", "score"}: possibly under-trained rows
    kinds: dict[str, int]  # tokens per kind (words, digits, punctuation …)

    def to_pandas(self) -> pd.DataFrame:
        """One row per token: id, text, norm."""
        return frame({"id": self.ids, "text": self.texts, "norm": self.norms})

    def __repr__(self) -> str:
        finite = self.norms[np.isfinite(self.norms)]
        median = float(np.median(finite)) if finite.size else float("nan")
        return (
            f"<Stats: {len(self.norms):,} rows × {len(self.dim_std)}, median norm {median:.4f}, "
            f"{len(self.rogue_dims)} rogue dimensions, {len(self.suspicious)} suspicious tokens>"
        )


@dataclass(frozen=True)
class Head:
    """The output head against the input embedding E."""

    tied: bool | None  # the head is E itself (None: no head to judge, e.g. an encoder)
    evidence: str  # why we say so (the files, the config)
    output_tensor: str | None
    cosine: np.ndarray | None  # float64 [rows]: cos(E[i], U[i]); None when tied
    lowest: Neighbors | None  # the tokens whose E and U rows agree least (None when tied)
    highest: Neighbors | None
    token: int | None = None  # set when a token was asked about; then:
    direct_path: Neighbors | None = None  # top logits of E[t]·Uᵀ (E[t]·Eᵀ when tied)
    neighbors_input: Neighbors | None = None  # cosine neighbours in E
    neighbors_output: Neighbors | None = None  # cosine neighbours in U
    overlap: int | None = None  # ids in both neighbour lists

    def to_pandas(self) -> pd.DataFrame:
        """The direct path's top tokens when a token was given, else the per-token cosine."""
        if self.direct_path is not None:
            return self.direct_path.to_pandas()
        cos = self.cosine if self.cosine is not None else np.zeros(0)
        return frame({"id": np.arange(len(cos)), "cosine": cos})

    def __repr__(self) -> str:
        what = "no head" if self.tied is None else "tied"
        if self.tied is False:
            what = f"separate ({self.output_tensor})"
        return f"<Head: {what}; {self.evidence}>"


@dataclass(frozen=True)
class Comparison:
    """One token's cosine neighbours in two models, aligned by token bytes."""

    a_id: int
    b_id: int
    a: Neighbors
    b: Neighbors
    overlap: int  # tokens in both lists
    jaccard: float
    shared_vocab: int  # tokens with the same bytes in both vocabularies

    def to_pandas(self) -> pd.DataFrame:
        n = max(len(self.a), len(self.b))

        def pad(values: Sequence[Any]) -> list[Any]:
            return list(values) + [None] * (n - len(values))

        return frame(
            {
                "rank": np.arange(1, n + 1),
                "a": pad(self.a.texts),
                "a_score": pad(self.a.scores.tolist()),
                "b": pad(self.b.texts),
                "b_score": pad(self.b.scores.tolist()),
            }
        )

    def __repr__(self) -> str:
        return (
            f"<Comparison of {self.a.query}: overlap {self.overlap} of {len(self.a)}, "
            f"jaccard {self.jaccard:.3f}, {self.shared_vocab:,} tokens shared>"
        )
