"""The map's labels: a capped pool of TextItems, placed greedily where they do not overlap.

The pool is made once: adding items to the scene later, while a projection runs, costs GUI time
that competes with the worker for the GIL. Each slot remembers which token it shows, so a token
that keeps its label keeps its item (no text re-layout). ``update`` starts the placement, which
tries a few dozen labels per turn of the event loop (800 tries at once held the GUI thread for
10-30 ms), then queues the changes to the items; ``apply(n)`` makes n of them, so that a new
map's hundred labels (~0.4 ms of GUI time each) are spread over a few turns too. A new
placement drops the one under way and the changes still queued (their slots are marked
unknown) rather than finishing them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import partial

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont, QFontMetricsF

from explorer.core.map import figure
from explorer.render.glyphs import Coverage

MAX_LABELS = 120
MAX_TRIES = 800  # labels tried per pass: bounds the work whatever the zoom
LABEL_PX = 13
LABELS_PER_TURN = 8  # label items changed per turn of the event loop (~0.4 ms each)
TRIES_PER_TURN = 60  # labels tried per turn of the event loop (~1 ms)
TEXT = "#1a1a1a"
HIGHLIGHT = "#d62728"
CALLOUTS = 8  # the query's nearest neighbours that may move out, with a line, to get a label
BOX_ALPHA = 110  # label boxes: enough to read the text, not so much the points beneath fade
LEADER = "#777777"


@dataclass
class _Slot:
    item: pg.TextItem
    token_id: int | None = None
    highlighted: bool | None = None


class LabelPool:
    def __init__(self, plot: pg.PlotItem):
        self.font = QFont()
        self._slots: list[_Slot] = []
        # queued changes to the items, each with the slot it changes (None: no slot's record)
        self._steps: deque[tuple[_Slot | None, Callable[[], None]]] = deque()
        self._placing: Generator[None, None, None] | None = None  # placing, then queueing
        # the rest of them, a turn later; owned by the plot, so it dies with the items
        self._next_turn = QTimer(plot, singleShot=True, interval=0)
        self._next_turn.timeout.connect(self._apply_a_turn)
        self.set_pixel_size(LABEL_PX)
        self.text_colour = TEXT
        # one item draws every callout's line, from the point to its label
        self.leaders = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(LEADER, width=1))
        self.leaders.setZValue(9)
        plot.addItem(self.leaders, ignoreBounds=True)
        for _ in range(MAX_LABELS):
            item = pg.TextItem(color=TEXT, anchor=(0, 0), fill=pg.mkBrush(255, 255, 255, BOX_ALPHA))
            item.setFont(self.font)
            item.setZValue(10)
            item.hide()
            plot.addItem(item)
            self._slots.append(_Slot(item))

    def set_pixel_size(self, px: int) -> None:
        """Label type size (presentation mode makes it larger); placement measures anew."""
        self.font.setPixelSize(px)
        self._metrics = QFontMetricsF(self.font)
        self.coverage = Coverage(self.font)  # which labels it draws (not empty boxes)
        # a TextItem's box is its text plus document margins: measure it once, place exactly
        probe = pg.TextItem("Xg")
        probe.setFont(self.font)
        box = probe.textItem.boundingRect()
        self._label_h = box.height()
        self._pad = box.width() - self._metrics.horizontalAdvance("Xg")
        self._widths: dict[int, float] = {}
        self._points = np.zeros((0, 2))
        for slot in self._slots:
            slot.item.setFont(self.font)

    def set_dark(self, dark: bool) -> None:
        """Light text on dark boxes over a dark background (presentation in dark)."""
        self.text_colour = "#f0f0f0" if dark else TEXT
        fill = pg.mkBrush(0, 0, 0, BOX_ALPHA) if dark else pg.mkBrush(255, 255, 255, BOX_ALPHA)
        for slot in self._slots:
            slot.item.fill = fill
            if not slot.highlighted:
                slot.item.setColor(self.text_colour)
            slot.item.update()

    def reset(self) -> None:
        """New points: forget the measured widths."""
        self._widths = {}

    @property
    def placing(self) -> bool:
        """A placement is under way (a step per turn of the event loop)."""
        return self._placing is not None

    @property
    def pending(self) -> bool:
        return self.placing or bool(self._steps)

    def apply(self, n: int | None = None) -> bool:
        """Make up to `n` (None: all) of the queued changes, after the placement under way (in
        full when n is None, else one step of it); True while some work remains."""
        while self._placing is not None:
            self._place_a_step()
            if n is not None:
                return True
        steps = self._steps
        for _ in range(len(steps) if n is None else min(n, len(steps))):
            steps.popleft()[1]()
        return bool(steps)

    def _drop_queued(self) -> None:
        """Forget the placement under way and the changes not made yet; their slots no longer
        know what they show."""
        self._placing = None
        for slot, _ in self._steps:
            if slot is not None:
                slot.token_id = slot.highlighted = None
        self._steps.clear()

    def visible(self) -> list[tuple[int, str]]:
        """(token id, text) of every label shown once the queued changes are made."""
        self.apply()
        return [
            (int(s.token_id), s.item.textItem.toPlainText())
            for s in self._slots
            if s.item.isVisible() and s.token_id is not None
        ]

    def visible_rects(self) -> list:
        """Scene rectangles (QRectF) of the labels shown (queued changes made first)."""
        self.apply()
        return [s.item.sceneBoundingRect() for s in self._slots if s.item.isVisible()]

    def update(
        self,
        viewbox: pg.ViewBox,
        ids: np.ndarray,
        labels: list[str],
        coords: np.ndarray,
        order: np.ndarray,
        highlight_ids: set[int],
        cap: int | None = None,
        callouts: int | None = None,
        usable: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        """Place labels for the points inside the view, in `order` of priority (the candidates:
        every point, or a few), at most `cap` of them (default: by the view's area), the first
        `callouts` of them (default: the highlighted and CALLOUTS more) free to move out with a
        line; only points `usable` accepts (a mask of point indices; the font draws their
        labels) besides the highlighted ones: the placement runs a step per turn of the event
        loop, then the changes to the items are queued (see ``apply``)."""
        self._drop_queued()  # each slot's record now matches its item
        rect = viewbox.sceneBoundingRect()
        w_px, h_px = rect.width(), rect.height()
        view = viewbox.viewRange()
        (x0, x1), (y0, y1) = view
        if len(ids) and w_px > 20 and h_px > 20 and x1 > x0 and y1 > y0:
            px = (coords[:, 0] - x0) / (x1 - x0) * w_px
            py = (y1 - coords[:, 1]) / (y1 - y0) * h_px
            inside = (px >= 0) & (px <= w_px) & (py >= 0) & (py <= h_px)
            cap = int(min(cap or MAX_LABELS, MAX_LABELS, max(8, w_px * h_px / 2600)))
            self._points = np.column_stack([px, py])
            if callouts is None:
                callouts = len(highlight_ids) + CALLOUTS
            shown = order[inside[order]]
            if usable is not None:  # as many as placing tries, from those it can draw
                shown = shown[: 2 * MAX_TRIES]
                wanted = np.fromiter(highlight_ids, dtype=np.int64, count=len(highlight_ids))
                shown = shown[usable(shown) | np.isin(ids[shown], wanted)]
            placing = self._placing_labels(px, py, labels, shown, (w_px, h_px), cap, callouts)
        else:
            placing = _nothing()
        self._placing = self._place_then_queue(
            placing, ids, labels, highlight_ids, (w_px, h_px), view
        )
        self._apply_a_turn()

    def _place_a_step(self) -> None:
        assert self._placing is not None
        try:
            next(self._placing)
        except StopIteration:
            self._placing = None

    def _place_then_queue(
        self, placing, ids, labels, highlight_ids, size, view
    ) -> Generator[None, None, None]:
        placed = yield from placing
        self._queue(ids, labels, highlight_ids, size, view, placed)

    def _queue(self, ids, labels, highlight_ids, size, view, placed) -> None:
        """Queue the changes that show `placed` (which slot shows which token, where)."""
        (w_px, h_px), ((x0, x1), (y0, y1)) = size, view
        placed = placed[: len(self._slots)]
        lines = []
        for p in placed:
            if p.leader:  # from the point to the nearest point of its box
                px, py = coords_px = self._points[p.index]
                ex = min(max(px, p.x), p.x + p.w)
                ey = min(max(py, p.y), p.y + p.h)
                lines += [coords_px, (ex, ey)]
        xy = np.asarray(lines, dtype=np.float64).reshape(-1, 2)
        xy = np.column_stack([x0 + xy[:, 0] / w_px * (x1 - x0), y1 - xy[:, 1] / h_px * (y1 - y0)])
        by_token = {s.token_id: s for s in self._slots}
        wanted = {int(ids[p.index]) for p in placed}
        free = [s for s in self._slots if s.token_id not in wanted]
        steps: deque[tuple[_Slot | None, Callable[[], None]]] = deque()
        for p in placed:
            token_id = int(ids[p.index])
            slot = by_token.get(token_id)
            text = None
            if slot is None or slot.token_id != token_id:
                slot = free.pop()
                slot.token_id = token_id
                text = labels[p.index]
                slot.highlighted = None
            highlighted = token_id in highlight_ids
            colour = None
            if slot.highlighted != highlighted:
                colour = HIGHLIGHT if highlighted else self.text_colour
                slot.highlighted = highlighted
            pos = (x0 + p.x / w_px * (x1 - x0), y1 - p.y / h_px * (y1 - y0))
            steps.append((slot, partial(_show, slot.item, text, colour, pos)))
        steps.extend((None, slot.item.hide) for slot in free if slot.item.isVisible())
        steps.append((None, partial(self.leaders.setData, xy[:, 0], xy[:, 1])))
        self._steps = steps

    def _apply_a_turn(self) -> None:
        if self.apply(LABELS_PER_TURN):
            self._next_turn.start()

    def _width(self, labels: list[str], k: int) -> float:
        w = self._widths.get(k)
        if w is None:
            w = self._widths[k] = self._metrics.horizontalAdvance(labels[k]) + self._pad
        return w

    def _placing_labels(self, px, py, labels, order, size, cap, callouts):
        index_of = {id(labels[k]): int(k) for k in order[:MAX_TRIES]}  # text -> its index

        def width_of(text: str) -> float:  # measured when tried: the steps share that work
            k = index_of.get(id(text))
            if k is None:
                return self._metrics.horizontalAdvance(text) + self._pad
            return self._width(labels, k)

        w_px, h_px = size
        return figure.placing_labels(
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
            tries_per_step=TRIES_PER_TURN,
            callouts=callouts,
        )


def _nothing() -> Generator[None, None, list[figure.PlacedLabel]]:
    """A placement with no steps and no labels (no points in view)."""
    yield from ()
    return []


def _show(item: pg.TextItem, text: str | None, colour: str | None, pos: tuple[float, float]):
    if text is not None:
        item.setText(text)
    if colour is not None:
        item.setColor(colour)
    item.setPos(*pos)
    item.show()
