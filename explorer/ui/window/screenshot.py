"""`gui --screenshot`: show the window at a chosen size and tab, let every job finish (or stop
in the middle of a map), save a PNG of the whole window."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QThread

from explorer.ui.window.main_window import MainWindow

DEFAULT_SIZE = (1280, 800)
TIMEOUT_MS = 120_000


@dataclass(frozen=True)
class Shot:
    out: str
    size: tuple[int, int] = DEFAULT_SIZE
    tab: str | None = None  # a centre tab's name, e.g. "map", "statistics"
    map_stage: str | None = None  # "running" or "done" (cli/gui.py MAP_STAGES): press Map


VIEWER_TABS = ["overview", "values", "cosine"]  # the Embedding tab's own tabs


def _show_tab(window: MainWindow, tab: str) -> bool:
    names = window.host.tab_keys()
    if tab in names:
        window.centre.setCurrentIndex(names.index(tab))
        return True
    if tab in VIEWER_TABS:
        window.centre.setCurrentIndex(names.index("embedding"))
        window.viewer.tabs.setCurrentIndex(VIEWER_TABS.index(tab))
        return True
    return False


def _settle(app: QCoreApplication, window: MainWindow, clock: QElapsedTimer, until=None) -> bool:
    """Run the event loop until nothing is pending (or `until()` is true); False on time-out."""
    quiet = 0  # consecutive idle passes: results may start follow-up jobs
    while clock.elapsed() < TIMEOUT_MS:
        app.processEvents()
        if until is not None:
            if until():
                return True
            QThread.msleep(5)
        elif window.pending:
            quiet = 0
            QThread.msleep(5)
        else:
            quiet += 1
            if quiet >= 3:
                return True
    return False


def take(app: QCoreApplication, window: MainWindow, shot: Shot) -> str | None:
    """Save the PNG; None when done, else why not (one line)."""
    window.resize(*shot.size)
    window.show()
    clock = QElapsedTimer()
    clock.start()
    tab = shot.tab or ("map" if shot.map_stage else None)
    if tab is not None and not _show_tab(window, tab.lower()):
        window.close()
        names = window.host.tab_keys() + VIEWER_TABS
        return f"--tab {tab!r}: no such tab (one of: {', '.join(names)})"
    _settle(app, window, clock)
    if tab is not None and tab.lower() in VIEWER_TABS:  # enabled once the rows are shown
        _show_tab(window, tab.lower())
        if window.viewer.tabs.currentIndex() != VIEWER_TABS.index(tab.lower()):
            window.close()
            return f"--tab {tab}: not shown for this selection (cosine needs two or more tokens)"
        _settle(app, window, clock)
    if shot.map_stage is not None:
        error = _press_map(app, window, clock, shot.map_stage)
        if error:
            window.close()
            return error
    else:
        _settle(app, window, clock)
    if (window.width(), window.height()) != shot.size:  # the content asked for more room
        sys.stderr.write(
            f"note: the window is {window.width()}x{window.height()}, not "
            f"{shot.size[0]}x{shot.size[1]}: its content does not fit the size asked for\n"
        )
    ok = window.grab().save(shot.out)
    window.jobs.cancel_all()
    window.close()
    return None if ok else f"{shot.out}: cannot write the PNG"


def _press_map(app: QCoreApplication, window: MainWindow, clock: QElapsedTimer, stage: str) -> str:
    pane = window.map_pane
    shown: list[bool] = []
    pane.mapShown.connect(shown.append)
    failed: list[str] = []
    pane.controller.failed.connect(lambda e: failed.append(str(e)))
    pane.request_map()
    if not pane.controller.running and not shown:
        return f"cannot map: {pane.title.text()}"
    if stage == "running":  # the preview is shown, UMAP's epochs are counting
        reached = _settle(
            app,
            window,
            clock,
            until=lambda: (
                bool(failed) or (shown == [False] and "epoch" in pane.progress.toolTip().lower())
            ),
        )
        if not reached or not shown:
            return "the map finished or failed before its UMAP epochs could be seen"
    else:
        _settle(app, window, clock, until=lambda: bool(failed) or True in shown)
        _settle(app, window, clock)
    return f"the map failed: {failed[0]}" if failed else ""
