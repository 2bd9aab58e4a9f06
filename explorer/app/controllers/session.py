"""Sessions: save what the window shows to a JSON file, open one again, remember recent ones.

The file format and its validation are `explorer.core.session`; this controller reads
files in its lane (opening the session checks the model's header) and applies the model part:
the window applies the rest (ui/sessions/feature.py) once the model is open, or at once when the
model is missing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import LaneSpec
from explorer.app.settings import add_path, paths
from explorer.app.state import AppState
from explorer.core.session import LoadedSession, Session, load_session, save_session

SESSION_LANE = LaneSpec("session")  # reading a session file and checking its model

RECENT_SESSIONS_KEY = "recent/sessions"


def recent_sessions(settings: QSettings) -> list[str]:
    return paths(settings, RECENT_SESSIONS_KEY)


def add_recent_session(settings: QSettings, path: str | Path) -> list[str]:
    return add_path(settings, RECENT_SESSIONS_KEY, path)


class SessionController(FeatureController):
    LANE = SESSION_LANE
    loaded = Signal(object)  # LoadedSession, once its model (if any, and found) is current
    failed = Signal(object)  # the exception
    recentChanged = Signal(object)  # the recent sessions as just written (list[str])

    def __init__(self, state: AppState, settings: QSettings, parent: QObject | None = None):
        super().__init__(state, parent)
        self.settings = settings
        self.path: Path | None = None  # the session file last opened or saved
        self._waiting: LoadedSession | None = None  # for its model to open

    def save(self, session: Session, path: str | Path) -> None:
        save_session(session, path)
        self.path = Path(path)
        self.recentChanged.emit(add_recent_session(self.settings, path))

    def open(self, path: str | Path) -> None:
        self.lane.submit(
            load_session,
            Path(path),
            label="Opening the session…",
            on_result=lambda s: self._read(s, Path(path)),
            on_error=self.failed.emit,
        )

    def _read(self, loaded: LoadedSession, path: Path) -> None:
        self.path = path
        self.recentChanged.emit(add_recent_session(self.settings, path))
        ref, model = loaded.session.model, self.state.model
        if loaded.model_path is None or ref is None:
            self.loaded.emit(loaded)  # no model, or a missing one: show the rest at once
            return
        same = model is not None and Path(model.path).resolve() == loaded.model_path.resolve()
        if same and model is not None and (ref.tensor is None or ref.tensor == model.tensor):
            self.loaded.emit(loaded)
            return
        self._waiting = loaded
        self.state.modelFailed.connect(self._model_failed)
        self.state.open(loaded.model_path, ref.tensor)

    def model_changed(self, model) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self.state.modelFailed.disconnect(self._model_failed)
            # after the state has announced the new model's empty selection
            QTimer.singleShot(0, lambda: self.loaded.emit(waiting))

    def _model_failed(self, message: str) -> None:
        waiting, self._waiting = self._waiting, None
        self.state.modelFailed.disconnect(self._model_failed)
        if waiting is not None:
            waiting.message = f"The session's model did not open ({message}); the rest is kept."
            waiting.model_status = "missing"
            self.loaded.emit(waiting)
