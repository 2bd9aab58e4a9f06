"""`open` and `Model`: one opened embedding, with everything the window shows as method calls.

A `Model` wraps the core's `EmbeddingModel` (`Model.core`). Opening reads headers and maps the
matrix read-only; nothing of the matrix is read until a call needs it. The core modules are
imported inside the methods, so that `import explorer` costs about what `import numpy` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.api.rows import RowView

if TYPE_CHECKING:  # results, progress and html load with the first call that needs them
    from explorer.api.progress import ProgressArg
    from explorer.api.results import Comparison, Head, Map, Neighbors, Stats
    from explorer.api.tokens import Tokens
    from explorer.core.model.embedding import EmbeddingModel
    from explorer.core.search.neighbors import NeighborResult, NeighborSearcher
    from explorer.core.search.queries import Query

    # a core Query too: the command line builds its --text phrases with the core's parser
    QueryArg = int | str | Sequence[int] | np.ndarray | Query

TokenRef = int | str  # a token id, a token's text, or "#id"
# A matrix the search kernels cannot read as stored (quantised GGUF blocks, F16) is decoded
# once for searching when its float32 copy stays this small: then every search scans float32
# instead of dequantising the whole matrix again. Larger ones decode block by block per scan.
DECODED_SEARCH_BYTES = 256 << 20
KERNEL_DTYPES = ("BF16", "F32", "F64")


def open(
    path: str | Path,
    *,
    tokenizer: str | Path | bool | None = None,
    tensor: str | None = None,
) -> Model:
    """Open a model read-only, as the command line's `-m` does: a folder, a .safetensors,
    .safetensors.index.json or .gguf file, a Hugging Face repo id in the local cache, or an
    Ollama model name. `tokenizer`: False to skip the tokenizer, or a tokenizer from elsewhere
    (a tokenizer.json, a folder of tokenizer files, or a GGUF), as `-t` takes it: the rows are
    read through it and checked against it (`Model.tokenizer_match`, and a warning when it does
    not match). `tensor`: the embedding tensor's name, when the guess is wrong."""
    from explorer.core.model.open import open_model

    other = tokenizer not in (None, True, False)
    core = open_model(path, tensor=tensor, tokenizer=tokenizer is not False and not other)
    if other:
        from explorer.core.model.tokenizer import tokenizer_at

        core.use_tokenizer(*tokenizer_at(str(tokenizer), core.rows))
        core.check_tokenizer()
    return Model(core)


