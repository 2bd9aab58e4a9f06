"""The row of buttons that drives a training run: start, pause/resume, step, stop, speed."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.ui.widgets.job_progress import JobProgressBar

# Slider position → pause between epochs (s): fastest first.
DELAYS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


class LearnControls(QWidget):
    startClicked = Signal(int, int)  # epochs, dim
    pauseClicked = Signal()
    resumeClicked = Signal()
    stepClicked = Signal()
    stopClicked = Signal()
    delayChanged = Signal(float)  # seconds between epochs
    saveFrameClicked = Signal()
    saveFramesClicked = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        row, row2 = QHBoxLayout(), QHBoxLayout()  # two rows: the tab fits a 1024 px window
        col.addLayout(row)
        col.addLayout(row2)
        self.epochs = QSpinBox(minimum=1, maximum=200, value=16, prefix="epochs ")
        self.dim = QSpinBox(minimum=2, maximum=512, value=48, prefix="dim ")
        self.start = QPushButton("Train")
        self.start.setToolTip("Train a fresh table from random numbers on the bundled corpus")
        self.pause = QPushButton("Pause")
        self.step = QPushButton("Step")
        self.step.setToolTip("While paused: train exactly one more epoch")
        self.stop = QPushButton("Stop")
        self.speed = QSlider(Qt.Orientation.Horizontal)
        self.speed.setRange(0, len(DELAYS) - 1)
        self.speed.setFixedWidth(70)
        self.speed.setToolTip("Pause between epochs: left = as fast as it trains")
        self.speed_label = QLabel()
        self.bar = JobProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(80)
        self.state = QLabel()
        self.save_frame = QPushButton("Save frame…")
        self.save_frame.setToolTip("The map as shown, as a PNG")
        self.save_frames = QPushButton("Save frames…")
        self.save_frames.setToolTip(
            "Every epoch's map as numbered PNGs, and an early–middle–late strip, into a folder"
        )
        for b in (self.save_frame, self.save_frames):
            b.setEnabled(False)
        first: list[QWidget] = [self.epochs, self.dim, self.start, self.stop]
        for w in first:
            row.addWidget(w)
        row.addWidget(self.state, 1)
        row.addWidget(self.save_frame)
        row.addWidget(self.save_frames)
        second: list[QWidget] = [self.pause, self.step, self.speed, self.speed_label, self.bar]
        for w in second:
            row2.addWidget(w)
        row2.addStretch(1)
        self.start.clicked.connect(
            lambda: self.startClicked.emit(self.epochs.value(), self.dim.value())
        )
        self.pause.clicked.connect(self._pause_or_resume)
        self.step.clicked.connect(self.stepClicked)
        self.stop.clicked.connect(self.stopClicked)
        self.save_frame.clicked.connect(self.saveFrameClicked)
        self.save_frames.clicked.connect(self.saveFramesClicked)
        self.speed.valueChanged.connect(self._speed)
        self._speed(0)
        self.set_status("idle")

    def _speed(self, pos: int) -> None:
        delay = DELAYS[pos]
        self.speed_label.setText("full speed" if delay == 0 else f"{delay:g} s/epoch")
        self.delayChanged.emit(delay)

    def _pause_or_resume(self) -> None:
        (self.resumeClicked if self.pause.text() == "Resume" else self.pauseClicked).emit()

    def set_status(self, status: str) -> None:
        """One of the controller's states: idle, running, paused, done."""
        active = status in ("running", "paused")
        self.pause.setText("Resume" if status == "paused" else "Pause")
        self.pause.setEnabled(active)
        self.step.setEnabled(status == "paused")
        self.stop.setEnabled(active)
        self.start.setText("Train again" if status == "done" else "Train")
        for w in (self.start, self.epochs, self.dim):
            w.setEnabled(not active)
        self.state.setText({"running": "training…", "paused": "paused"}.get(status, ""))

    def set_progress(self, fraction: float) -> None:
        self.bar.set_fraction(fraction)
