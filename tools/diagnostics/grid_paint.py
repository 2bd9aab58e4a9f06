"""What a plot's grid costs per repaint: pyqtgraph's translucent grid against the solid one.

The same plot (a 60-point loss-like curve, grid on both axes at the Learn tab's alpha) is
repainted again and again at two sizes, with pyqtgraph's own axes and with
explorer.ui.widgets.solid_grid's; also with no grid at all, for the floor. Prints the median and the
slowest repaint of the plot's viewport, in ms of the GUI thread.

    python tools/diagnostics/grid_paint.py [--repaints 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from explorer.ui.widgets.solid_grid import show_solid_grid, solid_grid_axes

ALPHA = 0.2


def plot(kind: str) -> pg.PlotWidget:
    widget = pg.PlotWidget(axisItems=solid_grid_axes() if kind == "solid grid" else None)
    widget.setBackground("w")
    if kind == "solid grid":
        show_solid_grid(widget.getPlotItem(), ALPHA)
    elif kind == "pyqtgraph grid":
        widget.showGrid(x=True, y=True, alpha=ALPHA)
    return widget


def repaint_ms(app: QApplication, kind: str, size: tuple[int, int], repaints: int) -> list[float]:
    widget = plot(kind)
    widget.resize(*size)
    curve = widget.plot(pen=pg.mkPen("#1f77b4", width=2))
    widget.show()
    times = []
    for i in range(repaints):
        x = np.arange(60 + i) / 10
        curve.setData(x, 5 - np.log1p(x * 10) + i * 0.01)  # new data: the axes redraw
        app.processEvents()
        start = time.perf_counter()
        widget.viewport().repaint()
        times.append((time.perf_counter() - start) * 1000)
    widget.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repaints", type=int, default=40)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    for size in ((400, 220), (800, 400)):
        for kind in ("pyqtgraph grid", "solid grid", "no grid"):
            times = repaint_ms(app, kind, size, args.repaints)
            print(
                f"{size[0]}x{size[1]} {kind:15s} repaint median {statistics.median(times):6.2f} "
                f"ms, slowest {max(times):6.2f} ms"
            )


if __name__ == "__main__":
    main()
