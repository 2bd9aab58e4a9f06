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
    """Places `child` over its whole area, and any overlays (e.g. an empty-state cover) on top:
    showing or hiding an overlay invalidates no layout either (a child shown or hidden under a
    widget with a layout invalidates that layout, whether the child is in it or not)."""

    def __init__(self, child: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.child = child
        self.overlays: list[QWidget] = []
        child.setParent(self)

    def add_overlay(self, widget: QWidget) -> None:
        widget.setParent(self)
        widget.setGeometry(self.rect())
        widget.raise_()
        self.overlays.append(widget)

    def sizeHint(self) -> QSize:
        return self.child.sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self.child.minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        for widget in (self.child, *self.overlays):
            widget.setGeometry(self.rect())
