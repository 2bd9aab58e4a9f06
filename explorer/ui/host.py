"""What a feature may ask of the window: a tab, a dock, actions in named menus, the status line,
error dialogs, a part of the view state, and "is anything still pending?".

Every feature's `install(host, state)` receives a `Host`, never the window: the window composes
the features and nothing imports it back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QMessageBox, QTabWidget, QWidget

from explorer.app.state import AppState

TITLE = "Embedding Explorer"

# The menus a feature can add to, and their sections in order, in groups between separators: an
# action goes at the end of its section, so the order of a menu does not depend on the order the
# features are installed in.
MENUS: dict[str, tuple[str, list[list[str]]]] = {
    "file": (
        "&File",
        [["open", "models", "recent", "compare"], ["session"], ["export"], ["quit"]],
    ),
    "view": ("&View", [["docks"], ["tabs", "find", "options", "jobs"], ["presentation"]]),
    "slides": ("&Slides", [["slides"]]),
    "help": ("&Help", [["help"]]),
}

ViewState = tuple[Callable[[], object], Callable[[object], None], bool]


def tab_key(title: str) -> str:
    """A tab's key in sessions and `gui --tab`: its title, lower case, without the '&'."""
    return title.replace("&", "").strip().lower()


class Host(QObject):
    tabChanged = Signal(object)  # the view now shown in the centre
    presentingChanged = Signal(bool)
    titleNoteChanged = Signal(str)  # words after the model's name in the title line

    def __init__(
        self,
        window: QMainWindow,
        centre: QTabWidget,
        state: AppState,
        settings: QSettings,
        persist: bool,
        open_model: Callable[[str], None] | None = None,
    ):
        super().__init__(window)
        self.window = window
        self.centre = centre
        self.state = state
        self.settings = settings
        self.persist = persist  # False (headless screenshots): nothing is read from or saved
        self.open_model = open_model or state.open  # the window's, which says so in the status
        self._anchors: dict[tuple[str, str], QAction] = {}
        self._menus: dict[str, QMenu] = {}
        self._view_states: dict[str, ViewState] = {}
        self._pending: list[Callable[[], bool]] = [lambda: state.jobs.busy]
        self.error_box: QMessageBox | None = None
        for name, (title, groups) in MENUS.items():
            menu = window.menuBar().addMenu(title)
            self._menus[name] = menu
            for group in groups:
                for section in group:
                    anchor = menu.addAction("")  # the end of its section, never shown
                    anchor.setVisible(False)
                    self._anchors[(name, section)] = anchor
                menu.addSeparator()
        centre.currentChanged.connect(lambda _i: self.tabChanged.emit(centre.currentWidget()))
        self.add_view_state("tab", self._tab_key, self._show_tab_key)

    @property
    def widget(self) -> QWidget:
        """The parent for dialogs, and the root of every widget the features added."""
        return self.window

    # -- menus ---------------------------------------------------------------------------------
    def add_action(
        self,
        menu: str,
        section: str,
        text: str | QAction,
        slot: Callable[..., object] | None = None,
        keys: str | QKeySequence | None = None,
        tip: str | None = None,
    ) -> QAction:
        """An action at the end of `section` of `menu` (see MENUS)."""
        action = text if isinstance(text, QAction) else QAction(text, self.window)
        if slot is not None:
            action.triggered.connect(slot)
        if keys is not None:
            action.setShortcut(QKeySequence(keys))
        if tip is not None:
            action.setToolTip(tip)
        self._menus[menu].insertAction(self._anchors[(menu, section)], action)
        return action

    def add_separator(self, menu: str, section: str) -> None:
        self._menus[menu].insertSeparator(self._anchors[(menu, section)])

    def add_menu(self, menu: str, section: str, submenu: QMenu) -> QMenu:
        self._menus[menu].insertMenu(self._anchors[(menu, section)], submenu)
        return submenu

    def menu(self, name: str) -> QMenu:
        return self._menus[name]

    # -- centre tabs and docks -----------------------------------------------------------------
    def add_tab(self, view: QWidget, title: str, tip: str, menu_text: str | None = None) -> None:
        """Tab `title` in the centre, with Ctrl+N (N: its place) in View › tabs."""
        index = self.centre.addTab(view, title)
        key = f"Ctrl+{index + 1}"
        self.centre.setTabToolTip(index, f"{tip} ({key})")
        self.add_action(
            "view",
            "tabs",
            menu_text or f"&{title}",
            lambda: self.centre.setCurrentWidget(view),
            key,
        )

    def show_tab(self, view: QWidget) -> None:
        self.centre.setCurrentWidget(view)

    def current_tab(self) -> QWidget:
        return self.centre.currentWidget()

    def tab_keys(self) -> list[str]:
        return [tab_key(self.centre.tabText(i)) for i in range(self.centre.count())]

    def _tab_key(self) -> str:
        keys = self.tab_keys()
        return keys[self.centre.currentIndex()] if keys else "embedding"

    def _show_tab_key(self, key: object) -> None:
        keys = self.tab_keys()
        if key in keys:
            self.centre.setCurrentIndex(keys.index(str(key)))

    def add_dock(
        self,
        widget: QWidget,
        title: str,
        area: Qt.DockWidgetArea = Qt.DockWidgetArea.LeftDockWidgetArea,
        tabify_with: QDockWidget | None = None,
    ) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.window.addDockWidget(area, dock)
        if tabify_with is not None:
            self.window.tabifyDockWidget(tabify_with, dock)
        self.add_action("view", "docks", dock.toggleViewAction())
        return dock

    # -- messages ------------------------------------------------------------------------------
    def say(self, message: str, ms: int = 8000) -> None:
        self.window.statusBar().showMessage(message, ms)

    def show_error(self, message: str) -> None:
        self.say(message, 15000)
        if self.error_box is None:
            self.error_box = QMessageBox(QMessageBox.Icon.Warning, TITLE, "", parent=self.window)
            self.error_box.setWindowModality(Qt.WindowModality.WindowModal)
        self.error_box.setText(message)
        self.error_box.open()

    def note_title(self, note: str) -> None:
        """Words shown after the model's name in the title line ("" for none)."""
        self.titleNoteChanged.emit(note)

    def start_dir(self) -> str:
        """Where file dialogs start: beside the open model, else the home folder."""
        model = self.state.model
        return str(model.path.parent) if model is not None else str(Path.home())

    # -- what sessions and slides store ------------------------------------------------------
    def add_view_state(
        self,
        key: str,
        capture: Callable[[], object],
        apply: Callable[[object], None],
        in_slides: bool = True,
    ) -> None:
        """A part of what the window shows, stored under `key` in sessions (and in slides,
        unless `in_slides` is False: a second model or the deck belongs to the session)."""
        self._view_states[key] = (capture, apply, in_slides)

    def capture_view(self, slide: bool = False) -> dict:
        return {
            key: capture()
            for key, (capture, _apply, in_slides) in self._view_states.items()
            if in_slides or not slide
        }

    def apply_view(self, view: dict) -> None:
        """Show the parts `view` holds, in the order the features registered them."""
        for key, (_capture, apply, _in_slides) in self._view_states.items():
            if key in view:
                apply(view[key])

    # -- pending work --------------------------------------------------------------------------
    def add_pending(self, check: Callable[[], bool]) -> None:
        """Something that may still be on its way to the screen (typed text, labels, …)."""
        self._pending.append(check)

    @property
    def pending(self) -> bool:
        """Anything still to do: a job running, a result undelivered, text not yet sent, …"""
        return any(check() for check in self._pending)
