"""Many points in few colours: one graphics item per colour that paints its points with one
QPainter.drawPoints call (a round, cosmetic pen: the dot keeps its pixel size at any zoom).

pyqtgraph's ScatterPlotItem looks up every point's symbol in Python on each setData (seconds
for a quarter-million points, whatever the brushes); these items take plain arrays. The map
switches to them above LAYERED_ABOVE points (the whole vocabulary)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QBrush, QPainter, QPen

LAYERED_ABOVE = 20_000


class PointsItem(pg.GraphicsObject):
    """Points of one colour, `size` pixels across (whatever the zoom)."""

    def __init__(self) -> None:
        super().__init__()
        self._xy = np.zeros((0, 2))
        self._rect = QRectF()
        self._pen = QPen()
        self._size = 1

    def set_points(self, xy: np.ndarray, brush: QBrush, size: float) -> None:
        self.prepareGeometryChange()
        self._xy = np.ascontiguousarray(xy, dtype=np.float64)
        if len(xy):
            lo, hi = self._xy.min(axis=0), self._xy.max(axis=0)
            self._rect = QRectF(lo[0], lo[1], max(hi[0] - lo[0], 1e-9), max(hi[1] - lo[1], 1e-9))
        else:
            self._rect = QRectF()
        self._pen = QPen(brush.color(), 1)
        self._size = max(1, round(size))
        self.update()

    def boundingRect(self) -> QRectF:  # Qt naming
        return self._rect

    def paint(self, painter, *_args) -> None:
        """The points as `size` × `size` squares of one-pixel dots, placed in device pixels:
        a wide pen would send every point through Qt's stroker, which is far slower."""
        if not len(self._xy):
            return
        t = painter.transform()
        m = np.array([[t.m11(), t.m12()], [t.m21(), t.m22()]])
        device = self._xy @ m + (t.dx(), t.dy())
        box = painter.viewport()
        inside = (
            (device[:, 0] >= -self._size)
            & (device[:, 0] <= box.width() + self._size)
            & (device[:, 1] >= -self._size)
            & (device[:, 1] <= box.height() + self._size)
        )
        device = np.floor(device[inside])
        steps = np.arange(self._size) - self._size // 2
        offsets = np.stack(np.meshgrid(steps, steps), axis=-1).reshape(-1, 2)
        dots = (device[None, :, :] + offsets[:, None, :]).reshape(-1, 2) + 0.5
        polygon = pg.functions.create_qpolygonf(len(dots))
        pg.functions.ndarray_from_qpolygonf(polygon)[:] = dots
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(self._pen)
        painter.drawPoints(polygon)
        painter.restore()


class ColourLayers:
    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.items: list[PointsItem] = []

    def show(
        self, coords: np.ndarray, codes: np.ndarray | None, palette: list[QBrush], size: float
    ) -> None:
        """Points coloured by `codes` (indices into `palette`); all in palette[0] if None."""
        n = len(coords)
        groups = (
            [np.arange(n)]
            if codes is None
            else [np.flatnonzero(codes == c) for c in range(len(palette))]
        )
        while len(self.items) < len(groups):
            item = PointsItem()
            self.plot.addItem(item)
            self.items.append(item)
        for k, item in enumerate(self.items):
            rows = groups[k] if k < len(groups) else np.zeros(0, dtype=np.int64)
            item.set_points(coords[rows], palette[min(k, len(palette) - 1)], size)

    def clear(self) -> None:
        for item in self.items:
            item.set_points(np.zeros((0, 2)), QBrush(), 1.0)
