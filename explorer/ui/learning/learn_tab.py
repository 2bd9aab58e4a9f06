"""The Learn tab: controls, loss curve, watched neighbours, the animated map and the twin."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from explorer.app.controllers.learning import LearningController
from explorer.app.jobs import error_message
from explorer.core.errors import ExplorerError
from explorer.core.learning.trainer import LearnParams
from explorer.ui.learning.controls import LearnControls
from explorer.ui.learning.frame_export import FrameExporter, save_map_png
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
        self._newest = None  # the snapshot to show at the next turn of the event loop
        self._show_soon = QTimer(self)
        self._show_soon.setSingleShot(True)
        self._show_soon.setInterval(0)
        self._show_soon.timeout.connect(self._show_newest)

        c = self.controls
        c.startClicked.connect(self.start)
        c.pauseClicked.connect(controller.pause)
        c.resumeClicked.connect(controller.resume)
        c.stepClicked.connect(controller.step)
        c.stopClicked.connect(controller.stop)
        c.delayChanged.connect(controller.set_delay)
        c.saveFrameClicked.connect(self.save_frame)
        c.saveFramesClicked.connect(self.save_frames)
        self.exporter: FrameExporter | None = None
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
        self._newest = None
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

    def save_frame(self, path: str | None = None) -> Path | None:
        """The map as shown, as a PNG (asks where unless `path` is given)."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self,
                "Save the map as PNG",
                f"epoch_{max(self.map.epoch, 0):03d}.png",
                "PNG (*.png)",
            )
            if not path:
                return None
        try:
            save_map_png(self.map, path)
        except ExplorerError as e:
            self.summary.setText(error_message(e))
            return None
        self.summary.setText(f"Saved {html.escape(str(path))}")
        return Path(path)

    def save_frames(self, folder: str | None = None) -> FrameExporter | None:
        """Every epoch so far as numbered PNGs plus the early–middle–late strip, drawn one per
        pass of the event loop (asks for a folder unless `folder` is given)."""
        snapshots = list(self.controller.snapshots)
        if not snapshots:
            return None
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Save the frames into a folder")
            if not folder:
                return None
        self.exporter = FrameExporter(snapshots, self.watched, Path(folder), self)
        self.exporter.finished.connect(
            lambda paths: self.summary.setText(
                f"Saved {len(paths) - 1} frames and the early–middle–late strip in "
                f"{html.escape(str(folder))}"
            )
        )
        self.exporter.failed.connect(lambda m: self.summary.setText(html.escape(m)))
        self.summary.setText("Saving frames…")
        self.exporter.start()
        return self.exporter

    def show_epoch(self, snap) -> None:
        """Small tables train faster than the tab draws: epochs that arrive within one turn of
        the event loop are drawn once, as the newest of them."""
        self._newest = snap
        self._show_soon.start()

    def _show_newest(self) -> None:
        snap, self._newest = self._newest, None
        if snap is None:
            return
        for b in (self.controls.save_frame, self.controls.save_frames):
            b.setEnabled(True)
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
        self._show_newest()
        if result.comparison:
            self.table.show_comparison(result.comparison)
            self.side.setCurrentWidget(self.table)
            self.summary.setText(self.summary.text() + " · done")
