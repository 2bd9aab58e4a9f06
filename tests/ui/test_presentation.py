"""Presentation mode: F5 in, Esc out; full screen, only the view, 18 pt and more everywhere."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QDockWidget, QWidget
from ui.helpers import open_window

from explorer.ui.window.main_window import MainWindow


def idle(qtbot, window: MainWindow, timeout: int = 30000) -> None:
    qtbot.waitUntil(lambda: not window.pending, timeout=timeout)


@pytest.fixture
def window(qtbot, tiny_model, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = open_window(qtbot, tiny_model[0], settings=settings, persist=False)
    yield win
    win.presenter.leave()


def shown_widgets(root: QWidget) -> list[QWidget]:
    return [w for w in root.findChildren(QWidget) if w.isVisible()]


def small_fonts(window: MainWindow) -> list[str]:
    """Visible widgets, table cells and plot axes whose type is under 18 pt."""
    bad = []
    for w in shown_widgets(window.centre.currentWidget()):
        if w.font().pointSizeF() < 18:
            bad.append(f"{type(w).__name__} {w.font().pointSizeF()}")
        model = getattr(w, "model", lambda: None)() if hasattr(w, "viewport") else None
        if model is not None and hasattr(model, "rowCount") and model.rowCount():
            for col in range(model.columnCount()):
                font = model.index(0, col).data(Qt.ItemDataRole.FontRole)
                if font is not None and font.pointSizeF() < 18:
                    bad.append(f"{type(w).__name__} cell {col}: {font.pointSizeF()}")
    for view in window.centre.currentWidget().findChildren(pg.GraphicsView):
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem) and item.isVisible():
                font = item.style.get("tickFont")
                if font is None or font.pointSizeF() < 18:
                    bad.append("axis ticks")
    return bad


def test_f5_presents_the_view_alone_in_large_type_and_esc_restores(qtbot, window):
    qtbot.keyClicks(window.token_pane.editor, "abc")
    idle(qtbot, window)
    window.state.select([1, 2])
    idle(qtbot, window)
    palette = QApplication.palette().color(QApplication.palette().ColorRole.Window)
    assert small_fonts(window)  # the normal window does use small type

    qtbot.keyClick(window, Qt.Key.Key_F5)
    idle(qtbot, window)
    assert window.presenter.active
    assert window.windowState() & Qt.WindowState.WindowFullScreen
    assert not any(d.isVisible() for d in window.findChildren(QDockWidget))
    assert not window.menuBar().isVisible() and not window.statusBar().isVisible()
    assert window.centre.currentWidget().isVisible()
    assert small_fonts(window) == []
    pal = QApplication.palette()
    assert pal.color(pal.ColorRole.Base).name() == "#ffffff"
    assert pal.color(pal.ColorRole.Text).name() == "#000000"

    window.presenter.set_dark(True)
    pal = QApplication.palette()
    assert pal.color(pal.ColorRole.Base).name() == "#000000"
    assert pal.color(pal.ColorRole.Text).name() == "#ffffff"

    qtbot.keyClick(window, Qt.Key.Key_Escape)
    idle(qtbot, window)
    assert not window.presenter.active
    assert not window.windowState() & Qt.WindowState.WindowFullScreen
    assert window.model.dock.isVisible() and window.menuBar().isVisible()
    assert QApplication.palette().color(QApplication.palette().ColorRole.Window) == palette
    assert small_fonts(window)  # back to normal size


def test_presenting_the_map_keeps_points_large(qtbot, window):
    window.centre.setCurrentIndex(1)
    scatter = window.map_pane.view.scatter
    before = scatter.opts["size"]
    window.presenter.enter()
    assert scatter.opts["size"] > before * 1.5
    window.presenter.leave()
    assert scatter.opts["size"] == before


def test_map_labels_grow_and_shrink_back(qtbot, window):
    labels = window.map_pane.view._labels
    small = labels.font.pixelSize()
    window.presenter.enter(dark=True)
    assert labels.font.pixelSize() >= 24 > small
    window.presenter.leave()
    assert labels.font.pixelSize() == small
