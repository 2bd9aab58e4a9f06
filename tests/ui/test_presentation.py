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


def _settle(qtbot, window) -> None:
    for _ in range(2):
        qtbot.wait(30)
        idle(qtbot, window)


def _layout(window) -> dict[str, object]:
    """Where every shown widget is, each table's row height and every plot's range."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QTableView, QWidget

    shown = [w for w in window.findChildren(QWidget) if w.isVisible()]
    out: dict[str, object] = {
        f"{type(w).__name__} {w.objectName()} {id(w)}": w.geometry().getRect() for w in shown
    }
    for n, table in enumerate(t for t in shown if isinstance(t, QTableView)):
        out[f"rows {n}"] = table.verticalHeader().defaultSectionSize()
        columns = table.horizontalHeader()
        out[f"columns {n} {type(table).__name__}"] = [
            columns.sectionSize(i) for i in range(columns.count())
        ]
    for n, plot in enumerate(p for p in shown if isinstance(p, pg.PlotWidget)):
        out[f"range {n}"] = [tuple(round(x, 9) for x in r) for r in plot.viewRange()]
        for side in ("left", "bottom"):
            axis = plot.getPlotItem().getAxis(side)
            out[f"axis {n} {side}"] = (axis.width(), axis.height(), axis.style.get("tickFont"))
    return out


def test_esc_gives_back_exactly_the_layout_before_f5_on_every_tab(qtbot, window):
    window.state.select([1])
    idle(qtbot, window)
    for index in range(window.centre.count()):
        window.centre.setCurrentIndex(index)
        _settle(qtbot, window)  # a tab's view computes once shown
        before = _layout(window)
        window.presenter.enter(dark=True)
        _settle(qtbot, window)
        window.presenter.leave()
        _settle(qtbot, window)
        after = _layout(window)
        changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()}
        changed = {k: v for k, v in changed.items() if v[0] != v[1]}
        assert not changed, f"tab {window.centre.tabText(index)}: {sorted(changed.items())[:6]}"


def test_closing_while_presenting_saves_the_normal_layout(qtbot, make_window, tiny_model):
    win = make_window(tiny_model[0], persist=True)
    normal = (bytes(win.saveGeometry().data()), bytes(win.saveState().data()))
    win.presenter.enter()
    idle(qtbot, win)
    assert bytes(win.saveState().data()) != normal[1]  # docks hidden
    win.close()
    saved = win.settings.value("window/geometry"), win.settings.value("window/state")
    assert (bytes(saved[0].data()), bytes(saved[1].data())) == normal
