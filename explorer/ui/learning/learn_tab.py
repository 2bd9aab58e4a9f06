"""The Learn tab: controls, loss curve, watched neighbours, the animated map and the twin."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from explorer.app.controllers.learning import LearningController
from explorer.app.jobs import error_message
from explorer.core.learning.trainer import LearnParams
from explorer.ui.learning.controls import LearnControls
from explorer.ui.learning.learn_map import LearnMap
from explorer.ui.learning.loss_plot import LossPlot
from explorer.ui.learning.twin_panel import TwinPanel
from explorer.ui.learning.watch_table import WatchTable

INTRO = (
    "An embedding table starts as random numbers and is learned. <b>Train</b> a fresh table "
    "(skip-gram, on prose from the Python documentation) and watch tokens that behave alike "
    "gather."
)


class LearnTab(QWidget):
    def __init__(self, controller: LearningController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.controls = LearnControls()
        self.loss = LossPlot()
        self.table = WatchTable()
        self.map = LearnMap()
        self.twin = TwinPanel()
        self.summary = QLabel(INTRO)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.side = QTabWidget()
        self.side.setDocumentMode(True)
        self.side.addTab(self.table, "Neighbours")
        self.side.addTab(self.twin, "Real vs random twin")
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.loss)
        left.addWidget(self.side)
        left.setSizes([220, 380])
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(self.map)
        body.setStretchFactor(0, 2)
        body.setStretchFactor(1, 3)
        col = QVBoxLayout(self)
        col.addWidget(self.controls)
        col.addWidget(self.summary)
        col.addWidget(body, 1)
        self.watched = set(controller.watch)

        c = self.controls
        c.startClicked.connect(self.start)
        c.pauseClicked.connect(controller.pause)
        c.resumeClicked.connect(controller.resume)
        c.stepClicked.connect(controller.step)
        c.stopClicked.connect(controller.stop)
        c.delayChanged.connect(controller.set_delay)
        controller.runningChanged.connect(c.set_status)
        controller.epochReady.connect(self.show_epoch)
        controller.trainingDone.connect(self.show_done)
        controller.failed.connect(lambda e: self.summary.setText(error_message(e)))
        controller.lane.progress.connect(lambda _t, f: c.set_progress(f))
        self.twin.measureClicked.connect(self.measure_twin)
        controller.contrastReady.connect(self.twin.show_contrast)
        controller.contrastFailed.connect(lambda e: self.twin.show_error(error_message(e)))

    def start(self, epochs: int, dim: int, **params) -> None:
        """Train a fresh table; `params`: other LearnParams fields (tests use tiny ones)."""
        if self.controller.state.model is None:
            self.summary.setText("Open a model first: its tokenizer splits the corpus.")
            return
        self.loss.clear_curve()
        self.table.clear_table()
        self.map.clear_map()
        self.summary.setText("Encoding the corpus with the model's tokenizer…")
        self.controller.start(LearnParams(epochs=epochs, dim=dim, **params))

    def measure_twin(self) -> None:
        if self.controller.state.model is None:
            self.twin.show_error("Open a model first.")
            return
        self.twin.set_busy()
        self.controller.measure_twin()

    def show_epoch(self, snap) -> None:
        self.loss.set_curve(snap.loss_curve)
        self.table.show_neighbors(snap.neighbors)
        self.map.show_epoch(snap, self.watched)
        loss = f"loss {snap.loss_curve[-1][1]:.3f} · " if snap.loss_curve else ""
        self.summary.setText(
            f"<b>Epoch {snap.epoch} of {snap.epochs}</b> · {loss}"
            f"function/content purity {snap.purity:.2f} (chance 0.50) · "
            f"agreement with the real model {snap.agreement:.3f} · "
            f"{snap.seconds:.1f} s of training"
        )

    def show_done(self, result) -> None:
        if result.comparison:
            self.table.show_comparison(result.comparison)
            self.side.setCurrentWidget(self.table)
            self.summary.setText(self.summary.text() + " · done")
