"""Driving the real window from a bench script: open it as the app does, run its event loop
until something holds."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path


def wait_until(app, cond: Callable[[], bool], timeout: float) -> None:
    """Process the window's events, a millisecond apart, until `cond()` holds; TimeoutError
    after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.001)


def open_window(
    settings_file: Path,
    persist: bool,
    size: tuple[int, int] = (1280, 800),
    state=None,
    warm_up: bool = True,
):
    """(app, window): the app's main window (of `state`, or a new one), shown at `size`, set up
    as `embedding-explorer gui` sets it up (theme, quiet offscreen warnings, process tuning,
    warm-up), with its settings in `settings_file`. persist=True also keeps the fast neighbour
    index (built in a child process) as for a user."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from explorer.app import tuning
    from explorer.app.state import AppState
    from explorer.ui.widgets.style import apply_theme
    from explorer.ui.window.launch import quiet_offscreen_warnings
    from explorer.ui.window.main_window import MainWindow

    quiet_offscreen_warnings()
    apply_theme(app)
    tuning.tune_process()
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    window = MainWindow(state or AppState(), settings, persist=persist, warm_up=warm_up)
    window.resize(*size)
    window.show()
    return app, window


def pending_besides(window, *lanes) -> bool:
    """`window.pending` leaving out the jobs of these lanes: a job of another lane running, a
    result undelivered, typed text not yet sent, map labels not yet placed."""
    return (
        window.jobs.busy_besides(*lanes)
        or window.token_pane.pending
        or window.neighbors.pending
        or window.state.loading is not None
        or window.map_pane.view.labels_pending
    )
