"""The comparison's plots, fed with prepared arrays: one model's map of the shared tokens (the
pair's second map is aligned to the first, and their axes are linked) and the histogram of
neighbour overlap over a sample of shared tokens."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF

from explorer.ui.analysis.plots import Plot

LABELLED = 12  # nearest tokens named on each map
SHADES = 6  # brushes from far (pale) to near (strong): a small shared palette
QUERY = QColor("#dc2626")


class PairMap(Plot):
    """One model's layout of the shared tokens; the token itself as a red star; click a point
    to open that token."""

    tokenClicked = Signal(int)

    def __init__(self, title: str, parent=None):
        super().__init__(title, "", "", parent)
        self.labels: list[pg.TextItem] = []
        self._data: tuple | None = None
        item = self.getPlotItem()
        item.hideAxis("left")
        item.hideAxis("bottom")
        item.showGrid(x=False, y=False)
        self.setMinimumHeight(160)
        self.scatter = pg.ScatterPlotItem(size=7, pxMode=True, hoverable=True)
        self.scatter.sigClicked.connect(self._clicked)
        self.addItem(self.scatter)
        self.star = pg.ScatterPlotItem(size=18, symbol="star", brush=pg.mkBrush(QUERY), pen=None)
        self.addItem(self.star)
        base = self.colour()
        self.brushes = [
            pg.mkBrush(QColor.fromHslF(base.hslHueF(), 0.7, 0.85 - 0.5 * i / (SHADES - 1)))
            for i in range(SHADES)
        ]
        self.title = title  # last: changeEvent needs the rest

    def changeEvent(self, event) -> None:  # Qt naming: presentation mode changes font, colours
        super().changeEvent(event)
        if "title" not in self.__dict__:  # Qt calls this while the widget is being built
            return
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange):
            self.place_labels()  # in the new type and colour, as many as fit
            self.set_title(self.title)

    def set_title(self, title: str) -> None:
        self.title = title
        size = f"{max(10.0, self.font().pointSizeF()):g}pt"
        self.getPlotItem().setTitle(title, color=self.palette().text().color().name(), size=size)

    def set_map(
        self, ids: np.ndarray, labels: list[str], coords: np.ndarray, sim: np.ndarray
    ) -> None:
        self._data = (ids, labels, coords, sim)
        if len(ids) == 0:
            self.scatter.clear()
            self.star.clear()
            self.place_labels()
            return
        s = np.nan_to_num(sim.astype(np.float64), nan=-1.0)
        lo, hi = float(s[1:].min()) if len(s) > 1 else 0.0, float(s[1:].max()) if len(s) > 1 else 1
        shade = np.clip((s - lo) / max(hi - lo, 1e-9) * (SHADES - 1), 0, SHADES - 1).astype(int)
        order = np.argsort(shade, kind="stable")  # nearest drawn last, on top
        self.scatter.setData(
            x=coords[order, 0],
            y=coords[order, 1],
            brush=[self.brushes[i] for i in shade[order]],
            pen=None,
            data=ids[order],
        )
        self.star.setData(x=[coords[0, 0]], y=[coords[0, 1]])
        self.getPlotItem().enableAutoRange()
        self.place_labels()

    def place_labels(self) -> None:
        """Name the token and its nearest tokens, as many as fit without overlapping at the
        current size and type (called again on resize and font change)."""
        for text in self.labels:
            self.removeItem(text)
        self.labels = []
        if self._data is None or len(self._data[0]) == 0:
            return
        _ids, labels, coords, sim = self._data
        s = np.nan_to_num(sim.astype(np.float64), nan=-1.0)
        font = QFont(self.font())
        metrics = QFontMetricsF(font)
        span = np.maximum(np.ptp(coords, axis=0), 1e-9) * 1.1  # the auto-range's padding
        pixels = np.maximum([self.width() - 20.0, self.height() - 40.0], 50.0)
        label = np.array([metrics.averageCharWidth() * 6, metrics.height() * 1.3])
        colour = self.palette().text().color()
        for n in readable(coords, [0, *(np.argsort(-s[1:]) + 1).tolist()], label * span / pixels):
            text = pg.TextItem(labels[n], color=colour, anchor=(0, 1))
            text.setFont(font)
            text.setPos(float(coords[n, 0]), float(coords[n, 1]))
            self.addItem(text)
            self.labels.append(text)

    def resizeEvent(self, event) -> None:  # Qt naming
        super().resizeEvent(event)
        if "title" in self.__dict__:
            self.place_labels()

    def _clicked(self, _item, points, _event=None) -> None:
        if len(points):
            self.tokenClicked.emit(int(points[0].data()))


def readable(coords: np.ndarray, order: list[int], gap: np.ndarray) -> list[int]:
    """Up to LABELLED points, in `order`, each at least `gap` (data units, x and y) from every
    point already chosen in x or in y."""
    chosen: list[int] = []
    for n in order:
        if all((np.abs(coords[n] - coords[m]) >= gap).any() for m in chosen):
            chosen.append(n)
            if len(chosen) > LABELLED:
                break
    return chosen


class OverlapHistogram(Plot):
    """How many of the k nearest neighbours the two models share, over sampled shared tokens."""

    def __init__(self, parent=None):
        super().__init__("", "in common", "tokens", parent)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8)
        self.addItem(self.bars)
        self.mean = pg.InfiniteLine(angle=90, pen=pg.mkPen(QUERY, width=2))
        self.mean.hide()
        self.addItem(self.mean)

    def set_counts(self, counts: list[int], mean: float | None) -> None:
        x = np.arange(len(counts), dtype=np.float64)
        self.bars.setOpts(
            x=x, height=np.asarray(counts, dtype=np.float64), width=0.8, brush=self.colour()
        )
        if mean is not None:
            self.mean.setValue(mean)
        self.mean.setVisible(mean is not None)
        self.getPlotItem().enableAutoRange()
