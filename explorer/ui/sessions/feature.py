"""File › sessions: save what the window shows to a session file and open one again.

What a session holds comes from the parts the features registered with the host
(`Host.add_view_state`); the selection is this feature's own part: it waits for the session's
model when that is not open yet.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QFileDialog, QMenu

from explorer.app.controllers.session import SessionController, recent_sessions
from explorer.app.jobs import error_message
from explorer.app.state import AppState
from explorer.core.errors import ExplorerError
from explorer.core.session import LoadedSession, ModelRef, Session
from explorer.ui.host import Host
from explorer.ui.widgets.recent_paths import add_path_actions

SESSION_FILTER = "Embedding Explorer session (*.eesession.json *.json);;All files (*)"
VIEW_KEYS = ("text", "selection", "tab", "neighbors", "map", "slides", "compare")


class Sessions(QObject):
    def __init__(self, host: Host, state: AppState):
        super().__init__(host)
        self.host, self.state = host, state
        self.controller = SessionController(state, host.settings)
        self._model_open = True  # False while a session whose model is not open is shown
        self._pending_selection: list[int] | None = None  # for a model opened later
        host.add_action("file", "session", "Open &session…", self.open_dialog)
        self.recent_menu = host.add_menu("file", "session", QMenu("Recent sess&ions", host.widget))
        host.add_action("file", "session", "Sa&ve session", self.save, "Ctrl+S")
        host.add_action("file", "session", "Save session &as…", self.save_dialog, "Ctrl+Shift+S")
        self._rebuild_recent()
        host.add_view_state("selection", lambda: [int(i) for i in state.selection], self._select)
        self.controller.loaded.connect(self.show_session)
        self.controller.failed.connect(lambda e: host.show_error(error_message(e)))
        self.controller.recentChanged.connect(self._rebuild_recent)
        state.modelChanged.connect(self._model_changed)

    def session(self) -> Session:
        """The whole window as a Session (its model recorded with size and time)."""
        view = self.host.capture_view()
        model = self.state.model
        parts = {k: view[k] for k in VIEW_KEYS if k in view}
        return Session(model=None if model is None else ModelRef.of(model), **parts)

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.host.widget, "Open a session", "", SESSION_FILTER
        )
        if path:
            self.controller.open(path)

    def save(self) -> None:
        if self.controller.path is None:
            self.save_dialog()
        else:
            self.save_to(self.controller.path)

    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.host.widget, "Save the session", "session.eesession.json", SESSION_FILTER
        )
        if path:
            self.save_to(path)

    def save_to(self, path: str | Path) -> None:
        try:
            self.controller.save(self.session(), path)
        except ExplorerError as e:
            self.host.show_error(str(e))
            return
        self.host.say(f"Saved the session to {Path(path).name}")

    def show_session(self, loaded: LoadedSession) -> None:
        """Everything the session holds; its selection waits for a model if there is none."""
        session = loaded.session
        self._model_open = loaded.model_status in ("ok", "changed")
        self._pending_selection = None
        try:
            self.host.apply_view({k: getattr(session, k) for k in VIEW_KEYS})
        finally:
            self._model_open = True
        if loaded.message:
            self.host.show_error(loaded.message)
        elif loaded.dropped:
            more = f" (and {len(loaded.dropped) - 1} more)" if len(loaded.dropped) > 1 else ""
            self.host.say(f"Opened the session without a bad field: {loaded.dropped[0]}{more}")
        else:
            self.host.say("Opened the session")

    def _select(self, ids) -> None:
        ids = [int(i) for i in ids or []]
        if not self._model_open:
            self._pending_selection = ids
            return
        model = self.state.model
        if model is None:
            return
        ids = [i for i in ids if 0 <= i < model.rows]
        if ids != self.state.selection:
            self.state.select(ids)

    def _model_changed(self, _model) -> None:
        ids, self._pending_selection = self._pending_selection, None
        if ids:
            # after the state has announced the new model's empty selection
            QTimer.singleShot(0, lambda: self.host.apply_view({"selection": ids}))

    def _rebuild_recent(self, items: list[str] | None = None) -> None:
        self.recent_menu.clear()
        items = recent_sessions(self.host.settings) if items is None else items
        add_path_actions(self.recent_menu, items, self.controller.open)
        self.recent_menu.setEnabled(bool(items))


def install(host: Host, state: AppState) -> Sessions:
    return Sessions(host, state)
