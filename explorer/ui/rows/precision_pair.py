"""The viewer's "Two precisions" page: the selected token's row at both precisions of the open
comparison (Compare › Precision), plotted, and every value in a table beside its difference and
the quant block, scale (minimum) and integer quant that store it."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QHeaderView, QSplitter, QTableView, QVBoxLayout, QWidget

from explorer.core.rows.bits import QuantBlocks
from explorer.ui.rows import quant_columns as qc
from explorer.ui.rows.row_pair_plot import RowPairPlot
from explorer.ui.rows.style import float_repr, mono_font

if TYPE_CHECKING:  # the quant modules import numba: only once a comparison has run
    from explorer.app.controllers.quant import RowShown
    from explorer.core.quant.row_pair import RowPair

Index = QModelIndex | QPersistentModelIndex
EXACT = Qt.ItemDataRole.UserRole  # the machine value behind a cell (tests, copying)
SIZED_ROWS = 64  # rows measured to size the columns: every row of a long vector is too slow

# what each column holds: (key, header, tip); "ref …" are the reference's blocks
COLUMNS = {
    "index": ("index", "Position in the row"),
    "ref": ("reference", "The reference value r, decoded exactly"),
    "ref scale": ("ref scale", "The scale of the reference value's block (stored as float16)"),
    "other": ("", "The value q at the other precision, decoded exactly"),
    "diff": ("q − r", "The difference this precision makes to the value"),
    "block": ("block", "Which block of the other row holds the value"),
    "scale": ("scale", "The block's scale (stored as float16): the step between its values"),
    "min": ("min", "The block's minimum (stored as float16)"),
    "quant": ("quant", "The stored integer quant: q = scale × quant (+ min)"),
}
BLOCK_PART = {"block": qc.BLOCK, "scale": qc.SCALE, "min": qc.MINIMUM, "quant": qc.QUANT}


def columns_of(pair: RowPair) -> list[str]:
    """The value columns first, then what stores the other value, the reference's scale last
    (what a narrow table shows without scrolling is the comparison)."""
    keys = ["index", "ref", "other", "diff"]
    if pair.blocks is not None:
        keys.append("scale")
        keys += ["min"] if pair.blocks.minimum is not None else []
        keys += ["quant", "block"]
    if pair.ref_blocks is not None:
        keys.append("ref scale")
    return keys


class PairModel(QAbstractTableModel):
    """One row per dimension; cells are made when shown (a row of 4096 values costs nothing)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pair: RowPair | None = None
        self.keys: list[str] = []

    def set_pair(self, pair: RowPair | None) -> None:
        self.beginResetModel()
        self.pair = pair
        self.keys = [] if pair is None else columns_of(pair)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if self.pair is None or parent.isValid() else len(self.pair.ref)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.keys)

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or self.pair is None:
            return None
        key = self.keys[section]
        header, tip = COLUMNS[key]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.pair.type_name if key == "other" else header
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "ref":
                return f"{tip} ({self.pair.ref_type})"
            return f"{tip} ({self.pair.type_name})" if key == "other" else tip
        return None

    def _blocks(self, key: str) -> QuantBlocks | None:
        assert self.pair is not None
        return self.pair.ref_blocks if key == "ref scale" else self.pair.blocks

    def exact(self, i: int, key: str) -> object:
        """The machine value of dimension `i` in column `key`."""
        pair = self.pair
        assert pair is not None
        if key == "index":
            return i
        if key == "ref":
            return float(pair.ref[i])
        if key == "other":
            return float(pair.other[i])
        if key == "diff":
            return float(np.float32(pair.other[i] - pair.ref[i]))
        blocks = self._blocks(key)
        assert blocks is not None
        return qc.exact(blocks, i, qc.SCALE if key == "ref scale" else BLOCK_PART[key])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if self.pair is None or not index.isValid():
            return None
        i, key = index.row(), self.keys[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = self.exact(i, key)
            return (
                str(value) if isinstance(value, int) else float_repr(np.float32(cast(float, value)))
            )
        if role == EXACT:
            return self.exact(i, key)
        if role == Qt.ItemDataRole.FontRole:
            return mono_font()
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(i, key)
        return None

    def _tip(self, i: int, key: str) -> str | None:
        pair = self.pair
        assert pair is not None
        if key in ("ref", "ref scale") and pair.ref_blocks is not None:
            return f"reference {qc.meaning(pair.ref_blocks, i)}"
        if key in ("other", "block", "scale", "min", "quant") and pair.blocks is not None:
            return qc.meaning(pair.blocks, i)
        return None


class PrecisionPairPage(QWidget):
    """The plot of both rows and their difference above the table of every value."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = RowPairPlot(side_by_side=True)
        self.model = PairModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setResizeContentsPrecision(SIZED_ROWS)
        self.table.setMinimumHeight(120)  # a few rows, whatever the plots ask for
        self.table.setToolTip("Every value of the token's row at both precisions; hover a cell")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.setSizes([560, 440])  # scaled to the room there is when first laid out
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(split)
        for plot in (self.plot.values, self.plot.diff):
            plot.scene().sigMouseClicked.connect(lambda e, p=plot: self._clicked(p, e))
        self.shown: RowShown | None = None

    def show_row(self, row: RowShown) -> None:
        self.shown = row
        self.plot.show_row(row)
        self.model.set_pair(row.pair)
        error = np.abs(row.pair.other - row.pair.ref)
        if len(error) and np.isfinite(error).any():  # the value the plot's title speaks of
            self.show_index(int(np.nanargmax(error)))

    def clear(self) -> None:
        self.shown = None
        self.plot.clear()
        self.model.set_pair(None)

    def show_index(self, i: int) -> None:
        """Scroll the table to dimension `i` and select it."""
        if 0 <= i < self.model.rowCount():
            index = self.model.index(i, 0)
            self.table.scrollTo(index, QTableView.ScrollHint.PositionAtCenter)
            self.table.selectRow(i)

    def _clicked(self, plot, event) -> None:
        at = plot.clicked_at(event)
        if at is not None:
            self.show_index(int(round(at[0])))
