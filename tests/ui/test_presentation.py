"""Presentation mode: F5 in, Esc out; full screen, only the view, 18 pt and more everywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDockWidget

from tests.support.ui import idle, small_fonts


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
