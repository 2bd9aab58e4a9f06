"""EmbeddingViewer: summary, plot, heatmap, values/bits table and cosine matrix of selected rows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.core.model.dtypes import BF16, bf16_to_float32
from explorer.core.rows.numbers import row_stats
from explorer.core.rows.read import RowData
from explorer.ui.rows.cosine import CosinePanel
from explorer.ui.rows.heatmap import RowHeatmap
from explorer.ui.rows.plot import ValuesPlot
from explorer.ui.rows.precision_pair import PrecisionPairPage
from explorer.ui.rows.summary import SummaryCard, SummaryTable
from explorer.ui.rows.values_table import ValuesTable
from explorer.ui.widgets.layout_fence import LayoutFence
from explorer.ui.widgets.steady_tabs import SteadyTabWidget
from explorer.ui.widgets.style import reserve_lines

if TYPE_CHECKING:
    from explorer.app.controllers.quant import RowShown

DEFAULT_HINT = "Click a token to see its embedding"
SUB_HINT = "Select several tokens to overlay them and compare their cosine similarities."
READOUT_HINT = "Hover to read a value; double-click to find it in the table."


def stand_in_row(token_id: int = 0, dim: int = 4096) -> RowData:
    """A BF16 row of the size of a large model's, with values of a trained embedding's scale."""
    rng = np.random.default_rng(token_id)
    wide = (rng.standard_normal(dim) * 0.02).astype(np.float32)
    raw = (wide.view(np.uint32) >> 16).astype(BF16)  # the high half: a BF16 value
    values = bf16_to_float32(raw)
    return RowData(token_id, "the", "BF16", raw, values, row_stats(values), unused=False)


class EmbeddingViewer(QWidget):
    """Shows rows read and decoded off the GUI thread; its own work is O(d_model) per row."""

    rowActivated = Signal(object)  # token id of the row picked in the multi-row summary

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rows: list[RowData] = []
        self.current = 0  # position in self.rows shown by the heatmap and the table
        self.shared_limit: float | None = None

        empty = self._empty_state()

        # summary: a card for one row, a table for several
        self.card = SummaryCard()
        self.table = SummaryTable()
        self.table.currentRowChanged.connect(self._activate)
        self.table.hide()  # laid out for one row from the start: the first click moves nothing

        self.overview = self._overview()
        self._plotted: list[RowData] = []  # the rows (the list itself) the plot shows
        self._difference: tuple[list[RowData], list[RowData]] | None = None  # rows, [a − b]

        self.values = ValuesTable()
        self.cosine = CosinePanel()
        self.tabs = SteadyTabWidget(pages_stay_shown=True)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.overview, "Overview")
        self.tabs.addTab(self.values, "Values && bits")
        self.tabs.addTab(self.cosine, "Cosine similarity")
        self.tabs.currentChanged.connect(self._tab_shown)
        self.tabs.setTabToolTip(0, "The values as a line plot and as a heatmap")
        self.tabs.setTabToolTip(
            1, "Every value with its stored bits: hex, sign, exponent, mantissa"
        )
        self.tabs.setTabToolTip(
            2, "Pairwise cosine similarities of the selected tokens (Ctrl+click to add one)"
        )
        self.pair = PrecisionPairPage()  # a tab while a precision comparison is open

        content = QWidget()
        cv = QVBoxLayout(content)
        cv.setContentsMargins(0, 0, 0, 0)
        cv.setSpacing(4)
        cv.addWidget(self.card)
        cv.addWidget(self.table)
        cv.addWidget(self.tabs, 1)

        # The empty state covers the content rather than taking turns with it in a stack: the
        # content stays shown and laid out under it, so the first click does not pay for its
        # first show (polish, the plots' resize handling: ~20 ms on the GUI thread). Both sit in
        # a fence: a new title or caption, or the cover shown or hidden, re-lays out the viewer
        # only, not the window
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        fence = LayoutFence(content)
        layout.addWidget(fence)
        self.content = content
        self.empty = empty
        empty.setAutoFillBackground(True)  # opaque: Qt does not paint the content beneath
        fence.add_overlay(empty)

        for source in (self.plot, self.heatmap):
            source.hovered.connect(self._hovered)
            source.indexClicked.connect(self._open_in_table)
        self.clear()
        self._painted_once = False

    @property
    def showing_rows(self) -> bool:
        return not self.empty.isVisibleTo(self)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._painted_once:
            self._painted_once = True
            QTimer.singleShot(0, self._paint_content_once)

    def _paint_content_once(self) -> None:
        """Paint the covered content off screen once when the window appears, showing two
        stand-in rows and then one, then empty it again: the first paint of a row (fonts and
        glyphs, the axes' tick labels, the plot's and the heatmap's images) and of two rows (the
        summary table, a second curve) is then not part of a click; it made the first click's
        worst turn ~15-25 ms longer. The stand-ins never reach the screen."""
        if self.showing_rows:
            return
        message = self.message
        first, second = stand_in_row(0), stand_in_row(1)
        for rows in ([first, second], [first]):  # two rows: the summary table, a second curve
            self.set_rows(rows)
            self.content.grab()
        self.clear(message)
        self.card.reserve_height()  # empties the card's texts, keeps the height of a row
        self.plot.y_range = None  # the first row's scale is its own, not the stand-in's

    def _empty_state(self) -> QWidget:
        self.hint = QLabel(DEFAULT_HINT)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        font = QFont(self.hint.font())
        font.setPointSizeF(font.pointSizeF() * 1.4)
        self.hint.setFont(font)
        self.hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.sub_hint = QLabel(SUB_HINT)
        self.sub_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.sub_hint.setWordWrap(True)
        self.sub_hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        empty = QWidget()
        ev = QVBoxLayout(empty)
        ev.addStretch(1)
        ev.addWidget(self.hint)
        ev.addWidget(self.sub_hint)
        ev.addStretch(1)
        return empty

    def _overview(self) -> QWidget:
        """The overview tab: plot | heatmap, and a readout line."""
        self.plot = ValuesPlot()
        self.heatmap = RowHeatmap()
        self.heatmap_caption = QLabel()
        self.heatmap_caption.setTextFormat(Qt.TextFormat.PlainText)
        self.heatmap_caption.setWordWrap(True)
        reserve_lines(self.heatmap_caption)  # "row ±…, clipped" wraps on some rows only
        # a model-wide scale set by a few huge dimensions washes a row out: its own range
        self.row_range = QCheckBox("row range")
        self.row_range.setToolTip(
            "Colour this row on its own range (its largest |value|) rather than the scale "
            "shared by every row of the model"
        )
        self.row_range.setVisible(False)  # only when there is a shared scale to leave
        keep = self.row_range.sizePolicy()
        keep.setRetainSizeWhenHidden(True)
        self.row_range.setSizePolicy(keep)
        self.row_range.toggled.connect(lambda _: self.set_levels(self.shared_limit))
        heat_box = QWidget()
        hv = QVBoxLayout(heat_box)
        hv.setContentsMargins(0, 0, 0, 0)
        hv.setSpacing(2)
        hv.addWidget(self.heatmap_caption)
        hv.addWidget(self.heatmap, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.plot)
        self.splitter.addWidget(heat_box)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self.readout = QLabel(READOUT_HINT)
        self.readout.setTextFormat(Qt.TextFormat.PlainText)
        self.readout.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        # its width is what is left beside the check boxes: a narrow window cuts it, never
        # grows for it
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        overview = QWidget()
        ov = QVBoxLayout(overview)
        ov.setContentsMargins(0, 4, 0, 0)
        ov.setSpacing(2)
        ov.addWidget(self.splitter, 1)
        # two overlaid rows are a thicket of crossing lines: their difference is one curve
        self.difference = QCheckBox("plot the difference")
        self.difference.setToolTip("Plot one curve, the first row minus the second")
        keep = self.difference.sizePolicy()
        keep.setRetainSizeWhenHidden(True)  # appearing must not move the plot
        self.difference.setSizePolicy(keep)
        self.difference.hide()
        self.difference.toggled.connect(lambda _: self._fill_shown_page())
        readout_row = QHBoxLayout()
        readout_row.addWidget(self.readout, 1)
        readout_row.addWidget(self.difference)
        readout_row.addWidget(self.row_range)  # under the heatmap
        ov.addLayout(readout_row)

        return overview

    # -- public API ---------------------------------------------------------------------------
    def set_rows(self, rows: list[RowData]) -> None:
        """Show one row (a selected token) or several overlaid (a multi-selection)."""
        rows = list(rows)
        if not rows:
            self.clear()
            return
        previous = self.current_row
        self.rows = rows
        ids = [r.id for r in rows]
        self.current = ids.index(previous.id) if previous is not None and previous.id in ids else 0
        multi = len(rows) > 1
        if multi:
            self.table.floor = max(self.card.sizeHint().height(), self.card.minimumHeight())
            self.table.set_rows(rows)
            self.table.select(self.current)
            self.card.hide()
            self.table.show()
        else:
            self.card.set_row(rows[0])
            self.table.hide()
            self.card.show()
        self.cosine.set_rows(rows if multi else [])
        # one token again: its overview. The tab bar itself stays as it is (always enabled, one
        # title): a change re-laid out and repainted the whole tab widget, ~3-4 ms of each
        # click that added a second row or went back to one; the tab says when it needs more
        if not multi and self.tabs.currentWidget() is self.cosine:
            self.tabs.setCurrentWidget(self.overview)
        self._show_current()
        self.readout.setText(READOUT_HINT)
        self.empty.hide()

    def uncover(self) -> None:
        """Rows are on their way: show the content (still empty) now. Its first paint after
        the empty state (the whole viewer) then happens in this turn of the event loop, and the
        rows' own paint in a later one, not both at once (~45 ms on the first click)."""
        if not self.rows:
            self.empty.hide()

    def clear(self, message: str = "") -> None:
        """Empty state with a hint (or `message`, e.g. an error or 'Loading…')."""
        self.message = message
        self.rows = []
        self.current = 0
        self.hint.setText(message or DEFAULT_HINT)
        self.sub_hint.setVisible(not message)
        self.heatmap.set_row(None, 1.0)
        self.cosine.set_rows([])
        self._fill_shown_page()
        self.empty.show()
        self.empty.raise_()

    def set_pair(self, row: RowShown) -> None:
        """The selected token at the two precisions of the open comparison (Compare ›
        Precision): its tab appears, and comes to the front when it was not there."""
        at = self.tabs.indexOf(self.pair)
        if at < 0:
            at = self.tabs.addTab(self.pair, "Two precisions")
            self.tabs.setTabToolTip(
                at, "The token's row at both precisions compared, with each value's quant block"
            )
        fresh = not self.tabs.isTabVisible(at) or self.pair.shown is None
        self.tabs.setTabVisible(at, True)
        self.pair.show_row(row)
        if fresh:
            self.tabs.setCurrentWidget(self.pair)

    def clear_pair(self) -> None:
        """No comparison open any more: the tab goes."""
        at = self.tabs.indexOf(self.pair)
        if at < 0:
            return
        if self.tabs.currentWidget() is self.pair:
            self.tabs.setCurrentWidget(self.overview)
        self.tabs.setTabVisible(at, False)
        self.pair.clear()

    def set_levels(self, limit: float | None) -> None:
        """Shared symmetric heatmap levels ±limit for the whole model; None or ≤ 0: per row."""
        ok = limit is not None and math.isfinite(limit) and limit > 0
        self.shared_limit = float(limit) if ok else None  # type: ignore[arg-type]
        self.row_range.setVisible(self.shared_limit is not None)
        if self.rows:
            self.heatmap.set_limit(self.limit())
            self._caption_heatmap()

    @property
    def current_row(self) -> RowData | None:
        return self.rows[self.current] if 0 <= self.current < len(self.rows) else None

    def limit(self) -> float:
        """Heatmap half-range: the shared one (unless the row's own range is asked for), else
        the largest |value| of the rows shown."""
        if self.shared_limit is not None and not self.row_range.isChecked():
            return self.shared_limit
        peaks = [np.nanmax(np.abs(r.values[np.isfinite(r.values)]), initial=0.0) for r in self.rows]
        peak = float(max(peaks, default=0.0))
        return peak if peak > 0 else 1.0

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and len(self.rows) > 1:
            self.table.set_rows(self.rows)  # swatch colours follow light / dark
            self.table.select(self.current)
            self._show_current()

    # -- internals ----------------------------------------------------------------------------
    def _plot_rows(self) -> list[RowData]:
        """What the plot shows: the rows, or the difference of two when asked for (made once
        per pair: the same list while nothing changes)."""
        two = len(self.rows) == 2
        self.difference.setVisible(two)
        if not (two and self.difference.isChecked()):
            return self.rows
        if self._difference is None or self._difference[0] is not self.rows:
            a, b = self.rows
            values = a.values - b.values
            label = f"{a.label} − {b.label}"
            diff = RowData(a.id, label, a.dtype, values, values, row_stats(values), False)
            self._difference = (self.rows, [diff])
        return self._difference[1]

    def _tab_shown(self, _index: int) -> None:
        self._fill_shown_page()

    def _fill_shown_page(self) -> None:
        """The shown page follows the rows, the covered ones catch up when shown: pages stay
        stacked (SteadyTabWidget), and a covered page still did its work on every click (the
        plot's scene ~4 ms of one on the Values & bits tab, the values table's reset and caption
        ~1 ms on the overview, the cosine table's fill ~11 ms of a two-row click). (The heatmap's,
        ~1 ms, is left: filled on the way back, its image was painted twice.)"""
        page = self.tabs.currentWidget()
        if page is self.overview and self._plotted is not self._plot_rows():
            self._plotted = self._plot_rows()
            self.plot.set_rows(self._plotted)
        elif page is self.values and self.values.row is not self.current_row:
            self.values.set_row(self.current_row)
        elif page is self.cosine:
            self.cosine.show_table()

    def _show_current(self) -> None:
        row = self.current_row
        self.heatmap.set_row(row, self.limit())
        self._fill_shown_page()
        self._caption_heatmap()
        if row is not None and len(self.rows) > 1:
            cos = self.cosine.matrix[self.current]
            self.table.set_cosines([float(c) for c in cos], row.label)

    def _caption_heatmap(self) -> None:
        row = self.current_row
        if row is None:
            self.heatmap_caption.setText("")
            return
        r, c = self.heatmap.shape
        shared = self.shared_limit is not None and not self.row_range.isChecked()
        scale = "model-wide" if shared else ("this row" if len(self.rows) == 1 else "these rows")
        who = f"{row.label} · " if len(self.rows) > 1 else ""
        values = row.values[np.isfinite(row.values)]
        peak = float(np.abs(values).max()) if values.size else 0.0
        clipped = f" · row ±{peak:.4g}, clipped" if peak > self.limit() else ""
        self.heatmap_caption.setText(
            f"{who}{r} × {c} grid · ±{self.limit():.4g} ({scale}){clipped}"
        )
        self.heatmap_caption.setToolTip(
            (
                "This row goes beyond the scale: its largest values show as full colour.\n"
                * bool(clipped)
            )
            + "Blue negative, white 0, red positive. The colour scale is "
            + (
                "shared by every row of this model, so rows can be compared."
                if shared
                else "the largest |value| of the rows shown."
            )
        )

    def _activate(self, position: int) -> None:
        if 0 <= position < len(self.rows):
            if position != self.current:
                self.current = position
                self._show_current()
            self.rowActivated.emit(self.rows[position].id)

    def _hovered(self, i: int) -> None:
        row = self.current_row
        if row is None or i < 0 or i >= row.values.shape[0]:
            self.readout.setText(READOUT_HINT)
            return
        r, c = divmod(i, max(self.heatmap.shape[1], 1))
        if len(self.rows) == 1:
            self.readout.setText(f"index {i}  (grid row {r}, col {c})   value {row.values[i]}")
        else:
            parts = [f"{x.label} {x.values[i]}" for x in self.rows if i < x.values.shape[0]]
            self.readout.setText(f"index {i}:   " + "   ·   ".join(parts))

    def _open_in_table(self, i: int) -> None:
        self.tabs.setCurrentWidget(self.values)
        self.values.show_index(i)
