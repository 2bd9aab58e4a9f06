"""A row's values drawn as a line, painted as one image of column spans.

A 4096-value row over ~800 pixel columns is a dense zigzag that Qt strokes segment by segment.
An aliased 1-px line lights, in each pixel column, one run of rows: from the top to the bottom
of what the line does there. Computing those runs with numpy and drawing them as one image
gives the same pixels (but for a few that Qt's fixed-point stroke puts one column over) about
four times faster. A wider pen (presentation mode's 3 px) takes its neighbours' runs too. A
sparse 1-px line (fewer than 2 values per column, as for d_model 384 or 576, where both cost
the same), other paint devices (SVG export), dashed or translucent pens and antialiasing are
stroked as usual.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QImage, QPaintEngine, QPainter

DENSE = 2  # values per pixel column from which spans beat stroking
MAX_WIDTH = 8  # px: presentation mode's lines are 3


def column_rows(xd: np.ndarray, yd: np.ndarray, c0: int, c1: int) -> tuple[np.ndarray, np.ndarray]:
    """For each pixel column c0 <= c < c1, the first and last pixel row that Qt's aliased 1-px
    line through (xd, yd) lights there (device pixels, xd increasing; NaN where the line does
    not pass; non-finite y break it)."""
    yd = np.where(np.isfinite(yd), yd, np.nan)
    edges = np.arange(c0, c1 + 1, dtype=np.float64)
    middles = edges[:-1] + 0.5
    at_edge = np.interp(edges, xd, yd)  # where the line goes from one column to the next
    at_edge[(edges < xd[0]) | (edges > xd[-1])] = np.nan
    centre = np.interp(middles, xd, yd)
    centre[(middles < xd[0]) | (middles > xd[-1])] = np.nan
    low = np.fmin(np.fmin(at_edge[:-1], at_edge[1:]), centre)
    # Qt's rows: from the first whose centre is at or below the line's top, down to the last
    # whose centre it passes (or that holds one of its points), and at least the one at the
    # column's centre
    top = np.fmin(np.ceil(low - 0.5), np.floor(centre))
    bottom = np.fmax(np.floor(np.fmax(at_edge[:-1], at_edge[1:]) - 0.5), np.floor(centre))
    column = np.floor(xd).astype(np.int64)
    inside = (column >= c0) & (column < c1) & np.isfinite(yd)
    if inside.any():
        cols, ys = column[inside] - c0, yd[inside]
        first = np.flatnonzero(np.diff(cols, prepend=-1))  # cols ascend with xd
        present = cols[first]
        top[present] = np.fmin(top[present], np.ceil(np.minimum.reduceat(ys, first) - 0.5))
        bottom[present] = np.fmax(bottom[present], np.floor(np.maximum.reduceat(ys, first)))
    return top, bottom


def span_image(top: np.ndarray, bottom: np.ndarray, r0: int, r1: int, argb: int):
    """(first pixel row, image rows) of the columns' lit rows within r0 <= r < r1: `argb` where
    lit, transparent elsewhere; None when nothing is lit."""
    shown = np.isfinite(top) & (bottom >= r0) & (top < r1)
    if not shown.any():
        return None
    top = np.where(shown, np.clip(top, r0, r1 - 1), r1).astype(np.int64)
    bottom = np.where(shown, np.clip(bottom, r0, r1 - 1), r0 - 1).astype(np.int64)
    first, last = int(top[shown].min()), int(bottom[shown].max())
    rows = np.arange(first, last + 1)[:, None]
    pixels = np.zeros((last + 1 - first, top.shape[0]), dtype=np.uint32)
    pixels[(rows >= top) & (rows <= bottom)] = argb
    return first, pixels


def thicken(top: np.ndarray, bottom: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a line `width` pixels wide from those of the 1-px line: each column also
    takes its neighbours' runs, and every run grows by as many rows (a square pen)."""
    before = (width - 1) // 2
    after = width - 1 - before
    t, b = top.copy(), bottom.copy()
    for k in range(1, after + 1):  # column c takes c + k
        t[:-k], b[:-k] = np.fmin(t[:-k], top[k:]), np.fmax(b[:-k], bottom[k:])
    for k in range(1, before + 1):  # and c - k
        t[k:], b[k:] = np.fmin(t[k:], top[:-k]), np.fmax(b[k:], bottom[:-k])
    return t - before, b + after


