"""Neighbours pane: the top-k list for the selection (rank, token, id, score with a bar).

Only shows results; searching happens elsewhere on a worker thread.  Everything here is
proportional to k (at most a few hundred rows), never to the vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QRect,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.core.search.neighbors import METRICS, NeighborResult
from explorer.ui.widgets.painted_table import Column, Ink, PaintedTable, Row
from explorer.ui.widgets.roles import EXPORT_ROLE
from explorer.ui.widgets.style import reserve_lines

METRIC_NAMES = {"cosine": "Cosine", "dot": "Dot product", "l2": "Euclidean"}
SCORE_NAMES = {"cosine": "Cosine", "dot": "Dot", "l2": "Distance"}
COLUMNS = ("#", "Token", "ID", "Score")
MAX_K = 1000
BAR_ROLE = Qt.ItemDataRole.UserRole + 1
TEXT_PAD = 4  # px between the score's bar and its number
BAR_PX = 56  # px of the score column given to the bar
_ROOT = QModelIndex()
# roles as plain ints: data() runs for every cell and role on each repaint, and comparing Qt
# enum members there cost ~6 µs a call (2,600 calls per new result)
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole.value)
_TIP = int(Qt.ItemDataRole.ToolTipRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_EXPORT = int(getattr(EXPORT_ROLE, "value", EXPORT_ROLE))
_BAR = int(getattr(BAR_ROLE, "value", BAR_ROLE))
_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
_LEFT = int((Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter).value)
_GREY = QColor(128, 128, 128)


class _Rows(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.ids: list[int] = []
        self.labels: list[str] = []
        self.unused: list[bool] = []
        self.scores: list[float] = []
        self.bars: list[float] = []
        self.metric = "cosine"

    def set_rows(self, ids, labels, unused, scores, bars, metric) -> None:
        self.beginResetModel()
        self.ids, self.labels, self.unused = ids, labels, unused
        self.scores, self.bars, self.metric = scores, bars, metric
        self.endResetModel()

    def rowCount(self, parent=_ROOT) -> int:  # Qt API
        return 0 if parent.isValid() else len(self.ids)

    def columnCount(self, parent=_ROOT) -> int:  # Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        return SCORE_NAMES[self.metric] if section == 3 else COLUMNS[section]

    def text(self, r: int, c: int) -> str:
        """Cell (r, c) as shown (NeighborsView paints from this; data() serves tooltips, tests,
        copying and accessibility)."""
        if c == 0:
            return str(r + 1)
        if c == 1:
            return self.labels[r] + ("  (unused)" if self.unused[r] else "")
        if c == 2:
            return str(self.ids[r])
        return f"{self.scores[r]:.4f}"

    def data(self, index, role=_DISPLAY):
        role = int(getattr(role, "value", role))
        if role not in (_DISPLAY, _ALIGN, _TIP, _FOREGROUND, _FONT, _EXPORT, _BAR):
            return None
        r, c = index.row(), index.column()
        if not 0 <= r < len(self.ids):
            return None
        if role == _DISPLAY:
            return self.text(r, c)
        if role == _EXPORT:
            return (r + 1, self.labels[r], self.ids[r], self.scores[r])[c]
        if role == _BAR:
            return self.bars[r] if c == 3 else None
        if role == _ALIGN:
            return _RIGHT if c != 1 else None
        if role == _TIP:
            note = "\nUnused row: the tokenizer never produces this id" if self.unused[r] else ""
            return f"{self.labels[r]}  (id {self.ids[r]}){note}\nClick to select it"
        if role == _FOREGROUND:
            return _GREY if self.unused[r] or c in (0, 2) else None
        if c == 1 and self.unused[r]:  # _FONT
            font = QFont()
            font.setItalic(True)
            return font
        return None


def bar_and_text_rects(cell: QRect, text_width: int, frac: float) -> tuple[QRect, QRect]:
    """The bar (left, length ∝ frac) and the number (right-aligned) of a score cell; the bar
    only uses the room the number leaves, so the two never overlap."""
    text = QRect(
        cell.right() - text_width - 2 * TEXT_PAD, cell.top(), text_width + TEXT_PAD, cell.height()
    )
    room = max(0, text.left() - TEXT_PAD - (cell.left() + 3))
    width = max(1, int(room * frac)) if room and frac > 0 else 0
    return QRect(cell.left() + 3, cell.top() + 4, width, max(0, cell.height() - 8)), text


class NeighborsView(PaintedTable):
    """The neighbours, painted straight from the rows (see PaintedTable): rank and id in grey,
    an unused row's token in grey italics, and the score right-aligned with, in the room left of
    it, a bar whose length says how close the row is (bar and number never overlap)."""

    def __init__(self, rows: _Rows, parent: QWidget | None = None):
        super().__init__(parent)
        self.setModel(rows)
        self.rows = rows
        self._fonts = self._fonts_and_metrics()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._fonts = self._fonts_and_metrics()

    def _fonts_and_metrics(self) -> dict[bool, tuple[QFont, QFontMetrics]]:
        """By italic: the view's font for most cells, its italics for an unused row's token."""
        italic = QFont(self.font())
        italic.setItalic(True)
        return {False: (self.font(), self.fontMetrics()), True: (italic, QFontMetrics(italic))}

    def paint_row(self, painter: QPainter, row: Row, columns: list[Column], ink: Ink) -> None:
        rows, r = self.rows, row.number
        if r >= len(rows.ids):
            return
        unused = rows.unused[r]
        for column in columns:
            c = column.number
            font, metrics = self._fonts[unused and c == 1]
            painter.setFont(font)
            if c == 3:
                self._paint_score(painter, metrics, row, column, ink)
                continue
            painter.setPen(ink.pen(row.selected, None if c == 1 and not unused else _GREY))
            align = _LEFT if c == 1 else _RIGHT
            self.draw_text(painter, metrics, row, column, align, rows.text(r, c))

    def _paint_score(self, painter, metrics, row: Row, column: Column, ink: Ink) -> None:
        text = self.rows.text(row.number, 3)
        cell = QRect(column.x, row.y, column.width, row.h)
        frac = self.rows.bars[row.number]
        bar, text_rect = bar_and_text_rects(cell, metrics.horizontalAdvance(text), frac)
        colour = QColor(ink.highlight)
        colour.setAlpha(70 if row.selected else 130)
        if bar.width() > 0:
            painter.fillRect(bar, colour)
        painter.setPen(ink.pen(row.selected))
        painter.drawText(text_rect, _RIGHT, text)


def bar_fractions(scores: np.ndarray, metric: str) -> list[float]:
    """Bar length 0..1 per row: cosine as is, dot relative to the best, l2 as best/distance."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return []
    if metric == "cosine":
        f = np.clip(s, 0.0, 1.0)
    elif metric == "dot":
        top = s.max()
        f = np.clip(s / top, 0.0, 1.0) if top > 0 else np.zeros_like(s)
    else:
        best = s.min()
        f = np.where(s > 0, best / np.where(s > 0, s, 1.0), 1.0)
    return [float(x) for x in f]


