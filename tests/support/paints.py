"""Counting a widget's paint events (and layout requests) in a test."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


class Paints(QObject):
    """Counts paint events per watched widget, and the largest share of it repainted."""

    def __init__(self, widgets: dict[str, QWidget]):
        super().__init__()
        self.names = {id(w): name for name, w in widgets.items()}
        self.count = dict.fromkeys(widgets, 0)
        self.largest = dict.fromkeys(widgets, 0.0)  # of the widget's area
        for w in widgets.values():
            w.installEventFilter(self)

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and id(obj) in self.names:
            name, r = self.names[id(obj)], event.rect()
            self.count[name] += 1
            area = r.width() * r.height() / max(1, obj.width() * obj.height())
            self.largest[name] = max(self.largest[name], area)
        return False


class LayoutRequests(QObject):
    """Counts the layout requests a widget receives (each one re-lays out its layout)."""

    def __init__(self, widget: QWidget):
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, event):
        self.count += event.type() == QEvent.Type.LayoutRequest
        return False
