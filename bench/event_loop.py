"""Driving the real window from a bench script: open it as the app does, run its event loop
until something holds."""

from __future__ import annotations

import sys
import tempfile
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


def window_on_model(model: str, tab: str, prefix: str):
    """(app, window): the main window (settings in a fresh temporary folder, nothing persisted)
    with `model` open and every background job done, on the viewer's "overview" or "values"
    tab."""
    app, window = open_window(Path(tempfile.mkdtemp(prefix=prefix)) / "s.ini", persist=False)
    window.open_path(model)
    wait_until(app, lambda: window.state.model is not None, 300)
    wait_until(app, lambda: window.state.levels is not None and not window.pending, 300)
    if tab == "values":
        window.viewer.tabs.setCurrentWidget(window.viewer.values)
    return app, window


def timed_click(app, window, token_id: int, add: bool = False, after_s: float = 0.1):
    """(GUI-thread CPU ms, longest turn ms) of a click on `token_id` (`add`: Ctrl+click): the
    selection call itself, then every turn of the event loop until the rows are shown and
    `after_s` seconds more (the neighbours and the paints that follow)."""
    start = time.thread_time()
    window.state.select([token_id], add=add)
    turns = [time.thread_time() - start]
    want = window.state.selection
    shown_at = None
    while shown_at is None or time.monotonic() - shown_at < after_s:
        start = time.thread_time()
        app.processEvents()
        turns.append(time.thread_time() - start)
        if shown_at is None and [r.id for r in window.viewer.rows] == want:
            shown_at = time.monotonic()
        time.sleep(0.002)
    return sum(turns) * 1000, max(turns) * 1000