class NeighborsPane(QWidget):
    tokenActivated = Signal(object)  # a token id (object: ids may exceed 32 bits)
    paramsChanged = Signal()

    def __init__(self, parent: QWidget | None = None, k: int = 50, metric: str = "cosine"):
        super().__init__(parent)
        self.metric_box = QComboBox()
        for m in METRICS:
            self.metric_box.addItem(METRIC_NAMES[m], m)
        self.metric_box.setCurrentIndex(METRICS.index(metric))
        self.metric_box.setToolTip(
            "How closeness is measured: cosine of the angle, dot product, "
            "or Euclidean distance (smaller is closer)"
        )
        self.k_box = QSpinBox()
        self.k_box.setRange(1, MAX_K)
        self.k_box.setValue(k)
        self.k_box.setPrefix("k = ")
        self.k_box.setToolTip("How many neighbours to list")
        self.k_box.setKeyboardTracking(False)  # typing "100" does not search for 1 and 10 first
        self.metric_box.currentIndexChanged.connect(lambda _i: self.paramsChanged.emit())
        self.k_box.valueChanged.connect(lambda _v: self.paramsChanged.emit())
        self.hide_box = QCheckBox("Hide unused")
        self.hide_box.setChecked(True)
        self.hide_box.setToolTip(
            "Leave out rows the tokenizer never produces and placeholders such as [unused12]\n"
            "(small-norm rows that crowd Euclidean neighbours)"
        )
        self.hide_box.toggled.connect(lambda _on: self.paramsChanged.emit())

        self.status = QLabel("Select a token to see its nearest neighbours")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setStyleSheet("color: palette(placeholder-text);")
        reserve_lines(self.status)  # "Searching…" takes one line, a result's caption two

        self.rows = _Rows(self)
        self.table = NeighborsView(self.rows)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        # '#' and 'ID' are sized from their widest number, not measured over every row on each
        # new result (ResizeToContents asked data() for every cell and role of the column)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Fixed)
        self._digits = (0, 0)
        self._fit_number_columns(2, 1)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Fixed)
        score_w = self.fontMetrics().horizontalAdvance("-00.0000") + 2 * TEXT_PAD + BAR_PX
        header.resizeSection(3, max(score_w, self.fontMetrics().horizontalAdvance("Distance") + 16))
        self.table.clicked.connect(self._clicked)
        self.table.activated.connect(self._clicked)

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.metric_box, 1)
        bar.addWidget(self.k_box)
        bar.addWidget(self.hide_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)

    # -- parameters ------------------------------------------------------------------------------
    @property
    def metric_name(self) -> str:
        """The chosen metric: "cosine", "dot" or "l2"."""
        return str(self.metric_box.currentData())

    @metric_name.setter
    def metric_name(self, value: str) -> None:
        self.metric_box.setCurrentIndex(METRICS.index(value))

    @property
    def options(self) -> tuple[int, str, bool]:
        """(k, metric, hide unused rows), as NeighborsController.set_options takes them."""
        return self.k, self.metric_name, self.hide_unused

    @property
    def hide_unused(self) -> bool:
        return self.hide_box.isChecked()

    @property
    def k(self) -> int:
        return int(self.k_box.value())

    @k.setter
    def k(self, value: int) -> None:
        self.k_box.setValue(int(value))

    # -- showing results -------------------------------------------------------------------------
    def show_result(
        self,
        result: NeighborResult,
        labels: Callable[[int], str],
        unused: Callable[[int], bool],
        description: str = "",
        hidden: int = 0,
    ) -> None:
        ids = [int(i) for i in result.ids]
        scores = [float(s) for s in result.scores]
        self.rows.set_rows(
            ids,
            [labels(i) for i in ids],
            [bool(unused(i)) for i in ids],
            scores,
            bar_fractions(result.scores, result.metric),
            result.metric,
        )
        parts = [
            f"Neighbours of {description}" if description else "Neighbours",
            METRIC_NAMES[result.metric].lower(),
            result.path_label,
        ]
        if hidden:
            parts.append(f"{hidden:,} unused row{'s' if hidden != 1 else ''} hidden")
        if result.skipped:
            plural = "s" if result.skipped != 1 else ""
            parts.append(f"{result.skipped:,} zero/NaN row{plural} skipped")
        if not ids:
            parts.append("no usable rows")
        self.status.setText(" · ".join(parts))
        self._fit_number_columns(len(str(len(ids))), max((len(str(i)) for i in ids), default=1))
        self.table.setEnabled(True)
        self.table.scrollToTop()

    def _fit_number_columns(self, rank_digits: int, id_digits: int) -> None:
        digits = (max(2, rank_digits), max(2, id_digits))
        if digits == self._digits:
            return
        self._digits = digits
        fm, header = self.table.fontMetrics(), self.table.horizontalHeader()
        for column, n in ((0, digits[0]), (2, digits[1])):
            title = fm.horizontalAdvance(COLUMNS[column]) + 16
            header.resizeSection(column, max(title, fm.horizontalAdvance("0" * n) + 14))

    def show_busy(self, text: str) -> None:
        """A search is running: say so and dim the (now stale) rows."""
        self.status.setText(text)
        self.table.setEnabled(False)

    def show_error(self, text: str) -> None:
        self.rows.set_rows([], [], [], [], [], self.rows.metric)
        self.status.setText(text)
        self.table.setEnabled(True)

    def clear(self, text: str = "Select a token to see its nearest neighbours") -> None:
        self.show_error(text)

    def _clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.tokenActivated.emit(self.rows.ids[index.row()])
