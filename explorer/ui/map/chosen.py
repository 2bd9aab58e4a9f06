"""Marks on the box- or lasso-chosen points: a dark ring on each while they are few, a dark
square under each when many (one PointsItem, as the colour layers draw: pyqtgraph's scatter
item builds a pen and a brush per point in Python, seconds for a lasso over a whole
vocabulary)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush, QColor

from explorer.ui.map.layers import PointsItem

CHOSEN_RING = "#111111"  # a colour no cluster or colour scale uses
RINGS_UP_TO = 2000
Z = 0.9  # above the points, under the selected token's disc


class ChosenMarks:
    def __init__(self, plot: pg.PlotItem):
        self.rings = pg.ScatterPlotItem(
            pxMode=True, size=13, brush=pg.mkBrush(0, 0, 0, 0), pen=pg.mkPen(CHOSEN_RING, width=2.5)
        )
        self.squares = PointsItem()
        for item in (self.squares, self.rings):
            item.setZValue(Z)
            plot.addItem(item)

    def show(self, xy: np.ndarray, point_size: float) -> None:
        """Mark the points at `xy` (map coordinates), drawn `point_size` pixels across."""
        few = len(xy) <= RINGS_UP_TO
        self.rings.setData(pos=xy if few else np.zeros((0, 2)))
        shown = np.zeros((0, 2)) if few else xy
        self.squares.set_points(shown, QBrush(QColor(CHOSEN_RING)), point_size + 2)

    def count(self) -> int:
        """Points marked now (for tests)."""
        return len(self.rings.data) + len(self.squares._xy)
