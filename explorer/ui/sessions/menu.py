"""File › sessions and the Slides menu: saving and opening sessions, slides and their export.

MainWindow builds one `SessionMenus` and hands it its File menu; everything else is here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QMenu

from explorer.app.controllers.session import SessionController, recent_sessions
from explorer.app.controllers.slides import SlideDeck
from explorer.app.jobs import error_message
from explorer.core.errors import ExplorerError
from explorer.core.session import LoadedSession
from explorer.ui.sessions import view_state
from explorer.ui.slides import export as slides_export
from explorer.ui.widgets.recent_paths import add_path_actions

if TYPE_CHECKING:
    from explorer.ui.window.main_window import MainWindow

SESSION_FILTER = "Embedding Explorer session (*.eesession.json *.json);;All files (*)"


class SessionMenus(QObject):
    def __init__(self, window: MainWindow, file_menu: QMenu, before: QAction):
        super().__init__(window)
        self.window = window
        self.controller = SessionController(window.state, window.settings)
        self.deck = SlideDeck(self)
        self._pending_selection: list[int] | None = None  # for a model opened later
        self._file_actions(file_menu, before)
        self._slide_actions()
        self.controller.loaded.connect(self.show_session)
        self.controller.failed.connect(lambda e: window.show_error(error_message(e)))
        self.controller.recentChanged.connect(self._rebuild_recent)
        self.deck.current.connect(self._show_slide)
        window.state.modelChanged.connect(self._model_changed)
        window.presenter.activeChanged.connect(self._presenting)

    def _action(self, menu: QMenu, text: str, slot, keys: str | None = None) -> QAction:
        action = QAction(text, self.window)
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _file_actions(self, file_menu: QMenu, before: QAction) -> None:
        menu = QMenu(file_menu)  # actions are built here, then moved into the File menu
        self._action(menu, "Open &session…", self.open_dialog)
        self.recent_menu = QMenu("Recent sess&ions", self.window)
        self._action(menu, "Sa&ve session", self.save, "Ctrl+S")
        self._action(menu, "Save session &as…", self.save_dialog, "Ctrl+Shift+S")
        actions = menu.actions()
        file_menu.insertActions(before, actions[:1])
        file_menu.insertMenu(before, self.recent_menu)
        file_menu.insertActions(before, actions[1:])
        file_menu.insertSeparator(before)
        self._rebuild_recent()

    def _slide_actions(self) -> None:
        bar = self.window.menuBar()
        menu = QMenu("&Slides", bar)
        bar.insertMenu(bar.actions()[-1], menu)  # before Help
        self._action(menu, "&Save view as slide", self.add_slide, "Ctrl+B")
        self._action(menu, "&Next slide", lambda: self.deck.step(1))
        self._action(menu, "&Previous slide", lambda: self.deck.step(-1))
        menu.addSeparator()
        self._action(menu, "Export slides as P&NG…", self.export_png_dialog)
        self._action(menu, "Export slides as P&DF…", self.export_pdf_dialog)
        self._action(menu, "&Clear slides", self.deck.clear)
        self.arrows = []
        for key, delta in (
            (Qt.Key.Key_Right, 1),
            (Qt.Key.Key_Down, 1),
            (Qt.Key.Key_PageDown, 1),
            (Qt.Key.Key_Left, -1),
            (Qt.Key.Key_Up, -1),
            (Qt.Key.Key_PageUp, -1),
        ):
            shortcut = QShortcut(QKeySequence(key), self.window)
            shortcut.setEnabled(False)  # only while presenting: tables and text need arrows
            shortcut.activated.connect(lambda d=delta: self.deck.step(d))
            self.arrows.append(shortcut)

    # -- sessions --------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a session", "", SESSION_FILTER)
        if path:
            self.controller.open(path)

    def save(self) -> None:
        if self.controller.path is None:
            self.save_dialog()
        else:
            self.save_to(self.controller.path)

    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save the session", "session.eesession.json", SESSION_FILTER
        )
        if path:
            self.save_to(path)

    def save_to(self, path: str | Path) -> None:
        try:
            self.controller.save(view_state.session_of(self.window, self.deck.slides), path)
        except ExplorerError as e:
            self.window.show_error(str(e))
            return
        self.window.state.statusMessage.emit(f"Saved the session to {Path(path).name}")

    def show_session(self, loaded: LoadedSession) -> None:
        """Everything the session holds; its selection waits for a model if there is none."""
        session = loaded.session
        view = {
            "text": session.text,
            "selection": session.selection,
            "tab": session.tab,
            "neighbors": session.neighbors,
            "map": session.map,
        }
        has_model = loaded.model_status in ("ok", "changed")
        other = session.compare
        if other is not None:
            self.window.compare.controller.set_other(other["path"], other.get("tensor"))
        elif self.window.compare.controller.other is not None:
            self.window.compare.controller.set_other(None)
        view_state.apply(self.window, view, select=has_model)
        self._pending_selection = None if has_model else list(session.selection)
        self.deck.replace(session.slides)
        if loaded.message:
            self.window.show_error(loaded.message)
        else:
            self.window.state.statusMessage.emit("Opened the session")

    def _model_changed(self, _model) -> None:
        ids, self._pending_selection = self._pending_selection, None
        if ids:
            # after the state has announced the new model's empty selection
            QTimer.singleShot(0, lambda: view_state.apply(self.window, {"selection": ids}))

    def _rebuild_recent(self, items: list[str] | None = None) -> None:
        self.recent_menu.clear()
        items = recent_sessions(self.window.settings) if items is None else items
        add_path_actions(self.recent_menu, items, self.controller.open)
        self.recent_menu.setEnabled(bool(items))

    # -- slides ----------------------------------------------------------------------------------
    def add_slide(self) -> None:
        number = self.deck.add(view_state.capture(self.window))
        self.window.state.statusMessage.emit(f"Saved slide {number} of {len(self.deck)}")

    def _show_slide(self, index: int, slide: dict) -> None:
        view_state.apply(self.window, slide)
        self.window.state.statusMessage.emit(f"Slide {index + 1} of {len(self.deck)}")

    def _presenting(self, on: bool) -> None:
        for shortcut in self.arrows:
            shortcut.setEnabled(on)

    def images(self) -> list:
        before = view_state.capture(self.window)
        images = slides_export.render(
            self.deck.slides,
            lambda s: view_state.apply(self.window, s),
            lambda: self.window.pending,
            self.window.centre.currentWidget,
        )
        view_state.apply(self.window, before)
        return images

    def export_pdf(self, path: str | Path) -> None:
        slides_export.write_pdf(self.images(), path)
        self.window.state.statusMessage.emit(f"Saved {len(self.deck)} slides to {Path(path).name}")

    def export_png(self, folder: str | Path) -> list[Path]:
        paths = slides_export.write_pngs(self.images(), folder)
        self.window.state.statusMessage.emit(f"Saved {len(paths)} slide PNGs in {folder}")
        return paths

    def export_pdf_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Export slides", "slides.pdf", "PDF (*.pdf)"
        )
        if path:
            self._try(lambda: self.export_pdf(path))

    def export_png_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.window, "Export slides as PNGs into")
        if folder:
            self._try(lambda: self.export_png(folder))

    def _try(self, work) -> None:
        try:
            work()
        except (ExplorerError, OSError) as e:
            self.window.show_error(f"Export failed: {e}")
