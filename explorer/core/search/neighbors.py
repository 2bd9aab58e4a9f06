"""Top-k nearest neighbours of tokens, phrases, vector expressions and raw vectors.

Exact search streams the memory-mapped matrix once per batch of queries (search_exact).  Fast
search uses a cached index of sign codes plus exact re-ranking (search_fast), built and tuned by
search_build, which measures its own recall@10 and stores it; an index that cannot reach 0.99
for a metric is not used for it.  Where a scan of the whole matrix is quick anyway (small
matrices), the exact path answers and no index is built unless asked.  Every result says which
path answered and, for the index, its measured recall.  Rows that are all zeros or hold NaN/inf
are never returned and are counted in `NeighborResult.skipped`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.cache import default_cache_dir
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.model.dtypes import BF16
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.ranking import top_k, top_unordered
from explorer.core.search.queries import (  # noqa: F401 - re-exported for callers
    Query,
    query_for_expression,
    query_for_ids,
    query_for_text,
    query_for_vector,
)

if TYPE_CHECKING:  # the search modules import numba (LLVM): only when a search runs
    from explorer.core.search import fast as search_fast

METRICS = ("cosine", "dot", "l2")
FAST_METRICS = ("cosine", "dot")
MAX_K = 100_000
# Up to this many stored values an exact scan takes a few milliseconds: no index needed.
CHEAP_EXACT_VALUES = 64_000_000
_KERNEL_DTYPES = (BF16, np.dtype(np.float32), np.dtype(np.float64))


@dataclass
class NeighborResult:
    ids: np.ndarray  # int64, best first
    scores: np.ndarray  # float32; cosine/dot: higher is better; l2: distance, lower is better
    metric: str
    exact: bool
    skipped: int  # zero / non-finite rows left out
    path: str = "exact"  # "exact" or "fast": which search answered
    recall_at_10: float | None = None  # the fast index's recall@10, measured at build
    note: str = ""  # why this path, in words a status line can show

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def path_label(self) -> str:
        """e.g. "fast index · recall@10 0.997, measured at build" or "exact"."""
        if self.path == "fast" and self.recall_at_10 is not None:
            return f"fast index · recall@10 {self.recall_at_10:.3f}, measured at build"
        return "exact" + (f" · {self.note}" if self.note else "")


# -- search -------------------------------------------------------------------------------------


def _check_args(model: EmbeddingModel, queries: Sequence[Query], k: int, metric: str) -> None:
    if metric not in METRICS:
        raise ExplorerError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if not isinstance(k, int | np.integer) or not 1 <= k <= MAX_K:
        raise ExplorerError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
    for q in queries:
        v = q.vector
        if v.shape != (model.dim,):
            raise ExplorerError(f"query vector has {v.size} values but rows have {model.dim}")
        if not np.isfinite(v).all():
            raise ExplorerError(f"query {q.description!r} holds NaN or infinite values")
        if metric == "cosine" and not np.any(v):
            raise ExplorerError(f"query {q.description!r} is the zero vector: cosine is undefined")


class NeighborSearcher:
    """Exact and fast top-k search over one model's embedding matrix."""

    def __init__(self, model: EmbeddingModel, cache_dir: Path | None = None):
        self.model = model
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._sq: np.ndarray | None = None  # squared row norms, float64
        self._valid: np.ndarray | None = None  # rows that are finite and non-zero
        self._skipped = 0  # rows that are not
        self._fast: search_fast.SignIndex | None = None
        self._penalty: np.ndarray | None = None  # 0 for usable rows, -inf for skipped ones
        self._norms32: np.ndarray | None = None
        self._ones: np.ndarray | None = None

    # -- row norms, learned during the first exact pass or from the cache ------------------------
    def _set_norms(self, sq: np.ndarray) -> None:
        self._valid = np.isfinite(sq) & (sq > 0)
        self._skipped = int(self.model.rows - self._valid.sum())
        self._sq = sq
        self._penalty = None

    @property
    def skipped(self) -> int | None:
        """Zero / non-finite rows, once known (after one exact pass or loading the index)."""
        return None if self._valid is None else self._skipped

    @property
    def exact_is_cheap(self) -> bool:
        """A whole-matrix scan takes a few milliseconds: the exact path is the default."""
        return self.model.rows * self.model.dim <= CHEAP_EXACT_VALUES

    @property
    def index(self) -> search_fast.SignIndex | None:
        """The loaded fast index (its `stats` hold the measured recall), if any."""
        return self._fast

    @property
    def fast_ready(self) -> bool:
        """A fast index is loaded (whether the default path uses it: `default_path`)."""
        return self._fast is not None

    def default_path(self, metric: str) -> str:
        """ "fast" or "exact": what `search(..., exact=None)` uses for this metric now."""
        use = self._fast is not None and self._fast.serves(metric) and not self.exact_is_cheap
        return "fast" if use else "exact"

    def load_cached_fast_index(self) -> bool:
        """Load a cached index of this file if there is one (never builds); True if loaded."""
        from explorer.core.search import fast as search_fast

        if self._fast is None:
            index = search_fast.load(self.model, self.cache_dir)
            if index is not None:
                self._set_norms(np.asarray(index.sq))
                self._fast = index
        return self.fast_ready

    def build_fast_index(self, ctx: JobContext = NULL_CONTEXT, rebuild: bool = False) -> None:
        """Build (or load the cached) index, reporting progress 0..1. Only on request:
        searches never build one, and small matrices (`exact_is_cheap`) need none."""
        from explorer.core.search import build as search_build

        if rebuild or not self.load_cached_fast_index():
            index = search_build.build(self.model, self.cache_dir, ctx)
            self._fast = index
            self._set_norms(np.asarray(index.sq))
        ctx.progress(1.0)

    def search(
        self,
        query: Query,
        k: int = 10,
        metric: str = "cosine",
        include_query: bool = False,
        exact: bool | None = None,
        ctx: JobContext = NULL_CONTEXT,
    ) -> NeighborResult:
        """Top-k for one query. exact=None: the cheaper path known to be right; False: the
        index if it serves this metric (else exact, with the reason in `note`)."""
        return self.search_many([query], k, metric, include_query, exact, ctx)[0]

    def _why_exact(self, metric: str, exact: bool | None) -> str:
        if exact:
            return ""
        if metric not in FAST_METRICS:
            return "Euclidean distance is always scanned exactly"
        if self._fast is None:
            return "no fast index built" if exact is False else ""
        if not self._fast.serves(metric):
            return f"fast index not used: {self._fast.stats.reason}"
        return "small matrix, a full scan is quick" if self.exact_is_cheap else ""

    def search_many(
        self,
        queries: Sequence[Query],
        k: int = 10,
        metric: str = "cosine",
        include_query: bool = False,
        exact: bool | None = None,
        ctx: JobContext = NULL_CONTEXT,
    ) -> list[NeighborResult]:
        """Top-k for each query; exact search reads the matrix once for the whole batch."""
        from explorer.core.search import exact as search_exact

        _check_args(self.model, queries, k, metric)
        if not queries:
            return []
        fast = self._fast
        served = fast is not None and fast.serves(metric)
        if (exact is False and served) or (exact is None and self.default_path(metric) == "fast"):
            results = []
            for q in queries:
                ctx.check("search")
                results.append(self._search_fast(q, k, metric, include_query))
            return results
        vectors = np.stack([q.vector for q in queries])
        decode = None if self.model.matrix.dtype in _KERNEL_DTYPES else self.model.decode_block
        dots, sq = search_exact.scan(
            self.model.matrix, vectors, self._sq is None, ctx, decode=decode
        )
        if sq is not None:
            self._set_norms(sq)
        note = self._why_exact(metric, exact)
        results = [
            self._finish(q, slice(None), dots[i], k, metric, include_query)
            for i, q in enumerate(queries)
        ]
        for r in results:
            r.note = note
        return results

    def _finish(
        self, q: Query, where, dots: np.ndarray, k: int, metric: str, include_query: bool
    ) -> NeighborResult:
        """Exact scores from exact dots of the rows `where` (a slice or an id array)."""
        from explorer.core.search import exact as search_exact

        assert self._sq is not None and self._valid is not None
        sq = self._sq[where]
        valid = self._valid[where].copy()
        ids = np.arange(self.model.rows)[where] if isinstance(where, slice) else where
        left_out = q.left_out(include_query)
        if left_out:
            ex = np.fromiter(left_out, dtype=np.int64)
            if isinstance(where, slice):
                valid[ex] = False
            else:
                valid &= ~np.isin(ids, ex)
        q64 = q.vector.astype(np.float64)
        qq = float(q64 @ q64)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            d = search_exact.widen_dots(self.model.matrix, dots, valid, ids, q64)
            if metric == "cosine":
                key = d / np.sqrt(sq)
            elif metric == "dot":
                key = d
            else:
                key = 2 * d - sq  # = qq - distance², without the constant
            key = np.where(valid, key, -np.inf)
        # float32 dots pick the candidates; their scores are then recomputed in float64 from
        # the stored rows, so that near-ties and tiny l2 distances come out exactly.
        cand = top_unordered(key, max(2 * k, k + 64))
        cand = cand[np.argsort(ids[cand], kind="stable")]  # equal scores: lower id first
        rows = self.model.vectors(ids[cand]).astype(np.float64)
        # einsum, not BLAS: waking OpenBLAS threads for 100 rows costs more than it saves, and
        # they spin for a while afterwards, slowing the next scan.
        exact_dots = np.einsum("ij,j->i", rows, q64)
        cand_sq = sq[cand]  # exact float64 sums of squares of the stored values
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if metric == "cosine":
                scores = exact_dots / (np.sqrt(cand_sq) * np.sqrt(qq))
                exact_key = scores
            elif metric == "dot":
                scores = exact_dots
                exact_key = scores
            else:
                scores = np.sqrt(np.maximum(cand_sq - 2 * exact_dots + qq, 0.0))
                exact_key = -scores
        top = top_k(exact_key, k)
        return NeighborResult(
            ids=np.asarray(ids[cand][top], dtype=np.int64),
            scores=search_exact.fit_float32(scores[top]),
            metric=metric,
            exact=True,
            skipped=self._skipped,
        )

    def _search_fast(self, q: Query, k: int, metric: str, include_query: bool) -> NeighborResult:
        from explorer.core.search import exact as search_exact

        index = self._fast
        assert index is not None and self._valid is not None and self._sq is not None
        if self._penalty is None:  # float32 helpers: the whole-vocabulary steps stay cheap
            self._penalty = np.where(self._valid, 0, -np.inf).astype(np.float32)
            self._norms32 = np.sqrt(np.where(self._valid, self._sq, 0)).astype(np.float32)
            self._ones = np.ones(self.model.rows, np.float32)
        exclude = np.fromiter(q.left_out(include_query), dtype=np.int64)
        c1, c2 = index.stats.settings[metric]
        scale = self._norms32 if metric == "dot" else self._ones
        assert scale is not None
        cand = index.candidates(q.vector, c1, max(c2, 4 * k), scale, self._penalty, exclude)
        if self.model.matrix.dtype in _KERNEL_DTYPES:
            rows = self.model.scattered_matrix
            dots = search_exact.dots_for_ids(rows, cand, q.vector[None, :])[0]
        else:  # any other stored format: the model decodes the few candidate rows
            dots = (np.asarray(self.model.vectors(cand), np.float32) @ q.vector).astype(np.float32)
        result = self._finish(q, cand, dots, k, metric, include_query)
        result.exact = False
        result.path = "fast"
        result.recall_at_10 = index.stats.recall_at_10.get(metric)
        return result
