"""The numbers of a row at a glance: a card for one row, a table for several."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QEnterEvent, QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.core.rows.read import RowData
from explorer.ui.rows.style import fmt, is_dark, mono_font, series_color
from explorer.ui.widgets.layout_fence import LayoutFence
from explorer.ui.widgets.steady_label import SteadyLabel

UNUSED_TIP = (
    "The tokenizer never produces this id: the row only pads the matrix to a round size, "
    "so its values were probably never trained"
)
# a title with the tallest scripts a vocabulary holds (their fallback fonts set the line height)
TALLEST_TITLE = "Xg 弗里 জে ர்கள் अच्छ ญี่ 🐱"
_CHIP = "QLabel { border: 1px solid palette(mid); border-radius: 9px; padding: 1px 8px; }"
_UNUSED = (
    "QLabel { background: #E8A33A; color: #1B1300; border-radius: 9px; padding: 1px 8px;"
    " font-weight: bold; }"
)
_BAD = (
    "QLabel { background: #D9534F; color: #FFFFFF; border-radius: 9px; padding: 1px 8px;"
    " font-weight: bold; }"
)

# (key, caption, tooltip)
STATS = (
    ("norm", "L2 norm", "Euclidean length √(Σ v²) of the row"),
    ("mean", "mean", "Average of the values"),
    ("std", "std", "Standard deviation of the values (population, ddof = 0)"),
    ("min", "min", "Smallest value"),
    ("max", "max", "Largest value"),
    ("argmax_abs", "largest |value|", "Position of the value with the largest magnitude"),
)


# the room each number of the card keeps (fmt: 6 significant digits): a row's usual widest.
# A longer one (a std of 1.23457e−05 is) widens its column once, for the rows after it too
ROOM = {
    "norm": "888.888",
    "mean": "−0.000888888",
    "std": "0.0888888",
    "min": "−0.888888",
    "max": "−0.888888",
    "argmax_abs": "−0.888888 at 8888",
}


def _chip(text: str = "", style: str = _CHIP) -> QLabel:
    label = QLabel(text)
    label.setStyleSheet(style)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def peak_text(row: RowData, digits: int = 6) -> str:
    i = row.stats.argmax_abs
    return "—" if i < 0 else f"{fmt(float(row.values[i]), digits)} at {i}"


class TitleLabel(QLabel):
    """The card's title, as tall as a line of any script from the start: a token in a script
    whose fallback font has a taller line (CJK) made the card taller on first sight, and moved
    the plots below it."""

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            probe = QLabel(TALLEST_TITLE)
            probe.setFont(self.font())
            self.setMinimumHeight(probe.sizeHint().height())


class SummaryCard(QFrame):
    """One row: its readable piece, id, dtype and six statistics as tiles."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = TitleLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.title.setFont(font)
        self.id_chip = _chip()
        self.id_chip.setToolTip("Token id = row of the embedding matrix")
        self.dtype_chip = _chip()
        self.dtype_chip.setToolTip("Stored dtype and length (d_model) of the row")
        self.unused_badge = _chip("unused row", _UNUSED)
        self.unused_badge.setToolTip(UNUSED_TIP)
        self.nonfinite_badge = _chip("NaN / ∞ inside", _BAD)
        self.nonfinite_badge.setToolTip("The row holds non-finite values; statistics skip nothing")

        head_row = QWidget()
        head = QHBoxLayout(head_row)
        head.setContentsMargins(0, 0, 0, 0)
        head.setSpacing(8)
        head.addWidget(self.title)
        head.addWidget(self.id_chip)
        head.addWidget(self.dtype_chip)
        head.addWidget(self.unused_badge)
        head.addWidget(self.nonfinite_badge)
        head.addStretch(1)

        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(0)
        self.values: dict[str, QLabel] = {}
        self.captions: dict[str, QLabel] = {}
        big = mono_font()
        big.setPointSizeF(self.font().pointSizeF() * 1.1)
        for col, (key, caption, tip) in enumerate(STATS):
            cap = QLabel(caption)
            cap.setToolTip(tip)
            cap.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # muted in light and dark
            value = SteadyLabel(ROOM[key])
            value.setFont(big)
            grid.addWidget(cap, 0, col)
            grid.addWidget(value, 1, col)
            self.captions[key], self.values[key] = cap, value
        grid.setColumnStretch(len(STATS), 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 6)
        layout.setSpacing(6)
        # a new title or chip re-lays out the head row, and stops there: the card's own layout
        # (and the viewer's above it) ran again on every click, ~1.5 ms of it
        self.head = LayoutFence(head_row)
        layout.addWidget(self.head)
        layout.addLayout(grid)

    # The texts can be selected (and copied) while the pointer is over the card, the only time
    # a mouse can select them. A selectable label keeps a text control that lays its document
    # out again after each setText and asks for another paint: ~1.5 ms of every click for the
    # card's seven labels (the card alone: 3.1 against 1.6 ms a row).
    def enterEvent(self, event: QEnterEvent) -> None:
        self._selectable(True)
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if QApplication.activePopupWidget() is None:  # a label's own menu (Copy) keeps them
            self._selectable(False)
        super().leaveEvent(event)

    def _selectable(self, on: bool) -> None:
        flags = (
            Qt.TextInteractionFlag.TextSelectableByMouse
            if on
            else Qt.TextInteractionFlag.NoTextInteraction
        )
        for label in (self.title, *self.values.values()):
            label.setTextInteractionFlags(flags)

    def reserve_height(self) -> None:
        """Take the height of a shown row now (measured with sample texts, then emptied): the
        first row then moves nothing below the card (that re-laid out and repainted the plots)."""
        labels = [self.title, self.id_chip, self.dtype_chip, *self.values.values()]
        for label in labels:
            label.setText("Xg #0")
        self.setMinimumHeight(max(self.minimumHeight(), self.sizeHint().height()))
        for label in labels:
            label.setText("")

    def set_row(self, row: RowData) -> None:
        s = row.stats
        self.title.setText(row.label)
        self.title.setToolTip(f"Readable piece of token {row.id}: {row.label!r}")
        self.id_chip.setText(f"#{row.id}")
        self.id_chip.setVisible(row.label != f"#{row.id}")  # no tokenizer: the title is the id
        self.dtype_chip.setText(f"{row.dtype} · {row.values.shape[0]} values")
        self.unused_badge.setVisible(row.unused)
        self.nonfinite_badge.setVisible(not s.finite)
        for key, _caption, tip in STATS:
            label = self.values[key]
            if key == "argmax_abs":
                label.setText(peak_text(row))
                label.setToolTip(f"{tip}: index {s.argmax_abs}")
            else:
                x = float(getattr(s, key))
                label.setText(fmt(x))
                label.setToolTip(f"{tip}: {x!r}")
        # grow, never shrink: a title in another script (Bengali, Tamil) is a pixel shorter, and
        # each change of height moved the plots below, which then all re-laid out and repainted
        if self.head.child.sizeHint().height() > self.head.height():
            self.head.updateGeometry()  # a taller script than any before: the fence lets it by
        hint = self.sizeHint().height()
        if hint > self.minimumHeight():
            self.setMinimumHeight(hint)


