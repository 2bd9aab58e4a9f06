"""Wiring of the two-model view into the main window: the Compare tab, File › Compare With…,
and the controller active only while the tab is shown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from explorer.app.controllers.compare import CompareController
from explorer.ui.compare.view import CompareView
from explorer.ui.view_tabs import add_view_tab

if TYPE_CHECKING:
    from explorer.ui.window.main_window import MainWindow

OTHER_FILTER = "Models (*.safetensors *.gguf *.json);;All files (*)"


def wire(c: CompareController, v: CompareView) -> None:
    c.pairStarted.connect(v.show_started)
    c.pairReady.connect(v.show_pair)
    c.pairCleared.connect(v.clear)
    c.progress.connect(v.set_progress)
    c.busyChanged.connect(v.set_busy)
    c.tokenReady.connect(v.show_token)
    c.tokenCleared.connect(v.clear_token)
    c.tokenFailed.connect(v.show_token_error)
    c.overlapReady.connect(v.show_overlap)
    c.cleared.connect(v.clear)
    c.failed.connect(v.show_error)
    v.cancelRequested.connect(c.cancel)
    v.closeRequested.connect(lambda: c.set_other(None))
    v.kChanged.connect(c.set_k)
    v.pointsChanged.connect(c.set_points)


class CompareTab:
    """Owns the comparison controller and view of one window."""

    def __init__(self, window: MainWindow, after: QAction):
        self.window = window
        self.controller = CompareController(window.state)
        self.view = CompareView()
        wire(self.controller, self.view)
        self.view.compareRequested.connect(self.open_dialog)
        self.view.tokenActivated.connect(lambda i: window.state.select([int(i)]))
        add_view_tab(
            window,
            self.view,
            "Compare",
            "Two models side by side: neighbours, maps, overlap",
            menu_text="Co&mpare",
        )
        self.action = QAction("Compare &with…", window)
        self.action.setToolTip("Open a second model beside this one (Compare tab)")
        self.action.triggered.connect(self.open_dialog)
        menu = window.file_menu
        actions = menu.actions()
        at = actions.index(after) + 1 if after in actions else len(actions)
        if at < len(actions):
            menu.insertAction(actions[at], self.action)
        else:
            menu.addAction(self.action)
        window.centre.currentChanged.connect(self._tab_changed)
        self._tab_changed()

    def _tab_changed(self, *_args) -> None:
        self.controller.set_active(self.window.centre.currentWidget() is self.view)

    def open_dialog(self) -> None:
        start = str(self.window.state.model.path.parent) if self.window.state.model else ""
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Compare with a second model", start, OTHER_FILTER
        )
        if path:
            self.compare_with(path)

    def compare_with(self, path: str | Path | None, tensor: str | None = None) -> None:
        """Show the Compare tab with `path` as the second model (None: stop comparing)."""
        self.controller.set_other(path, tensor)
        if path is not None:
            self.window.centre.setCurrentWidget(self.view)

    @property
    def other(self) -> dict | None:
        """B as a session stores it."""
        if self.controller.other is None:
            return None
        path, tensor = self.controller.other
        return {"path": str(Path(path).resolve()), "tensor": tensor}
