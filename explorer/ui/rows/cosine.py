"""Pairwise cosine similarities of the selected rows as a small coloured matrix."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QFrame,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.core.rows.numbers import cosine_matrix
from explorer.core.rows.read import RowData
from explorer.ui.rows.style import diverging_colormap, mono_font, row_name


def _text_on(bg: QColor) -> QColor:
    """Black or white, whichever reads better on a colour-map cell."""
    luminance = 0.2126 * bg.redF() + 0.7152 * bg.greenF() + 0.0722 * bg.blueF()
    return QColor("#000000") if luminance > 0.5 else QColor("#FFFFFF")


class CosinePanel(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.matrix = np.zeros((0, 0))
        self.rows: list[RowData] = []
        self._stale = False  # the table and caption show other rows than self.rows
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() * 2)
        self.table.horizontalHeader().setMinimumSectionSize(72)
        self.table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        self.table.setFrameShape(QFrame.Shape.NoFrame)
        self.table.setToolTip(
            "cos(a, b) = a·b / (|a| |b|): 1 same direction, 0 unrelated, −1 opposite"
        )
        self._cmap = diverging_colormap()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 0, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        layout.addStretch(1)

    def set_rows(self, rows: list[RowData]) -> None:
        """The rows' cosine matrix, now; the table and caption when `show_table` asks for them
        (filling them under another tab re-laid out the whole viewer: ~11 ms a two-row click)."""
        self.rows = list(rows)
        n = len(rows)
        self.matrix = cosine_matrix(np.stack([r.values for r in rows])) if n else np.zeros((0, 0))
        self._stale = True

    def show_table(self) -> None:
        """Fill the table and caption with the rows given last, unless they already show them."""
        if not self._stale:
            return
        self._stale = False
        rows, n = self.rows, len(self.rows)
        labels = [row_name(r.label, r.id) for r in rows]
        self.table.clear()
        self.table.setRowCount(n)
        self.table.setColumnCount(n)
        self.table.setHorizontalHeaderLabels(labels)
        self.table.setVerticalHeaderLabels(labels)
        mono = mono_font()
        colors = (
            self._cmap.map(((np.clip(self.matrix, -1, 1) + 1) / 2).ravel(), mode="qcolor")
            if n
            else []
        )
        for i in range(n):
            for j in range(n):
                c = float(self.matrix[i, j])
                item = QTableWidgetItem(f"{c:.3f}".replace("-", "−"))
                item.setData(Qt.ItemDataRole.UserRole, c)
                item.setToolTip(f"cos({rows[i].label}, {rows[j].label}) = {c!r}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                item.setFont(mono)
                bg = QColor(colors[i * n + j])
                item.setBackground(bg)
                item.setForeground(_text_on(bg))
                self.table.setItem(i, j, item)
        self.caption.setText(self._describe())
        self.table.setVisible(n >= 2)  # an empty table would be a blank box under the hint

    def _describe(self) -> str:
        n = len(self.rows)
        if n < 2:
            return "Ctrl+click two or more tokens to compare their directions."
        iu = np.triu_indices(n, k=1)
        pairs = self.matrix[iu]
        hi, lo = int(np.argmax(pairs)), int(np.argmin(pairs))

        def pair(k: int) -> str:
            a, b = self.rows[iu[0][k]], self.rows[iu[1][k]]
            return f"{a.label} – {b.label} ({pairs[k]:.3f})".replace("(-", "(−")

        if n == 2:
            return f"Cosine similarity {pair(0)}."
        return f"Most similar: {pair(hi)}.  Least similar: {pair(lo)}."
