"""Top-k nearest neighbours of tokens, phrases, vector expressions and raw vectors.

Exact search streams the memory-mapped matrix once per batch of queries (search_exact);
fast search uses a cached PCA sketch plus exact re-ranking (search_fast).  Rows that are all
zeros or hold NaN/inf are never returned and are counted in `NeighborResult.skipped`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core import search_exact, search_fast
from explorer.core.cache import default_cache_dir
from explorer.core.errors import Cancelled, ExplorerError, TokenError
from explorer.core.limits import check_text, parse_hash_id
from explorer.core.model import EmbeddingModel

METRICS = ("cosine", "dot", "l2")
FAST_METRICS = ("cosine", "dot")
MAX_K = 100_000


@dataclass(frozen=True)
class Query:
    vector: np.ndarray  # float32 [dim]
    exclude: frozenset[int]  # the query's own token ids (left out unless include_query)
    description: str


@dataclass
class NeighborResult:
    ids: np.ndarray  # int64, best first
    scores: np.ndarray  # float32; cosine/dot: higher is better; l2: distance, lower is better
    metric: str
    exact: bool
    skipped: int  # zero / non-finite rows left out

    def __len__(self) -> int:
        return len(self.ids)


# -- queries ------------------------------------------------------------------------------------


def _mean_rows(model: EmbeddingModel, ids: Sequence[int]) -> np.ndarray:
    vecs = model.vectors(list(ids)).astype(np.float64)
    return vecs.mean(axis=0).astype(np.float32)


def query_for_ids(model: EmbeddingModel, ids: Sequence[int]) -> Query:
    """The mean of the given rows."""
    ids = [model.check_id(int(i)) for i in ids]
    if not ids:
        raise TokenError("no token ids given")
    desc = model.label(ids[0]) if len(set(ids)) == 1 else f"mean of {len(ids)} tokens"
    return Query(_mean_rows(model, ids), frozenset(ids), desc)


def _need_tokenizer(model: EmbeddingModel, what: str):
    if model.tokenizer is None:
        raise TokenError(
            f"cannot look up {what!r}: this model has no tokenizer.json; use ids (#123)"
        )
    return model.tokenizer


def _phrase_ids(model: EmbeddingModel, text: str) -> list[int]:
    tok = _need_tokenizer(model, text)
    if not text.strip():
        raise TokenError("the text is empty")
    tokens = tok.encode(text)
    if not tokens:
        raise TokenError(f"{text!r} encodes to no tokens")
    unknown = [t for t in tokens if t.id in tok.special_ids and t.piece not in text]
    if unknown:  # e.g. BERT's [UNK]: the text is not in the vocabulary
        raise TokenError(f"{text!r} is not in the vocabulary (it encodes to {unknown[0].piece})")
    ids = [t.id for t in tokens]
    return [model.check_id(i) for i in ids]


def query_for_text(model: EmbeddingModel, text: str) -> Query:
    """The mean of the rows of the phrase's tokens."""
    ids = _phrase_ids(model, text)
    desc = text if len(ids) == 1 else f"{text} (mean of {len(ids)} tokens)"
    return Query(_mean_rows(model, ids), frozenset(ids), desc)


