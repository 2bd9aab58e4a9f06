"""The app tests' fixtures (tests/support/qt.py), and main windows to test."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from explorer.app.state import AppState
from explorer.core.resources import demo_model_dir
from explorer.ui.map.pane import MapPane
from explorer.ui.map.view import MapView
from explorer.ui.window.main_window import MainWindow
from tests.support.qt import no_leaks, temp_cache, temp_settings, tiny_model, tuned_process
from tests.support.ui import idle

__all__ = ["no_leaks", "temp_cache", "temp_settings", "tiny_model", "tuned_process"]


@pytest.fixture
def make_window(qtbot, tmp_path):
    """make_window(path=None, size=(1280, 800), timeout=60000, **MainWindow keywords): a shown
    main window, on the test's settings file and without persistence unless told otherwise,
    with the model at `path` open and every job it started done. At the end every window made
    leaves presentation mode and closes its error box."""
    made: list[MainWindow] = []

    def make(path=None, size=(1280, 800), timeout: int = 60000, **kwargs) -> MainWindow:
        kwargs.setdefault(
            "settings", QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
        )
        kwargs.setdefault("persist", False)
        win = MainWindow(AppState(), **kwargs)
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        made.append(win)
        if path is not None:
            with qtbot.waitSignal(win.state.modelChanged, timeout=timeout):
                win.open_path(str(path))
            idle(qtbot, win, timeout)
        return win

    yield make
    for win in made:
        win.presenter.leave()
        if win.error_box is not None:
            win.error_box.close()


@pytest.fixture
def window(make_window, tiny_model) -> MainWindow:
    """A main window with the tiny model open."""
    return make_window(tiny_model[0])


@pytest.fixture
def make_map_pane(qtbot):
    """make_map_pane(path=demo, size=(1100, 750)): a shown Map pane on its own state, with the
    model at `path` open; its jobs are shut down at the end."""
    states: list[AppState] = []

    def make(path=None, size=(1100, 750)) -> MapPane:
        state = AppState()
        states.append(state)
        pane = MapPane(state, warm_up=False)
        qtbot.addWidget(pane)
        pane.resize(*size)
        pane.show()
        with qtbot.waitSignal(state.modelChanged, timeout=30000):
            state.open(path if path is not None else demo_model_dir())
        return pane

    yield make
    for state in states:
        state.jobs.shutdown()


@pytest.fixture
def make_map_view(qtbot):
    """make_map_view(width, height): a map view on screen, closed with the test."""

    def make(width: int = 600, height: int = 400) -> MapView:
        view = MapView()
        qtbot.addWidget(view)
        view.resize(width, height)
        view.show()
        qtbot.waitExposed(view)
        return view

    return make
