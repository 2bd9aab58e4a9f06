"""A progress bar fed by a job's (text, fraction) progress signal, as the tab views show it."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QProgressBar, QWidget

STEPS = 1000  # fraction 0..1 shown in tenths of a percent


class JobProgressBar(QProgressBar):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setRange(0, STEPS)

    def show_progress(self, text: str, fraction: float) -> None:
        """The job's text and fraction; a negative fraction (no estimate) changes nothing."""
        if fraction >= 0:
            self.setFormat(f"{escape(text) or 'Working'} %p%")
            self.setValue(int(fraction * STEPS))
