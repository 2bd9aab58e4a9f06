"""One row reshaped near-square as an image, diverging colours centred on 0, with a colour bar."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QWidget

from explorer.core.rows.numbers import near_square
from explorer.core.rows.read import RowData
from explorer.ui.rows.picking import IndexPicking
from explorer.ui.rows.style import diverging_colormap, muted_text, style_plot


def row_image(values: np.ndarray) -> np.ndarray:
    """values laid out row-major in a near-square grid; cells past the end are NaN (transparent)."""
    n = int(values.shape[0])
    rows, cols = near_square(max(n, 1))
    grid = np.full(rows * cols, np.nan, dtype=np.float32)
    grid[:n] = values
    return grid.reshape(rows, cols)


class RowHeatmap(IndexPicking, pg.GraphicsLayoutWidget):
    hovered = Signal(int)  # index under the mouse, -1 outside
    indexClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.row: RowData | None = None
        self.limit = 1.0
        self.plot = self.addPlot()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setAspectLocked(True)
        self.plot.invertY(True)  # index 0 at the top left, reading order
        # No axes: the caption gives the grid size and hovering gives row, column and index;
        # axes (and the colour bar's frame) would cost ~10 ms of repaint per selection.
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.bar = pg.ColorBarItem(
            values=(-1.0, 1.0),
            colorMap=diverging_colormap(),
            interactive=False,
            width=14,
            colorMapMenu=False,
            rounding=1e-6,
        )
        self.bar.setImageItem(self.image, insert_in=self.plot)
        self.bar.axis.enableAutoSIPrefix(False)
        for name in ("left", "top", "bottom"):
            self.bar.hideAxis(name)
        self.setToolTip(
            "The row wrapped into a grid, read left to right, top to bottom; blue is "
            "negative, red positive, white 0. Double-click a cell to show it in the table"
        )
        self._start_picking()

    def set_row(self, row: RowData | None, limit: float) -> None:
        self.row = row
        if row is None:
            self.image.clear()
            return
        img = row_image(row.values)
        same_shape = self.image.image is not None and self.image.image.shape == img.shape
        self.image.setImage(img, autoLevels=False)
        self.set_limit(limit)
        if not same_shape:
            self.plot.setRange(xRange=(0, img.shape[1]), yRange=(0, img.shape[0]), padding=0.02)

    def set_limit(self, limit: float) -> None:
        """Symmetric levels (−limit, +limit) so that 0 is always the neutral colour."""
        self.limit = limit if math.isfinite(limit) and limit > 0 else 1.0
        if tuple(self.bar.levels()) != (-self.limit, self.limit):
            self.bar.setLevels((-self.limit, self.limit))
        else:
            self.image.setLevels((-self.limit, self.limit))  # setImage may have reset them

    @property
    def shape(self) -> tuple[int, int]:
        img = self.image.image
        return (0, 0) if img is None else (int(img.shape[0]), int(img.shape[1]))

    # -- palette ------------------------------------------------------------------------------
    def _restyle(self) -> None:
        self.setBackground(self.palette().color(QPalette.ColorRole.Base))
        style_plot(self.plot, self)
        style_plot(self.bar, self)
        self.bar.axis.setPen(pg.mkPen(muted_text(self)))

    # -- mouse --------------------------------------------------------------------------------
    def _index_at(self, pos: QPointF) -> int:
        img = self.image.image
        if self.row is None or img is None or not self.plot.vb.sceneBoundingRect().contains(pos):
            return -1
        p = self.plot.vb.mapSceneToView(pos)
        r, c = math.floor(p.y()), math.floor(p.x())
        if not (0 <= r < img.shape[0] and 0 <= c < img.shape[1]):
            return -1
        i = r * img.shape[1] + c
        return i if i < self.row.values.shape[0] else -1