class Model:
    """An opened model's input embedding E [rows, dim], its tokenizer and its output head."""

    def __init__(self, core: EmbeddingModel):
        self.core = core  # the core's model, for what this API does not cover
        self.E = RowView(core)
        self._searcher: NeighborSearcher | None = None

    # -- what it is ------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.core.path

    @property
    def shape(self) -> tuple[int, int]:
        return (self.core.rows, self.core.dim)

    @property
    def dtype(self) -> str:
        """The stored dtype: F32, BF16, F16, Q8_0 …"""
        return self.core.dtype

    @property
    def tensor(self) -> str:
        return self.core.tensor

    @property
    def tied(self) -> bool | None:
        """Whether the output head is E itself (None: cannot tell); see `tied_evidence`."""
        return self.core.tied

    @property
    def tied_evidence(self) -> str:
        return self.core.head.words

    @property
    def warnings(self) -> list[str]:
        return list(self.core.warnings)

    @property
    def tokenizer_source(self) -> str | None:
        return self.core.tokenizer_source

    @property
    def tokenizer_match(self) -> dict | None:
        """Whether the tokenizer belongs to these rows, as `info --json` reports it (None:
        not checked; `open(..., tokenizer=PATH)` checks it)."""
        match = self.core.tokenizer_match
        return match.as_dict() if match is not None else None

    def info(self) -> dict:
        """What `embedding-explorer info --json` prints."""
        return self.core.info()

    # -- tokens and rows -------------------------------------------------------------------------
    def token_id(self, token: TokenRef) -> int:
        """The row of a token: an id, a single token's text ('cat', 'Ġcat') or '#id'."""
        if isinstance(token, int | np.integer):
            return self.core.check_id(int(token))
        from explorer.core.tokenizer.text import parse_token_ref

        return self.core.check_id(parse_token_ref(token, self.core.tokenizer))

    def label(self, token_id: int) -> str:
        """The readable text of a row's token, as the window shows it (␣ for a space)."""
        one_label = getattr(self.core.tokenizer, "one_label", None)  # a TokenizerInfo's
        return self.core.label(token_id) if one_label is None else one_label(token_id)

    def row(self, token: TokenRef) -> np.ndarray:
        """E[token] decoded exactly to float32 (float64 for F64 files)."""
        return self.core.vector(self.token_id(token))

    def tokenize(self, text: str, special: bool = False) -> Tokens:
        """The tokens of `text`; `special` adds the tokenizer's [CLS], <s> …"""
        from explorer.api.tokens import Tokens
        from explorer.core.errors import TokenError

        if self.core.tokenizer is None:
            raise TokenError(
                f"{self.path}: no tokenizer.json beside the model, so text cannot be tokenized"
            )
        return Tokens(self.core.tokenizer.encode(text, special=special))

    # -- neighbours ------------------------------------------------------------------------------
    def neighbors(
        self,
        query: QueryArg,
        k: int = 10,
        metric: str = "cosine",
        exact: bool | None = None,
        include_query: bool = False,
        progress: ProgressArg = None,
    ) -> Neighbors:
        """The k nearest rows to `query`: a token id; a text (a token, '#id', a phrase, or an
        expression such as 'king - man + woman'); a list of ids (their mean); or a vector.
        metric: cosine, dot or l2. exact=None takes the cheaper path known to be right (a
        cached fast index only where its measured recall@10 reaches 0.99); True always scans.
        The query's own tokens are left out unless `include_query`."""
        return self.neighbors_many([query], k, metric, exact, include_query, progress)[0]

    def neighbors_many(
        self,
        queries: Sequence[QueryArg],
        k: int = 10,
        metric: str = "cosine",
        exact: bool | None = None,
        include_query: bool = False,
        progress: ProgressArg = None,
    ) -> list[Neighbors]:
        """`neighbors` for each query; an exact search reads the matrix once for all of them."""
        from explorer.api.progress import job_context

        built = [self._query(q) for q in queries]
        searcher = self.searcher()
        with job_context(progress, "neighbours") as ctx:
            found = searcher.search_many(built, k, metric, include_query, exact, ctx)
        return [self._neighbors(q.description, r) for q, r in zip(built, found, strict=True)]

    def searcher(self) -> NeighborSearcher:
        """The model's searcher (row norms and the fast index are kept between calls; a small
        quantised or F16 matrix is decoded once, on the first search, and kept as float32)."""
        if self._searcher is None:
            from explorer.core.search.neighbors import NeighborSearcher

            self._searcher = NeighborSearcher(self._searched())
            self._searcher.load_cached_fast_index()  # never built unless asked
        return self._searcher

    def _searched(self) -> EmbeddingModel:
        """The model the searcher scans: this one, or a copy whose matrix is decoded once."""
        core = self.core
        if core.dtype in KERNEL_DTYPES or core.rows * core.dim * 4 > DECODED_SEARCH_BYTES:
            return core
        decoded = np.asarray(self.E, dtype=np.float32)
        decoded.flags.writeable = False
        return replace(core, matrix=decoded, _handles=[])  # same dtype name: same cache keys

    def _query(self, q: QueryArg) -> Query:
        from explorer.core.search import queries

        if isinstance(q, queries.Query):
            return q
        if isinstance(q, int | np.integer):
            return queries.query_for_ids(self.core, [int(q)])
        if isinstance(q, str):
            return queries.query_for_expression(self.core, q)
        arr = np.asarray(q)
        if arr.ndim == 1 and arr.dtype.kind in "iu":
            return queries.query_for_ids(self.core, arr.tolist())
        if arr.ndim == 1 and arr.dtype.kind == "f":
            return queries.query_for_vector(arr)
        raise TypeError(
            "a query is a token id, a text, a list of ids or a 1-D float vector, "
            f"not {type(q).__name__}"
        )

    def _neighbors(self, query: str, r: NeighborResult) -> Neighbors:
        found = self._scored(query, r.ids, r.scores, r.metric, r.exact, r.path_label, r.skipped)
        return replace(found, note=r.note)

    def _scored(
        self,
        query: str,
        ids: np.ndarray,
        scores: np.ndarray,
        metric: str,
        exact: bool = True,
        how: str = "exact",
        skipped: int = 0,
    ) -> Neighbors:
        from explorer.api.results import Neighbors

        tok = self.core.tokenizer
        id_list = [int(i) for i in ids]
        return Neighbors(
            query=query,
            ids=np.asarray(ids, dtype=np.int64),
            scores=np.asarray(scores),
            pieces=[tok.piece(i) if tok is not None else None for i in id_list],
            texts=[self.label(i) for i in id_list],
            metric=metric,
            exact=exact,
            how=how,
            skipped=skipped,
            unused=[self.core.is_unused(i) for i in id_list],
        )

    # -- maps ------------------------------------------------------------------------------------
    def map(
        self,
        tokens: str | Sequence[TokenRef] | None = None,
        *,
        around: TokenRef | None = None,
        text: str | None = None,
        sample: int | None = None,
        n: int = 500,
        method: str = "umap",
        seed: int = 42,
        n_neighbors: int = 15,
        min_dist: float = 0.05,
        n_epochs: int | None = None,
        progress: ProgressArg = None,
    ) -> Map:
        """A 2-D map (UMAP, or PCA) of the listed `tokens`, the `n` tokens `around` one, the
        tokens of a `text` and their neighbours, or a random `sample` of that many tokens."""
        from explorer.api.progress import job_context
        from explorer.api.results import Map
        from explorer.core.errors import ExplorerError
        from explorer.core.map import neighborhood, projection

        given = [x is not None for x in (tokens, around, text, sample)]
        if sum(given) != 1:
            raise ExplorerError("map takes one of: tokens, around=, text= or sample=")
        params = projection.ProjectionParams(
            method=method, n_neighbors=n_neighbors, min_dist=min_dist, seed=seed, n_epochs=n_epochs
        )
        projection.configure_numba_cache()  # before the neighbour scan loads its numba kernels
        with job_context(progress, "map") as ctx:
            choose = ctx.part(0.0, 0.2, "choosing the tokens")
            if around is not None:
                nb = neighborhood.around(self.core, self.token_id(around), n, choose)
            elif text is not None:
                nb = neighborhood.around_text(self.core, text, n, choose)
            elif sample is not None:
                nb = neighborhood.sample(self.core, sample, seed=seed)
            else:
                assert tokens is not None
                refs = tokens if isinstance(tokens, str) else [str(t) for t in tokens]
                nb = neighborhood.from_list(self.core, refs)
            xy = projection.project(self.core.vectors(nb.ids), params, ctx.part(0.2, 0.8))
        return Map(
            ids=nb.ids,
            xy=np.asarray(xy, dtype=np.float32),
            texts=list(nb.labels),
            similarity=nb.similarity,
            query_ids=tuple(nb.query_ids),
            title=nb.title,
            method="pca" if method == "pca" or len(nb) < 8 else "umap",
        )

    # -- analyses --------------------------------------------------------------------------------
    def stats(self, progress: ProgressArg = None, cache: bool = True) -> Stats:
        """Row norms, per-dimension mean and std, rogue dimensions, suspicious (possibly
        under-trained) tokens and token kinds: one pass over the matrix, cached per file."""
        from explorer.api.progress import job_context
        from explorer.api.results import Stats
        from explorer.core.analysis.stats import compute_stats

        with job_context(progress, "statistics") as ctx:
            s = compute_stats(self.core, ctx, use_cache=cache)
        ids = np.arange(self.core.rows, dtype=np.int64)
        return Stats(
            ids=ids,
            texts=[self.core.label(int(i)) for i in ids],
            norms=s.norms,
            dim_mean=s.dim_mean,
            dim_std=s.dim_std,
            rogue_dims=list(s.outliers),
            suspicious=[x.as_dict() for x in s.suspicious],
            kinds=s.kinds.counts(),
        )

    def head(
        self, token: TokenRef | None = None, k: int = 10, progress: ProgressArg = None
    ) -> Head:
        """The output head U against E: tied or not and why, cos(E[i], U[i]) over the
        vocabulary when separate, and for a `token` its neighbours in E and U and the direct
        path E[t]·Uᵀ (the logits of a model with no layers)."""
        from explorer.api.progress import job_context
        from explorer.api.results import Head
        from explorer.core.analysis import head as core_head

        with job_context(progress, "head") as ctx:
            t = self.token_id(token) if token is not None else None
            self.core.check_head(ctx.part(0.0, 0.2))  # every row, not only the sampled ones
            cos = core_head.head_cosine(self.core, ctx.part(0.2, 0.3 if t is not None else 0.8))
            view = None
            if t is not None:
                view = core_head.token_view(self.core, t, k, ctx.part(0.5, 0.5))

        def listed(title: str, rows: list, metric: str) -> Neighbors:
            ids = np.asarray([r.id for r in rows], dtype=np.int64)
            scores = np.asarray([r.score for r in rows], dtype=np.float64)
            return self._scored(title, ids, scores, metric)

        about: dict[str, Any] = {}
        if t is not None and view is not None:
            name = self.label(t)
            about = {
                "token": t,
                "direct_path": listed(f"direct path of {name}", view.direct_path, "dot"),
                "neighbors_input": listed(f"{name} in E", view.neighbors_input, "cosine"),
                "neighbors_output": listed(f"{name} in U", view.neighbors_output, "cosine"),
                "overlap": view.overlap,
            }
        return Head(
            tied=None if self.core.tied is None else cos.tied,
            evidence=self.core.head.words,
            output_tensor=cos.output_tensor,
            cosine=cos.cosine,
            lowest=None if cos.tied else listed("lowest cos(E[i], U[i])", cos.lowest, "cosine"),
            highest=None if cos.tied else listed("highest cos(E[i], U[i])", cos.highest, "cosine"),
            **about,
        )

    def compare(
        self, other: Model, token: TokenRef, k: int = 10, progress: ProgressArg = None
    ) -> Comparison:
        """A token's exact cosine neighbours here and in `other` (the token found there by its
        bytes), and how many they share."""
        from explorer.api.progress import job_context
        from explorer.api.results import Comparison
        from explorer.core.compare.neighbors import align_vocabularies, compare_neighbors

        a_id = self.token_id(token)
        with job_context(progress, "compare") as ctx:
            c = compare_neighbors(
                self.core, other.core, a_id, k, align_vocabularies(self.core, other.core), ctx
            )

        def side(model: Model, token_id: int, rows: list) -> Neighbors:
            ids = np.asarray([r.id for r in rows], dtype=np.int64)
            scores = np.asarray([r.score for r in rows], dtype=np.float32)
            return model._scored(model.label(token_id), ids, scores, "cosine")

        return Comparison(
            a_id=c.a_id,
            b_id=c.b_id,
            a=side(self, c.a_id, c.a),
            b=side(other, c.b_id, c.b),
            overlap=c.overlap,
            jaccard=c.jaccard,
            shared_vocab=c.shared_vocab,
        )

    # -- lifetime and display --------------------------------------------------------------------
    def close(self) -> None:
        """Unmap the files (the model cannot be read afterwards)."""
        self.core.close()

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        rows, dim = self.shape
        return f"<Model {self.path.name}: {self.tensor} {rows:,} × {dim} {self.dtype}>"

    def _repr_html_(self) -> str:
        from explorer.api import html

        rows, dim = self.shape
        facts = [
            ("path", str(self.path)),
            ("tensor", f"{self.tensor}  {rows:,} × {dim}  {self.dtype}"),
            ("head", self.tied_evidence),
            ("tokenizer", self.tokenizer_source or "none"),
            *(("warning", w) for w in self.warnings),
        ]
        return html.table(("", ""), facts, len(facts), "embedding model")
