"""The map of the most frequent tokens, animated from one epoch's coordinates to the next.

The core already turned each epoch's map onto the previous one (Procrustes), so the animation is
a plain interpolation; three scatter items (content words, function words, watched tokens) and a
few labels (the watched tokens and the most frequent ones) follow it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QElapsedTimer, QPointF, QRectF, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QPainter
from PySide6.QtWidgets import QWidget

ANIMATION_MS = 500
FRAME_MS = 50  # 20 frames a second: each frame repaints the map (~10 ms of the GUI thread)
LABELLED = 30  # the most frequent tokens that carry a label (besides the watched ones)
EMPTY_HINT = "Train: the most frequent tokens move here as they learn"
FUNCTION = "#e0a800"
CONTENT = "#2a6fb0"
WATCHED = "#d62728"


def _bounds(xy: np.ndarray) -> np.ndarray:
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    pad = np.maximum((hi - lo) * 0.08, 1e-6)
    return np.concatenate([lo - pad, hi + pad])


class LabelLayer(pg.GraphicsObject):
    """Every label of the map in one item that draws its texts at unscaled size: moving 38
    `pg.TextItem`s per frame cost more than the rest of the frame, and creating them took
    ~90 ms of the GUI thread at the first epoch."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self.colours: list[QColor] = []
        self.xy = np.zeros((0, 2), dtype=np.float32)
        self.font = QFont()  # the window's type size: readable beside the rest

    def set_labels(self, texts: list[str], colours: list[str]) -> None:
        self.texts, self.colours = list(texts), [QColor(c) for c in colours]
        self.xy = np.zeros((len(texts), 2), dtype=np.float32)
        self.update()

    def set_positions(self, xy: np.ndarray) -> None:
        self.xy = xy
        self.update()

    def boundingRect(self) -> QRectF:  # the whole view: texts keep their size as it zooms
        view = self.getViewBox()
        return self.mapRectFromView(view.viewRect()) if view is not None else QRectF()

    def paint(self, painter: QPainter, *args) -> None:
        to_device = painter.transform()
        painter.resetTransform()
        painter.setFont(self.font)
        for text, colour, (x, y) in zip(self.texts, self.colours, self.xy, strict=False):
            painter.setPen(colour)
            painter.drawText(to_device.map(QPointF(float(x), float(y))) + QPointF(3, -3), text)


class LearnMap(pg.PlotWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setBackground("w")
        self.hideAxis("left")
        self.hideAxis("bottom")
        self.hideButtons()
        self.setMenuEnabled(False)
        self.getPlotItem().getViewBox().setAspectLocked(True)
        self.setTitle(EMPTY_HINT, color="#555", size="10pt")
        self.setMinimumWidth(200)
        # One item per kind with a single brush: a per-point brush list costs more per frame
        # than the rest of the frame together.
        self.scatters = [
            pg.ScatterPlotItem(size=7, pen=None, brush=QBrush(QColor(c)))
            for c in (CONTENT, FUNCTION, WATCHED)
        ]
        for item in self.scatters:
            self.addItem(item)
        self.kinds: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * 3
        self.label_layer = LabelLayer()
        self.addItem(self.label_layer, ignoreBounds=True)
        self.labelled = np.zeros(0, dtype=np.int64)  # which map rows carry a label
        self.label_texts: list[str] = []
        self.start_xy = np.zeros((0, 2), dtype=np.float32)
        self.target_xy = np.zeros((0, 2), dtype=np.float32)
        self.xy = self.target_xy
        self.epoch = -1
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._frame)

    @property
    def animating(self) -> bool:
        return self._timer.isActive()

    def show_epoch(self, snap, watched: set[str], animate: bool = True) -> None:
        """Move to this snapshot's coordinates (animated unless it is a new set of tokens)."""
        xy = np.asarray(snap.map_coords, dtype=np.float32)
        same = len(xy) == len(self.target_xy) and snap.epoch > 0
        if not same:
            self._set_tokens(snap.map_labels, snap.function_word, watched)
        self.start_xy = self.xy.copy() if same else xy
        self.target_xy = xy
        self.epoch = snap.epoch
        self.setTitle(
            f"Epoch {snap.epoch}/{snap.epochs}: {len(xy)} most frequent tokens "
            f"(<span style='color:{FUNCTION}'>function</span>, "
            f"<span style='color:{CONTENT}'>content</span>)"
        )
        if animate and same:
            self._clock.start()
            self._timer.start()
        self._draw(1.0 if not (animate and same) else 0.0)

    def _set_tokens(self, labels: list[str], function_word: np.ndarray, watched: set[str]) -> None:
        kind = np.asarray(function_word, dtype=np.int64).copy()
        picked = [i for i, lab in enumerate(labels) if lab.strip() in watched]
        kind[picked] = 2
        self.kinds = [np.flatnonzero(kind == k) for k in range(3)]
        shown = sorted(set(range(min(LABELLED, len(labels)))) | set(picked))
        self.labelled = np.asarray(shown, dtype=np.int64)
        self.label_texts = [labels[i] for i in shown]
        colours = [WATCHED if i in picked else "#444" for i in shown]
        self.label_layer.set_labels(self.label_texts, colours)

    def _frame(self) -> None:
        t = min(1.0, self._clock.elapsed() / ANIMATION_MS)
        self._draw(t)
        if t >= 1.0:
            self._timer.stop()

    def _draw(self, t: float) -> None:
        s = t * t * (3 - 2 * t)  # ease in and out
        self.xy = (self.start_xy + (self.target_xy - self.start_xy) * s).astype(np.float32)
        if not len(self.xy):
            return
        for item, idx in zip(self.scatters, self.kinds, strict=True):
            item.setData(pos=self.xy[idx])
        self.label_layer.set_positions(self.xy[self.labelled])
        if t == 0.0 or t >= 1.0:  # the view moves twice per epoch: every label follows it
            both = np.concatenate([self.start_xy, self.target_xy]) if t == 0.0 else self.xy
            x0, y0, x1, y1 = (float(v) for v in _bounds(both))
            self.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

    def finish_animation(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self._draw(1.0)

    def clear_map(self) -> None:
        self._timer.stop()
        self.label_layer.set_labels([], [])
        self.labelled, self.label_texts = np.zeros(0, dtype=np.int64), []
        for item in self.scatters:
            item.clear()
        self.start_xy = self.target_xy = self.xy = np.zeros((0, 2), dtype=np.float32)
        self.setTitle(EMPTY_HINT, color="#555", size="10pt")
