"""Marks on the box- or lasso-chosen points: a dark ring on each while they are few, a dark
square on each when many (one image of the view, made with numpy: pyqtgraph's scatter item
builds a pen and a brush per point in Python, seconds for a lasso over a whole vocabulary)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage

CHOSEN_RING = "#111111"  # a colour no cluster or colour scale uses
CHOSEN_RGBA = (17, 17, 17, 255)
RINGS_UP_TO = 2000
Z = 0.9  # above the points, under the selected token's disc


class SquaresItem(pg.GraphicsObject):
    """Points drawn as `size` × `size` pixel squares of one colour, whatever the zoom."""

    def __init__(self) -> None:
        super().__init__()
        self.xy = np.zeros((0, 2))
        self._rect = QRectF()
        self._size = 1
        self._pixels = np.zeros((0, 0, 4), dtype=np.uint8)

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
        """One image of the view: a pixel mask of the points, widened to squares with a few
        array shifts (drawing each point, even as one-pixel dots, costs far more when a lasso
        holds most of a whole vocabulary)."""
        t = painter.transform()
        device = self.xy @ np.array([[t.m11(), t.m12()], [t.m21(), t.m22()]]) + (t.dx(), t.dy())
        box = painter.viewport()
        w, h, s = box.width(), box.height(), self._size
        px, py = np.floor(device[:, 0]).astype(np.int64), np.floor(device[:, 1]).astype(np.int64)
        pad = s // 2
        inside = (px >= -pad) & (px < w + pad) & (py >= -pad) & (py < h + pad)
        if not inside.any() or w <= 0 or h <= 0:
            return
        mask = np.zeros((h + 2 * pad, w + 2 * pad), dtype=bool)
        mask[py[inside] + pad, px[inside] + pad] = True
        wide = mask.copy()
        for shift in range(1, s):  # each point covers s pixels across and down, centred
            wide[:, :-shift] |= mask[:, shift:]
        tall = wide.copy()
        for shift in range(1, s):
            tall[:-shift, :] |= wide[shift:, :]
        off = pad - (s - 1) // 2  # the squares centred on their points, as the points are
        cover = tall[off : off + h, off : off + w]
        self._pixels = np.zeros((h, w, 4), dtype=np.uint8)  # kept alive while Qt draws it
        self._pixels[cover] = CHOSEN_RGBA
        image = QImage(self._pixels.data, w, h, 4 * w, QImage.Format.Format_RGBA8888)
        painter.save()
        painter.resetTransform()
        painter.drawImage(0, 0, image)
        painter.restore()


class ChosenMarks:
    def __init__(self, plot: pg.PlotItem):
        self.rings = pg.ScatterPlotItem(
            pxMode=True, size=13, brush=pg.mkBrush(0, 0, 0, 0), pen=pg.mkPen(CHOSEN_RING, width=2.5)
        )
        self.squares = SquaresItem()
        self._shown: tuple[np.ndarray, np.ndarray, float] | None = None  # what is marked
        for item in (self.squares, self.rings):
            item.setZValue(Z)
            plot.addItem(item)

    def show(self, coords: np.ndarray, rows: np.ndarray, point_size: float) -> None:
        """Mark the points `rows` of a map at `coords`, drawn `point_size` pixels across (again
        only when one of them changed: a click elsewhere leaves a large lasso's marks alone)."""
        shown = self._shown
        if shown and shown[0] is coords and shown[1] is rows and shown[2] == point_size:
            return
        self._shown = (coords, rows, point_size)
        few = len(rows) <= RINGS_UP_TO
        self.rings.setData(pos=coords[rows] if few else np.zeros((0, 2)))
        self.squares.set_points(np.zeros((0, 2)) if few else coords[rows], point_size + 2)

    def count(self) -> int:
        """Points marked now (for tests)."""
        return len(self.rings.data) + len(self.squares.xy)
