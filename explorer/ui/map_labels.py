"""The map's labels: a capped pool of TextItems, placed greedily where they do not overlap.

The pool is made once: adding items to the scene later, while a projection runs, costs GUI time
that competes with the worker for the GIL. Each slot remembers which token it shows, so a token
that keeps its label keeps its item (no text re-layout).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetrics, QFontMetricsF

from explorer.core import figure

MAX_LABELS = 120
MAX_TRIES = 800  # labels tried per pass: bounds the work whatever the zoom
LABEL_PX = 13
TEXT = "#1a1a1a"
HIGHLIGHT = "#d62728"


@dataclass
class _Slot:
    item: pg.TextItem
    token_id: int | None = None
    highlighted: bool | None = None


class LabelPool:
    def __init__(self, plot: pg.PlotItem):
        self.font = QFont()
        self._slots: list[_Slot] = []
        self.set_pixel_size(LABEL_PX)
        for _ in range(MAX_LABELS):
            item = pg.TextItem(color=TEXT, anchor=(0, 0), fill=pg.mkBrush(255, 255, 255, 160))
            item.setFont(self.font)
            item.setZValue(10)
            item.hide()
            plot.addItem(item)
            self._slots.append(_Slot(item))

    def set_pixel_size(self, px: int) -> None:
        """Label type size (presentation mode makes it larger); placement measures anew."""
        self.font.setPixelSize(px)
        self._metrics = QFontMetricsF(self.font)
        # a TextItem's box is its text plus document margins: measure it once, place exactly
        probe = pg.TextItem("Xg")
        probe.setFont(self.font)
        box = probe.textItem.boundingRect()
        self._label_h = box.height()
        self._pad = box.width() - self._metrics.horizontalAdvance("Xg")
        self._widths: dict[int, float] = {}
        for slot in self._slots:
            slot.item.setFont(self.font)

    def reset(self) -> None:
        """New points: forget the measured widths."""
        self._widths = {}

    def visible(self) -> list[tuple[int, str]]:
        """(token id, text) of every label shown now."""
        return [
            (int(s.token_id), s.item.textItem.toPlainText())
            for s in self._slots
            if s.item.isVisible() and s.token_id is not None
        ]

    def visible_rects(self) -> list:
        """Scene rectangles (QRectF) of the labels shown now."""
        return [s.item.sceneBoundingRect() for s in self._slots if s.item.isVisible()]

    def update(
        self,
        viewbox: pg.ViewBox,
        ids: np.ndarray,
        labels: list[str],
        coords: np.ndarray,
        order: np.ndarray,
        highlight_ids: set[int],
    ) -> None:
        """Place labels for the points inside the view, in `order` of priority."""
        rect = viewbox.sceneBoundingRect()
        w_px, h_px = rect.width(), rect.height()
        placed: list[figure.PlacedLabel] = []
        (x0, x1), (y0, y1) = viewbox.viewRange()
        if len(ids) and w_px > 20 and h_px > 20 and x1 > x0 and y1 > y0:
            px = (coords[:, 0] - x0) / (x1 - x0) * w_px
            py = (y1 - coords[:, 1]) / (y1 - y0) * h_px
            inside = (px >= 0) & (px <= w_px) & (py >= 0) & (py <= h_px)
            cap = int(min(MAX_LABELS, max(8, w_px * h_px / 2600)))
            placed = self._place(px, py, labels, order[inside[order]], (w_px, h_px), cap)
        placed = placed[: len(self._slots)]
        by_token = {s.token_id: s for s in self._slots}
        wanted = {int(ids[p.index]) for p in placed}
        free = [s for s in self._slots if s.token_id not in wanted]
        for p in placed:
            token_id = int(ids[p.index])
            slot = by_token.get(token_id)
            if slot is None or slot.token_id != token_id:
                slot = free.pop()
                slot.token_id = token_id
                slot.item.setText(labels[p.index])
                slot.highlighted = None
            highlighted = token_id in highlight_ids
            if slot.highlighted != highlighted:
                slot.item.setColor(HIGHLIGHT if highlighted else TEXT)
                slot.highlighted = highlighted
            slot.item.setPos(x0 + p.x / w_px * (x1 - x0), y1 - p.y / h_px * (y1 - y0))
            slot.item.show()
        for slot in free:
            slot.item.hide()

    def _width(self, labels: list[str], k: int) -> float:
        w = self._widths.get(k)
        if w is None:
            w = self._widths[k] = self._metrics.horizontalAdvance(labels[k]) + self._pad
        return w

    def _place(self, px, py, labels, order, size, cap) -> list[figure.PlacedLabel]:
        widths = {int(k): self._width(labels, int(k)) for k in order[:MAX_TRIES]}
        index_of = {id(labels[k]): k for k in widths}  # width_of gets the text; map back cheaply

        def width_of(text: str) -> float:
            k = index_of.get(id(text))
            return widths[k] if k is not None else self._metrics.horizontalAdvance(text) + self._pad

        w_px, h_px = size
        return figure.place_labels(
            px,
            py,
            labels,
            order,
            width_of,
            self._label_h,
            (2, 2, w_px - 2, h_px - 2),
            cap,
            max_tries=MAX_TRIES,
            offset=9.0,  # clear of the larger highlighted markers
        )


def drawable(text: str, font: QFont) -> str:
    """`text` with every character the font cannot draw written as U+XXXX (no tofu boxes)."""
    metrics = QFontMetrics(font)
    return "".join(
        ch if ch.isspace() or metrics.inFontUcs4(ord(ch)) else f"U+{ord(ch):04X}" for ch in text
    )
