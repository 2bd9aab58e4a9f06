"""The map's chosen points copied or saved on the "chosen" lane (explorer/core/map/chosen.py):
the text for a lasso over a whole vocabulary takes a second to make."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import LaneSpec, error_message
from explorer.app.state import AppState
from explorer.core.map import chosen

CHOSEN_LANE = LaneSpec("chosen")


class ChosenController(FeatureController):
    LANE = CHOSEN_LANE

    textReady = Signal(str, int)  # the chosen points as lines for the clipboard, how many
    saved = Signal(str, int)  # the file written, how many points

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)

    def make_text(self, ids: np.ndarray, labels: Sequence[str], rows: np.ndarray) -> None:
        self.lane.submit(
            chosen.as_lines,
            ids,
            labels,
            rows,
            label="Copying the chosen tokens",
            on_result=lambda text: self.textReady.emit(text, len(rows)),
        )

    def save(
        self,
        path: str | Path,
        ids: np.ndarray,
        labels: Sequence[str],
        coords: np.ndarray,
        rows: np.ndarray,
    ) -> None:
        self.lane.submit(
            chosen.write_csv,
            Path(path),
            ids,
            labels,
            coords,
            rows,
            label="Saving the chosen tokens",
            on_result=lambda n: self.saved.emit(str(path), n),
            on_error=lambda e: self.state.errorOccurred.emit(f"Export failed: {error_message(e)}"),
        )