_COLUMNS = ("token", "id", "L2 norm", "mean", "std", "min", "max", "largest |value|", "cosine")
COSINE = len(_COLUMNS) - 1


class SummaryTable(QTableWidget):
    """Several rows, one line each, coloured like their plot lines; click one to inspect it."""

    currentRowChanged = Signal(int)  # position in the list of rows

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, len(_COLUMNS), parent)
        self.floor = 0  # least height: the card's, so that two rows do not move the plots
        self.headers = [QTableWidgetItem(text) for text in _COLUMNS]
        for col, item in enumerate(self.headers):
            self.setHorizontalHeaderItem(col, item)
        for col, (_k, _c, tip) in enumerate(STATS, start=2):
            self.headers[col].setToolTip(tip)
        self.headers[0].setToolTip("Readable piece; the swatch is its colour in the plot")
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # ≤ a few dozen rows
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.itemSelectionChanged.connect(self._selection_changed)
        self.setToolTip("Click a row to show its heatmap and values")

    def set_rows(self, rows: list[RowData]) -> None:
        dark = is_dark(self)
        self.blockSignals(True)
        self.setRowCount(0)  # drop the old items (and cosines) before filling
        self.setRowCount(len(rows))
        mono = mono_font()
        for r, row in enumerate(rows):
            s = row.stats
            cells = [
                row.label + ("  (unused row)" if row.unused else ""),
                str(row.id),
                fmt(s.norm, 4),
                fmt(s.mean, 4),
                fmt(s.std, 4),
                fmt(s.min, 4),
                fmt(s.max, 4),
                peak_text(row, 4),
            ]
            exact = [
                row.label,
                str(row.id),
                repr(s.norm),
                repr(s.mean),
                repr(s.std),
                repr(s.min),
                repr(s.max),
                f"index {s.argmax_abs}",
            ]
            for c, (text, tip) in enumerate(zip(cells, exact, strict=True)):
                item = QTableWidgetItem(text)
                item.setToolTip(UNUSED_TIP if c == 0 and row.unused else tip)
                if c == 0:
                    item.setData(Qt.ItemDataRole.DecorationRole, series_color(r, dark))
                else:
                    item.setFont(mono)
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if c == 0 and row.unused:
                    item.setForeground(QColor("#C77C00") if not dark else QColor("#F0B450"))
                self.setItem(r, c, item)
        self.blockSignals(False)
        self._fit_height()

    def _fit_height(self) -> None:
        """Two rows fit in the card's place; three or more get room for five at once, without a
        vertical scrollbar, whatever the horizontal one does. Growing a row at a time moved
        the plots on each Ctrl+click: both were laid out and painted again (~30 ms)."""
        visible = 5 if self.rowCount() > 2 else self.rowCount()
        wide = self.horizontalHeader().length() > self.viewport().width()
        fit = (
            self.horizontalHeader().sizeHint().height()
            + visible * self.verticalHeader().defaultSectionSize()
            + 2 * self.frameWidth()
            + (self.horizontalScrollBar().sizeHint().height() if wide else 0)
        )
        self.setFixedHeight(max(fit, self.floor))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def set_cosines(self, cosines: list[float], current: str) -> None:
        """Cosine similarity of every row to the row being inspected."""
        self.headers[COSINE].setText(f"cos to {current}")
        self.headers[COSINE].setToolTip(
            f"Cosine similarity of each row to {current}: 1 same direction, 0 unrelated"
        )
        mono = mono_font()
        for r, c in enumerate(cosines):
            item = QTableWidgetItem(f"{c:.3f}".replace("-", "−"))
            item.setData(Qt.ItemDataRole.UserRole, c)
            item.setToolTip(repr(c))
            item.setFont(mono)
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(r, COSINE, item)

    def select(self, position: int) -> None:
        self.blockSignals(True)
        self.selectRow(position)
        self.blockSignals(False)

    def _selection_changed(self) -> None:
        rows = self.selectionModel().selectedRows()
        if rows:
            self.currentRowChanged.emit(rows[0].row())
