"""One token's row at two precisions: both rows over the dimensions, and their difference with
half a quantisation step of each value's block around zero (what rounding can cost there)."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from explorer.app.controllers.quant import RowShown
from explorer.ui.analysis.plots import Plot


def worst_block(row: RowShown) -> str:
    """A sentence about the block with the largest error, when the row has blocks."""
    blocks = row.pair.blocks
    if blocks is None:
        return ""
    size = blocks.block_size
    err = np.abs(row.pair.other - row.pair.ref).reshape(-1, size).max(axis=1)
    b = int(np.argmax(err))
    top = float(np.abs(row.pair.ref[b * size : (b + 1) * size]).max())
    return (
        f" · largest error in block {b} (values {b * size}–{(b + 1) * size - 1}): scale "
        f"{abs(float(blocks.scale[b])):.4g}, set by its largest value {top:.4g}"
    )


class RowPairPlot(QWidget):
    """`side_by_side`: the values and the difference next to each other (where the room is
    wide and low, as above a table), else one above the other in a narrow column: there the
    title is the token and the legend, and the rest of its sentence is its tooltip (in large
    type the sentence would leave the plots no height)."""

    def __init__(self, parent: QWidget | None = None, side_by_side: bool = False):
        super().__init__(parent)
        self.side_by_side = side_by_side
        self.title = QLabel("Click a token to see its two rows")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.values = Plot("Values", "dimension", "value")
        self.diff = Plot("Difference", "dimension", "q − r")
        self.diff.setXLink(self.values)
        # the reference wider, under the other precision's line: a halo where they coincide
        self.ref = self.values.plot(
            pen=pg.mkPen(self.values.colour(0), width=2.2), name="reference"
        )
        self.other = self.values.plot(pen=pg.mkPen(self.values.colour(1), width=1.2), name="other")
        step = pg.mkPen(self.diff.colour(2), width=1, style=Qt.PenStyle.DashLine)
        self.step_above = self.diff.plot(pen=step, stepMode="center")
        self.step_below = self.diff.plot(pen=step, stepMode="center")
        self.error = self.diff.plot(pen=pg.mkPen(self.diff.colour(3), width=1))
        for plot in (self.values, self.diff):
            plot.setMinimumHeight(100 if side_by_side else 80)
        plots = QHBoxLayout() if side_by_side else QVBoxLayout()
        plots.addWidget(self.values, 1)
        plots.addWidget(self.diff, 1)
        if not side_by_side:
            self.values.getPlotItem().hideAxis("bottom")  # the difference below shows the same x
            for plot in (self.values, self.diff):  # their y-axis labels name them: the height
                plot.getPlotItem().setTitle(None)  # goes to the curves
                plot.getPlotItem().titleLabel.setText("")  # (presentation mode re-titles)
            self.diff.getPlotItem().setLabel("bottom", None)  # the numbers say it
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(plots, 1)

    def clear(self) -> None:
        for item in (self.ref, self.other, self.step_above, self.step_below, self.error):
            item.setData([], [])
        self.title.setText("Click a token to see its two rows")

    def show_row(self, row: RowShown) -> None:
        pair = row.pair
        x = np.arange(len(pair.ref))
        self.ref.setData(x, pair.ref)
        self.other.setData(x, pair.other)
        self.error.setData(x, pair.other - pair.ref)
        half = pair.half_step
        if half is not None:
            edges = np.arange(len(half) + 1) - 0.5
            self.step_above.setData(edges, half)
            self.step_below.setData(edges, -half)
        else:
            self.step_above.setData([], [])
            self.step_below.setData([], [])
        guide = " · dashed: ± half a step of the value's block" if half is not None else ""
        ref, other = self.values.colour(0).name(), self.values.colour(1).name()
        stored = f" ({escape(pair.ref_type)})" if pair.ref_type else ""
        legend = (
            f"<span style='color:{ref}'>reference{stored}</span> "
            f"and <span style='color:{other}'>{escape(pair.type_name)}</span>"
        )
        error = f"relative error {row.relative_error:.4g}"
        name = f"<b>{escape(row.label)}</b> #{pair.id}"
        more = worst_block(row) + guide
        if self.side_by_side:
            self.title.setText(f"{name} · {error} · {legend}{escape(more)}")
        else:
            self.title.setText(f"{name} · {legend}")
            self.title.setToolTip(f"{error}{more}")
        for plot in (self.values, self.diff):
            plot.getPlotItem().enableAutoRange()
