"""Exports of every table and plot of a window, from their context menu: tables as CSV (copied
or saved), plots as PNG at 1×, 2× or 4× and as SVG. The map has its own export (vector circles,
explorer/ui/map/export.py) and is left alone. Also the selected rows as .npy or copied."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QMenu, QTableView, QWidget

from explorer.app.state import AppState
from explorer.core.errors import ExplorerError
from explorer.core.table_export import csv_text
from explorer.ui.host import Host
from explorer.ui.widgets.grab import SCALES
from explorer.ui.widgets.roles import EXPORT_ROLE, OWN_EXPORTS


def table_csv(view: QTableView) -> str:
    """The table as shown (its order, its columns), numbers at full precision where known."""
    model = view.model()
    cols = range(model.columnCount())
    headers = [
        str(model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole) or "")
        for c in cols
    ]
    rows = []
    for r in range(model.rowCount()):
        row: list[object] = []
        for c in cols:
            index = model.index(r, c)
            raw = index.data(EXPORT_ROLE)
            row.append(raw if isinstance(raw, int | float | str) else index.data())
        rows.append(row)
    return csv_text(headers, rows)


def export_plot(view: pg.GraphicsView, path: str | Path, scale: int = 1) -> None:
    """A plot as .png (scale × its size on screen) or .svg."""
    path = Path(path)
    item = view.getPlotItem() if isinstance(view, pg.PlotWidget) else view.scene()
    if path.suffix.lower() == ".svg":
        # pyqtgraph 0.14's SVGExporter fails on Qt 6 path data; Qt's own SVG writer does not
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(view.size())
        generator.setViewBox(QRect(QPoint(0, 0), view.size()))
        generator.setTitle(path.stem)
        painter = QPainter(generator)
        try:
            view.render(painter)
        finally:
            painter.end()
    elif path.suffix.lower() == ".png":
        exporter = pg_exporters.ImageExporter(item)
        width = max(1, int(round(exporter.getSourceRect().width() * scale)))
        exporter.parameters()["width"] = width
        exporter.export(str(path))
    else:
        raise ExplorerError(f"{path.name}: export a plot as .png or .svg")


def _own_exports(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if parent.property(OWN_EXPORTS):
            return True
        parent = parent.parentWidget()
    return False


class Exports:
    """Context menus with exports on the window's tables and plots, and the rows exports."""

    def __init__(self, host: Host, state: AppState):
        self.host, self.state = host, state
        root = host.widget
        for table in root.findChildren(QTableView):
            if table.contextMenuPolicy() == Qt.ContextMenuPolicy.DefaultContextMenu:
                table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
                table.customContextMenuRequested.connect(
                    lambda pos, t=table: self._table_menu(t, pos)
                )
        for plot in root.findChildren(pg.GraphicsView):
            if (
                _own_exports(plot)
                or plot.contextMenuPolicy() != Qt.ContextMenuPolicy.DefaultContextMenu
            ):
                continue
            plot.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            plot.customContextMenuRequested.connect(lambda pos, p=plot: self._plot_menu(p, pos))
        menu = host.add_menu("file", "export", QMenu("E&xport", root))
        menu.addAction("Selected rows as .&npy…", self.rows_dialog)
        menu.addAction("&Copy selected rows", self.copy_rows)

    def _say(self, text: str) -> None:
        self.host.say(text)

    # -- tables ----------------------------------------------------------------------------------
    def _table_menu(self, table: QTableView, pos: QPoint) -> None:
        menu = QMenu(table)
        menu.addAction("Copy table as CSV", lambda: self.copy_table(table))
        menu.addAction("Export table as CSV…", lambda: self._table_dialog(table))
        menu.popup(table.viewport().mapToGlobal(pos))

    def copy_table(self, table: QTableView) -> None:
        QGuiApplication.clipboard().setText(table_csv(table))
        self._say(f"Copied {table.model().rowCount():,} rows as CSV")

    def save_table(self, table: QTableView, path: str | Path) -> None:
        Path(path).write_text(table_csv(table), encoding="utf-8")
        self._say(f"Saved {table.model().rowCount():,} rows to {Path(path).name}")

    def _table_dialog(self, table: QTableView) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.host.widget, "Export table", "table.csv", "CSV (*.csv)"
        )
        if path:
            self._try(lambda: self.save_table(table, path))

    # -- plots -----------------------------------------------------------------------------------
    def _plot_menu(self, plot: pg.GraphicsView, pos: QPoint) -> None:
        menu = QMenu(plot)
        menu.addAction("Copy image", lambda: self.copy_plot(plot))
        for scale in SCALES:
            menu.addAction(f"Export PNG {scale}×…", partial(self._plot_dialog, plot, scale))
        menu.addAction("Export SVG…", lambda: self._plot_dialog(plot, 0))
        menu.popup(plot.mapToGlobal(pos))

    def copy_plot(self, plot: pg.GraphicsView) -> None:
        QGuiApplication.clipboard().setPixmap(plot.grab())
        self._say("Copied the plot as an image")

    def save_plot(self, plot: pg.GraphicsView, path: str | Path, scale: int = 1) -> None:
        export_plot(plot, path, scale)
        self._say(f"Saved the plot to {Path(path).name}")

    def _plot_dialog(self, plot: pg.GraphicsView, scale: int) -> None:
        kind = "SVG (*.svg)" if scale == 0 else "PNG (*.png)"
        name = "plot.svg" if scale == 0 else f"plot@{scale}x.png"
        path, _ = QFileDialog.getSaveFileName(self.host.widget, "Export plot", name, kind)
        if path:
            self._try(lambda: self.save_plot(plot, path, max(scale, 1)))

    # -- rows ------------------------------------------------------------------------------------
    def selected_rows(self) -> np.ndarray:
        model, ids = self.state.model, self.state.selection
        if model is None or not ids:
            raise ExplorerError("select tokens first: their rows are what is exported")
        return np.asarray(model.vectors(ids), dtype=np.float32)  # a few rows: GUI thread is fine

    def save_rows(self, path: str | Path) -> None:
        rows = self.selected_rows()
        np.save(Path(path), rows, allow_pickle=False)
        self._say(f"Saved {len(rows)} rows ({rows.shape[1]} values each) to {Path(path).name}")

    def copy_rows(self) -> None:
        try:
            rows = self.selected_rows()
        except ExplorerError as e:
            self._say(str(e))
            return
        ids = self.state.selection
        pairs = zip(ids, rows, strict=True)
        lines = ["\t".join([str(i), *(repr(float(v)) for v in r)]) for i, r in pairs]
        QGuiApplication.clipboard().setText("\n".join(lines) + "\n")
        self._say(f"Copied {len(rows)} rows (id, then {rows.shape[1]} values, tab-separated)")

    def rows_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.host.widget, "Export rows", "rows.npy", "NumPy (*.npy)"
        )
        if path:
            self._try(lambda: self.save_rows(path))

    def _try(self, work) -> None:
        try:
            work()
        except (ExplorerError, OSError) as e:
            self.host.show_error(f"Export failed: {e}")


def install(host: Host, state: AppState) -> Exports:
    """Install last: it adds menus to the tables and plots the other features built."""
    return Exports(host, state)
