"""A container that places its child itself, so that a change deep inside stops there.

Qt re-lays out every ancestor up to the window whenever a label inside changes its text: each
layout, once activated, calls updateGeometry() on its widget, whose parent layout is then
invalidated, and so on up to the main window (2-4 ms of the GUI thread per click on the whole
window, with every pane's size hints asked again). A widget without a layout only receives a
LayoutRequest it ignores, so the chain ends at the fence; the fence's size hints are its
child's, asked when the window lays itself out for its own reasons.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget


class LayoutFence(QWidget):
    def __init__(self, child: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.child = child
        child.setParent(self)

    def sizeHint(self) -> QSize:
        return self.child.sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self.child.minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.child.setGeometry(self.rect())
