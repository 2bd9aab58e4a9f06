"""The app's progress bar: fed by a job's (text, fraction) progress signal, never painting
the window at once when its value changes, and its text on one line that fits the bar. A bar
in a pane tells the job lanes it shows (``shows``): while it is on screen the status bar does
not show those jobs a second time."""

from __future__ import annotations

from functools import partial
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from explorer.app.jobs import Jobs, LaneSpec

STEPS = 1000  # fraction 0..1 shown in tenths of a percent


class JobProgressBar(QProgressBar):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setRange(0, STEPS)
        self._lanes: tuple[Jobs, tuple[LaneSpec, ...]] | None = None

    def shows(self, jobs: Jobs, *lanes: LaneSpec) -> None:
        """This bar shows the progress of these lanes' jobs: while it is on screen (its pane
        shown, the job running) the status bar leaves them out."""
        self._lanes = (jobs, lanes)
        self._tell(self.isVisible())
        self.destroyed.connect(partial(_forget, jobs, lanes, id(self)))

    def _tell(self, on_screen: bool) -> None:
        if self._lanes is not None:
            jobs, lanes = self._lanes
            for lane in lanes:
                jobs.set_shown(lane, id(self), on_screen)

    def showEvent(self, event: QShowEvent) -> None:  # Qt naming; also when its pane appears
        super().showEvent(event)
        self._tell(True)

    def hideEvent(self, event: QHideEvent) -> None:  # also when its pane or tab goes away
        super().hideEvent(event)
        self._tell(False)

    def setValue(self, value: int) -> None:
        """QProgressBar.setValue repaints at once, and that paints every dirty widget of the
        window then and there (a plot's paint, on top of the work of the turn that reported
        progress). Here the bar waits for the next paint like any other widget."""
        self.setUpdatesEnabled(False)
        super().setValue(value)
        self.setUpdatesEnabled(True)  # (this schedules the bar's own update)

    def text(self) -> str:  # Qt naming; the style asks for it at every paint
        """The formatted text, elided to the bar's width in its font of the moment (presentation
        mode enlarges the font after the text was set): one line, never wrapped or cut."""
        full = super().text()
        room = self.contentsRect().width() - 12
        return self.fontMetrics().elidedText(full, Qt.TextElideMode.ElideRight, max(room, 0))

    def set_fraction(self, fraction: float) -> None:
        """Show `fraction` of the work done (clamped to 0..1)."""
        if self.maximum() != STEPS:  # after a busy indicator (range 0..0)
            self.setRange(0, STEPS)
        self.setValue(int(max(0.0, min(1.0, fraction)) * STEPS))

    def show_progress(self, text: str, fraction: float) -> None:
        """The job's text and fraction; a negative fraction (no estimate) changes nothing."""
        if fraction >= 0:
            self.setFormat(f"{escape(text) or 'Working'} %p%")
            self.set_fraction(fraction)


def _forget(jobs: Jobs, lanes: tuple[LaneSpec, ...], key: int, *_args) -> None:
    """A bar deleted while shown must not hide its lanes from the status bar for good."""
    for lane in lanes:
        jobs.set_shown(lane, key, False)


class BusyRow(QWidget):
    """A job's progress bar with its Cancel button, in a row that is hidden while idle."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bar = JobProgressBar()
        self.cancel = QPushButton("Cancel")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel)
        self.hide()
