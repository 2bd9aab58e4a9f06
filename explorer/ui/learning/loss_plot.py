"""The loss curve of the training run: one PlotDataItem, fed the whole curve at each epoch."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from explorer.ui.widgets.solid_grid import show_solid_grid, solid_grid_axes


class LossPlot(pg.PlotWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent, axisItems=solid_grid_axes())
        self.setBackground("w")
        self.setTitle("Loss", color="#333", size="9pt")
        self.setLabel("bottom", "epoch")
        show_solid_grid(self.getPlotItem(), alpha=0.2)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setMinimumWidth(160)
        self.curve = self.plot([], [], pen=pg.mkPen("#1f77b4", width=2))
        self.points = 0

    def set_curve(self, curve: tuple[tuple[float, float], ...]) -> None:
        xy = np.asarray(curve, dtype=np.float64).reshape(-1, 2)
        self.points = len(xy)
        self.curve.setData(xy[:, 0], xy[:, 1])

    def clear_curve(self) -> None:
        self.set_curve(())
