"""Marks on the box- or lasso-chosen points: a dark ring on each while they are few, a dark
square on each when many (one item that paints them with one drawPoints call: pyqtgraph's
scatter item builds a pen and a brush per point in Python, seconds for a lasso over a whole
vocabulary)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QPen

CHOSEN_RING = "#111111"  # a colour no cluster or colour scale uses
RINGS_UP_TO = 2000
Z = 0.9  # above the points, under the selected token's disc


class SquaresItem(pg.GraphicsObject):
    """Points drawn as `size` × `size` pixel squares of one colour, whatever the zoom."""

    def __init__(self) -> None:
        super().__init__()
        self.xy = np.zeros((0, 2))
        self._rect = QRectF()
        self._size = 1

    def set_points(self, xy: np.ndarray, size: float) -> None:
        self.prepareGeometryChange()
        self.xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        lo, hi = (self.xy.min(axis=0), self.xy.max(axis=0)) if len(self.xy) else ((0, 0),) * 2
        self._rect = QRectF(lo[0], lo[1], max(hi[0] - lo[0], 1e-9), max(hi[1] - lo[1], 1e-9))
        self._size = max(1, round(size))
        self.update()

    def boundingRect(self) -> QRectF:  # Qt naming
        return self._rect if len(self.xy) else QRectF()

    def paint(self, painter, *_args) -> None:
        """One-pixel dots filling each square, in device pixels (a wide pen would send every
        point through Qt's stroker, far slower)."""
        t = painter.transform()
        device = self.xy @ np.array([[t.m11(), t.m12()], [t.m21(), t.m22()]]) + (t.dx(), t.dy())
        box, s = painter.viewport(), self._size
        x, y = device[:, 0], device[:, 1]
        inside = (x >= -s) & (x <= box.width() + s) & (y >= -s) & (y <= box.height() + s)
        if not inside.any():
            return
        steps = np.arange(s) - s // 2
        offsets = np.stack(np.meshgrid(steps, steps), axis=-1).reshape(-1, 2)
        dots = (np.floor(device[inside])[None] + offsets[:, None]).reshape(-1, 2) + 0.5
        polygon = pg.functions.create_qpolygonf(len(dots))
        pg.functions.ndarray_from_qpolygonf(polygon)[:] = dots
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(QColor(CHOSEN_RING), 1))
        painter.drawPoints(polygon)
        painter.restore()


class ChosenMarks:
    def __init__(self, plot: pg.PlotItem):
        self.rings = pg.ScatterPlotItem(
            pxMode=True, size=13, brush=pg.mkBrush(0, 0, 0, 0), pen=pg.mkPen(CHOSEN_RING, width=2.5)
        )
        self.squares = SquaresItem()
        for item in (self.squares, self.rings):
            item.setZValue(Z)
            plot.addItem(item)

    def show(self, xy: np.ndarray, point_size: float) -> None:
        """Mark the points at `xy` (map coordinates), drawn `point_size` pixels across."""
        few = len(xy) <= RINGS_UP_TO
        self.rings.setData(pos=xy if few else np.zeros((0, 2)))
        self.squares.set_points(np.zeros((0, 2)) if few else xy, point_size + 2)

    def count(self) -> int:
        """Points marked now (for tests)."""
        return len(self.rings.data) + len(self.squares.xy)
