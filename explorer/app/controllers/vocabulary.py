"""Prefix search over the whole vocabulary (the Find box); the index is built on "vocab"."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import Lane
from explorer.app.state import AppState
from explorer.core.model import EmbeddingModel
from explorer.core.vocab_index import Match, VocabIndex

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


class VocabularyController(FeatureController):
    LANE = Lane.VOCAB

    indexReady = Signal()
    indexCleared = Signal()  # a new model: no suggestions until its index is ready

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.index: VocabIndex | None = None
        if state.model is not None:
            self.model_changed(state.model)

    def model_changed(self, model: EmbeddingModel) -> None:
        self.index = None
        self.indexCleared.emit()
        self.lane.submit(build_index, model, label="Indexing the vocabulary", on_result=self._ready)

    def suggestions(self, text: str, limit: int = MAX_SUGGESTIONS) -> list[Match]:
        return self.index.search(text, limit) if self.index is not None else []

    def _ready(self, index: VocabIndex) -> None:
        self.index = index
        self.indexReady.emit()
