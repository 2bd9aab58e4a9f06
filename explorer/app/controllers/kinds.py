"""The kind of every token (script, digits, punctuation, …) for "colour by kind" in the map:
computed from the tokenizer once per model, on the "kinds" lane, when first asked for."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import LaneSpec
from explorer.app.state import AppState
from explorer.core.analysis.kinds import TokenKinds, token_kinds
from explorer.core.model.embedding import EmbeddingModel

KINDS_LANE = LaneSpec("kinds")  # the kind of every token (colour by kind in the map)


class KindsController(FeatureController):
    LANE = KINDS_LANE

    kindsReady = Signal(object)  # TokenKinds of the current model
    reset = Signal()  # a new model: no kinds yet

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.kinds: TokenKinds | None = None
        self._for: EmbeddingModel | None = None

    def model_changed(self, model: EmbeddingModel) -> None:
        self.kinds, self._for = None, None
        self.reset.emit()

    def ensure(self) -> None:
        """Compute the kinds of the current model unless they are known or being computed."""
        model = self.state.model
        if model is None or self._for is model:
            return
        self._for = model

        def done(kinds: TokenKinds) -> None:
            self._done(kinds, model)

        self.lane.submit(token_kinds, model, label="Token kinds", on_result=done)

    def _done(self, kinds: TokenKinds, model: EmbeddingModel) -> None:
        if model is self.state.model:
            self.kinds = kinds
            self.kindsReady.emit(kinds)
