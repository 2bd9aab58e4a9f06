"""Very many points (the whole vocabulary) as one picture per frame.

pyqtgraph's ScatterPlotItem looks up every point's symbol in Python on each setData (seconds
for a quarter-million points); the map switches to a CloudItem above LAYERED_ABOVE points. It
draws the part of the map in view as one image, made with numpy from the quadtree of tiles
(explorer/core/map/tiles.py) each time the view moves:

- while more than POINTS_BELOW points are in view, a density image: the tiles about a point
  across, each in its points' dominant colour (or mean colour, for a colour scale), more
  opaque where more points fall (explorer/core/map/density.py); its cost grows with the tiles
  in view, not with the points;
- once fewer are in view, every point in view as a small square of pixels.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from explorer.core.map import density, tiles

LAYERED_ABOVE = 20_000
# the most points in view drawn one by one: 40,000 squares of 3 × 3 pixels cover about a third
# of a 1280 × 800 view, so more no longer stand apart (drawing them takes a few ms either way)
POINTS_BELOW = 40_000


class CloudItem(pg.GraphicsObject):
    """Every point of a map, `size` pixels across (whatever the zoom), coloured by code."""

    def __init__(self) -> None:
        super().__init__()
        self.tiles: tiles.Tiles | None = None
        self._xy = np.zeros((0, 2), dtype=np.float32)  # in the tiles' order
        self._codes: np.ndarray | None = None  # in the tiles' order
        self._palette = np.zeros((1, 3))
        self._steps = 0
        self._tile_codes: dict[int, np.ndarray] = {}
        self._rect = QRectF()
        self._size = 3
        self._buffer = np.zeros((0, 0, 4), np.uint8)  # the image being drawn shares it
        self.last_kind = ""  # what the last paint drew: "density", "points" or ""
        self.last_histogram: tuple[np.ndarray, tiles.Rect] | None = None  # density: counts

    def set_points(self, tile_index: tiles.Tiles, size: float) -> None:
        self.prepareGeometryChange()
        self.tiles = tile_index
        self._xy = tile_index.xy
        (ox, oy), side = tile_index.origin, tile_index.side
        self._rect = QRectF(ox, oy, side, side) if len(self._xy) else QRectF()
        self._size = max(1, round(size))
        self._codes = None
        self._tile_codes = {}
        self.update()

    def set_colours(self, codes: np.ndarray | None, palette: np.ndarray, steps: int = 0) -> None:
        """Each point's code (an index into `palette`, RGB rows, the first `steps` of them a
        colour scale; None: all palette[0])."""
        order = self.tiles.order if self.tiles is not None else np.zeros(0, np.int64)
        self._codes = None if codes is None else np.asarray(codes, dtype=np.int64)[order]
        self._palette = np.asarray(palette, dtype=np.float64).reshape(-1, 3)
        self._steps = steps
        self._tile_codes = {}
        self.update()

    def clear(self) -> None:
        self.prepareGeometryChange()
        self.tiles, self._codes, self._rect = None, None, QRectF()
        self._xy = np.zeros((0, 2), np.float32)
        self.update()

    def boundingRect(self) -> QRectF:  # Qt naming
        return self._rect

    def in_view(self, rect: tiles.Rect) -> int:
        """Points in the tiles that meet `rect` (at least those inside it)."""
        return 0 if self.tiles is None else self.tiles.count_in(rect)

    def paint(self, painter: QPainter, *_args) -> None:
        vb = self.getViewBox()
        if self.tiles is None or not len(self._xy) or vb is None:
            return
        view = vb.viewRect()
        rect = (view.left(), view.top(), view.right(), view.bottom())
        t = painter.transform()  # map units to the painter's pixels
        target = t.mapRect(view)
        if target.width() < 1 or target.height() < 1:
            return
        # the device's pixels per painter pixel (an export at 4× draws 4× as many)
        ratio = painter.device().devicePixelRatioF() if painter.device() else 1.0
        scale = ratio * (target.width() / max(vb.width(), 1.0))
        painter.save()
        painter.resetTransform()
        if self.in_view(rect) > POINTS_BELOW:
            image, where = self._density(rect, view.width() / (target.width() * ratio), scale)
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
            painter.drawImage(t.mapRect(where), image)  # a tile: a block of pixels
        else:
            image = self._points(rect, t, target, ratio, scale)
            image.setDevicePixelRatio(ratio)
            painter.drawImage(target.topLeft(), image)  # pixel for pixel
        painter.restore()

    def _density(
        self, rect: tiles.Rect, units_per_px: float, scale: float
    ) -> tuple[QImage, QRectF]:
        assert self.tiles is not None
        level = self.tiles.level_for(units_per_px, self._size * max(scale, 1.0))
        codes = self._tile_codes.get(level)
        if codes is None:
            codes = self._tile_codes[level] = density.tile_codes(
                self.tiles.levels[level], self._codes, len(self._palette), self._steps
            )
        counts, code, extent = density.tile_histogram(self.tiles, level, rect, codes)
        self.last_kind, self.last_histogram = "density", (counts, extent)
        x0, y0, x1, y1 = extent
        self._buffer = np.ascontiguousarray(density.shade(counts, code, self._palette))
        return _image(self._buffer), QRectF(x0, y0, x1 - x0, y1 - y0)

    def _points(self, rect: tiles.Rect, t, target: QRectF, ratio: float, scale: float) -> QImage:
        assert self.tiles is not None
        positions = self.tiles.positions_in(rect)
        xy = self._xy[positions]
        m = np.array([[t.m11(), t.m12()], [t.m21(), t.m22()]], dtype=np.float32)
        px = (
            xy @ m + np.array([t.dx() - target.left(), t.dy() - target.top()], np.float32)
        ) * ratio
        codes = None if self._codes is None else self._codes[positions]
        shape = (int(np.ceil(target.height() * ratio)), int(np.ceil(target.width() * ratio)))
        size = max(1, round(self._size * scale))
        self.last_kind, self.last_histogram = "points", None
        self._buffer = density.splat(px, codes, self._palette, shape, size)
        return _image(self._buffer)


def _image(rgba: np.ndarray) -> QImage:
    """A QImage over premultiplied RGBA, sharing its memory: drawn at once, then dropped."""
    h, w = rgba.shape[:2]
    if not h or not w:
        return QImage()
    return QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_RGBA8888_Premultiplied)
