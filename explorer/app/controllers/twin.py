"""The random-twin switch: the open model's twin becomes the current model, so every view
(neighbours, map, statistics, cosine distributions, values) shows noise of the same shape and
per-dimension scale; switching back restores the real model. The selection is kept."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from explorer.app.state import MODEL_LANE, AppState
from explorer.core.learning.twin_model import TwinEmbedding, twin_model
from explorer.core.model.embedding import EmbeddingModel


def real_of(model: EmbeddingModel) -> EmbeddingModel:
    """The real model behind a twin (the model itself otherwise)."""
    if isinstance(model, TwinEmbedding) and model.real is not None:
        return model.real
    return model


class TwinController(QObject):
    toggled = Signal(bool)  # True: the current model is a random twin
    failed = Signal(object)  # the exception

    def __init__(
        self,
        state: AppState,
        seed: int = 0,
        cache_dir: Path | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent if parent is not None else state)
        self.state, self.seed, self.cache_dir = state, seed, cache_dir
        self.lane = state.jobs.lane(MODEL_LANE)  # a twin is another way of opening the model
        state.modelChanged.connect(lambda m: self.toggled.emit(isinstance(m, TwinEmbedding)))

    @property
    def showing(self) -> bool:
        return isinstance(self.state.model, TwinEmbedding)

    def set_twin(self, on: bool) -> None:
        model = self.state.model
        if model is None or on == self.showing:
            self.toggled.emit(self.showing)  # a checkable action stays truthful
            return
        if not on:
            self._swap(real_of(model))
            return
        self.lane.submit(
            twin_model,
            model,
            self.seed,
            self.cache_dir,
            label="Making the random twin…",
            on_result=self._swap,
            on_error=self._failed,
        )

    def _swap(self, model: EmbeddingModel) -> None:
        selection = list(self.state.selection)
        self.state.set_model(model)
        if selection:
            self.state.select(selection)
        if isinstance(model, TwinEmbedding):
            self.state.statusMessage.emit(
                f"Showing the random twin of {model.path.name}: same shape and per-dimension "
                "scale, no meaning (View › Random twin switches back)"
            )

    def _failed(self, error: BaseException) -> None:
        self.toggled.emit(self.showing)
        self.failed.emit(error)
