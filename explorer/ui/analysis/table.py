"""A read-only table of prepared rows (built by the controller's job, not here), sortable by the
raw values, whose rows name token ids that a click opens."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from explorer.ui.widgets.roles import EXPORT_ROLE

Index = QModelIndex | QPersistentModelIndex
SORT_ROLE = Qt.ItemDataRole.UserRole + 1


def cell_text(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


class RowsModel(QAbstractTableModel):
    """Rows of plain values; `ids[r]` is the token id row r opens (or -1)."""

    def __init__(self, headers: Sequence[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.headers = list(headers)
        self.rows: list[tuple] = []
        self.ids: list[int] = []
        self.bold: set[int] = set()  # token ids shown in bold
        self.tips: list[str] = []  # what each column measures (the header's tooltips)

    def set_rows(self, rows: list[tuple], ids: list[int], bold: set[int] | None = None) -> None:
        self.beginResetModel()
        self.rows, self.ids, self.bold = rows, ids, bold or set()
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        value = self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell_text(value)
        if role == SORT_ROLE:
            return value if value is not None else float("-inf")
        if role == EXPORT_ROLE:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, int | float):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and self.ids[index.row()] in self.bold:
            view = QObject.parent(self)  # the table's own size (18 pt when presenting)
            f = QFont(view.font()) if isinstance(view, QWidget) else QFont()
            f.setBold(True)
            return f
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self.tips):
            return self.tips[section] or None
        return None


class TokenTable(QTableView):
    """A sortable table whose rows open a token when clicked."""

    tokenActivated = Signal(int)

    def __init__(
        self,
        headers: Sequence[str],
        sortable: bool = True,
        stretch: int | None = 1,
        parent=None,
    ):
        """`stretch`: the column that takes the spare width (the token's text); None: every
        column as wide as its contents (a table that scrolls rather than squeeze one)."""
        super().__init__(parent)
        self.source = RowsModel(headers, self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.source)
        self.proxy.setSortRole(SORT_ROLE)
        self.setModel(self.proxy)
        self.setSortingEnabled(sortable)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        if stretch is not None:
            header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(24)
        self.setAlternatingRowColors(True)
        self.clicked.connect(self._clicked)
        if sortable:
            self.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the order the rows came in

    def set_rows(self, rows: list[tuple], ids: list[int], bold: set[int] | None = None) -> None:
        self.source.set_rows(rows, ids, bold)

    def set_header_tips(self, tips: Sequence[str]) -> None:
        """What each column measures, shown when the mouse rests on its name."""
        self.source.tips = list(tips)
        self.source.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(tips) - 1)

    def changeEvent(self, event) -> None:  # Qt naming: rows as tall as the type (presenting)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)

    def _clicked(self, index: QModelIndex) -> None:
        row = self.proxy.mapToSource(index).row()
        if 0 <= row < len(self.source.ids) and self.source.ids[row] >= 0:
            self.tokenActivated.emit(self.source.ids[row])
