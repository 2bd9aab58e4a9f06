"""Find any token by text or '#id', with completion over the whole vocabulary."""

from __future__ import annotations

import re

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QApplication, QCompleter, QLineEdit, QWidget

from explorer.app.controllers.tokens import VocabularyController
from explorer.app.state import AppState
from explorer.core.tokenizer.vocab_index import Match

SEP = "\u2003 #"  # between label and id in a suggestion
# more than one token: a phrase, a quoted term or an expression such as "king - man + woman"
QUERY_SYNTAX = re.compile(r"""\S\s+\S|["']""")


def suggestion_text(m: Match) -> str:
    return f"{m.label}{SEP}{m.id}"


def id_of_suggestion(text: str) -> int | None:
    _, sep, tail = text.rpartition(SEP)
    return int(tail) if sep and tail.isdigit() else None


class TokenSearch(QLineEdit):
    """Type a token ('cat', '␣cat', '##ing') or an id ('#4937'); Enter or a suggestion selects.
    A phrase or an expression ('king - man + woman', as in the CLI) asks for its neighbours."""

    queryEntered = Signal(str)  # text in the neighbours query language
    tokenFound = Signal(object)  # the id of the token found (also when already selected)

    def __init__(
        self,
        state: AppState,
        vocabulary: VocabularyController | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.state = state
        self.vocabulary = vocabulary if vocabulary is not None else VocabularyController(state)
        self.matches: list[Match] = []
        self.setPlaceholderText("Find: token, #id, phrase, king - man + woman  (Ctrl+F)")
        self.setToolTip(
            "Find any token of the vocabulary by its text or by id (#123).\n"
            "Enter selects it; Ctrl+Enter adds it to the selection.\n"
            "A phrase ('the cat') or an expression ('king - man + woman', '#12 + \"a b\"')\n"
            "shows its nearest neighbours, as the CLI's `neighbors` does."
        )
        self.setClearButtonEnabled(True)
        self.setMinimumWidth(240)
        self.setMaximumWidth(380)
        self.suggestion_list = QStringListModel(self)
        self.completer_ = QCompleter(self.suggestion_list, self)
        self.completer_.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer_.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer_.setMaxVisibleItems(14)
        self.completer_.setWidget(self)
        self.completer_.activated[str].connect(self._activated)  # type: ignore[index]
        self.textEdited.connect(self._suggest)
        self.textEdited.connect(lambda _text: self.vocabulary.forget_find())
        self.returnPressed.connect(self._enter)
        self.vocabulary.indexCleared.connect(self._index_cleared)
        self.vocabulary.indexReady.connect(self._index_ready)
        state.selectionChanged.connect(lambda _ids: self.clear())  # _select sets its own text

    def _popup(self) -> QAbstractItemView:
        popup = self.completer_.popup()
        assert popup is not None  # QCompleter always has one
        return popup

    def _index_cleared(self) -> None:
        self.matches = []
        self.suggestion_list.setStringList([])

    def _index_ready(self) -> None:
        if self.text():
            self._suggest(self.text())

    def suggestions(self, text: str) -> list[Match]:
        return self.vocabulary.suggestions(text)

    def _suggest(self, text: str) -> None:
        self.matches = self.suggestions(text)
        self.suggestion_list.setStringList([suggestion_text(m) for m in self.matches])
        if self.matches and self.hasFocus():
            self.completer_.complete()
        else:
            self._popup().hide()

    def _activated(self, text: str) -> None:
        token_id = id_of_suggestion(text)
        if token_id is not None:
            self._select(token_id)

    def _enter(self) -> None:
        add = bool(QApplication.keyboardModifiers() & Qt.KeyboardModifier.ControlModifier)
        popup = self._popup()
        if popup.isVisible() and popup.currentIndex().isValid():
            token_id = id_of_suggestion(str(popup.currentIndex().data()))
            if token_id is not None:
                self._select(token_id, add=add)
                return
        text = self.text().strip()
        if not text or self.state.model is None:
            return
        if QUERY_SYNTAX.search(text):
            self._query(text)
            return
        self.vocabulary.find(text, lambda token_id: self._found(text, token_id, add))

    def _found(self, text: str, token_id: int | None, add: bool) -> None:
        if token_id is not None:
            self._select(token_id, add=add)
        elif self.matches:  # not one token as typed: take the best suggestion
            self._select(self.matches[0].id, add=add)
        else:  # e.g. a word of several tokens: the neighbours of their mean
            self._query(text)

    def _query(self, text: str) -> None:
        self._popup().hide()
        self.queryEntered.emit(text)

    def _select(self, token_id: int, add: bool = False) -> None:
        self._popup().hide()
        self.state.select([token_id], add=add)
        self.tokenFound.emit(token_id)
        if self.state.model is not None:
            self.setText(self.state.model.label(token_id))
