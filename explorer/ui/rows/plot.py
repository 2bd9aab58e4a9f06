"""Line plot of the d_model values of one row, or several rows overlaid (the summary table
above, with each row's colour swatch, is their legend)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPalette, QPen
from PySide6.QtWidgets import QWidget

from explorer.core.rows.read import RowData
from explorer.ui.rows.band_curve import BandCurve
from explorer.ui.rows.picking import IndexPicking
from explorer.ui.rows.style import is_dark, muted_text, series_color, style_plot

NICE_STEPS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0)


def nice_ceil(x: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 5, 7 × 10^k that is ≥ x > 0."""
    scale = 10.0 ** math.floor(math.log10(x))
    return next(m * scale for m in NICE_STEPS if m * scale >= x * (1 - 1e-12))


def steady_range(low: float, high: float) -> tuple[float, float]:
    """A y-range holding [low, high] whose ends are round numbers, symmetric about 0 when the
    values have both signs, so that clicking through the rows of a model mostly keeps the same
    scale (easier to compare, and the axis is not laid out again on every click); a narrow band
    far from zero keeps its own range."""
    if low < 0 < high:
        top = nice_ceil(max(-low, high))
        bottom = -top
    else:
        top = nice_ceil(high) if high > 0 else 0.0
        bottom = -nice_ceil(-low) if low < 0 else 0.0
    if (high - low) < 0.25 * (top - bottom):
        pad = 0.05 * (high - low)
        return low - pad, high + pad
    return bottom, top


def next_range(
    previous: tuple[float, float] | None, low: float, high: float, fill: float = 0.4
) -> tuple[float, float]:
    """The y-range for a row spanning [low, high]: the previous one while the row fits in it and
    fills at least `fill` of it (the scale stays put while clicking through similar rows, and
    the axis is not drawn again), else a new ``steady_range``."""
    if previous is not None:
        bottom, top = previous
        if bottom <= 0 <= top:  # a range from or about 0: how far the row reaches from it
            fills = max(-low, high) >= fill * max(-bottom, top)
        else:  # a narrow band far from 0
            fills = high - low >= fill * (top - bottom)
        if bottom <= low and high <= top and fills:
            return previous
    return steady_range(low, high)


class ValuesPlot(IndexPicking, pg.PlotWidget):
    hovered = Signal(int)  # index under the mouse, -1 when it leaves the data
    indexClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rows: list[RowData] = []
        self.curves: list[BandCurve] = []  # the rows shown first, then empty ones kept
        self.y_range: tuple[float, float] | None = None
        item = self.getPlotItem()
        item.setLabel("bottom", "dimension")
        item.setLabel("left", "value")
        for name in ("left", "bottom"):
            item.getAxis(name).enableAutoSIPrefix(False)  # show 0.15, not 150 (×0.001)
        # a fixed width: tick labels of another length (0.1, then 0.15) re-laid out the plot
        # and repainted all of it on a click
        item.getAxis("left").setWidth(QFontMetrics(self.font()).horizontalAdvance("-0.00015") + 28)
        # no grid (pyqtgraph's own cost ~5 ms a repaint; explorer/ui/widgets/solid_grid.py is cheap)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.zero = pg.InfiniteLine(pos=0, angle=0, movable=False)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self.cursor.hide()
        self.peak = pg.ScatterPlotItem(size=9, symbol="o")
        for it in (self.zero, self.cursor, self.peak):
            item.addItem(it, ignoreBounds=True)
        self._add_curve()  # made now, not on the first click
        self.setToolTip(
            "Values of the row by position; drag to pan, wheel to zoom, double-click a "
            "point to show it in the values table"
        )
        self._start_picking()

    # -- content ------------------------------------------------------------------------------
    def set_rows(self, rows: list[RowData]) -> None:
        self.rows = list(rows)
        # curves are kept, empty, once made: adding one (a scene item, its signal connections)
        # and removing it again was part of every switch between one and several rows
        while len(self.curves) < len(rows):
            self._add_curve()
        for curve, row in zip(self.curves, rows, strict=False):  # no rows: empty curves
            curve.setData(np.arange(row.values.shape[0]), row.values)
        for curve in self.curves[len(rows) :]:
            if curve.xData is not None and len(curve.xData):
                curve.setData([], [])
        # no legend over the data (the summary table above is the legend), and no restyle of
        # the axes or the curves: each one costs the GUI thread per click
        peak = rows[0].stats.argmax_abs if len(rows) == 1 else -1
        if peak >= 0 and np.isfinite(rows[0].values[peak]):
            self.peak.setData([peak], [float(rows[0].values[peak])])
        else:
            self.peak.setData([], [])
        self.cursor.hide()
        self._fit(rows)

    def _add_curve(self) -> None:
        curve = BandCurve(pen=self._pen(len(self.curves)), connect="finite")
        self.getPlotItem().addItem(curve)
        self.curves.append(curve)

    def _fit(self, rows: list[RowData]) -> None:
        """Show all of the rows: one explicit range, so that the view paints once per new row
        (pyqtgraph's auto-range set the range during the paint, which then painted again)."""
        finite = [r.values[np.isfinite(r.values)] for r in rows]
        finite = [v for v in finite if v.size]
        if not finite:
            return
        low = float(min(v.min() for v in finite))
        high = float(max(v.max() for v in finite))
        if low == high:
            low, high = low - 1.0, high + 1.0
        n = max(r.values.shape[0] for r in rows)
        vb = self.getPlotItem().vb
        self.y_range = next_range(self.y_range, low, high)
        vb.setRange(xRange=(0, max(n - 1, 1)), yRange=self.y_range, padding=0.02)
        vb.updateMatrix()

    # -- palette ------------------------------------------------------------------------------
    def _pen(self, n: int) -> QPen:
        return pg.mkPen(series_color(n, is_dark(self)), width=1)  # 1 px lines draw ~3× faster

    def _style_curves(self) -> None:
        for n, curve in enumerate(self.curves):
            curve.setPen(self._pen(n))

    def _restyle(self) -> None:
        base = self.palette().color(QPalette.ColorRole.Base)
        self.setBackground(base)
        style_plot(self.getPlotItem(), self)
        faint = QColor(muted_text(self))
        self.zero.setPen(pg.mkPen(faint, width=1, style=Qt.PenStyle.DashLine))
        self.cursor.setPen(pg.mkPen(faint, width=1))
        self._style_curves()
        text = self.palette().color(QPalette.ColorRole.Text)
        self.peak.setPen(pg.mkPen(text, width=1.5))
        self.peak.setBrush(pg.mkBrush(None))

    # -- mouse --------------------------------------------------------------------------------
    def _index_at(self, pos: QPointF) -> int:
        if not self.rows or not self.getPlotItem().sceneBoundingRect().contains(pos):
            return -1
        x = self.getPlotItem().vb.mapSceneToView(pos).x()
        i = int(round(x))
        return i if 0 <= i < self.rows[0].values.shape[0] else -1

    def _hover(self, i: int) -> None:
        if i >= 0:
            self.cursor.setPos(i)
            self.cursor.show()
        else:
            self.cursor.hide()
        self.hovered.emit(i)
