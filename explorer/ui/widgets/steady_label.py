"""A label whose size does not follow its text, so that a new text re-lays out nothing."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QWidget


class SteadyLabel(QLabel):
    """A one-line label as large as `template` in its own font, whatever shorter text it shows.

    A label whose size may change asks its parent's layout to run again on every setText: on a
    card of numbers that change with each click, that re-laid out the whole card each time. A
    fixed size stops the request at the label. A longer text than the template widens it for
    good; a font change measures again.
    """

    def __init__(self, template: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.template = template
        self._room = 0  # the template's width in the current font
        self._fit()

    def setText(self, text: str) -> None:
        # while wrapping the label follows its text: the template stays the unwrapped one
        wider = not self.wordWrap() and self.fontMetrics().horizontalAdvance(text) > self._room
        super().setText(text)
        if wider:
            self.template = text
            self._fit()

    def setWordWrap(self, on: bool) -> None:
        """Wrapping (presentation mode's large type) lets the label follow its text again: a
        fixed size would overlap its neighbours where the window is too narrow for it."""
        super().setWordWrap(on)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit()

    def _fit(self) -> None:
        shown = self.text()
        self.setMinimumSize(0, 0)
        self.setMaximumSize(16777215, 16777215)
        if self.wordWrap():
            return
        super().setText(self.template)
        size = self.sizeHint()
        super().setText(shown)
        self._room = self.fontMetrics().horizontalAdvance(self.template)
        self.setFixedSize(size)
