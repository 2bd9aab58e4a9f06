"""Tokenizer pane: a text box tokenized as you type, the tokens as chips, counts."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from explorer.app.state import AppState
from explorer.core.tokenizer.text import Token
from explorer.ui.tokens.chips import TokenChips

DEBOUNCE_MS = 150
PLACEHOLDER = "Type or paste text here, e.g. The cat sat on the mat"


class TokenPane(QWidget):
    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state

        self.editor = QPlainTextEdit()
        self.editor.setPlaceholderText(PLACEHOLDER)
        self.editor.setToolTip("Text to tokenize (Ctrl+L). It is tokenized as you type.")
        line = QFontMetrics(self.editor.font()).lineSpacing()
        self.editor.setMinimumHeight(line * 3 + 12)
        self.editor.setMaximumHeight(line * 6 + 12)
        self.editor.textChanged.connect(self._text_edited)

        self.special = QCheckBox("Special tokens")
        self.special.setToolTip(
            "Add the tokenizer's special tokens ([CLS], <bos>, …) as the model would see them"
        )
        self.special.toggled.connect(state.set_special)
        self.counts = QLabel()
        self.counts.setForegroundRole(self.counts.foregroundRole())
        self.counts.setTextFormat(Qt.TextFormat.PlainText)
        self.counts.setWordWrap(True)  # a narrow dock wraps the counts instead of widening
        self.counts.setMinimumWidth(120)

        self.chips = TokenChips()
        self.chips.tokenClicked.connect(self._clicked)
        self.chips.setToolTip("")
        self.chips_scroll = QScrollArea()
        self.chips_scroll.setWidgetResizable(True)
        self.chips_scroll.setWidget(self.chips)
        self.chips_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.chips_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.hint = QLabel("Click a token to see its embedding; Ctrl+click to compare several.")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(placeholder-text);")

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.counts, 1)
        bar.addWidget(self.special)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.editor)
        layout.addLayout(bar)
        layout.addWidget(self.chips_scroll, 1)
        layout.addWidget(self.hint)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._commit)

        state.tokensChanged.connect(self._show_tokens)
        state.selectionChanged.connect(self.chips.set_selected)
        state.textChanged.connect(self._text_from_state)
        state.specialChanged.connect(self.special.setChecked)
        state.modelChanged.connect(self._model_changed)
        self._show_tokens(state.tokens)

    @property
    def pending(self) -> bool:
        """Typed text not yet handed to the state (the debounce timer is running)."""
        return self._debounce.isActive()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        self._commit()

    def _text_edited(self) -> None:
        self._debounce.start()

    def _commit(self) -> None:
        self._debounce.stop()
        self.state.set_text(self.editor.toPlainText())

    def _text_from_state(self, text: str) -> None:
        if text != self.editor.toPlainText():
            self.editor.blockSignals(True)
            self.editor.setPlainText(text)
            self.editor.blockSignals(False)

    def _model_changed(self, model) -> None:
        has_tok = model.tokenizer is not None
        self.editor.setEnabled(has_tok)
        self.special.setEnabled(has_tok)
        self.editor.setPlaceholderText(
            PLACEHOLDER if has_tok else "This model has no tokenizer.json: find rows by id (#123)"
        )

    def _show_tokens(self, tokens: Sequence[Token]) -> None:
        self.chips.set_tokens(tokens)
        self.chips.set_selected(self.state.selection)
        chars = len(self.state.text)
        n = len(tokens)
        if n:
            ratio = f"{chars / n:.2f} characters per token".replace(" ", "\u00a0")
            # a narrow dock wraps before the ratio, never inside it
            self.counts.setText(
                f"{n:,} token{'s' if n != 1 else ''} · {chars:,} characters · {ratio}"
            )
        else:
            self.counts.setText("")

    def _clicked(self, token_id: int, add: bool) -> None:
        self.state.select([token_id], add=add)
