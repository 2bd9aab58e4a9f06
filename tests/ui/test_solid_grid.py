"""The solid grid looks like pyqtgraph's translucent one, and lies beneath the data."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QImage

from explorer.ui.widgets.solid_grid import mixed, show_solid_grid, solid_grid_axes

CURVE = QColor("#1f77b4")


def rgb(widget: pg.PlotWidget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    rows = [
        np.frombuffer(image.constScanLine(y), dtype=np.uint8, count=image.width() * 3)
        for y in range(image.height())
    ]
    return np.stack(rows).reshape(image.height(), image.width(), 3).astype(int)


def picture(qtbot, solid: bool) -> np.ndarray:
    widget = pg.PlotWidget(axisItems=solid_grid_axes() if solid else None)
    qtbot.addWidget(widget)
    widget.setBackground("w")
    if solid:
        show_solid_grid(widget.getPlotItem(), alpha=0.3)
    else:
        widget.showGrid(x=True, y=True, alpha=0.3)
    x = np.linspace(0, 10, 200)
    widget.plot(x, np.sin(x) * 4, pen=pg.mkPen(CURVE, width=3))
    widget.resize(420, 260)
    widget.show()
    qtbot.waitExposed(widget)
    return rgb(widget)


def test_mixing_a_colour_with_the_background():
    grey = mixed(QColor(0, 0, 0, 51), QColor("white"))
    assert grey.alpha() == 255 and abs(grey.red() - 204) <= 1 and grey.red() == grey.blue()
    assert mixed(QColor(10, 20, 30), QColor("white")).getRgb() == (10, 20, 30, 255)


def _grey(image: np.ndarray) -> np.ndarray:
    return (image.max(axis=2) - image.min(axis=2) <= 2) & (image.min(axis=2) < 255)


def _grown(mask: np.ndarray) -> np.ndarray:
    """`mask` and its 8 neighbours."""
    out = mask.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            out |= np.roll(np.roll(mask, dy, axis=0), dx, axis=1)
    return out


def test_the_solid_grid_draws_the_same_lines_beneath_the_curve(qtbot):
    translucent, solid = picture(qtbot, solid=False), picture(qtbot, solid=True)
    assert translucent.shape == solid.shape
    lines = _grey(translucent)
    across, down = lines.mean(axis=1) > 0.5, lines.mean(axis=0) > 0.5
    assert across.sum() > 10 and down.sum() > 10  # there is a grid to compare
    # translucent lines blend twice where they cross; the solid ones do not
    crossings = across[:, None] & down[None, :]
    curve = _grown(~_grey(translucent) & (translucent.min(axis=2) < 255))
    differ = np.abs(translucent - solid).max(axis=2) > 3
    assert not (differ & ~crossings & ~curve).any()
    colour = np.array(CURVE.getRgb()[:3])
    on_curve = [(np.abs(image - colour).max(axis=2) <= 3).sum() for image in (translucent, solid)]
    assert on_curve[1] > on_curve[0]  # the grid no longer tints the curve where they cross
