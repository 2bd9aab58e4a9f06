"""Text and tokens: the tokenizer pane (a dock), Find token (the toolbar's search box, over the
VocabularyController's index), and the View menu's Find, Edit text and Special tokens."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget

from explorer.app.controllers.tokens import VocabularyController
from explorer.app.state import AppState
from explorer.ui.host import Host
from explorer.ui.tokens.pane import TokenPane
from explorer.ui.tokens.search import TokenSearch


@dataclass
class Tokens:
    pane: TokenPane
    dock: QDockWidget
    search: TokenSearch
    vocabulary: VocabularyController

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def focus_text(self) -> None:
        self.dock.show()
        self.pane.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)


def install(host: Host, state: AppState) -> Tokens:
    pane = TokenPane(state)
    pane.editor.setAcceptDrops(False)  # a dropped file opens it as a model
    vocabulary = VocabularyController(state)
    search = TokenSearch(state, vocabulary)
    dock = host.add_dock(pane, "Text and tokens")
    special = QAction("&Special tokens", host.widget)
    special.setCheckable(True)
    special.toggled.connect(state.set_special)
    state.specialChanged.connect(special.setChecked)
    feature = Tokens(pane, dock, search, vocabulary)
    host.add_action("view", "find", "&Find token", feature.focus_search, "Ctrl+F")
    host.add_action("view", "find", "Edit &text", feature.focus_text, "Ctrl+L")
    host.add_action("view", "options", special)
    host.add_view_state("text", lambda: state.text, lambda t: _show_text(pane, state, t))
    host.add_pending(lambda: pane.pending)
    return feature


def _show_text(pane: TokenPane, state: AppState, text) -> None:
    if (text or "") != state.text:
        pane.set_text(text or "")
