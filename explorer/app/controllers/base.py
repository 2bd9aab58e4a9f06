"""The base of every feature controller: one lane, cancelled whenever the model changes."""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import QObject

from explorer.app.jobs import JobLane, LaneSpec
from explorer.app.state import AppState
from explorer.core.model.embedding import EmbeddingModel


class FeatureController(QObject):
    """Subclasses set ``LANE`` (the spec of the lane they own) and override ``model_changed``;
    see the package docstring."""

    LANE: ClassVar[LaneSpec]

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(parent if parent is not None else state)
        self.state = state
        self.lane: JobLane = state.jobs.lane(self.LANE)
        state.modelChanged.connect(self._on_model_changed)

    def _on_model_changed(self, model: EmbeddingModel) -> None:
        self.lane.cancel()  # whatever it computes belongs to the previous model
        self.model_changed(model)

    def model_changed(self, model: EmbeddingModel) -> None:
        """A new model is current (``state.selection`` is still the old one: a
        ``selectionChanged([])`` follows)."""

    @property
    def busy(self) -> bool:
        return self.lane.busy
