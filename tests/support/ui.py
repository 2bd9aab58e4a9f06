"""What the window tests share: waiting for a window to settle, and reading what it shows."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget


def idle(qtbot, window, timeout: int = 60000) -> None:
    """Wait until the main window has no job or model load pending."""
    qtbot.waitUntil(lambda: not window.pending, timeout=timeout)


def activate(qtbot, controller) -> None:
    """Show an analysis controller's view: its refresh starts on the next event-loop turn."""
    controller.set_active(True)
    qtbot.waitUntil(lambda: not controller.stale)


def cell_colours(view, image, row: int, col: int) -> set[str]:
    """The colours (#rrggbb) inside cell (row, col) of a table view, in `image`, a grab of its
    viewport."""
    rect = view.visualRect(view.model().index(row, col))
    return {
        image.pixelColor(x, y).name()
        for x in range(rect.left(), rect.right())
        for y in range(rect.top(), rect.bottom())
    }


def near(a: str, b: str, tolerance: int = 24) -> bool:
    """Two colours within a few levels of each other (anti-aliased glyph cores)."""
    ca, cb = QColor(a), QColor(b)
    return (
        max(abs(ca.red() - cb.red()), abs(ca.green() - cb.green()), abs(ca.blue() - cb.blue()))
        <= tolerance
    )


def shown_widgets(root: QWidget) -> list[QWidget]:
    return [w for w in root.findChildren(QWidget) if w.isVisible()]


def small_fonts(window) -> list[str]:
    """Visible widgets, table cells and plot axes of the window's current view whose type is
    under 18 pt (presentation mode's smallest)."""
    bad = []
    for w in shown_widgets(window.centre.currentWidget()):
        if w.font().pointSizeF() < 18:
            bad.append(f"{type(w).__name__} {w.font().pointSizeF()}")
        model = getattr(w, "model", lambda: None)() if hasattr(w, "viewport") else None
        if model is not None and hasattr(model, "rowCount") and model.rowCount():
            for col in range(model.columnCount()):
                font = model.index(0, col).data(Qt.ItemDataRole.FontRole)
                if font is not None and font.pointSizeF() < 18:
                    bad.append(f"{type(w).__name__} cell {col}: {font.pointSizeF()}")
    for view in window.centre.currentWidget().findChildren(pg.GraphicsView):
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem) and item.isVisible():
                font = item.style.get("tickFont")
                if font is None or font.pointSizeF() < 18:
                    bad.append("axis ticks")
    return bad
