"""Saving the Learn tab's map as PNG: the frame on screen, or every epoch of the run as numbered
frames plus one early–middle–late strip (the figure the README shows).

The frames are drawn by a second, never-shown `LearnMap` of a fixed size, one epoch per pass of
the event loop, so the window keeps answering and the visible map does not flicker.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSize, QTimer, Signal
from PySide6.QtWidgets import QWidget

from explorer.core.errors import ExplorerError
from explorer.render.raster import join_pngs
from explorer.ui.learning.learn_map import LearnMap
from explorer.ui.widgets.grab import grab_png

FRAME_SIZE = QSize(640, 600)  # about square: the map keeps its aspect ratio


def save_map_png(canvas: LearnMap, path: str | Path) -> None:
    """The map as drawn, as a PNG: at its last step if it is moving between epochs."""
    canvas.finish_animation()
    grab_png(canvas, path)


def sequence_epochs(epochs: list[int]) -> list[int]:
    """Early, middle, late: the random start, the quarter mark (where structure first shows on
    the bundled corpus) and the last epoch; fewer when the run is short."""
    if not epochs:
        return []
    last = len(epochs) - 1
    picks = [0, max(1, round(last / 4)) if last >= 2 else last, last]
    return [epochs[i] for i in dict.fromkeys(picks)]


class FrameExporter(QObject):
    """Writes `epoch_NNN.png` for each snapshot and `early_middle_late.png` into a folder."""

    finished = Signal(list)  # the paths written
    failed = Signal(str)

    def __init__(self, snapshots: list, watched: set[str], folder: Path, parent: QWidget):
        super().__init__(parent)
        self.snapshots, self.watched, self.folder = list(snapshots), set(watched), folder
        self.written: list[Path] = []
        self.canvas = LearnMap(parent)  # a hidden child: drawn only by grab()
        self.canvas.hide()
        self.canvas.resize(FRAME_SIZE)

    def start(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self._fail(f"{self.folder}: cannot create the folder ({e.strerror})")
            return
        QTimer.singleShot(0, self._next)

    def _next(self) -> None:
        done = len(self.written)
        if done == len(self.snapshots):
            self._finish()
            return
        snap = self.snapshots[done]
        self.canvas.show_epoch(snap, self.watched, animate=False)
        path = self.folder / f"epoch_{snap.epoch:03d}.png"
        try:
            save_map_png(self.canvas, path)
        except ExplorerError as e:
            self._fail(str(e))
            return
        self.written.append(path)
        QTimer.singleShot(0, self._next)

    def _finish(self) -> None:
        by_epoch = {s.epoch: p for s, p in zip(self.snapshots, self.written, strict=True)}
        picks = sequence_epochs([s.epoch for s in self.snapshots])
        strip = self.folder / "early_middle_late.png"
        try:
            join_pngs([by_epoch[e] for e in picks], strip)
        except ExplorerError as e:
            self._fail(str(e))
            return
        self._drop_canvas()
        self.finished.emit([*self.written, strip])

    def _fail(self, message: str) -> None:
        self._drop_canvas()
        self.failed.emit(message)

    def _drop_canvas(self) -> None:
        self.canvas.deleteLater()
