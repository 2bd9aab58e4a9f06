"""Exports from the window: a table as CSV (full precision), a plot as PNG at 2× and as SVG, the
selected rows as .npy and on the clipboard, each confirmed in the status bar."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QTableView

from explorer.ui.map.pane import MapPane


def test_every_table_and_plot_outside_the_map_has_an_export_menu(window):
    tables = window.findChildren(QTableView)
    plots = [p for p in window.findChildren(pg.GraphicsView)]
    assert len(tables) >= 8 and len(plots) >= 6
    for t in tables:
        assert t.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
    in_map = [p for p in plots if window.map_pane.isAncestorOf(p)]
    assert in_map and all(isinstance(window.map_pane, MapPane) for _ in in_map)
    for p in plots:
        custom = p.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
        assert custom != (p in in_map)


def test_neighbors_table_csv_has_the_full_scores(qtbot, window, tmp_path, tiny_model):
    _, matrix = tiny_model
    window.state.select([4])
    qtbot.waitUntil(lambda: not window.pending, timeout=60000)
    table = window.neighbors_pane.table
    path = tmp_path / "n.csv"
    window.exports.save_table(table, path)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    header, body = rows[0], rows[1:]
    assert len(body) == table.model().rowCount() > 3
    m = matrix.astype(np.float64)
    cos = m @ m[4] / (np.linalg.norm(m, axis=1) * np.linalg.norm(m[4]))
    score_col = [i for i, h in enumerate(header) if "cos" in h.lower()][0]
    id_col = [i for i, h in enumerate(header) if h.strip().lower() == "id"][0]
    for row in body:
        assert float(row[score_col]) == pytest.approx(cos[int(row[id_col])], abs=1e-5)
    assert "Saved" in window.status.currentMessage()
    window.exports.copy_table(table)
    assert QGuiApplication.clipboard().text() == path.read_text(encoding="utf-8")
    assert "Copied" in window.status.currentMessage()


def test_a_plot_exports_png_at_twice_its_size_and_svg(qtbot, window, tmp_path):
    window.state.select([4, 5])
    qtbot.waitUntil(lambda: not window.pending, timeout=60000)
    plot = [p for p in window.findChildren(pg.PlotWidget) if window.viewer.isAncestorOf(p)][0]
    one, two = tmp_path / "p1.png", tmp_path / "p2.png"
    window.exports.save_plot(plot, one, 1)
    window.exports.save_plot(plot, two, 2)
    w1, w2 = QImage(str(one)).width(), QImage(str(two)).width()
    assert w1 > 50 and w2 == pytest.approx(2 * w1, abs=2)
    svg = tmp_path / "p.svg"
    window.exports.save_plot(plot, svg)
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg") and len(list(root.iter())) > 10


def test_selected_rows_as_npy_and_on_the_clipboard(qtbot, window, tmp_path, tiny_model):
    _, matrix = tiny_model
    window.exports.copy_rows()
    assert "select tokens first" in window.status.currentMessage()
    window.state.select([5, 2])
    window.exports.save_rows(tmp_path / "r.npy")
    rows = np.load(tmp_path / "r.npy")
    np.testing.assert_array_equal(rows, matrix[[5, 2]].astype(np.float32))
    window.exports.copy_rows()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert [int(x.split("\t")[0]) for x in lines] == [5, 2]
    assert [float(v) for v in lines[0].split("\t")[1:]] == matrix[5].astype(np.float32).tolist()
    assert "Copied 2 rows" in window.status.currentMessage()
