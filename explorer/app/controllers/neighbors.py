"""Neighbours of the selection, searched on the "neighbors" lane; the fast index on "index".

One NeighborSearcher per open model. When a model opens, its fast index is loaded from the
cache or built in a child process (progress in the status bar); until it is ready, exact search
serves. Every selection change starts a new search once the selection has settled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.index_process import build_in_child
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec
from explorer.app.state import AppState
from explorer.core.learning.twin_model import TwinEmbedding
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.search.neighbors import NeighborResult, NeighborSearcher, query_for_ids
from explorer.core.search.queries import query_for_expression

NEIGHBORS_LANE = LaneSpec("neighbors", nice=SCAN_NICE)  # exact searches scan the vocabulary
INDEX_LANE = LaneSpec("index")  # the fast neighbour index (a child process builds it)

DEFAULT_K = 50
SETTLE_MS = 80  # a search starts once the selection has settled (clicking through tokens)
SLOW_MS = 200  # say "searching" only when a search is not instant
# placeholder rows of a vocabulary ("[unused12]", "<unused3>"): never useful as neighbours
UNUSED_NAME = re.compile(r"^[\[<]unused\d+[\]>]$")


@dataclass(frozen=True)
class Neighbors:
    """The answer for one selection."""

    ids: tuple[int, ...]  # the selection the query was built from
    description: str
    result: NeighborResult
    model: EmbeddingModel
    hidden: int = 0  # unused rows left out of `result` (they ranked among the top k)
    hint: str | None = None  # a better way to ask (for a typed expression)


def is_placeholder(model: EmbeddingModel, token_id: int) -> bool:
    """A row the tokenizer never produces, or a vocabulary placeholder such as [unused12]."""
    return model.is_unused(token_id) or bool(UNUSED_NAME.match(model.label(token_id)))


def without_placeholders(model: EmbeddingModel, result: NeighborResult, k: int):
    """(the first k rows that are not placeholders, how many placeholders ranked above them)."""
    keep: list[int] = []
    for pos, token_id in enumerate(result.ids):
        if len(keep) == k:
            break
        if not is_placeholder(model, int(token_id)):
            keep.append(pos)
    hidden = (keep[-1] + 1 - len(keep)) if keep else len(result.ids)
    return replace(result, ids=result.ids[keep], scores=result.scores[keep]), hidden


def search_neighbors(
    searcher: NeighborSearcher,
    ids: tuple[int, ...],
    k: int,
    metric: str,
    ctx: JobContext,
    hide_unused: bool = False,
    text: str | None = None,
) -> Neighbors:
    """Worker thread: the query (mean of the selected rows, or `text` in the CLI's query
    language: token, #id, phrase, 'king - man + woman') → top-k, placeholders hidden."""
    model = searcher.model
    query = query_for_expression(model, text) if text else query_for_ids(model, ids)
    fetch = min(model.rows, 4 * k + 50) if hide_unused else k
    result = searcher.search(query, k=fetch, metric=metric, ctx=ctx)
    hidden = 0
    if hide_unused:
        result, hidden = without_placeholders(model, result, k)
    return Neighbors(ids, query.description, result, model, hidden, query.hint)


def build_index(searcher: NeighborSearcher, ctx: JobContext) -> bool:
    """Worker thread: load the cached fast index, or build it in a child process (progress)."""
    build_in_child(searcher, ctx)
    if searcher.fast_ready:  # compile (or load from numba's cache) the fast kernels now, while
        searcher.search(query_for_ids(searcher.model, [0]), k=1)  # the model is still opening
    return searcher.fast_ready


def load_index(searcher: NeighborSearcher) -> bool:
    """Worker thread: use a cached fast index if there is one, never build."""
    return searcher.load_cached_fast_index()


class NeighborsController(FeatureController):
    LANE = NEIGHBORS_LANE

    resultsReady = Signal(object)  # Neighbors
    cleared = Signal(str)  # no selection (or no model): a hint to show instead
    failed = Signal(object)  # the search failed: the exception
    searching = Signal(bool)  # a search started (True) or ended (False)
    slow = Signal(str)  # a search has run for SLOW_MS: what to show meanwhile
    fastReadyChanged = Signal(bool)

    def __init__(
        self,
        state: AppState,
        k: int = DEFAULT_K,
        metric: str = "cosine",
        cache_dir: Path | None = None,
        auto_index: bool = True,
        parent: QObject | None = None,
    ):
        """`auto_index=False`: never build the fast index (only load a cached one)."""
        super().__init__(state, parent)
        self.auto_index = auto_index
        self.index_lane = state.jobs.lane(INDEX_LANE)
        self.k = k
        self.metric = metric
        self.hide_unused = True
        self.text: str | None = None  # a typed query replaces the selection until it changes
        self.cache_dir = cache_dir
        self.searcher: NeighborSearcher | None = None
        self.latest: Neighbors | None = None
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.refresh)
        self._slow = QTimer(self)
        self._slow.setSingleShot(True)
        self._slow.setInterval(SLOW_MS)
        self._slow.timeout.connect(self._still_searching)
        self.searching.connect(lambda on: self._slow.start() if on else self._slow.stop())
        state.selectionChanged.connect(self._selection_changed)
        if state.model is not None:
            self.model_changed(state.model)

    @property
    def fast_ready(self) -> bool:
        return self.searcher is not None and self.searcher.fast_ready

    def set_options(
        self, k: int | None = None, metric: str | None = None, hide_unused: bool | None = None
    ) -> None:
        self.k = k if k is not None else self.k
        self.metric = metric if metric is not None else self.metric
        self.hide_unused = hide_unused if hide_unused is not None else self.hide_unused
        self.refresh()

    def search_text(self, text: str) -> None:
        """Neighbours of a typed query (token, #id, phrase or vector expression)."""
        self.text = text.strip() or None
        self.refresh()

    def _selection_changed(self, _ids) -> None:
        self.text = None
        # the running search answers a selection that is gone: stop it now rather than when the
        # next one starts, or an exact scan of the whole matrix runs on through a run of clicks
        self.lane.cancel()
        self._settle.start()

    @property
    def pending(self) -> bool:
        """A search is waiting for the selection to settle."""
        return self._settle.isActive()

    def refresh(self) -> None:
        """Search again for the current selection (now)."""
        self._settle.stop()
        ids = tuple(self.state.selection)
        if self.searcher is None or not (ids or self.text):
            self.lane.cancel()
            self.latest = None
            self.searching.emit(False)
            self.cleared.emit("Select a token to see its nearest neighbours")
            return
        label = "Searching neighbours" + ("" if self.fast_ready else " (exact)")
        self.lane.submit(
            search_neighbors,
            self.searcher,
            ids,
            self.k,
            self.metric,
            hide_unused=self.hide_unused,
            text=self.text,
            label=label,
            on_result=self._found,
            on_error=self._failed,
        )
        self.searching.emit(True)

    def model_changed(self, model: EmbeddingModel) -> None:
        self.searcher = NeighborSearcher(model, cache_dir=self.cache_dir)
        self.fastReadyChanged.emit(False)
        # a full scan takes milliseconds, or a random twin (its rows exist only when read):
        # no index to build
        if self.searcher.exact_is_cheap or isinstance(model, TwinEmbedding):
            self.index_lane.cancel()
            self.refresh()
            return
        self.index_lane.submit(
            build_index if self.auto_index else load_index,
            self.searcher,
            label="Fast neighbour index",
            on_result=self._index_done,
        )
        self.refresh()

    def _still_searching(self) -> None:
        note = "" if self.fast_ready else " (exact search until the fast index is ready)"
        self.slow.emit(f"Searching neighbours…{note}")

    def _index_done(self, ready: bool) -> None:
        self.fastReadyChanged.emit(bool(ready))
        if ready:
            self.state.statusMessage.emit("Fast neighbour search is ready")

    def _found(self, found: Neighbors) -> None:
        self.searching.emit(False)
        if found.model is not self.state.model:
            return
        self.latest = found
        self.resultsReady.emit(found)
        if found.hint:
            self.state.statusMessage.emit(f"Hint: {found.hint}")

    def _failed(self, error: BaseException) -> None:
        self.searching.emit(False)
        self.failed.emit(error)
