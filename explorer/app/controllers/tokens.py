"""Prefix search over the whole vocabulary (the Find box); the index is built on "vocab"."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import LaneSpec
from explorer.app.state import AppState
from explorer.core.errors import ExplorerError
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.tokenizer.text import parse_token_ref
from explorer.core.tokenizer.vocab_index import Match, VocabIndex

VOCAB_LANE = LaneSpec("vocab")
FIND_LANE = LaneSpec("find")  # the token that text typed in the Find box names

MAX_SUGGESTIONS = 50


def build_index(model: EmbeddingModel) -> VocabIndex:
    """Worker thread: labels of every row, sorted for prefix search."""
    tok = model.tokenizer
    if tok is None:
        return VocabIndex([f"#{i}" for i in range(model.rows)])
    order_elsewhere = getattr(tok, "order_elsewhere", None)  # the tokenizer's process sorts
    if order_elsewhere is not None and len(tok.labels) == model.rows:
        return VocabIndex(tok.labels, order=order_elsewhere(model.rows))
    return VocabIndex(tok.labels[: model.rows])


def find_token(model: EmbeddingModel, text: str) -> int | None:
    """Worker thread: the id of the one token `text` names, or None if it is not one token
    (a word the vocabulary does not list is encoded, which may wait on the tokenizer's process)."""
    try:
        return model.check_id(parse_token_ref(text, model.tokenizer))
    except ExplorerError:
        return None


class VocabularyController(FeatureController):
    LANE = VOCAB_LANE

    indexReady = Signal()
    indexCleared = Signal()  # a new model: no suggestions until its index is ready

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.index: VocabIndex | None = None
        self.find_lane = state.jobs.lane(FIND_LANE)
        if state.model is not None:
            self.model_changed(state.model)

    def model_changed(self, model: EmbeddingModel) -> None:
        self.find_lane.cancel()
        self.index = None
        self.indexCleared.emit()
        self.lane.submit(build_index, model, label="Indexing the vocabulary", on_result=self._ready)

    def suggestions(self, text: str, limit: int = MAX_SUGGESTIONS) -> list[Match]:
        return self.index.search(text, limit) if self.index is not None else []

    def find(self, text: str, on_found: Callable[[int | None], None]) -> None:
        """`on_found` gets the id of the token `text` names, or None if it names no one token."""
        if self.state.model is not None:
            self.find_lane.submit(
                find_token, self.state.model, text, label="Finding a token", on_result=on_found
            )

    def forget_find(self) -> None:
        """The typed text changed: a find under way answers for text no longer there."""
        self.find_lane.cancel()  # nothing to do when none is under way

    def _ready(self, index: VocabIndex) -> None:
        self.index = index
        self.indexReady.emit()
