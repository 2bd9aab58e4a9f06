"""A table view that paints its visible rows itself.

Qt's stock delegate asks the model's data() for seven roles of every cell, each a call into
Python, and lays out each text with QTextLayout: ~13 ms for a screenful of values and ~5 ms for
a dozen neighbours, on every click. A subclass here draws a row straight from its own data in
`paint_row`; header, scrolling, selection, keyboard, tooltips and copying stay Qt's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QTableView


class Column(NamedTuple):
    number: int
    x: int  # viewport position of the column's left edge
    width: int
    text_x: int  # where a cell's text starts, after its margin
    room: int  # px for a cell's text, between its margins


class Row(NamedTuple):
    number: int
    y: int  # viewport position of the row's top edge
    h: int
    selected: bool


@dataclass(frozen=True)
class Ink:
    """The palette's colours for the rows, in the view's colour group (dimmed when disabled)."""

    text: QColor
    selected_text: QColor
    highlight: QColor
    alternate: QColor

    def pen(self, selected: bool, colour: QColor | None = None) -> QColor:
        return self.selected_text if selected else (colour or self.text)


class PaintedTable(QTableView):
    MARGIN = 3  # px of text margin on each side of a cell, as Qt's item delegate in Fusion

    def begin_paint(self) -> None:
        """Called before the rows of a paint are drawn."""

    def paint_row(self, painter: QPainter, row: Row, columns: list[Column], ink: Ink) -> None:
        """Draw a row's cells (its background is already painted)."""
        raise NotImplementedError

    def paintEvent(self, event: QPaintEvent) -> None:
        model = self.model()
        n = 0 if model is None else model.rowCount()
        area = event.rect()
        first = self.rowAt(area.top()) if n else -1
        if first < 0:
            return
        last = self.rowAt(area.bottom())
        last = n - 1 if last < 0 else last
        header = self.horizontalHeader()
        grid = 1 if self.showGrid() else 0
        columns = []
        for col in range(model.columnCount()):
            if not header.isSectionHidden(col):
                x, width = header.sectionViewportPosition(col), header.sectionSize(col)
                room = width - 2 * self.MARGIN - grid
                columns.append(Column(col, x, width, x + self.MARGIN, room))
        self.begin_paint()
        ink = self._ink()
        selected = {index.row() for index in self.selectionModel().selectedRows()}
        right = max((c.x + c.width for c in columns), default=0)
        alternating = self.alternatingRowColors()
        painter = QPainter(self.viewport())
        for i in range(first, last + 1):
            row = Row(i, self.rowViewportPosition(i), self.rowHeight(i), i in selected)
            if row.selected:
                painter.fillRect(0, row.y, right, row.h, ink.highlight)
            elif alternating and i % 2:
                painter.fillRect(0, row.y, right, row.h, ink.alternate)
            self.paint_row(painter, row, columns, ink)
        if grid:
            painter.setPen(self._grid_colour())
            top = self.rowViewportPosition(first)
            bottom = self.rowViewportPosition(last) + self.rowHeight(last) - 1
            for c in columns:
                painter.drawLine(c.x + c.width - 1, top, c.x + c.width - 1, bottom)
            for i in range(first, last + 1):
                y = self.rowViewportPosition(i) + self.rowHeight(i) - 1
                painter.drawLine(0, y, right - 1, y)
        painter.end()

    def draw_text(
        self,
        painter: QPainter,
        metrics: QFontMetrics,
        row: Row,
        column: Column,
        align: int,
        text: str,
        widest: int = 0,
    ) -> None:
        """`text` in a cell, within its margins, elided on the right when it does not fit.
        `widest`, the font's widest character, skips measuring a text too short to need it."""
        room = column.room
        if not (widest and len(text) * widest <= room) and metrics.horizontalAdvance(text) > room:
            text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        painter.drawText(column.text_x, row.y, room, row.h, align, text)

    def _ink(self) -> Ink:
        palette = QPalette(self.palette())
        if not self.isEnabled():  # e.g. stale rows while a new result is searched
            palette.setCurrentColorGroup(QPalette.ColorGroup.Disabled)
        role = QPalette.ColorRole
        return Ink(
            palette.color(role.Text),
            palette.color(role.HighlightedText),
            palette.color(role.Highlight),
            palette.color(role.AlternateBase),
        )

    def _grid_colour(self) -> QColor:
        option = QStyleOptionViewItem()
        option.initFrom(self)  # the grid colour comes from the palette, as in QTableView
        hint = self.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, option, self)
        return QColor.fromRgba(hint & 0xFFFFFFFF)
