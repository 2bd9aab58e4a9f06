"""A widget as drawn, saved as a PNG at a chosen resolution (explorer/render draws the file)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QWidget

from explorer.core.errors import ExplorerError
from explorer.render.raster import paint_png

SCALES = (1, 2, 4)  # the resolutions a view can be saved at


def grab_png(widget: QWidget, path: str | Path, scale: int = 1) -> None:
    """The widget and its children at 1×, 2× or 4× its size, on white."""
    if scale not in SCALES:
        raise ExplorerError(f"scale must be one of {SCALES}, not {scale}")

    def paint(painter: QPainter) -> None:
        # QWidget's own render: a QGraphicsView (a pyqtgraph plot) overrides it to draw its scene
        QWidget.render(widget, painter, QPoint(0, 0))

    size = widget.size()
    paint_png(size.width(), size.height(), paint, path, scale)
