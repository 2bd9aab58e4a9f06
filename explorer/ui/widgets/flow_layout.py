"""A layout that fills rows left to right and wraps onto a new row when the width runs out.

Toolbars made of it never make their window wider than the screen: at 1024 px the map's
controls take two rows instead of a horizontal scrollbar. A stretch item (`add_stretch`) takes
the rest of its row, pushing what follows to the right edge.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QSpacerItem,
    QWidget,
)


class ElidedLabel(QLabel):
    """A one-line label that takes the room its row leaves and ends in "…" when that is short
    (the whole text is its tooltip). In a FlowLayout it never causes a wrap."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        shown = self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, self.width()
        )
        painter.drawText(
            self.rect(), int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), shown
        )


def _fills_row(item: QLayoutItem) -> bool:
    """A stretch or an elided label: takes the rest of its row instead of asking for room."""
    if item.spacerItem() is not None:
        return True
    w = item.widget()
    return w is not None and w.sizePolicy().horizontalPolicy() == QSizePolicy.Policy.Ignored


def labelled(text: str, widget: QWidget) -> QWidget:
    """A caption and its control as one piece, so that a wrap never separates them."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(4)
    row.addWidget(QLabel(text))
    row.addWidget(widget)
    return box


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 6):
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def add_stretch(self) -> None:
        """Room that grows: what follows moves to the right end of its row."""
        self.addItem(QSpacerItem(0, 0, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum))

    # -- QLayout API -------------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    # -- placing -----------------------------------------------------------------------------
    def _rows(self, width: int) -> list[list[QLayoutItem]]:
        rows: list[list[QLayoutItem]] = [[]]
        used = 0
        for item in self._items:
            if item.isEmpty() and item.spacerItem() is None:
                continue  # a hidden widget
            w = 0 if _fills_row(item) else min(item.sizeHint().width(), width)
            if rows[-1] and used + self.spacing() + w > width:
                rows.append([])
                used = 0
            used += (self.spacing() if rows[-1] else 0) + w
            rows[-1].append(item)
        return rows

    def _place(self, rect: QRect, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        y = area.y()
        for row in self._rows(area.width()):
            if not row:
                continue
            height = max(item.sizeHint().height() for item in row)
            widths = [
                0 if _fills_row(item) else min(item.sizeHint().width(), area.width())
                for item in row
            ]
            spare = area.width() - sum(widths) - self.spacing() * (len(row) - 1)
            fills = [i for i, item in enumerate(row) if _fills_row(item)]
            stretches = [i for i in fills if row[i].spacerItem() is None] or fills
            for i in stretches:
                widths[i] += max(0, spare) // len(stretches)
            x = area.x()
            for item, w in zip(row, widths, strict=True):
                if move:
                    h = item.sizeHint().height()
                    item.setGeometry(QRect(QPoint(x, y + (height - h) // 2), QSize(w, h)))
                x += w + self.spacing()
            y += height + self.spacing()
        return y - self.spacing() - rect.y() + m.bottom()