class BandCurve(pg.PlotCurveItem):
    """A PlotCurveItem whose thin opaque line is painted as column spans on raster devices."""

    def viewTransformChanged(self) -> None:
        # PlotCurveItem's override skips GraphicsItem's, which forgets the cached view rect:
        # without this, the spans kept the rows of the first range ever painted (a curve
        # clipped flat once the plot zoomed out or grew)
        pg.GraphicsItem.viewTransformChanged(self)
        super().viewTransformChanged()

    def _width(self, p: QPainter) -> int:
        """The pen's width in device pixels."""
        return max(1, round(self.opts["pen"].widthF() * p.device().devicePixelRatioF()))

    def _dense(self, p: QPainter, view: QRectF, width: int) -> bool:
        """At least DENSE values per pixel column in view (a sparse 1-px line strokes faster;
        a thicker one never does)."""
        x = self.xData
        if x is None or len(x) < 2:
            return False
        if width > 1:
            return True
        shown = np.searchsorted(x, [view.left(), view.right()])
        columns = p.transform().m11() * view.width() * p.device().devicePixelRatioF()
        return bool(shown[1] - shown[0] >= DENSE * columns)

    def _spans_apply(self, p: QPainter) -> bool:
        pen = self.opts["pen"]
        t = p.transform()
        engine = p.paintEngine()
        return (
            engine is not None
            and engine.type() == QPaintEngine.Type.Raster
            and pen.isCosmetic()
            and pen.widthF() <= MAX_WIDTH
            and pen.style() == Qt.PenStyle.SolidLine
            and pen.color().alpha() == 255
            and self.opts["shadowPen"] is None
            and self.opts["fillLevel"] is None
            and not self.opts["antialias"]
            and t.m12() == 0
            and t.m21() == 0
            and t.m11() > 0
            and bool(np.all(np.diff(self.xData) > 0))
        )

    def paint(self, p: QPainter, opt, widget) -> None:
        view = self.viewRect()
        width = self._width(p)
        if view is None or not self._dense(p, view, width) or not self._spans_apply(p):
            super().paint(p, opt, widget)
            return
        device = p.device()
        ratio = device.devicePixelRatioF()  # columns are the device's own pixels
        t = p.transform()
        area = t.mapRect(view).intersected(QRectF(0, 0, device.width(), device.height()))
        c0, c1 = int(np.floor(area.left() * ratio)), int(np.ceil(area.right() * ratio))
        r0, r1 = int(np.floor(area.top() * ratio)), int(np.ceil(area.bottom() * ratio))
        if c1 <= c0 or r1 <= r0:
            return
        xd = (t.m11() * self.xData + t.dx()) * ratio
        yd = (t.m22() * np.asarray(self.yData, dtype=np.float64) + t.dy()) * ratio
        top, bottom = column_rows(xd, yd, c0, c1)
        if width > 1:
            top, bottom = thicken(top, bottom, width)
        colour = self.opts["pen"].color()
        image = span_image(top, bottom, r0, r1, colour.rgba() | 0xFF000000)
        if image is None:
            return
        first, pixels = image
        rows, columns = pixels.shape
        frame = QImage(
            pixels.data, columns, rows, 4 * columns, QImage.Format.Format_ARGB32_Premultiplied
        )
        frame.setDevicePixelRatio(ratio)
        p.save()
        p.resetTransform()
        p.drawImage(QPointF(c0 / ratio, first / ratio), frame)
        p.restore()
