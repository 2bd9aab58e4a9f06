"""Rows of the selection for the embedding viewer, read on the "lookup" lane."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import LaneSpec
from explorer.app.state import AppState
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.rows.read import RowData, load_rows

LOOKUP_LANE = LaneSpec("lookup")  # rows of the selection for the viewer

MAX_VIEW_ROWS = 16  # rows overlaid in the viewer; a larger selection shows its first ones


class RowsController(FeatureController):
    LANE = LOOKUP_LANE

    rowsReady = Signal(object)  # list[RowData] of the (first MAX_VIEW_ROWS) selected tokens
    cleared = Signal(str)  # nothing selected: a hint to show instead ("" for none)
    reading = Signal()  # rows of a new selection are being read

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        state.selectionChanged.connect(self.refresh)
        state.textChanged.connect(lambda _text: self.refresh() if not state.selection else None)

    def model_changed(self, model: EmbeddingModel) -> None:
        self.refresh()

    def refresh(self, *_args: object) -> None:
        """Read the rows of the current selection (or clear the viewer)."""
        model = self.state.model
        if model is None:
            return
        ids = self.state.selection
        if not ids:
            self.lane.cancel()
            self.cleared.emit(self.hint())
            return
        shown = list(ids[:MAX_VIEW_ROWS])
        if len(ids) > MAX_VIEW_ROWS:
            self.state.statusMessage.emit(
                f"{len(ids)} tokens selected; the viewer shows the first {MAX_VIEW_ROWS}"
            )
        self.reading.emit()
        self.lane.submit(
            load_rows,
            model,
            shown,
            label=f"Reading {len(shown)} row{'s' * (len(shown) > 1)}",
            on_result=self._ready,
        )

    def hint(self) -> str:
        model = self.state.model
        if model is not None and model.tokenizer is None:
            return "This model has no tokenizer: find a row by id (#123) with Ctrl+F"
        if not self.state.text:
            return "Type some text on the left, or find any token with Ctrl+F"
        return ""

    def _ready(self, rows: list[RowData]) -> None:
        self.rowsReady.emit(rows)
