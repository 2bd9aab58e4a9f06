"""Two models side by side: the Compare tab, File › Compare with…, the controller active only
while the tab is shown, and the second model in sessions."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from explorer.app.controllers.compare import CompareController
from explorer.app.state import AppState
from explorer.ui.compare.view import CompareView
from explorer.ui.host import Host

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


class Compare:
    """The comparison controller and view of one window."""

    def __init__(self, host: Host, state: AppState):
        self.host = host
        self.controller = CompareController(state)
        self.view = CompareView()
        wire(self.controller, self.view)
        self.view.compareRequested.connect(self.open_dialog)
        self.view.tokenActivated.connect(lambda i: state.select([int(i)]))
        host.add_tab(
            self.view,
            "Compare",
            "Two models side by side: neighbours, maps, overlap",
            menu_text="Co&mpare",
        )
        host.add_action(
            "file",
            "compare",
            "Compare &with…",
            self.open_dialog,
            tip="Open a second model beside this one (Compare tab)",
        )
        host.tabChanged.connect(lambda shown: self.controller.set_active(shown is self.view))
        self.controller.set_active(host.current_tab() is self.view)
        host.add_view_state("compare", lambda: self.other, self._restore, in_slides=False)

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.host.widget, "Compare with a second model", self.host.start_dir(), OTHER_FILTER
        )
        if path:
            self.compare_with(path)

    def compare_with(self, path: str | Path | None, tensor: str | None = None) -> None:
        """Show the Compare tab with `path` as the second model (None: stop comparing)."""
        self.controller.set_other(path, tensor)
        if path is not None:
            self.host.show_tab(self.view)

    def _restore(self, other) -> None:
        if other is not None:
            self.controller.set_other(other["path"], other.get("tensor"))
        elif self.controller.other is not None:
            self.controller.set_other(None)

    @property
    def other(self) -> dict | None:
        """B as a session stores it."""
        if self.controller.other is None:
            return None
        path, tensor = self.controller.other
        return {"path": str(Path(path).resolve()), "tensor": tensor}


def install(host: Host, state: AppState) -> Compare:
    return Compare(host, state)