_TERM = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([^+\-"']+))\s*""")


def _split_expression(expr: str) -> list[tuple[int, str]]:
    """'king - man + woman' → [(+1, 'king'), (-1, 'man'), (+1, 'woman')].

    A term is a token text, '#id', or a quoted string (quote terms that contain + or -).
    """
    check_text(expr, "the expression")
    terms: list[tuple[int, str]] = []
    pos, sign, signed = 0, 1, False
    expect_term = True
    text = expr.strip()
    if not text:
        raise TokenError("the expression is empty")
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if ch in "+-":
            if expect_term and (terms or signed):
                raise TokenError(
                    f"expression {expr!r}: two operators in a row at position {pos + 1}"
                )
            sign, signed, expect_term = (1 if ch == "+" else -1), True, True
            pos += 1
            continue
        if not expect_term:
            raise TokenError(f"expression {expr!r}: missing + or - before position {pos + 1}")
        if ch in "\"'" and text.find(ch, pos + 1) < 0:
            raise TokenError(f"expression {expr!r}: unclosed quote at position {pos + 1}")
        m = _TERM.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any remaining text
            raise TokenError(f"expression {expr!r}: cannot read position {pos + 1}")
        term = next(g for g in m.groups() if g is not None)
        term = term if m.group(3) is None else term.strip()
        if not term:
            raise TokenError(f"expression {expr!r}: empty term at position {pos + 1}")
        terms.append((sign, term))
        pos, sign, signed, expect_term = m.end(), 1, False, False
    if expect_term:
        raise TokenError(f"expression {expr!r}: ends with an operator")
    return terms


def _term_ids(model: EmbeddingModel, term: str) -> list[int]:
    if (token_id := parse_hash_id(term)) is not None:
        return [model.check_id(token_id)]
    tok = _need_tokenizer(model, term)
    try:
        found = tok.find(term)
    except TokenError:
        return _phrase_ids(model, term)  # several tokens: their mean
    return [model.check_id(found)]


def query_for_expression(model: EmbeddingModel, expr: str) -> Query:
    """A vector expression such as 'king - man + woman' ('#id' terms; multi-token term = mean)."""
    total = np.zeros(model.dim, dtype=np.float64)
    exclude: set[int] = set()
    shown = []
    for sign, term in _split_expression(expr):
        ids = _term_ids(model, term)
        total += sign * _mean_rows(model, ids).astype(np.float64)
        exclude.update(ids)
        shown.append(("- " if sign < 0 else "+ ") + term)
    desc = " ".join(shown)
    desc = desc[2:] if desc.startswith("+ ") else desc
    return Query(total.astype(np.float32), frozenset(exclude), desc)


def query_for_vector(vector, description: str = "vector") -> Query:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    return Query(v, frozenset(), description)


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


def _rank(key: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k largest finite keys, best first (ties: lower position first)."""
    finite = np.isfinite(key)
    k = min(k, int(finite.sum()))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    key = np.where(finite, key, -np.inf)
    top = np.argpartition(-key, k - 1)[:k] if k < len(key) else np.arange(len(key))
    return top[np.lexsort((top, -key[top]))].astype(np.int64)


class NeighborSearcher:
    """Exact and fast top-k search over one model's embedding matrix."""

    def __init__(self, model: EmbeddingModel, cache_dir: Path | None = None):
        self.model = model
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._sq: np.ndarray | None = None  # squared row norms, float64
        self._valid: np.ndarray | None = None  # rows that are finite and non-zero
        self._fast: search_fast.SketchIndex | None = None
        self._penalty: np.ndarray | None = None  # 0 for usable rows, -inf for skipped ones
        self._norms32: np.ndarray | None = None

    # -- row norms, learned during the first exact pass or from the cache ------------------------
    def _set_norms(self, sq: np.ndarray) -> None:
        self._valid = np.isfinite(sq) & (sq > 0)
        self._sq = sq
        self._penalty = None

    @property
    def skipped(self) -> int | None:
        """Zero / non-finite rows, once known (after one exact pass or loading the index)."""
        return None if self._valid is None else int(self.model.rows - self._valid.sum())

    @property
    def fast_ready(self) -> bool:
        return self._fast is not None

    def load_cached_fast_index(self) -> bool:
        """Use the fast index if a valid one is cached for this file; never builds one."""
        if self._fast is None:
            index = search_fast.load(self.model, self.cache_dir)
            if index is not None:
                self._set_norms(np.asarray(index.sq))
                self._fast = index
        return self._fast is not None

    def build_fast_index(self, cancel: Callable[[], bool] | None = None) -> Iterator[float]:
        """Yield progress 0..1 while building (or loading) the fast index; ready at the end."""
        if self.load_cached_fast_index():
            yield 1.0
            return
        if self._sq is None:  # one pass for the row norms, in slices to report progress
            rows, no_query = self.model.rows, np.zeros((0, self.model.dim), np.float32)
            parts: list[np.ndarray] = []
            step = max(1, -(-rows // 10))
            for n, start in enumerate(range(0, rows, step)):
                _, sq = search_exact.scan(
                    self.model.matrix[start : start + step], no_query, True, cancel
                )
                assert sq is not None
                parts.append(sq)
                yield 0.05 * (n + 1) / 10
            self._set_norms(np.concatenate(parts) if parts else np.zeros(0))
        yield 0.05
        assert self._sq is not None
        for item in search_fast.build(self.model, self.cache_dir, self._sq, cancel):
            if isinstance(item, search_fast.SketchIndex):
                self._fast = item
            else:
                yield 0.05 + 0.95 * float(item)
        yield 1.0

    def search(
        self,
        query: Query,
        k: int = 10,
        metric: str = "cosine",
        include_query: bool = False,
        exact: bool | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> NeighborResult:
        """Top-k for one query. exact=None: the fast index if it is ready, else the exact scan."""
        return self.search_many([query], k, metric, include_query, exact, cancel)[0]

    def search_many(
        self,
        queries: Sequence[Query],
        k: int = 10,
        metric: str = "cosine",
        include_query: bool = False,
        exact: bool | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> list[NeighborResult]:
        """Top-k for each query; exact search reads the matrix once for the whole batch."""
        _check_args(self.model, queries, k, metric)
        if not queries:
            return []
        # The sketch ranks cosine and dot well; Euclidean distance always takes the exact scan.
        use_fast = exact is not True and self._fast is not None and metric in FAST_METRICS
        if use_fast:
            results = []
            for q in queries:
                if cancel is not None and cancel():
                    raise Cancelled("search cancelled")
                results.append(self._search_fast(q, k, metric, include_query))
            return results
        vectors = np.stack([q.vector for q in queries])
        dots, sq = search_exact.scan(self.model.matrix, vectors, self._sq is None, cancel)
        if sq is not None:
            self._set_norms(sq)
        return [
            self._finish(q, self._all_ids(), dots[i], k, metric, include_query, True)
            for i, q in enumerate(queries)
        ]

    def _all_ids(self) -> slice:
        return slice(None)

    def _finish(
        self,
        q: Query,
        where,
        dots: np.ndarray,
        k: int,
        metric: str,
        include_query: bool,
        exact: bool,
    ) -> NeighborResult:
        """Exact scores from exact dots of the rows `where` (a slice or an id array)."""
        assert self._sq is not None and self._valid is not None
        sq = self._sq[where]
        valid = self._valid[where].copy()
        ids = np.arange(self.model.rows)[where] if isinstance(where, slice) else where
        if not include_query and q.exclude:
            ex = np.fromiter(q.exclude, dtype=np.int64)
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
        cand = _rank_unordered(key, max(2 * k, k + 64))
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
        top = _rank(exact_key, k)
        return NeighborResult(
            ids=np.asarray(ids[cand][top], dtype=np.int64),
            scores=search_exact.fit_float32(scores[top]),
            metric=metric,
            exact=exact,
            skipped=int(self.model.rows - self._valid.sum()),
        )

    def _search_fast(self, q: Query, k: int, metric: str, include_query: bool) -> NeighborResult:
        index = self._fast
        assert index is not None and self._valid is not None and self._sq is not None
        if self._penalty is None:  # float32 helpers: the whole-vocabulary steps stay cheap
            self._penalty = np.where(self._valid, 0, -np.inf).astype(np.float32)
            self._norms32 = np.sqrt(np.where(self._valid, self._sq, 0)).astype(np.float32)
        exclude = (
            np.fromiter(q.exclude, dtype=np.int64)
            if q.exclude and not include_query
            else np.zeros(0, dtype=np.int64)
        )
        cand = index.candidates(
            q.vector,
            max(search_fast.CANDIDATES, 4 * k),
            self._norms32 if metric == "dot" else None,
            self._penalty,
            exclude,
        )
        dots = search_exact.dots_for_ids(self.model.matrix, cand, q.vector[None, :])[0]
        return self._finish(q, cand, dots, k, metric, include_query, False)


def _rank_unordered(key: np.ndarray, c: int) -> np.ndarray:
    """The positions of the c largest finite keys, in no particular order."""
    n_finite = int(np.isfinite(key).sum())
    c = min(c, n_finite)
    if c == 0:
        return np.zeros(0, dtype=np.int64)
    if c >= len(key):
        return np.flatnonzero(np.isfinite(key))
    top = np.argpartition(-key, c - 1)[:c]
    return top[np.isfinite(key[top])].astype(np.int64)
