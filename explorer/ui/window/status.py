"""Status bar: the current job, a progress bar for long jobs, and a Cancel button."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStatusBar, QToolButton, QWidget

from explorer.app.jobs import Jobs
from explorer.ui.widgets.job_progress import JobProgressBar

SHOW_AFTER_MS = 300  # quick jobs (a row lookup) never flash a progress bar
LABEL_WIDTH = 240


class JobStatus(QWidget):
    """Permanent widget on the right of the status bar."""

    def __init__(self, jobs: Jobs, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.label = QLabel()
        self.label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.bar = JobProgressBar()
        self.bar.setFixedWidth(160)
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        self.cancel = QToolButton()
        self.cancel.setText("Cancel")
        self.cancel.setToolTip("Cancel the running jobs (Esc)")
        self.cancel.clicked.connect(jobs.cancel_all)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel)
        # Showing or hiding the job must never re-lay out the window (that repaints every plot):
        # hidden parts keep their space, and the widget has a fixed size.
        for w in (self.label, self.bar, self.cancel):
            policy = w.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            w.setSizePolicy(policy)
        self.label.setFixedWidth(LABEL_WIDTH)
        height = max(self.cancel.sizeHint().height(), self.bar.sizeHint().height())
        self.setFixedSize(self.sizeHint().width(), height)  # fixed: a new text stops here
        self._reveal = QTimer(self)
        self._reveal.setSingleShot(True)
        self._reveal.setInterval(SHOW_AFTER_MS)
        self._reveal.timeout.connect(self._refresh)
        # several jobs start or report in one turn of the event loop (8 as a model opens): the
        # label is made once for all of them, a turn later
        self._coalesce = QTimer(self)
        self._coalesce.setSingleShot(True)
        self._coalesce.setInterval(0)
        self._coalesce.timeout.connect(self._refresh)
        jobs.activity.connect(self._activity)
        self._set_visible(False)

    def _set_visible(self, on: bool) -> None:
        for w in (self.label, self.bar, self.cancel):
            w.setVisible(on)

    def _activity(self, label: str, fraction: float) -> None:
        if not label:
            self._reveal.stop()
            self._set_visible(False)
            return
        if self.label.isVisible():
            self._coalesce.start()
        elif not self._reveal.isActive():
            self._reveal.start()

    def _refresh(self) -> None:
        current = self.jobs.current()
        if current is None:
            self._set_visible(False)
            return
        label, fraction = current
        self.label.setText(
            self.label.fontMetrics().elidedText(label, Qt.TextElideMode.ElideRight, LABEL_WIDTH)
        )
        if self.label.toolTip() != label:  # each call sends an event, and relays out the label
            self.label.setToolTip(label)
        if fraction < 0:
            self.bar.setRange(0, 0)  # busy indicator
        else:
            self.bar.set_fraction(fraction)
        self._set_visible(True)


def make_status_bar(jobs: Jobs) -> tuple[QStatusBar, JobStatus]:
    bar = QStatusBar()
    status = JobStatus(jobs)
    bar.addPermanentWidget(status)
    return bar, status
