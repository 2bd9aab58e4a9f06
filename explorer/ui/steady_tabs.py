"""A QTabWidget that repaints only what changed inside its pages."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import QTabWidget, QWidget


class SteadyTabWidget(QTabWidget):
    """QTabWidget answers every layout request by repainting all of itself, and a label that
    gets new text deep inside a page sends one: each row lookup repainted the whole viewer (and
    every plot in it) two or three times. Here a request that leaves the tab bar's size as it
    was only tells the parents (a new minimum size); the page's own layout has already placed
    its widgets, and those repaint themselves."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._bar_hint = QSize()

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.LayoutRequest and self.isVisible():
            hint = self.tabBar().sizeHint() if self.tabBar().isVisible() else QSize()
            if hint == self._bar_hint:
                self.updateGeometry()
                return True
            self._bar_hint = hint
        return super().event(e)
