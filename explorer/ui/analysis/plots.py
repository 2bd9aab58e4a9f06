"""The statistics plots, each one pyqtgraph item fed with prepared arrays: a histogram, the
per-dimension std bars (rogue dimensions flagged, click picks one) and one dimension across the
vocabulary (by id or sorted by value; click opens the token)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPalette

from explorer.ui.rows.style import is_dark, muted_text, series_color
from explorer.ui.widgets.solid_grid import show_solid_grid, solid_grid_axes

FLAG = QColor("#dc2626")


class Plot(pg.PlotWidget):
    """A plot in the window's colours, with a title and axis labels."""

    def __init__(self, title: str, x_label: str, y_label: str, parent=None):
        super().__init__(parent, axisItems=solid_grid_axes())
        pal = self.palette()
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        item = self.getPlotItem()
        item.setTitle(title, color=pal.color(QPalette.ColorRole.Text).name(), size="10pt")
        pen = pg.mkPen(muted_text(self))
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setPen(pen)
            axis.setTextPen(pen)
            axis.enableAutoSIPrefix(False)  # 0.05 on the ticks, not 50 and a "(x0.001)" label
        item.setLabel("bottom", x_label)
        item.setLabel("left", y_label)
        show_solid_grid(item, alpha=0.15)
        item.setMenuEnabled(False)
        self.setMinimumHeight(140)
        self.dark = is_dark(self)

    def colour(self, i: int = 0) -> QColor:
        return series_color(i, self.dark)

    def clicked_at(self, event) -> tuple[float, float, float] | None:
        """Data (x, y) of a left click inside the plot area and the width of 3 pixels in x."""
        vb = self.getPlotItem().getViewBox()
        pos = event.scenePos()
        left = event.button() == Qt.MouseButton.LeftButton
        if not left or not vb.sceneBoundingRect().contains(pos):
            return None
        p = vb.mapSceneToView(QPointF(pos))
        return float(p.x()), float(p.y()), 3 * float(vb.viewPixelSize()[0])


class Histogram(Plot):
    def __init__(self, title: str, x_label: str, parent=None):
        super().__init__(title, x_label, "tokens", parent)
        self.curve = pg.PlotDataItem(
            stepMode="center",
            fillLevel=0,
            pen=pg.mkPen(self.colour(), width=1.5),
            brush=pg.mkBrush(
                self.colour().lighter(150) if not self.dark else self.colour().darker(150)
            ),
        )
        self.addItem(self.curve)

    def set_histogram(self, edges: np.ndarray, counts: np.ndarray) -> None:
        if len(edges) == len(counts) + 1 and len(counts):
            self.curve.setData(edges, counts)
        else:
            self.curve.setData([], [])
        self.getPlotItem().enableAutoRange()


class DimensionBars(Plot):
    """Std of every dimension as bars (rogue dimensions in red) and the mean as a line."""

    dimensionClicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__("Dimensions", "dimension", "std (bars), mean", parent)
        # One brush per item (rogue dimensions are a second item): pyqtgraph draws a single-brush
        # item in one call, but loops in Python over bars that each have their own brush.
        self.bars = pg.BarGraphItem(x=[], height=[], width=1.0, brush=self.colour(), pen=None)
        self.flagged = pg.BarGraphItem(x=[], height=[], width=1.0, brush=FLAG, pen=None)
        self.mean = pg.PlotDataItem(pen=pg.mkPen(self.colour(2), width=1))
        self.addItem(self.bars)
        self.addItem(self.flagged)
        self.addItem(self.mean)
        self.marker = pg.InfiniteLine(angle=90, pen=pg.mkPen(self.colour(4), width=2))
        self.marker.hide()
        self.addItem(self.marker)
        self.n = 0
        self.scene().sigMouseClicked.connect(self._clicked)

    def set_dimensions(self, mean: np.ndarray, std: np.ndarray, outliers: list[int]) -> None:
        self.n = len(std)
        x = np.arange(self.n)
        height = np.nan_to_num(std)
        rogue = np.zeros(self.n, dtype=bool)
        rogue[np.asarray(outliers, dtype=np.int64)] = True
        self.bars.setOpts(x=x[~rogue], height=height[~rogue])
        self.flagged.setOpts(x=x[rogue], height=height[rogue])
        self.mean.setData(x, np.nan_to_num(mean))
        self.marker.setVisible(self.marker.isVisible() and self.n > 0)
        self.getPlotItem().enableAutoRange()

    def mark(self, index: int) -> None:
        self.marker.setValue(index)
        self.marker.show()

    def _clicked(self, event) -> None:
        at = self.clicked_at(event)
        if at is not None and self.n and 0 <= round(at[0]) < self.n:
            self.dimensionClicked.emit(int(round(at[0])))


class DimensionPlot(Plot):
    """One dimension's value for every token, by id or sorted; a click opens that token."""

    tokenClicked = Signal(int)
    hovered = Signal(int)

    def __init__(self, parent=None):
        super().__init__("", "token id", "value", parent)
        self.curve = pg.PlotDataItem(pen=pg.mkPen(self.colour(), width=1))
        self.addItem(self.curve)
        # on the plot item, after addItem: addItem gives a curve the plot's own (off) settings.
        # A whole vocabulary drawn point by point takes ~60 ms a paint; peaks per pixel ~1 ms.
        item = self.getPlotItem()
        item.setDownsampling(auto=True, mode="peak")
        item.setClipToView(True)
        self.values: np.ndarray | None = None
        self.order: np.ndarray | None = None
        self.sorted = False
        self.scene().sigMouseClicked.connect(self._clicked)

    def set_dimension(self, index: int, values: np.ndarray, order: np.ndarray) -> None:
        self.values, self.order = values, order
        self.getPlotItem().setTitle(
            f"Dimension {index} across the vocabulary" if len(values) else "",
            color=self.palette().color(QPalette.ColorRole.Text).name(),
            size="10pt",
        )
        self._draw()

    def set_sorted(self, on: bool) -> None:
        self.sorted = on
        self.getPlotItem().setLabel("bottom", "rank (sorted by value)" if on else "token id")
        self._draw()

    def _draw(self) -> None:
        if self.values is None or self.order is None:
            self.curve.setData([], [])
            return
        y = self.values[self.order] if self.sorted else self.values
        self.curve.setData(np.arange(len(y), dtype=np.float64), np.nan_to_num(y))
        self.getPlotItem().enableAutoRange()

    def token_at(self, x: float, y: float | None = None, span: float = 0.0) -> int | None:
        """The token drawn at x: of the points within ±span of x, the one nearest to y."""
        if self.values is None or self.order is None or not len(self.values):
            return None
        n = len(self.values)
        lo, hi = int(np.floor(x - span)), int(np.ceil(x + span))
        if hi < 0 or lo >= n:
            return None
        lo, hi = max(lo, 0), min(hi, n - 1)
        ids = self.order[lo : hi + 1] if self.sorted else np.arange(lo, hi + 1)
        if y is None:
            return int(ids[len(ids) // 2])
        best = int(np.argmin(np.abs(np.nan_to_num(self.values[ids], nan=np.inf) - y)))
        return int(ids[best])

    def _clicked(self, event) -> None:
        at = self.clicked_at(event)
        token = self.token_at(*at) if at is not None else None
        if token is not None:
            self.tokenClicked.emit(token)
