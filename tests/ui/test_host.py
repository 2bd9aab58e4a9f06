"""The Host that features install through: tabs with their shortcut, menu sections in a fixed
order whatever the install order, view-state parts for sessions and slides, pending checks."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget

from explorer.app.state import AppState
from explorer.ui.host import Host


def make_host(qtbot) -> tuple[QMainWindow, Host, AppState]:
    window = QMainWindow()
    qtbot.addWidget(window)
    centre = QTabWidget()
    window.setCentralWidget(centre)
    state = AppState(parent=window)
    return window, Host(window, centre, state, QSettings(), persist=False), state


def visible(host: Host, menu: str) -> list[str]:
    return [a.text() for a in host.menu(menu).actions() if a.isVisible() and a.text()]


def test_a_feature_adds_a_tab_with_its_shortcut_and_view_entry(qtbot):
    window, host, state = make_host(qtbot)
    first, norm = QLabel("first"), QLabel("norm")
    host.add_tab(first, "First", "the first tab")
    host.add_tab(norm, "Norm", "the L2 norm of the selected row")
    shown = []
    host.tabChanged.connect(shown.append)
    assert host.tab_keys() == ["first", "norm"]
    assert "(Ctrl+2)" in host.centre.tabToolTip(1)
    entry = next(a for a in host.menu("view").actions() if a.text() == "&Norm")
    assert entry.shortcut().toString() == "Ctrl+2"
    entry.trigger()
    assert host.current_tab() is norm and shown == [norm]


def test_menu_sections_keep_their_order_whatever_the_install_order(qtbot):
    _, host, _ = make_host(qtbot)
    host.add_action("file", "quit", "Quit")
    host.add_action("file", "export", "Export")
    host.add_action("file", "open", "Open")
    host.add_action("file", "session", "Save session")
    host.add_action("file", "open", "Open file")
    assert visible(host, "file") == ["Open", "Open file", "Save session", "Export", "Quit"]


def test_view_state_parts_are_captured_and_applied_in_their_order(qtbot):
    _, host, _ = make_host(qtbot)
    host.add_tab(QLabel(), "Embedding", "rows")
    host.add_tab(QLabel(), "Map", "map")
    applied = []
    store = {"k": 10}
    host.add_view_state("k", lambda: store["k"], lambda v: applied.append(("k", v)))
    host.add_view_state("deck", lambda: ["slide"], lambda v: applied.append(("deck", v)), False)
    assert host.capture_view() == {"tab": "embedding", "k": 10, "deck": ["slide"]}
    assert host.capture_view(slide=True) == {"tab": "embedding", "k": 10}
    host.apply_view({"deck": [], "k": 20, "tab": "map"})  # the registered order, not the dict's
    assert applied == [("k", 20), ("deck", [])]
    assert host.tab_keys()[host.centre.currentIndex()] == "map"
    host.apply_view({"unknown": 1})  # a part no feature registered is ignored
    assert len(applied) == 2


def test_pending_asks_every_registered_check(qtbot):
    _, host, _ = make_host(qtbot)
    waiting = [False]
    host.add_pending(lambda: waiting[0])
    assert not host.pending
    waiting[0] = True
    assert host.pending
